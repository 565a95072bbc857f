//! Reading GPUs through NVML: opening a device, its capabilities, and one sample row.
//!
//! Metrics with an `NVML_FI_*` field id share one `nvmlDeviceGetFieldValues` call per tick
//! (`collect::fields`); the others are read by their own call. Each metric fails on its own: a metric whose call says
//! NOT_SUPPORTED, NO_PERMISSION or "symbol absent" is marked unavailable once, with the
//! reason, and never asked again; a transient error leaves a gap and is counted; GPU_IS_LOST
//! stops that device's series with an event while the others go on.

use std::collections::BTreeMap;

use crate::metric::GpuMetric;
use crate::nvml::{ClockType, Device, Nvml, NvmlError};
use crate::report::{Capability, DeviceInfo};

use super::cost::CallStats;
use super::facts::device_info;

/// Seconds between reads of the slow metrics: P-state, memory and graphics clocks, PCIe link
/// state, GPM,
/// and the single-call fallbacks of temperature and PCIe throughput when their fields are not
/// answered. `nvmlDeviceGetPcieThroughput` measures over a 20 ms window per call, GPM needs more
/// than 100 ms between samples, temperature moves slowly, the P-state (and the memory clock with
/// it) changes with load over seconds and the graphics clock is the SM clock's domain (docs/nvml-facts.md, "Sampling
/// periods and call cost"; docs/nvml-loading.md, "Calls per tick").
pub const SLOW_PERIOD_S: f64 = 1.0;

/// Bytes in a MiB, the unit of the memory columns.
pub(super) const MIB: f64 = 1_048_576.0;

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

pub(super) fn reason(e: &NvmlError) -> String {
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
    /// The last PCIe byte counters (µs, rx bytes, tx bytes), for rates.
    pub(super) pcie_prev: super::slow::Counters,
    /// The function that last answered each metric, for the report.
    via: [Option<&'static str>; GpuMetric::COUNT],
    /// Metrics whose field was refused for good: read through their single call.
    no_field: [bool; GpuMetric::COUNT],
    /// The clock-event counters' state (`collect::reasons`).
    pub(super) reasons: super::reasons::ReasonState,
    /// Whether GPM is read on this device.
    pub gpm: bool,
    /// Calls for the static facts that failed other than with "not supported here".
    open_errors: Vec<NvmlError>,
    /// Buffered mode's state (`collect::buffered`); `None` when the GPU is read every tick
    /// (the default, or after a sample type was refused).
    pub(super) buffered: Option<Box<super::buffered::Buffered>>,
    /// The driver's time of the last field batch, µs since 1970 (buffered mode places
    /// samples by it).
    pub(super) fields_at_us: Option<i64>,
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
        let (info, f) = device_info(nvml, handle, index, gpm_probe);
        let gpm = info.gpm;
        let mut gpu = Gpu {
            pos,
            index,
            handle,
            off: Default::default(),
            seen: [false; GpuMetric::COUNT],
            lost: false,
            nvlink_prev: None,
            pcie_prev: None,
            via: [None; GpuMetric::COUNT],
            no_field: [false; GpuMetric::COUNT],
            reasons: Default::default(),
            gpm,
            open_errors: f.errors,
            buffered: None,
            fields_at_us: None,
        };
        if !super::fields::batching_enabled() {
            for m in super::fields::BATCHED {
                gpu.no_field[m.index()] = true;
            }
        }
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

    /// Makes one NVML call for `metrics` (unless they are all off or the GPU is lost) and
    /// handles its result; `Some` with the value when it answered.
    pub(super) fn call<T>(
        &mut self,
        metrics: &[GpuMetric],
        function: &'static str,
        stats: &mut CallStats,
        out: &mut Vec<Outcome>,
        f: impl FnOnce() -> Result<T, NvmlError>,
    ) -> Option<T> {
        if self.lost || !metrics.iter().any(|m| self.is_on(*m)) {
            return None;
        }
        let r = stats.time(function, f);
        let v = self.take(metrics, r, out);
        if v.is_some() {
            self.answered(metrics, function);
        }
        v
    }

    /// Reads one row. `slow` also reads the slow metrics. Returns what went wrong.
    ///
    /// Every tick: utilization and the SM clock through their own calls (nvml.h has no field
    /// ids for them, `Gpu::sample_fast`), then memory and the rest (`Gpu::sample_rest`).
    pub fn sample(
        &mut self,
        nvml: &Nvml,
        slow: bool,
        row: &mut [f32; GpuMetric::COUNT],
        stats: &mut CallStats,
    ) -> Vec<Outcome> {
        let mut out = Vec::new();
        self.sample_fast(nvml, row, stats, &mut out);
        self.sample_rest(nvml, slow, row, stats, &mut out);
        out
    }

    /// Utilization and the SM clock through their single calls.
    pub(super) fn sample_fast(
        &mut self,
        nvml: &Nvml,
        row: &mut [f32; GpuMetric::COUNT],
        stats: &mut CallStats,
        o: &mut Vec<Outcome>,
    ) {
        use GpuMetric as M;
        let h = self.handle;
        if let Some(u) = self.call(
            &[M::UtilGpu, M::UtilMem],
            "nvmlDeviceGetUtilizationRates",
            stats,
            o,
            || nvml.utilization(h),
        ) {
            row[M::UtilGpu.index()] = u.gpu as f32;
            row[M::UtilMem.index()] = u.memory as f32;
        }
        let clock = "nvmlDeviceGetClockInfo";
        if let Some(c) = self.call(&[M::SmClock], clock, stats, o, || {
            nvml.clock_mhz(h, ClockType::Sm)
        }) {
            row[M::SmClock.index()] = c as f32;
        }
    }

    /// Memory, then one `nvmlDeviceGetFieldValues` call for power, temperature, the PCIe and
    /// NVLink byte counters and the clock-event counters (`collect::fields`,
    /// `collect::reasons`). `slow` adds the P-state, the memory and graphics clocks, the PCIe
    /// link state, the clock-event mask and the single-call fallbacks of fields the driver
    /// does not answer (`collect::slow`).
    pub(super) fn sample_rest(
        &mut self,
        nvml: &Nvml,
        slow: bool,
        row: &mut [f32; GpuMetric::COUNT],
        stats: &mut CallStats,
        o: &mut Vec<Outcome>,
    ) {
        use GpuMetric as M;
        let h = self.handle;
        let mem = self.call(&[M::MemUsed], "nvmlDeviceGetMemoryInfo", stats, o, || {
            nvml.memory_info(h)
        });
        if let Some(m) = mem {
            row[M::MemUsed.index()] = (m.in_use() as f64 / MIB) as f32;
        }
        self.sample_fields(nvml, slow, row, stats, o);
        if slow {
            self.sample_slow(nvml, row, stats, o);
        }
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
