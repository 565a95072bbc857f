//! The deterministic timeline of a workload: step `k` → its phases' intervals, and the
//! state (phase and levels) of any device at any simulated time.
//!
//! Devices step in lockstep, phase by phase: every phase lasts as long as on the slowest
//! device (largest `compute_scale` for compute phases), and a faster device shows the
//! `wait` state for the rest of it. The trainer is rank 0 (device 0): its CPU-side phase
//! durations are these lockstep durations, as in a synchronous data-parallel job whose
//! collectives make every rank wait for the slowest.

use crate::rng::{self, Purpose};
use crate::spec::{DeviceMod, PhaseSpec, Workload, IDLE, MAX_STEPS, WAIT};

/// One phase of one step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhaseSpan {
    /// Index of the phase in [`Workload::phases`].
    pub phase: usize,
    /// Start, simulated seconds.
    pub start_s: f64,
    /// End, simulated seconds: the CPU-side (lockstep) end the trainer marks.
    pub end_s: f64,
    /// How long a device with `compute_scale` 1 is busy in it, simulated seconds.
    pub busy_s: f64,
    /// GPU-measured duration on the trainer's device (0), when the phase has `gpu_ms`.
    pub gpu_s: Option<f64>,
}

impl PhaseSpan {
    /// CPU-side duration, simulated seconds.
    pub fn duration_s(&self) -> f64 {
        self.end_s - self.start_s
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct StepRec {
    start_s: f64,
    end_s: f64,
    shape: f64,
    first: usize,
    count: usize,
}

/// One step of the schedule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step<'a> {
    /// 0-based step number.
    pub index: u64,
    /// Start, simulated seconds.
    pub start_s: f64,
    /// End, simulated seconds (the next step starts here).
    pub end_s: f64,
    /// The step's shape multiplier (1 without `shapes`).
    pub shape: f64,
    /// Its phases in order, back to back from `start_s` to `end_s`.
    pub phases: &'a [PhaseSpan],
}

impl Step<'_> {
    /// Duration, simulated seconds.
    pub fn duration_s(&self) -> f64 {
        self.end_s - self.start_s
    }
}

/// The timeline of a workload over a horizon.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    workload: Workload,
    steps: Vec<StepRec>,
    spans: Vec<PhaseSpan>,
}

impl Schedule {
    /// Computes every complete step that ends by `duration_s` (simulated seconds) for a
    /// workload that passed [`Workload::validate`]. Step `k` is the same whatever the
    /// horizon: its draws depend only on the seed, `k` and the phase.
    pub fn new(workload: &Workload, duration_s: f64) -> Schedule {
        let seed = workload.seed();
        let max_scale = workload.max_compute_scale();
        let trainer_scale = workload.device_mod(0).map_or(1.0, |d| d.compute_scale);
        let mut steps = Vec::new();
        let mut spans = Vec::new();
        let mut t = workload.start_s;
        let mut k: u64 = 0;
        while (k as f64) < MAX_STEPS {
            let shape = workload.shapes.as_ref().map_or(1.0, |s| {
                (s.sigma * rng::normal(seed, k)).exp().clamp(s.min, s.max)
            });
            let first = spans.len();
            let start = t;
            for (i, p) in workload.phases.iter().enumerate() {
                if !p.runs_in(k) {
                    continue;
                }
                let jitter = p.jitter.unwrap_or(workload.jitter);
                let j = 1.0 + jitter * rng::symmetric(seed, k, i as u64, Purpose::Jitter);
                let shaped = if p.shaped() { shape } else { 1.0 };
                let busy = p.ms / 1000.0 * j * shaped;
                let (lockstep, own) = if p.is_compute() {
                    (max_scale, trainer_scale)
                } else {
                    (1.0, 1.0)
                };
                let gpu_s = p.gpu_ms.map(|g| {
                    let jg = 1.0 + jitter * rng::symmetric(seed, k, i as u64, Purpose::GpuJitter);
                    g / 1000.0 * jg * shaped * own
                });
                spans.push(PhaseSpan {
                    phase: i,
                    start_s: t,
                    end_s: t + busy * lockstep,
                    busy_s: busy,
                    gpu_s,
                });
                t += busy * lockstep;
            }
            if t > duration_s || t <= start {
                spans.truncate(first);
                break;
            }
            steps.push(StepRec {
                start_s: start,
                end_s: t,
                shape,
                first,
                count: spans.len() - first,
            });
            k += 1;
        }
        Schedule {
            workload: workload.clone(),
            steps,
            spans,
        }
    }

    /// The workload this schedule plays.
    pub fn workload(&self) -> &Workload {
        &self.workload
    }

