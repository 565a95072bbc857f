//! Reading GPUs through NVML: static facts, the capability probe, and one sample row.
//!
//! Each metric is read by its own NVML call and fails on its own: a metric whose call says
//! NOT_SUPPORTED, NO_PERMISSION or "symbol absent" is marked unavailable once, with the
//! reason, and never asked again; a transient error leaves a gap and is counted; GPU_IS_LOST
//! stops that device's series with an event while the others go on.

use std::collections::BTreeMap;

use crate::metric::GpuMetric;
use crate::nvml::{ClockType, Device, Nvml, NvmlError, TemperatureThreshold};
use crate::report::{Capability, DeviceInfo};

use super::cost::CallStats;
use super::facts::Facts;
pub use super::facts::{architecture_name, nvml_info, ARCHITECTURES};

/// Seconds between reads of the slow metrics (temperature, PCIe link and throughput, NVLink, GPM).
/// `nvmlDeviceGetPcieThroughput` measures over a 20 ms window per call, GPM needs more than 100 ms
/// between samples, and temperature moves slowly (docs/nvml-facts.md, "Sampling periods and call
/// cost").
pub const SLOW_PERIOD_S: f64 = 1.0;

use crate::nvml::field_ids::NVLINK_LINK_COUNT as FI_NVLINK_LINK_COUNT;

/// Bytes in a MiB, the unit of the memory columns.
const MIB: f64 = 1_048_576.0;

/// GPM metric ids in the order of [`GPM_METRICS`].
const GPM_IDS: [u32; 8] = [2, 3, 5, 10, 21, 20, 60, 61];
/// Where each GPM id lands.
const GPM_METRICS: [GpuMetric; 8] = [
    GpuMetric::GpmSmUtil,
    GpuMetric::GpmSmOccupancy,
    GpuMetric::GpmTensor,
    GpuMetric::GpmDramBw,
    GpuMetric::GpmPcieRx,
    GpuMetric::GpmPcieTx,
    GpuMetric::GpmNvlinkRx,
    GpuMetric::GpmNvlinkTx,
];

/// What one read produced for the sampler to act on.
#[derive(Debug)]
pub enum Outcome {
    /// The metric became unavailable for good.
    Unavailable(GpuMetric, String),
    /// A transient error: a gap in the series.
    Transient(NvmlError),
    /// The GPU fell off the bus.
    Lost(NvmlError),
}

fn reason(e: &NvmlError) -> String {
    if e.missing_symbol {
        format!("{} is not exported by this NVML (older driver)", e.function)
    } else {
        format!("{} from {}", e.code_name(), e.function)
    }
}

/// One GPU being sampled.
pub struct Gpu {
    /// Position in the recording.
    pub pos: usize,
    /// NVML index.
    pub index: u32,
    handle: Device,
    /// Why each metric is off, `None` while it is read.
    off: [Option<String>; GpuMetric::COUNT],
    /// Seen at least one value.
    seen: [bool; GpuMetric::COUNT],
    /// Set once the GPU is lost.
    pub lost: bool,
    /// The last NVLink counters (µs, rx KiB, tx KiB), for rates.
    pub(super) nvlink_prev: super::slow::Counters,
    /// The function that last answered each metric, for the report.
    via: [Option<&'static str>; GpuMetric::COUNT],
    /// Metrics whose field was refused for good: read through their single call.
    no_field: [bool; GpuMetric::COUNT],
    /// Whether GPM is read on this device.
    pub gpm: bool,
    /// Calls for the static facts that failed other than with "not supported here".
    open_errors: Vec<NvmlError>,
}

impl Gpu {
    /// Opens device `index` and reads its static facts. `Err` when the handle itself cannot be
    /// had (the GPU is then reported without samples).
    pub fn open(
        nvml: &Nvml,
        pos: usize,
        index: u32,
        want_gpm: bool,
        stats: &mut CallStats,
    ) -> Result<(Gpu, DeviceInfo), NvmlError> {
        let handle = stats.time("nvmlDeviceGetHandleByIndex", || nvml.device_by_index(index))?;
        Ok(Gpu::open_handle(
            nvml,
            pos,
            index,
            handle,
            want_gpm.then_some(handle),
        ))
    }

