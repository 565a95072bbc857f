//! One simulated device: its static facts, the patterns its metrics play, its processes.

use std::collections::BTreeMap;
use std::sync::Arc;

use nvml_sim_workload::Schedule;
use serde::Deserialize;

use super::address::{default_pci, generated_uuid, parse_bus_id, Hex, PciAddress};
use super::defaults::default_pattern;
use super::preset::{self, Facts};
use crate::metric::{self, Metric};
use crate::pattern::{FromWorkload, Kind, Noise, NoiseKey, Pattern};

mod mig;

/// A device as written in the scenario file; every fact is optional.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceFile {
    preset: Option<String>,
    #[serde(default = "one")]
    count: u32,
    name: Option<String>,
    uuid: Option<String>,
    pci_bus_id: Option<String>,
    pci_device_id: Option<Hex>,
    pci_subsystem_id: Option<Hex>,
    architecture: Option<u32>,
    cuda_compute_capability: Option<(i32, i32)>,
    memory_total_mib: Option<u64>,
    memory_reserved_mib: Option<u64>,
    power_limit_w: Option<f64>,
    max_sm_clock_mhz: Option<u32>,
    max_mem_clock_mhz: Option<u32>,
    max_graphics_clock_mhz: Option<u32>,
    max_video_clock_mhz: Option<u32>,
    pcie_max_gen: Option<u32>,
    pcie_max_width: Option<u32>,
    temp_shutdown_c: Option<u32>,
    temp_slowdown_c: Option<u32>,
    temp_gpu_max_c: Option<u32>,
    temp_mem_max_c: Option<u32>,
    nvlink_links: Option<u32>,
    gpm: Option<bool>,
    #[serde(default)]
    unsupported: Vec<String>,
    #[serde(default)]
    no_permission: Vec<String>,
    #[serde(default)]
    metrics: BTreeMap<Metric, Pattern>,
    #[serde(default)]
    processes: Vec<Process>,
    /// MIG devices of this GPU, in slot order; MIG mode is on when any is given
    /// (`mig.rs`).
    #[serde(default)]
    mig: Vec<DeviceFile>,
    /// For a MIG device: its profile, e.g. `3g.40gb` (part of its name).
    profile: Option<String>,
    /// For a MIG device: its GPU instance id.
    gpu_instance_id: Option<u32>,
    /// For a MIG device: its compute instance id (default 0).
    compute_instance_id: Option<u32>,
    #[serde(default, rename = "note")]
    _note: Option<String>,
}

fn one() -> u32 {
    1
}

/// A compute process shown on a device while `from_s <= t < until_s`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Process {
    /// Process id; `"self"` in the file is the process that loaded the simulator (the
    /// recording's own process: the job, for an in-process session or the demo).
    #[serde(deserialize_with = "pid_or_self")]
    pub pid: u32,
    /// Device memory it holds, MiB.
    pub used_mib: u64,
    /// When it appears (default 0).
    #[serde(default)]
    pub from_s: f64,
    /// When it exits (default never).
    pub until_s: Option<f64>,
    /// Its share of SM time, %, as `nvmlDeviceGetProcessUtilization` reports it (default:
    /// no samples for it).
    pub sm_util: Option<u32>,
    /// The pid NVML reports for it when it runs in a container's PID namespace: the host's
    /// (default: `pid`).
    pub host_pid: Option<u32>,
}

/// A pid as written in a scenario: a number, or `"self"` for this process's id.
fn pid_or_self<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Pid {
        Number(u32),
        Name(String),
    }
    match Pid::deserialize(d)? {
        Pid::Number(n) => Ok(n),
        Pid::Name(s) if s == "self" => Ok(std::process::id()),
        Pid::Name(s) => Err(serde::de::Error::custom(format!(
            "pid `{s}`: a number, or \"self\" for the process that loads the simulator"
        ))),
    }
}

impl Process {
    /// The pid NVML reports: the host's when it has one.
    pub fn reported_pid(&self) -> u32 {
        self.host_pid.unwrap_or(self.pid)
    }

    /// Whether the process is running at simulated time `t`.
    pub fn alive(&self, t: f64) -> bool {
        t >= self.from_s && self.until_s.is_none_or(|u| t < u)
    }
}

