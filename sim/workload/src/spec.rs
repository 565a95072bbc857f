//! The workload as written in a scenario's `workload` key and its defaults; its checks are
//! in `check`.
//!
//! Every object here refuses unknown fields, so a typo is an error instead of a silently
//! ignored setting. `docs/scenarios.md` documents each field for users.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::Error;

mod check;

/// Metric name (as the simulator spells it, e.g. `util_gpu`, `power_w`) → value shown while
/// a phase runs.
pub type Levels = BTreeMap<String, f64>;

/// The built-in phases, in the order a training step runs them.
pub const BUILTIN_PHASES: &[&str] = &["data", "forward", "backward", "optimizer"];

/// Name of the state before the first step.
pub const IDLE: &str = "idle";

/// Name of the state of a device that finished its share of a phase and waits for the
/// slowest device (see [`DeviceMod::compute_scale`]).
pub const WAIT: &str = "wait";

/// Every key a workload file may use, at any level, for the documentation check.
pub const KEYS: &[&str] = &[
    "workload",
    "phases",
    "jitter",
    "start_s",
    "shapes",
    "memory",
    "idle",
    "wait",
    "noise",
    "devices",
    "duration_s",
    "seed",
    "name",
    "ms",
    "gpu_ms",
    "every",
    "offset",
    "at_steps",
    "event",
    "shape",
    "compute",
    "cpu_busy",
    "levels",
    "sigma",
    "min",
    "max",
    "base_mib",
    "shape_mib",
    "device",
    "compute_scale",
    "util_offset",
    "time_offset_s",
];

/// Default relative jitter of every phase duration (±3%).
pub const DEFAULT_JITTER: f64 = 0.03;
/// Default horizon of the simulator's schedule, simulated seconds.
pub const DEFAULT_DURATION_S: f64 = 600.0;
/// Default noise amplitude of `util_gpu` (points) when `noise` does not set it.
pub const DEFAULT_UTIL_NOISE: f64 = 1.5;
/// The most steps one schedule may hold, so a mistyped `ms` cannot exhaust memory
/// (each step costs about 40 bytes plus about 40 per phase).
pub const MAX_STEPS: f64 = 200_000.0;

/// A training loop: the phases of one step, how their durations vary, what the GPU shows
/// during each, and how devices of a multi-GPU job differ.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// The phases of a step in the order they run. Built-in ones (`data`, `forward`,
    /// `backward`, `optimizer`) run every step; custom ones run every step or, with
    /// `every`/`at_steps`, only in some.
    pub phases: Vec<PhaseSpec>,
    /// Relative jitter of every phase duration: each (step, phase) draws a factor uniformly
    /// in `[1 - jitter, 1 + jitter]` (default 0.03). A phase's own `jitter` wins.
    #[serde(default = "default_jitter")]
    pub jitter: f64,
    /// Simulated seconds before the first step (model loading), spent in the `idle` state.
    #[serde(default)]
    pub start_s: f64,
    /// Varying input shapes: a per-step duration multiplier.
    pub shapes: Option<Shapes>,
    /// Device memory used, following the step's shape multiplier.
    pub memory: Option<Memory>,
    /// Levels shown before the first step (default `util_gpu` 0).
    #[serde(default)]
    pub idle: Levels,
    /// Levels shown by a device waiting for a slower one (default `util_gpu` 5).
    #[serde(default)]
    pub wait: Levels,
    /// Noise amplitude per metric (uniform, ±amplitude, a new value every 100 ms); default
    /// `util_gpu` 1.5 and none for the others.
    #[serde(default)]
    pub noise: BTreeMap<String, f64>,
    /// Per-device modifiers of a multi-GPU job.
    #[serde(default)]
    pub devices: Vec<DeviceMod>,
    /// How many simulated seconds of schedule the simulator computes (default 600); later
    /// times replay it from the first step.
    pub duration_s: Option<f64>,
    /// Seed of the jitter and shape draws; default the scenario's `seed`.
    pub seed: Option<u64>,
}