    /// Reads the static facts of the device behind `handle` (a GPU's, or a MIG device's
    /// from `collect::mig`), recorded as device `index`. GPM is read when `gpm_probe` (the
    /// device whose GPM support decides: the GPU for a MIG device) supports it.
    pub fn open_handle(
        nvml: &Nvml,
        pos: usize,
        index: u32,
        handle: Device,
        gpm_probe: Option<Device>,
    ) -> (Gpu, DeviceInfo) {
        let want_gpm = gpm_probe.is_some();
        let mut info = DeviceInfo {
            index,
            ..Default::default()
        };
        // A fact this GPU or driver does not have is left out; any other failure is kept
        // for the report's faults ([`Gpu::take_open_errors`]).
        let mut f = Facts::default();
        info.name = f.get(nvml.name(handle));
        info.uuid = f.get(nvml.uuid(handle));
        if let Some(pci) = f.get(nvml.pci_info(handle)) {
            info.pci_bus_id = Some(pci.bus_id);
            info.pci_device_id = Some(pci.pci_device_id);
        }
        info.architecture = f.get(nvml.architecture(handle)).map(architecture_name);
        info.compute_capability = f
            .get(nvml.cuda_compute_capability(handle))
            .map(|(a, b)| format!("{a}.{b}"));
        if let Some(m) = f.get(nvml.memory_info(handle)) {
            info.memory_total_mib = Some(m.total as f64 / MIB);
            info.memory_reserved_mib = m.reserved.map(|r| r as f64 / MIB);
        }
        info.power_limit_w = f
            .get(nvml.enforced_power_limit_mw(handle))
            .map(|mw| f64::from(mw) / 1000.0);
        info.max_sm_clock_mhz = f
            .get(nvml.max_clock_mhz(handle, ClockType::Sm))
            .map(f64::from);
        info.max_mem_clock_mhz = f
            .get(nvml.max_clock_mhz(handle, ClockType::Mem))
            .map(f64::from);
        info.max_graphics_clock_mhz = f
            .get(nvml.max_clock_mhz(handle, ClockType::Graphics))
            .map(f64::from);
        info.pcie_max_gen = f.get(nvml.max_pcie_link_gen(handle));
        info.pcie_max_width = f.get(nvml.max_pcie_link_width(handle));
        info.temp_slowdown_c = f
            .get(nvml.temperature_threshold_c(handle, TemperatureThreshold::Slowdown))
            .map(f64::from);
        let mut links = [crate::nvml::FieldValue::new(FI_NVLINK_LINK_COUNT)];
        if f.get(nvml.field_values(handle, &mut links)).is_some() {
            info.nvlink_links = links[0].result.as_ref().ok().map(|v| *v as u32);
        }
        let gpm = gpm_probe.is_some_and(|p| f.get(nvml.gpm_supported(p)).unwrap_or(false));
        info.gpm = gpm;
        let mut gpu = Gpu {
            pos,
            index,
            handle,
            off: Default::default(),
            seen: [false; GpuMetric::COUNT],
            lost: false,
            nvlink_prev: None,
            via: [None; GpuMetric::COUNT],
            no_field: [false; GpuMetric::COUNT],
            gpm,
            open_errors: f.errors,
        };
        if !gpm {
            let why = if want_gpm {
                "GPM is not supported on this GPU (Hopper and newer only)"
            } else {
                "GPM disabled by configuration (no_gpm)"
            };
            for m in GPM_METRICS {
                gpu.off[m.index()] = Some(why.to_string());
            }
        }
        if info.nvlink_links.unwrap_or(0) == 0 {
            for m in [GpuMetric::NvlinkRx, GpuMetric::NvlinkTx] {
                gpu.off[m.index()] = Some("no NVLink on this GPU (link count 0 or unknown)".into());
            }
        }
        (gpu, info)
    }