/// A device ready to be played.
#[derive(Debug, Clone)]
pub struct Device {
    /// Position in the device table (`nvmlDeviceGetHandleByIndex`).
    pub index: u32,
    /// Model facts after preset and per-device overrides.
    pub facts: Facts,
    /// The name (owned, since a scenario may override it).
    pub name: String,
    /// `GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`.
    pub uuid: String,
    /// PCI address.
    pub pci: PciAddress,
    /// Whether GPM is supported.
    #[cfg_attr(feature = "old-driver", allow(dead_code))]
    pub gpm: bool,
    /// Functions that answer NOT_SUPPORTED on this device.
    pub unsupported: Vec<String>,
    /// Functions that answer NO_PERMISSION on this device.
    pub no_permission: Vec<String>,
    /// Running compute processes.
    pub processes: Vec<Process>,
    /// MIG devices of this GPU in slot order (MIG mode is on when any).
    pub mig: Vec<Device>,
    /// For a MIG device: `(GPU instance id, compute instance id)`; its `index` is its GPU's.
    pub instance: Option<(u32, u32)>,
    patterns: Vec<Pattern>,
    seed: u64,
}

impl Device {
    /// The value of `metric` at simulated time `t`, clamped to the metric's range.
    pub fn value(&self, metric: Metric, t: f64) -> f64 {
        let key = NoiseKey {
            seed: self.seed,
            device: self.index,
            metric,
        };
        // Validation rejected follow cycles, so this recursion ends within COUNT levels.
        let v = self.patterns[metric as usize].eval(t, key, |source| self.value(source, t));
        let (lo, mut hi) = metric.range();
        if metric == Metric::MemUsedMib {
            hi = self
                .facts
                .memory_total_mib
                .saturating_sub(self.facts.memory_reserved_mib) as f64;
        }
        if v.is_nan() {
            lo
        } else {
            v.clamp(lo, hi)
        }
    }

    /// The value rounded to the nearest whole number, as NVML's integer outputs need.
    pub fn value_u32(&self, metric: Metric, t: f64) -> u32 {
        self.value(metric, t).round().clamp(0.0, u32::MAX as f64) as u32
    }

    /// The mean of `metric` over `[t1, t2]` (midpoint rule), as an interval counter reads it.
    #[cfg_attr(feature = "old-driver", allow(dead_code))]
    pub fn mean(&self, metric: Metric, t1: f64, t2: f64) -> f64 {
        const POINTS: u32 = 32;
        let dt = (t2 - t1) / f64::from(POINTS);
        (0..POINTS)
            .map(|i| self.value(metric, t1 + dt * (f64::from(i) + 0.5)))
            .sum::<f64>()
            / f64::from(POINTS)
    }

    /// The compute processes alive at `t`.
    pub fn processes_at(&self, t: f64) -> impl Iterator<Item = &Process> {
        self.processes.iter().filter(move |p| p.alive(t))
    }
}

impl DeviceFile {
    /// How many table entries this file entry becomes.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Resolves one copy of this entry into table position `index`; metrics the
    /// scenario's workload drives play its `schedule` unless this entry sets them.
    pub fn resolve(
        &self,
        index: u32,
        seed: u64,
        scenario_name: &str,
        schedule: Option<&Arc<Schedule>>,
    ) -> Result<Device, String> {
        let mut d = self.resolve_with(index, seed, scenario_name, schedule, None)?;
        d.mig = self
            .mig
            .iter()
            .enumerate()
            .map(|(slot, m)| {
                m.resolve_mig(
                    &d,
                    self.preset.as_deref(),
                    slot,
                    seed,
                    scenario_name,
                    schedule,
                )
                .map_err(|e| format!("mig[{slot}]: {e}"))
            })
            .collect::<Result<_, _>>()?;
        if !d.mig.is_empty() {
            d.unsupported
                .extend(mig::UNSUPPORTED_ON_MIG_GPU.map(String::from));
        }
        Ok(d)
    }

