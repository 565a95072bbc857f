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

mod health;
mod mig;
mod process;

pub use health::{Health, HealthFile};
pub use process::Process;

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
    pcie_device_max_gen: Option<u32>,
    /// Health counters (`health.rs`).
    #[serde(default)]
    health: HealthFile,
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
    /// Max PCIe generation of the GPU alone (`nvmlDeviceGetGpuMaxPcieLinkGeneration`, which
    /// the `old-driver` build does not export).
    #[cfg_attr(feature = "old-driver", allow(dead_code))]
    pub pcie_device_max_gen: u32,
    /// Health counters (ECC, remapped rows, retired pages, NVLink errors).
    pub health: Health,
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
        let preset_gen = facts.pcie_max_gen;
        self.override_facts(&mut facts);
        // `pcie_max_gen` is the lower of the GPU's and the slot's: a scenario that lowers it
        // puts the preset's GPU in a slower slot; one that raises it has a faster GPU.
        let pcie_device_max_gen = self
            .pcie_device_max_gen
            .unwrap_or(preset_gen.max(facts.pcie_max_gen));
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
        let health = self.health.resolve(&facts, preset::has_ecc(preset_name))?;
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
            pcie_device_max_gen,
            health,
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
mod tests;
