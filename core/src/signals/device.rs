//! Per-GPU signals.

use crate::metric::GpuMetric;
use crate::report::{DeviceInfo, Event, SeriesData};

use super::stats::{correlation, dist, dominant_period, share, Dist, Period};
use super::timeshare::{longest_contiguous_rows, value_share, value_spans};

pub use crate::metric::LOAD_UTIL;

/// Utilization (%) below which a sample counts as "near zero" (the GPU is waiting).
pub const NEAR_ZERO_UTIL: f64 = 10.0;

/// Utilization (%) at or above which a sample counts as "busy".
pub const BUSY_UTIL: f64 = 80.0;

/// Utilization (%) that a GPU with no work stays below in every sample. The driver's
/// utilization is the share of its sample period in which any kernel ran (nvml.h,
/// `nvmlUtilization_t`), so a job that launches work at all reads well above it in some
/// sample, while a display server or a monitoring probe reads a few percent at most
/// (docs/rules.md, "No work is not waiting").
pub const NO_WORK_UTIL: f64 = 5.0;

/// Share of the current link's capacity from which a sample counts as the link busy
/// copying: a copy at full speed reaches 70–90 % of the nominal rate once protocol overhead
/// is counted, and a sample half covered by one reads about half of that, so half the
/// capacity counts a copy that fills most of its sample.
pub const PCIE_BUSY_SHARE: f64 = 0.5;

/// Utilization (%) below which a sample counts as a dip when comparing GPUs: waiting on a
/// collective shows as a drop, not always all the way to zero.
pub const DIP_UTIL: f64 = 20.0;

/// PCIe bandwidth per lane and direction, MB/s, by generation (after encoding overhead:
/// 8b/10b for gen 1–2, 128b/130b from gen 3), as published by PCI-SIG.
pub fn pcie_lane_mbs(gen: f64) -> Option<f64> {
    match gen.round() as i64 {
        1 => Some(250.0),
        2 => Some(500.0),
        3 => Some(985.0),
        4 => Some(1969.0),
        5 => Some(3938.0),
        6 => Some(7563.0),
        _ => None,
    }
}