    /// [`DeviceFile::resolve`] without MIG devices; `preset_fallback` is the preset used
    /// when this entry names none (a MIG device's GPU's).
    fn resolve_with(
        &self,
        index: u32,
        seed: u64,
        scenario_name: &str,
        schedule: Option<&Arc<Schedule>>,
        preset_fallback: Option<&str>,
    ) -> Result<Device, String> {
        if self.count == 0 {
            return Err("`count` must be at least 1".into());
        }
        let preset_name = self
            .preset
            .as_deref()
            .or(preset_fallback)
            .unwrap_or(preset::DEFAULT);
        let mut facts = preset::lookup(preset_name).ok_or_else(|| {
            format!(
                "unknown preset `{preset_name}` (known: {})",
                preset::NAMES.join(", ")
            )
        })?;
        self.override_facts(&mut facts);
        let gpm = self.gpm.unwrap_or(facts.architecture == 9);
        if self.count > 1 && (self.pci_bus_id.is_some() || self.uuid.is_some()) {
            return Err(
                "`pci_bus_id` and `uuid` cannot be given with `count` > 1 (they would repeat)"
                    .into(),
            );
        }
        let pci = match &self.pci_bus_id {
            Some(text) => parse_bus_id(text)?,
            None => default_pci(index),
        };
        let uuid = match &self.uuid {
            Some(u) => u.clone(),
            None => generated_uuid(seed, scenario_name, index),
        };
        for name in self.unsupported.iter().chain(&self.no_permission) {
            super::check_function_name(name)?;
        }
        for p in &self.processes {
            if p.until_s.is_some_and(|u| u < p.from_s) {
                return Err(format!("process {}: `until_s` is before `from_s`", p.pid));
            }
        }
        let patterns = self.patterns(&facts, schedule)?;
        Ok(Device {
            index,
            name: self.name.clone().unwrap_or_else(|| facts.name.to_owned()),
            facts,
            uuid,
            pci,
            gpm,
            unsupported: self.unsupported.clone(),
            no_permission: self.no_permission.clone(),
            processes: self.processes.clone(),
            mig: Vec::new(),
            instance: None,
            patterns,
            seed,
        })
    }

    fn override_facts(&self, f: &mut Facts) {
        macro_rules! take {
            ($($field:ident),*) => { $(if let Some(v) = self.$field { f.$field = v; })* };
        }
        take!(
            architecture,
            memory_total_mib,
            memory_reserved_mib,
            power_limit_w,
            max_sm_clock_mhz,
            max_mem_clock_mhz,
            max_graphics_clock_mhz,
            max_video_clock_mhz,
            pcie_max_gen,
            pcie_max_width,
            temp_shutdown_c,
            temp_slowdown_c,
            temp_gpu_max_c,
            temp_mem_max_c,
            nvlink_links
        );
        if let Some(Hex(id)) = self.pci_device_id {
            f.pci_device_id = id;
        }
        if let Some(Hex(id)) = self.pci_subsystem_id {
            f.pci_subsystem_id = id;
        }
        if let Some(cc) = self.cuda_compute_capability {
            f.compute_capability = cc;
        }
    }