/// One phase of a training step.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseSpec {
    /// `data`, `forward`, `backward`, `optimizer`, or a custom name (`eval`, `allreduce`…).
    pub name: String,
    /// Mean CPU-side duration, simulated milliseconds: what a step marker measures.
    pub ms: f64,
    /// Mean GPU-measured duration, simulated milliseconds (what CUDA events would report);
    /// when absent, no GPU duration is attached for this phase.
    pub gpu_ms: Option<f64>,
    /// This phase's relative jitter (default: the workload's).
    pub jitter: Option<f64>,
    /// Custom phases only: run in step `k` when `k % every == offset`.
    pub every: Option<u64>,
    /// With `every`: which step of each group of `every` (default `every - 1`, the last).
    pub offset: Option<u64>,
    /// Custom phases only: run exactly in these steps (0-based).
    pub at_steps: Option<Vec<u64>>,
    /// Whether the trainer marks an event named after the phase when it starts (default:
    /// true for phases with `every`/`at_steps`, else false).
    pub event: Option<bool>,
    /// Whether the step's shape multiplier scales this phase (default: `forward` and
    /// `backward` only).
    pub shape: Option<bool>,
    /// Whether a device's `compute_scale` slows this phase (default: `forward`,
    /// `backward` and `optimizer`).
    pub compute: Option<bool>,
    /// The trainer busy-waits through this phase instead of sleeping (a CPU-bound,
    /// launch-bound Python thread), so the process shows one core at 100%.
    #[serde(default)]
    pub cpu_busy: bool,
    /// What the GPU shows during this phase (default `util_gpu`: data 2, forward 97,
    /// backward 98, optimizer 90, custom 10).
    #[serde(default)]
    pub levels: Levels,
}

/// Per-step shape multiplier: `exp(sigma × z)`, `z` standard normal, clamped to
/// `[min, max]`. Its median is 1.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shapes {
    /// Spread of the log of the multiplier (0 = fixed shapes; 0.4 ≈ p95/p50 of 1.9).
    pub sigma: f64,
    /// Smallest multiplier (default 0.25).
    #[serde(default = "default_shape_min")]
    pub min: f64,
    /// Largest multiplier (default 4).
    #[serde(default = "default_shape_max")]
    pub max: f64,
}

/// Device memory used during a step: `base_mib + shape_mib × shape multiplier` (weights,
/// optimizer state, then activations that grow with the input).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Memory {
    /// Memory that does not depend on the input, MiB.
    pub base_mib: f64,
    /// Memory at shape multiplier 1 that scales with it, MiB.
    #[serde(default)]
    pub shape_mib: f64,
}

/// How one device of a multi-GPU job differs from the others.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceMod {
    /// Device index.
    pub device: u32,
    /// Its compute phases take this many times longer (>= 1). Devices step in lockstep, so
    /// every phase lasts as long as on the slowest device and the others `wait` for it.
    #[serde(default = "one")]
    pub compute_scale: f64,
    /// Points added to `util_gpu` during its phases (not while idle or waiting).
    #[serde(default)]
    pub util_offset: f64,
    /// It lags the timeline by this many simulated seconds (devices of unrelated jobs).
    #[serde(default)]
    pub time_offset_s: f64,
    /// Its own levels, by phase name (also `idle` and `wait`); they win over the phase's.
    #[serde(default)]
    pub levels: BTreeMap<String, Levels>,
}

fn default_jitter() -> f64 {
    DEFAULT_JITTER
}

fn default_shape_min() -> f64 {
    0.25
}

fn default_shape_max() -> f64 {
    4.0
}

fn one() -> f64 {
    1.0
}

impl Workload {
    /// Parses a workload object (the value of a scenario's `workload` key).
    pub fn from_json(text: &str) -> Result<Workload, Error> {
        Ok(serde_json::from_str(text)?)
    }