    /// Number of complete steps.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether there is no step at all.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Step `k`, if the schedule reaches it.
    pub fn step(&self, k: usize) -> Option<Step<'_>> {
        let r = self.steps.get(k)?;
        Some(Step {
            index: k as u64,
            start_s: r.start_s,
            end_s: r.end_s,
            shape: r.shape,
            phases: &self.spans[r.first..r.first + r.count],
        })
    }

    /// Every step in order.
    pub fn steps(&self) -> impl Iterator<Item = Step<'_>> + '_ {
        (0..self.steps.len()).filter_map(|k| self.step(k))
    }

    /// The phase a span belongs to.
    pub fn phase(&self, span: &PhaseSpan) -> &PhaseSpec {
        &self.workload.phases[span.phase]
    }

    /// When the last step ends (`start_s` without steps), simulated seconds.
    pub fn end_s(&self) -> f64 {
        self.steps.last().map_or(self.workload.start_s, |s| s.end_s)
    }

    /// What `device` is doing at simulated time `t`. Before the first step it is `idle`;
    /// after the last one the timeline replays from the first step, so a run longer than
    /// the horizon keeps its character.
    pub fn state_at(&self, t: f64, device: u32) -> State<'_> {
        let modifier = self.workload.device_mod(device);
        let mut t = t - modifier.map_or(0.0, |m| m.time_offset_s);
        let start = self.workload.start_s;
        let period = self.end_s() - start;
        if t >= self.end_s() && period > 0.0 {
            t = start + (t - start) % period;
        }
        let idle = State {
            step: None,
            phase: None,
            waiting: false,
            shape: 1.0,
            workload: &self.workload,
            modifier,
        };
        let after = self.steps.partition_point(|s| s.start_s <= t);
        let Some(rec) = after.checked_sub(1).and_then(|i| self.steps.get(i)) else {
            return idle;
        };
        if t >= rec.end_s {
            return idle;
        }
        let spans = &self.spans[rec.first..rec.first + rec.count];
        let Some(span) = spans.iter().find(|s| t >= s.start_s && t < s.end_s) else {
            return idle;
        };
        let phase = &self.workload.phases[span.phase];
        let scale = if phase.is_compute() {
            modifier.map_or(1.0, |m| m.compute_scale)
        } else {
            1.0
        };
        State {
            step: Some((after - 1) as u64),
            phase: Some(phase),
            waiting: t - span.start_s >= span.busy_s * scale,
            shape: rec.shape,
            workload: &self.workload,
            modifier,
        }
    }
}

/// What one device is doing at one moment, and the levels it shows.
#[derive(Debug, Clone, Copy)]
pub struct State<'a> {
    /// The step running, `None` while idle.
    pub step: Option<u64>,
    /// The phase running, `None` while idle.
    pub phase: Option<&'a PhaseSpec>,
    /// The device finished its share of the phase and waits for a slower one.
    pub waiting: bool,
    /// The step's shape multiplier (1 while idle).
    pub shape: f64,
    workload: &'a Workload,
    modifier: Option<&'a DeviceMod>,
}

impl State<'_> {
    /// `idle`, `wait` or the phase's name: the table its levels come from.
    pub fn name(&self) -> &str {
        match self.phase {
            None => IDLE,
            Some(_) if self.waiting => WAIT,
            Some(p) => &p.name,
        }
    }

    /// The value the device shows for `metric` (a simulator metric name), or `None` when
    /// the workload does not set it (the simulator then plays its default pattern).
    ///
    /// Order: the device's own levels for this state, then the phase's (or the
    /// workload's `idle`/`wait`), then `memory` for `mem_used_mib`, then the built-in
    /// `util_gpu` defaults. The device's `util_offset` is added to `util_gpu` in phases.
    pub fn level(&self, metric: &str) -> Option<f64> {
        let name = self.name();
        let own = self
            .modifier
            .and_then(|m| m.levels.get(name))
            .and_then(|l| l.get(metric))
            .copied();
        let table = match self.phase {
            None => &self.workload.idle,
            Some(_) if self.waiting => &self.workload.wait,
            Some(p) => &p.levels,
        };
        let value = own
            .or_else(|| table.get(metric).copied())
            .or_else(|| self.memory(metric))
            .or_else(|| match self.phase {
                None => (metric == "util_gpu").then_some(0.0),
                Some(_) if self.waiting => (metric == "util_gpu").then_some(5.0),
                Some(p) => p.default_level(metric),
            })?;
        let busy = self.phase.is_some() && !self.waiting;
        Some(match self.modifier {
            Some(m) if busy && metric == "util_gpu" => value + m.util_offset,
            _ => value,
        })
    }

    fn memory(&self, metric: &str) -> Option<f64> {
        if metric != "mem_used_mib" {
            return None;
        }
        let m = self.workload.memory.as_ref()?;
        Some(m.base_mib + m.shape_mib * self.shape)
    }
}