    /// The calls for the static facts at [`Gpu::open`] that failed other than with "not
    /// supported here" (once: the list is emptied), for the report's faults.
    pub fn take_open_errors(&mut self) -> Vec<NvmlError> {
        std::mem::take(&mut self.open_errors)
    }

    /// The handle.
    pub fn handle(&self) -> Device {
        self.handle
    }

    /// Capabilities so far: what was read at least once, and why the rest is off.
    pub fn capabilities(&self) -> BTreeMap<String, Capability> {
        GpuMetric::ALL
            .iter()
            .map(|m| {
                let cap = match (&self.off[m.index()], self.seen[m.index()]) {
                    (Some(why), _) => Capability::unavailable(why.clone()),
                    (None, true) => Capability {
                        via: self.via[m.index()].map(str::to_string),
                        ..Capability::available()
                    },
                    (None, false) => Capability::unavailable("no value was read yet"),
                };
                (m.name().to_string(), cap)
            })
            .collect()
    }

    pub(super) fn is_on(&self, m: GpuMetric) -> bool {
        self.off[m.index()].is_none()
    }

    /// Whether `m`'s field may still be asked for.
    pub(super) fn field_ok(&self, m: GpuMetric) -> bool {
        !self.no_field[m.index()]
    }

    /// Records that `function` answered `metrics` (so they have been seen, too).
    pub(super) fn answered(&mut self, metrics: &[GpuMetric], function: &'static str) {
        for m in metrics {
            self.seen[m.index()] = true;
            self.via[m.index()] = Some(function);
        }
    }

    /// After a field for `metrics` was not answered: a refusal for good (NOT_SUPPORTED and
    /// the like) sends them to their single calls from now on; anything else is tried again.
    pub(super) fn field_failed(&mut self, metrics: &[GpuMetric], r: Option<&NvmlError>) {
        if r.is_some_and(NvmlError::is_unavailable) {
            for m in metrics {
                self.no_field[m.index()] = true;
            }
        }
    }

    /// Handles one call's result for the metrics it feeds.
    pub(super) fn take<T>(
        &mut self,
        metrics: &[GpuMetric],
        r: Result<T, NvmlError>,
        out: &mut Vec<Outcome>,
    ) -> Option<T> {
        match r {
            Ok(v) => {
                for m in metrics {
                    self.seen[m.index()] = true;
                }
                Some(v)
            }
            Err(e) if e.is_gpu_lost() => {
                self.lost = true;
                out.push(Outcome::Lost(e));
                None
            }
            // A metric that already gave values does not lose support mid-run on real
            // hardware: a later NOT_SUPPORTED is a driver hiccup, kept as a gap.
            Err(e) if e.is_unavailable() && !metrics.iter().any(|m| self.seen[m.index()]) => {
                let why = reason(&e);
                for m in metrics {
                    self.off[m.index()] = Some(why.clone());
                    out.push(Outcome::Unavailable(*m, why.clone()));
                }
                None
            }
            Err(e) => {
                out.push(Outcome::Transient(e));
                None
            }
        }
    }