    /// Reads the `workload` of a whole scenario file, with the scenario's `seed` as the
    /// default seed, and checks it. `None` when the scenario has no workload. This is what
    /// the simulator does, so a trainer built from its result replays the same timeline.
    pub fn from_scenario_json(text: &str) -> Result<Option<Workload>, Error> {
        #[derive(Deserialize)]
        struct Top {
            #[serde(default)]
            seed: Option<u64>,
            workload: Option<Workload>,
        }
        let top: Top = serde_json::from_str(text)?;
        top.workload
            .map(|w| w.resolve(top.seed.unwrap_or(0)))
            .transpose()
    }

    /// Sets the seed to `scenario_seed` unless the workload has its own, and checks every
    /// field.
    pub fn resolve(mut self, scenario_seed: u64) -> Result<Workload, Error> {
        self.seed.get_or_insert(scenario_seed);
        self.validate()?;
        Ok(self)
    }

    /// The seed in use (the scenario's once [`Workload::resolve`]d).
    pub fn seed(&self) -> u64 {
        self.seed.unwrap_or(0)
    }

    /// The simulator's horizon, simulated seconds.
    pub fn horizon_s(&self) -> f64 {
        self.duration_s.unwrap_or(DEFAULT_DURATION_S)
    }

    /// The modifier of `device`, if any.
    pub fn device_mod(&self, device: u32) -> Option<&DeviceMod> {
        self.devices.iter().find(|d| d.device == device)
    }

    /// The largest `compute_scale` of any device (1 without modifiers).
    pub fn max_compute_scale(&self) -> f64 {
        self.devices
            .iter()
            .map(|d| d.compute_scale)
            .fold(1.0, f64::max)
    }

    /// Every metric name the workload sets anywhere (levels and noise), plus `util_gpu`,
    /// and `mem_used_mib` when `memory` is given: the metrics it drives.
    pub fn metric_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = vec!["util_gpu"];
        if self.memory.is_some() {
            names.push("mem_used_mib");
        }
        let tables = self
            .phases
            .iter()
            .map(|p| &p.levels)
            .chain([&self.idle, &self.wait])
            .chain(self.devices.iter().flat_map(|d| d.levels.values()));
        for table in tables {
            names.extend(table.keys().map(String::as_str));
        }
        names.extend(self.noise.keys().map(String::as_str));
        names.sort_unstable();
        names.dedup();
        names
    }

    /// The noise amplitude of `metric`.
    pub fn noise_of(&self, metric: &str) -> Option<f64> {
        match self.noise.get(metric) {
            Some(a) => Some(*a),
            None if metric == "util_gpu" => Some(DEFAULT_UTIL_NOISE),
            None => None,
        }
    }
}

impl PhaseSpec {
    /// Whether this is one of the built-in phases.
    pub fn is_builtin(&self) -> bool {
        BUILTIN_PHASES.contains(&self.name.as_str())
    }

    /// Whether the phase runs in every step.
    pub fn every_step(&self) -> bool {
        self.every.is_none() && self.at_steps.is_none()
    }

    /// Whether the phase runs in step `k`.
    pub fn runs_in(&self, k: u64) -> bool {
        match (&self.every, &self.at_steps) {
            (Some(every), _) => k % every == self.offset.unwrap_or(every - 1),
            (None, Some(at)) => at.contains(&k),
            (None, None) => true,
        }
    }

    /// Whether the trainer marks an event when the phase starts.
    pub fn marks_event(&self) -> bool {
        self.event.unwrap_or(!self.every_step())
    }

    /// Whether the shape multiplier scales the phase.
    pub fn shaped(&self) -> bool {
        self.shape
            .unwrap_or(matches!(self.name.as_str(), "forward" | "backward"))
    }

    /// Whether a device's `compute_scale` slows the phase.
    pub fn is_compute(&self) -> bool {
        self.compute.unwrap_or(matches!(
            self.name.as_str(),
            "forward" | "backward" | "optimizer"
        ))
    }

    /// The level of `metric` a phase shows when neither it nor a device sets one.
    pub fn default_level(&self, metric: &str) -> Option<f64> {
        if metric != "util_gpu" {
            return None;
        }
        Some(match self.name.as_str() {
            "data" => 2.0,
            "forward" => 97.0,
            "backward" => 98.0,
            "optimizer" => 90.0,
            _ => 10.0,
        })
    }
}