/// Signals of one GPU.
#[derive(Debug, Clone, Default)]
pub struct DeviceSignals {
    /// NVML index.
    pub index: u32,
    /// Product name.
    pub name: String,
    /// Utilization distribution.
    pub util: Option<Dist>,
    /// Share of samples with utilization below [`NEAR_ZERO_UTIL`].
    pub util_near_zero: Option<f64>,
    /// Share of samples with utilization at or above [`BUSY_UTIL`].
    pub util_busy: Option<f64>,
    /// Number of separate stretches of near-zero utilization (runs of samples below
    /// [`NEAR_ZERO_UTIL`] between busier samples).
    pub util_dips: usize,
    /// Dominant repeat of the utilization series.
    pub util_period: Option<Period>,
    /// That repeat in seconds.
    pub util_period_s: Option<f64>,
    /// Correlation of power with utilization (does power drop when utilization drops?).
    pub power_util_corr: Option<f64>,
    /// Power distribution, W.
    pub power: Option<Dist>,
    /// Power under load over the enforced limit.
    pub power_over_limit_loaded: Option<f64>,
    /// SM clock under load, MHz.
    pub sm_clock_loaded: Option<Dist>,
    /// Median SM clock under load over the maximum SM clock.
    pub sm_clock_ratio_loaded: Option<f64>,
    /// Share of loaded samples with any throttling reason bit set.
    pub throttled_share: Option<f64>,
    /// Per throttling bit: share of loaded samples with it set.
    pub reason_shares: Vec<(u64, f64)>,
    /// Temperature distribution, °C.
    pub temp: Option<Dist>,
    /// Slowdown threshold, °C.
    pub temp_slowdown: Option<f64>,
    /// Share of loaded samples not in P0.
    pub pstate_not_p0_loaded: Option<f64>,
    /// Median current PCIe generation under load.
    pub pcie_gen_loaded: Option<f64>,
    /// Median current PCIe width under load.
    pub pcie_width_loaded: Option<f64>,
    /// Median current PCIe width over every sample: a link's width does not drop to save
    /// power as its generation does, so a narrow link shows in an idle snapshot too.
    pub pcie_width_p50: Option<f64>,
    /// Maximum PCIe generation.
    pub pcie_max_gen: Option<u32>,
    /// Maximum PCIe width.
    pub pcie_max_width: Option<u32>,
    /// PCIe receive throughput, MB/s.
    pub pcie_rx: Option<Dist>,
    /// Memory used over total.
    pub mem_used_ratio: Option<Dist>,
    /// XID events on this device: (time, code).
    pub xids: Vec<(f64, u64)>,
    /// When the device was lost, seconds.
    pub lost_at_s: Option<f64>,
    /// Spread of utilization, p95 − p5, points.
    pub util_spread: Option<f64>,
    /// Memory-controller busy (`util_mem`) distribution, %.
    pub util_mem: Option<Dist>,
    /// Power over the enforced limit, median over all samples.
    pub power_over_limit: Option<f64>,
    /// Enforced power limit, W.
    pub power_limit_w: Option<f64>,
    /// PCIe transmit throughput, MB/s.
    pub pcie_tx: Option<Dist>,
    /// Capacity of the current PCIe link (median gen × width), MB/s per direction.
    pub pcie_capacity_mbs: Option<f64>,
    /// Share of the samples with PCIe traffic in which the busier direction carries at
    /// least [`PCIE_BUSY_SHARE`] of the current link's capacity: how much of the time the
    /// link is busy copying.
    pub pcie_busy_share: Option<f64>,
    /// NVLink receive + transmit throughput, MB/s.
    pub nvlink: Option<Dist>,
    /// Mean NVLink + PCIe traffic (MB/s) in samples where utilization dips below
    /// [`DIP_UTIL`], and in the others.
    pub traffic_in_dips: Option<(f64, f64)>,
    /// GPM: SM utilization under load, %.
    pub gpm_sm_util: Option<Dist>,
    /// GPM: SM occupancy under load, %.
    pub gpm_sm_occupancy: Option<Dist>,
    /// GPM: tensor pipe activity under load, %.
    pub gpm_tensor: Option<Dist>,
    /// GPM: DRAM bandwidth under load, % of peak (idle stretches would dilute it).
    pub gpm_dram_bw: Option<Dist>,
    /// Per sample time: whether utilization was below [`DIP_UTIL`] (`None` = no sample).
    pub dips: Vec<(f64, Option<bool>)>,
    /// Names of metrics that were not available, with the reason.
    pub unavailable: Vec<(String, String)>,
    /// The utilization signals read GPM SM activity: the driver gave no utilization (a MIG
    /// device) but GPM was read (`gpm_activity.rs`).
    pub util_from_gpm: bool,
    /// Number of samples.
    pub samples: usize,
    /// Whether this GPU is one the job uses (false for GPUs the report marks as not the job's).
    pub job: bool,
    /// Time-weighted busy and idle shares over the span the GPU was in use.
    pub busy: Option<super::busy::BusyShares>,
    /// Highest utilization sample, %.
    pub util_max: Option<f64>,
    /// Most memory used in any sample, MiB.
    pub mem_used_max_mib: Option<f64>,
    /// The GPU's health counters (ECC, remapped rows, retired pages, NVLink errors), as
    /// read at the start, about once a minute and at the stop, or once from a dump.
    pub health: Option<crate::report::DeviceHealth>,
    /// The GPU did no work in the whole recording: utilization below [`NO_WORK_UTIL`] in
    /// every sample. Such a GPU is unused, not waiting: it is left out of every comparison
    /// between GPUs and judged by no performance rule (`idle_gpu` names it).
    pub no_work: bool,
}

/// One metric of a series as numbers: the full-resolution samples, then the coarse buckets'
/// means (missing values are NaN). A bitmask's mean says nothing, so a bitmask column is its
/// rows alone (its buckets are read through their counts, `signals::reasons`).
pub(super) fn column(data: &SeriesData, m: GpuMetric) -> Vec<f64> {
    let mut out: Vec<f64> = data
        .metrics
        .get(m.name())
        .map(|c| c.0.iter().map(|v| f64::from(*v)).collect())
        .unwrap_or_default();
    out.resize(data.t.len(), f64::NAN);
    if m.unit() == "bitmask" {
        return out;
    }
    if let Some(c) = &data.coarse {
        if let Some(cc) = c.metrics.get(m.name()) {
            out.extend(cc.mean.0.iter().map(|v| f64::from(*v)));
        }
    }
    out
}

/// Counts runs of consecutive samples below [`NEAR_ZERO_UTIL`]; missing samples neither
/// start nor end a run.
fn dip_runs(util: &[f64]) -> usize {
    let mut runs = 0;
    let mut inside = false;
    for u in util.iter().filter(|u| u.is_finite()) {
        let low = *u < NEAR_ZERO_UTIL;
        if low && !inside {
            runs += 1;
        }
        inside = low;
    }
    runs
}

