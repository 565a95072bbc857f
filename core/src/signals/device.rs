//! Per-GPU signals.

use crate::metric::{reasons, GpuMetric};
use crate::report::{DeviceInfo, Event, SeriesData};

use super::stats::{correlation, dist, dominant_period, share, Dist, Period};

/// Utilization (%) at or above which a sample counts as "under load" for clock, power and
/// link checks: a GPU that is mostly idle legitimately lowers clocks and link speed.
pub const LOAD_UTIL: f64 = 50.0;

/// Utilization (%) below which a sample counts as "near zero" (the GPU is waiting).
pub const NEAR_ZERO_UTIL: f64 = 10.0;

/// Utilization (%) at or above which a sample counts as "busy".
pub const BUSY_UTIL: f64 = 80.0;

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
    /// Names of metrics that were not available, with the reason.
    pub unavailable: Vec<(String, String)>,
    /// Number of samples.
    pub samples: usize,
}

fn column(data: &SeriesData, m: GpuMetric) -> Vec<f64> {
    let mut out: Vec<f64> = data
        .metrics
        .get(m.name())
        .map(|c| c.0.iter().map(|v| f64::from(*v)).collect())
        .unwrap_or_default();
    out.resize(data.t.len(), f64::NAN);
    if let Some(c) = &data.coarse {
        if let Some(cc) = c.metrics.get(m.name()) {
            out.extend(cc.mean.0.iter().map(|v| f64::from(*v)));
        }
    }
    out
}

impl DeviceSignals {
    /// Computes the signals of one device from its samples and the run's events.
    pub fn compute(
        info: &DeviceInfo,
        data: Option<&SeriesData>,
        events: &[Event],
        interval_s: f64,
    ) -> DeviceSignals {
        let mut s = DeviceSignals {
            index: info.index,
            name: info.name.clone().unwrap_or_default(),
            temp_slowdown: info.temp_slowdown_c,
            pcie_max_gen: info.pcie_max_gen,
            pcie_max_width: info.pcie_max_width,
            lost_at_s: info.lost_at_s,
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
        let Some(data) = data else { return s };
        let util = column(data, GpuMetric::UtilGpu);
        s.samples = util.len();
        s.util = dist(util.iter().copied());
        s.util_near_zero = share(util.iter().copied(), |u| u < NEAR_ZERO_UTIL);
        s.util_busy = share(util.iter().copied(), |u| u >= BUSY_UTIL);
        // Periodicity is only meaningful on evenly spaced samples: use the full-resolution part.
        let full = &util[..data.t.len().min(util.len())];
        s.util_period = dominant_period(full);
        if let Some(p) = s.util_period {
            let dt = if data.t.len() >= 2 {
                (data.t[data.t.len() - 1] - data.t[0]) / (data.t.len() - 1) as f64
            } else {
                interval_s
            };
            s.util_period_s = Some(p.lag as f64 * dt);
        }
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

        let power = column(data, GpuMetric::Power);
        s.power = dist(power.iter().copied());
        s.power_util_corr = correlation(&util, &power);
        if let (Some(limit), Some(p)) = (info.power_limit_w, dist(when_loaded(&power))) {
            if limit > 0.0 {
                s.power_over_limit_loaded = Some(p.p50 / limit);
            }
        }
        let clock = when_loaded(&column(data, GpuMetric::SmClock));
        s.sm_clock_loaded = dist(clock.iter().copied());
        if let (Some(c), Some(max)) = (s.sm_clock_loaded, info.max_sm_clock_mhz) {
            if max > 0.0 {
                s.sm_clock_ratio_loaded = Some(c.p50 / max);
            }
        }
        let rs = when_loaded(&column(data, GpuMetric::ClockReasons));
        s.throttled_share = share(rs.iter().copied(), |r| {
            (r as u64) & reasons::THROTTLING != 0
        });
        for bit in [
            reasons::SW_POWER_CAP,
            reasons::HW_SLOWDOWN,
            reasons::SW_THERMAL,
            reasons::HW_THERMAL,
            reasons::HW_POWER_BRAKE,
        ] {
            if let Some(sh) = share(rs.iter().copied(), |r| (r as u64) & bit != 0) {
                s.reason_shares.push((bit, sh));
            }
        }
        s.temp = dist(column(data, GpuMetric::Temp));
        s.pstate_not_p0_loaded = share(when_loaded(&column(data, GpuMetric::Pstate)), |p| p > 0.0);
        s.pcie_gen_loaded = dist(when_loaded(&column(data, GpuMetric::PcieGen))).map(|d| d.p50);
        s.pcie_width_loaded = dist(when_loaded(&column(data, GpuMetric::PcieWidth))).map(|d| d.p50);
        s.pcie_rx = dist(column(data, GpuMetric::PcieRx));
        if let Some(total) = info.memory_total_mib.filter(|t| *t > 0.0) {
            s.mem_used_ratio = dist(
                column(data, GpuMetric::MemUsed)
                    .into_iter()
                    .map(|m| m / total),
            );
        }
        s
    }
}