    /// The pattern of every metric: the file's, else the workload's for the metrics it
    /// drives (falling back to the default where it sets no level), else the default for
    /// these facts.
    fn patterns(
        &self,
        facts: &Facts,
        schedule: Option<&Arc<Schedule>>,
    ) -> Result<Vec<Pattern>, String> {
        let used: u64 = self.processes.iter().map(|p| p.used_mib).sum();
        let driven: Vec<&str> = schedule.map_or_else(Vec::new, |s| s.workload().metric_names());
        let patterns: Vec<Pattern> = Metric::ALL
            .iter()
            .map(|m| {
                if let Some(p) = self.metrics.get(m) {
                    return p.clone();
                }
                let default = default_pattern(*m, facts, used);
                match schedule {
                    Some(s) if driven.contains(&m.name()) => Pattern {
                        kind: Kind::Workload(FromWorkload {
                            schedule: Arc::clone(s),
                            fallback: Box::new(default),
                        }),
                        noise: s.workload().noise_of(m.name()).map(|amplitude| Noise {
                            amplitude,
                            period_s: crate::pattern::DEFAULT_NOISE_PERIOD_S,
                        }),
                        min: None,
                        max: None,
                    },
                    _ => default,
                }
            })
            .collect();
        for start in Metric::ALL {
            let mut chain = vec![start.name()];
            let mut at = *start;
            while let Some(next) = patterns[at as usize].follows() {
                chain.push(next.name());
                if next == *start || chain.len() > metric::COUNT {
                    return Err(format!(
                        "metrics: `follow` goes round in a circle: {}",
                        chain.join(" -> ")
                    ));
                }
                at = next;
            }
        }
        Ok(patterns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device(json: &str) -> Result<Device, String> {
        let file: DeviceFile = serde_json::from_str(json).map_err(|e| e.to_string())?;
        file.resolve(0, 0, "test", None)
    }

    #[test]
    fn defaults_come_from_the_preset_and_follow_utilization() {
        let d = device(r#"{"metrics": {"util_gpu": 100}}"#).expect("valid");
        assert_eq!(d.name, "NVIDIA H100 80GB HBM3");
        assert!(d.gpm, "Hopper has GPM by default");
        assert_eq!(d.value(Metric::PowerW, 0.0), 0.85 * 700.0);
        assert_eq!(d.value(Metric::SmClockMhz, 0.0), 1980.0);
        assert_eq!(d.value(Metric::GraphicsClockMhz, 0.0), 1980.0);
        assert_eq!(d.value(Metric::VideoClockMhz, 0.0), 1755.0);
        assert_eq!(d.value(Metric::PcieGen, 0.0), 5.0);
    }

    #[test]
    fn overrides_win_over_the_preset() {
        let d = device(
            r#"{"preset": "rtx-3090", "name": "Custom", "power_limit_w": 300, "pci_device_id": "0x220410DE",
                "pci_bus_id": "0000:41:00.0", "uuid": "GPU-1"}"#,
        )
        .expect("valid");
        assert_eq!(d.name, "Custom");
        assert_eq!(d.facts.power_limit_w, 300.0);
        assert_eq!(d.facts.architecture, 7);
        assert!(!d.gpm);
        assert_eq!(
            d.pci,
            PciAddress {
                domain: 0,
                bus: 0x41,
                device: 0
            }
        );
        assert_eq!(d.uuid, "GPU-1");
    }

    #[test]
    fn values_are_clamped_to_the_metric_range() {
        let d = device(r#"{"metrics": {"util_gpu": 180, "mem_used_mib": 1e9}}"#).expect("valid");
        assert_eq!(d.value(Metric::UtilGpu, 0.0), 100.0);
        assert_eq!(d.value(Metric::MemUsedMib, 0.0), (81_559 - 512) as f64);
    }

    #[test]
    fn follow_cycles_are_rejected() {
        let err = device(
            r#"{"metrics": {"power_w": {"follow": "temp_c"}, "temp_c": {"follow": "power_w"}}}"#,
        )
        .expect_err("cycle");
        assert!(err.contains("circle"), "{err}");
    }

    #[test]
    fn mistakes_are_explained() {
        for (json, needle) in [
            (r#"{"preset": "GTX-480"}"#, "unknown preset"),
            (r#"{"pci_bus_id": "18:00"}"#, "pci_bus_id"),
            (r#"{"count": 2, "uuid": "GPU-1"}"#, "count"),
            (
                r#"{"unsupported": ["nvmlDeviceGetPower"]}"#,
                "unknown NVML function",
            ),
            (r#"{"power_limit": 300}"#, "unknown field `power_limit`"),
            (r#"{"metrics": {"power": 1}}"#, "unknown metric `power`"),
            (r#"{"pci_device_id": "0xZZ"}"#, "not a 32-bit number"),
        ] {
            let err = device(json).expect_err(json);
            assert!(err.contains(needle), "{json}: {err}");
        }
    }

    #[test]
    fn a_process_of_self_is_the_loading_process() {
        let d = device(
            r#"{"processes": [{"pid": "self", "used_mib": 10}, {"pid": 7, "used_mib": 1}]}"#,
        )
        .expect("valid");
        let pids: Vec<u32> = d.processes_at(0.0).map(|p| p.pid).collect();
        assert_eq!(pids, [std::process::id(), 7]);
        let err =
            device(r#"{"processes": [{"pid": "me", "used_mib": 1}]}"#).expect_err("not a pid");
        assert!(err.contains("self"), "{err}");
    }

    #[test]
    fn processes_appear_and_exit_on_time() {
        let d = device(r#"{"processes": [{"pid": 1, "used_mib": 10}, {"pid": 2, "used_mib": 20, "from_s": 5, "until_s": 8}]}"#)
            .expect("valid");
        let pids = |t| d.processes_at(t).map(|p| p.pid).collect::<Vec<_>>();
        assert_eq!(pids(0.0), [1]);
        assert_eq!(pids(6.0), [1, 2]);
        assert_eq!(pids(8.0), [1]);
        assert_eq!(
            d.value(Metric::MemUsedMib, 0.0),
            30.0,
            "default memory = sum of processes"
        );
    }
}