impl DeviceSignals {
    /// Computes the signals of one device from its samples and the run's events.
    pub fn compute(
        info: &DeviceInfo,
        data: Option<&SeriesData>,
        events: &[Event],
        interval_s: f64,
    ) -> DeviceSignals {
        let mut s = DeviceSignals::facts(info, events);
        let Some(data) = data else { return s };
        let from_gpm = super::gpm_activity::util_from_gpm(data);
        s.util_from_gpm = from_gpm.is_some();
        let data = from_gpm.as_ref().unwrap_or(data);
        let util = column(data, GpuMetric::UtilGpu);
        s.util_max = util
            .iter()
            .copied()
            .filter(|u| u.is_finite())
            .reduce(f64::max);
        s.no_work = s.util_max.is_some_and(|m| m < NO_WORK_UTIL);
        s.mem_used_max_mib = column(data, GpuMetric::MemUsed)
            .into_iter()
            .filter(|m| m.is_finite())
            .reduce(f64::max);
        s.utilization(data, &util, interval_s);
        let loaded: Vec<bool> = util
            .iter()
            .map(|u| u.is_finite() && *u >= LOAD_UTIL)
            .collect();
        let when_loaded = |v: &[f64]| -> Vec<f64> {
            v.iter()
                .zip(&loaded)
                .filter(|(_, l)| **l)
                .map(|(x, _)| *x)
                .collect()
        };
        s.power_and_clocks(info, data, &util, &when_loaded);
        s.links(data, &util, &when_loaded);
        s.gpm_sm_util = dist(when_loaded(&column(data, GpuMetric::GpmSmUtil)));
        s.gpm_sm_occupancy = dist(when_loaded(&column(data, GpuMetric::GpmSmOccupancy)));
        s.gpm_tensor = dist(when_loaded(&column(data, GpuMetric::GpmTensor)));
        s.gpm_dram_bw = dist(when_loaded(&column(data, GpuMetric::GpmDramBw)));
        if let Some(total) = info.memory_total_mib.filter(|t| *t > 0.0) {
            s.mem_used_ratio = dist(
                column(data, GpuMetric::MemUsed)
                    .into_iter()
                    .map(|m| m / total),
            );
        }
        s
    }

    /// The device's static facts, its unavailable metrics and its fault events.
    fn facts(info: &DeviceInfo, events: &[Event]) -> DeviceSignals {
        let mut s = DeviceSignals {
            index: info.index,
            name: info.name.clone().unwrap_or_default(),
            temp_slowdown: info
                .temp_slowdown_c
                .or_else(|| super::thresholds::model_slowdown_c(info.name.as_deref())),
            pcie_max_gen: info.pcie_max_gen,
            pcie_max_width: info.pcie_max_width,
            lost_at_s: info.lost_at_s,
            power_limit_w: info.power_limit_w,
            health: info.health.clone(),
            job: true,
            unavailable: info
                .capabilities
                .iter()
                .filter(|(_, c)| !c.available)
                .map(|(k, c)| (k.clone(), c.reason.clone().unwrap_or_default()))
                .collect(),
            ..Default::default()
        };
        for e in events.iter().filter(|e| e.device == Some(info.index)) {
            match e.kind.as_str() {
                "xid" => s.xids.push((e.t_s, e.code.unwrap_or(0))),
                "gpu_lost" => s.lost_at_s = s.lost_at_s.or(Some(e.t_s)),
                _ => {}
            }
        }
        s
    }

    /// Utilization: distribution, shares of samples near zero and busy (a bucket counts its
    /// values per band), dips, the repeat and the time-weighted busy shares.
    fn utilization(&mut self, data: &SeriesData, util: &[f64], interval_s: f64) {
        self.samples = util.len();
        self.busy = super::busy::shares(data, interval_s);
        self.util = dist(util.iter().copied());
        let counted = value_spans(data, interval_s);
        self.util_near_zero = value_share(&counted, |s| s.below(NEAR_ZERO_UTIL));
        self.util_busy = value_share(&counted, |s| s.at_least(BUSY_UTIL));
        self.util_dips = dip_runs(util);
        self.util_spread = self.util.map(|u| u.p95 - u.p5);
        // Periodicity is only meaningful on evenly spaced samples: use the longest stretch of
        // rows with no bucket between them (the last hour, or the whole of a shorter run).
        let (from, to) = longest_contiguous_rows(data);
        self.util_period = dominant_period(&util[from..to]);
        if let Some(p) = self.util_period {
            let dt = if to - from >= 2 {
                (data.t[to - 1] - data.t[from]) / (to - from - 1) as f64
            } else {
                interval_s
            };
            self.util_period_s = Some(p.lag as f64 * dt);
        }
        self.dips = data
            .t
            .iter()
            .zip(util)
            .map(|(t, u)| (*t, u.is_finite().then_some(*u < DIP_UTIL)))
            .collect();
    }