    /// Reads one row. `slow` also reads the slow metrics. Returns what went wrong.
    pub fn sample(
        &mut self,
        nvml: &Nvml,
        slow: bool,
        row: &mut [f32; GpuMetric::COUNT],
        stats: &mut CallStats,
    ) -> Vec<Outcome> {
        use GpuMetric as M;
        let h = self.handle;
        let mut out = Vec::new();
        macro_rules! read {
            ($metrics:expr, $f:literal, $call:expr) => {{
                let metrics: &[GpuMetric] = &$metrics;
                if !self.lost && metrics.iter().any(|m| self.is_on(*m)) {
                    let r = stats.time($f, || $call);
                    let v = self.take(metrics, r, &mut out);
                    if v.is_some() {
                        self.answered(metrics, $f);
                    }
                    v
                } else {
                    None
                }
            }};
        }
        if let Some(u) = read!(
            [M::UtilGpu, M::UtilMem],
            "nvmlDeviceGetUtilizationRates",
            nvml.utilization(h)
        ) {
            row[M::UtilGpu.index()] = u.gpu as f32;
            row[M::UtilMem.index()] = u.memory as f32;
        }
        if let Some(m) = read!([M::MemUsed], "nvmlDeviceGetMemoryInfo", nvml.memory_info(h)) {
            row[M::MemUsed.index()] = (m.in_use() as f64 / MIB) as f32;
        }
        if let Some(p) = read!(
            [M::Power],
            "nvmlDeviceGetPowerUsage",
            nvml.power_usage_mw(h)
        ) {
            row[M::Power.index()] = p as f32 / 1000.0;
        }
        if let Some(c) = read!(
            [M::SmClock],
            "nvmlDeviceGetClockInfo",
            nvml.clock_mhz(h, ClockType::Sm)
        ) {
            row[M::SmClock.index()] = c as f32;
        }
        if let Some(c) = read!(
            [M::MemClock],
            "nvmlDeviceGetClockInfo",
            nvml.clock_mhz(h, ClockType::Mem)
        ) {
            row[M::MemClock.index()] = c as f32;
        }
        if let Some(c) = read!(
            [M::GraphicsClock],
            "nvmlDeviceGetClockInfo",
            nvml.clock_mhz(h, ClockType::Graphics)
        ) {
            row[M::GraphicsClock.index()] = c as f32;
        }
        if let Some(p) = read!(
            [M::Pstate],
            "nvmlDeviceGetPerformanceState",
            nvml.performance_state(h)
        ) {
            // P-state 32 is "unknown": a gap, not a value.
            if p <= 15 {
                row[M::Pstate.index()] = p as f32;
            }
        }
        if let Some(r) = read!(
            [M::ClockReasons],
            "nvmlDeviceGetCurrentClocksEventReasons",
            nvml.clock_event_reasons(h)
        ) {
            row[M::ClockReasons.index()] = r as f32;
        }
        if !slow {
            return out;
        }
        if let Some(g) = read!(
            [M::PcieGen],
            "nvmlDeviceGetCurrPcieLinkGeneration",
            nvml.pcie_link_gen(h)
        ) {
            row[M::PcieGen.index()] = g as f32;
        }
        if let Some(w) = read!(
            [M::PcieWidth],
            "nvmlDeviceGetCurrPcieLinkWidth",
            nvml.pcie_link_width(h)
        ) {
            row[M::PcieWidth.index()] = w as f32;
        }
        self.sample_slow(nvml, row, stats, &mut out);
        out
    }

    /// Stores GPM metrics computed between two samples.
    pub fn store_gpm(
        &mut self,
        r: Result<Vec<Result<f64, NvmlError>>, NvmlError>,
        row: &mut [f32; GpuMetric::COUNT],
        out: &mut Vec<Outcome>,
    ) {
        let Some(values) = self.take(&GPM_METRICS, r, out) else {
            return;
        };
        for (m, v) in GPM_METRICS.iter().zip(values) {
            match v {
                Ok(x) => {
                    self.seen[m.index()] = true;
                    row[m.index()] = x as f32;
                }
                Err(e) if e.is_unavailable() && !self.seen[m.index()] => {
                    let why = reason(&e);
                    self.off[m.index()] = Some(why.clone());
                    out.push(Outcome::Unavailable(*m, why));
                }
                Err(e) => out.push(Outcome::Transient(e)),
            }
        }
    }

    /// GPM metric ids read on each slow tick.
    pub fn gpm_ids() -> &'static [u32] {
        &GPM_IDS
    }
}