    /// Power, clocks, throttling, temperature and P-state.
    fn power_and_clocks(
        &mut self,
        info: &DeviceInfo,
        data: &SeriesData,
        util: &[f64],
        when_loaded: &dyn Fn(&[f64]) -> Vec<f64>,
    ) {
        let power = column(data, GpuMetric::Power);
        self.power = dist(power.iter().copied());
        self.power_util_corr = correlation(util, &power);
        if let (Some(limit), Some(p)) = (info.power_limit_w, dist(when_loaded(&power))) {
            if limit > 0.0 {
                self.power_over_limit_loaded = Some(p.p50 / limit);
            }
        }
        if let (Some(limit), Some(p)) = (info.power_limit_w.filter(|l| *l > 0.0), self.power) {
            self.power_over_limit = Some(p.p50 / limit);
        }
        let clock = when_loaded(&column(data, GpuMetric::SmClock));
        self.sm_clock_loaded = dist(clock.iter().copied());
        if let (Some(c), Some(max)) = (self.sm_clock_loaded, info.max_sm_clock_mhz) {
            if max > 0.0 {
                self.sm_clock_ratio_loaded = Some(c.p50 / max);
            }
        }
        // Over the rows and what the buckets counted of the rows they folded.
        let masks = column(data, GpuMetric::ClockReasons);
        (self.throttled_share, self.reason_shares) =
            super::reasons::shares(&when_loaded(&masks), &super::reasons::folded(data));
        self.temp = dist(column(data, GpuMetric::Temp));
        self.pstate_not_p0_loaded =
            share(when_loaded(&column(data, GpuMetric::Pstate)), |p| p > 0.0);
        self.util_mem = dist(column(data, GpuMetric::UtilMem));
    }

    /// PCIe and NVLink: link state under load, capacity, throughput and traffic in dips.
    fn links(&mut self, data: &SeriesData, util: &[f64], when_loaded: &dyn Fn(&[f64]) -> Vec<f64>) {
        self.pcie_gen_loaded = dist(when_loaded(&column(data, GpuMetric::PcieGen))).map(|d| d.p50);
        self.pcie_width_loaded =
            dist(when_loaded(&column(data, GpuMetric::PcieWidth))).map(|d| d.p50);
        self.pcie_rx = dist(column(data, GpuMetric::PcieRx));
        self.pcie_tx = dist(column(data, GpuMetric::PcieTx));
        let gen = dist(column(data, GpuMetric::PcieGen)).map(|d| d.p50);
        let width = dist(column(data, GpuMetric::PcieWidth)).map(|d| d.p50);
        self.pcie_width_p50 = width;
        if let (Some(g), Some(w)) = (gen, width) {
            self.pcie_capacity_mbs = pcie_lane_mbs(g).map(|lane| lane * w);
        }
        let sum = |a: GpuMetric, b: GpuMetric| -> Vec<f64> {
            column(data, a)
                .iter()
                .zip(column(data, b))
                .map(|(x, y)| x + y)
                .collect()
        };
        self.pcie_busy_share = self.pcie_capacity_mbs.and_then(|cap| {
            let rx = column(data, GpuMetric::PcieRx);
            let tx = column(data, GpuMetric::PcieTx);
            let busier: Vec<f64> = rx
                .iter()
                .zip(&tx)
                .map(|(r, t)| r.max(*t))
                .filter(|x| x.is_finite())
                .collect();
            let busy = busier
                .iter()
                .filter(|x| **x >= PCIE_BUSY_SHARE * cap)
                .count();
            (!busier.is_empty()).then(|| busy as f64 / busier.len() as f64)
        });
        let nvl = sum(GpuMetric::NvlinkRx, GpuMetric::NvlinkTx);
        self.nvlink = dist(nvl.iter().copied());
        let pcie = sum(GpuMetric::PcieRx, GpuMetric::PcieTx);
        self.traffic_in_dips = traffic_in_dips(util, &nvl, &pcie);
    }
}

/// Mean NVLink + PCIe traffic in samples below [`DIP_UTIL`] and in the others; slow metrics
/// are sparse, so each side averages what exists.
fn traffic_in_dips(util: &[f64], nvl: &[f64], pcie: &[f64]) -> Option<(f64, f64)> {
    let (mut din, mut dout) = (Vec::new(), Vec::new());
    for ((u, n), p) in util.iter().zip(nvl).zip(pcie) {
        let tr = match (n.is_finite(), p.is_finite()) {
            (true, true) => n + p,
            (true, false) => *n,
            (false, true) => *p,
            _ => continue,
        };
        if u.is_finite() {
            if *u < DIP_UTIL {
                din.push(tr);
            } else {
                dout.push(tr);
            }
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    (!din.is_empty() && !dout.is_empty()).then(|| (mean(&din), mean(&dout)))
}
