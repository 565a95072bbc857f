//! Whether the job's GPUs idle together or in turn, and how far apart in time.
//!
//! GPUs waiting on one collective, or all on the input, idle at the same moments. The stages
//! of a pipeline-parallel schedule (GPipe, 1F1B) idle in turn: the first stage idles while
//! the last micro-batches drain through the later stages, the last stage while the first
//! ones fill the pipe, so each stage is busy at an offset from its neighbours and the idle
//! windows of the first and last stages never meet. This module measures, over the sample
//! times at which every job GPU has a utilization sample: each GPU's share of dips (below
//! [`super::DIP_UTIL`]), the share at which all dip at once, and for each pair of neighbouring GPUs
//! (by index) the time lag at which their dip series agree best.

use super::stats::correlation;
use super::DeviceSignals;

/// Most aligned sample times read (the most recent), to bound the cost of the lag search.
pub const MAX_SAMPLES: usize = 4096;
/// Longest lag searched when no GPU has a utilization period, in samples.
pub const DEFAULT_MAX_LAG: usize = 50;

/// How the job GPUs' idle moments line up.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stagger {
    /// Each job GPU's share of aligned sample times at which it dips, in index order.
    pub idle_shares: Vec<(u32, f64)>,
    /// Share of aligned sample times at which every job GPU dips at once.
    pub all_idle: f64,
    /// For each pair of neighbouring GPUs (index order): how many seconds the second one's
    /// dips lag the first one's at their best agreement (negative: it leads).
    pub neighbour_lags_s: Vec<f64>,
    /// For each such pair: the correlation of their dip series at the best lag minus at
    /// lag 0 (how much better the shifted series agree).
    pub lag_gains: Vec<f64>,
    /// The shortest of the job GPUs' utilization periods, seconds, when each has one (the
    /// autocorrelation may pick a multiple of the period on some GPUs).
    pub period_s: Option<f64>,
    /// Each job GPU's utilization period, seconds, in index order, when each has a clear one.
    pub periods_s: Option<Vec<f64>>,
    /// Aligned sample times read.
    pub samples: usize,
    /// Median spacing of the aligned sample times, seconds.
    pub interval_s: f64,
}

impl Stagger {
    /// The mean of the GPUs' dip shares.
    pub fn mean_idle(&self) -> f64 {
        let n = self.idle_shares.len().max(1) as f64;
        self.idle_shares.iter().map(|x| x.1).sum::<f64>() / n
    }

    /// Computes the stagger of `devices` (the job's GPUs with utilization); `None` with
    /// fewer than two of them or fewer than 16 aligned sample times.
    pub fn compute(devices: &[DeviceSignals]) -> Option<Stagger> {
        let live: Vec<&DeviceSignals> = devices
            .iter()
            .filter(|d| d.dips.iter().any(|x| x.1.is_some()))
            .collect();
        if live.len() < 2 {
            return None;
        }
        let (times, flags) = aligned(&live);
        if times.len() < 16 {
            return None;
        }
        let len = times.len() as f64;
        let all_idle = (0..times.len())
            .filter(|t| flags.iter().all(|f| f[*t] > 0.5))
            .count() as f64
            / len;
        let mut gaps: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
        gaps.sort_by(f64::total_cmp);
        let interval_s = gaps.get(gaps.len() / 2).copied().unwrap_or(0.0);
        // Within half the shortest period: a longer lag would find the neighbour's previous
        // or next cycle (the autocorrelation may pick a multiple of the period on some GPUs).
        let max_lag = live
            .iter()
            .filter_map(|d| d.util_period.map(|p| p.lag / 2))
            .min()
            .unwrap_or(DEFAULT_MAX_LAG)
            .clamp(1, times.len() / 4);
        let mut out = Stagger {
            idle_shares: live
                .iter()
                .zip(&flags)
                .map(|(d, f)| (d.index, f.iter().sum::<f64>() / len))
                .collect(),
            all_idle,
            periods_s: periods(&live),
            samples: times.len(),
            interval_s,
            ..Default::default()
        };
        out.period_s = out
            .periods_s
            .as_ref()
            .and_then(|p| p.iter().copied().reduce(f64::min));
        for pair in flags.windows(2) {
            if let Some((lag, gain)) = best_lag(&pair[0], &pair[1], max_lag) {
                out.neighbour_lags_s.push(lag as f64 * interval_s);
                out.lag_gains.push(gain);
            }
        }
        Some(out)
    }
}

/// The devices' utilization periods (seconds) when every one has a clear one
/// (autocorrelation at least 0.3, the level `stats::Period` calls clear).
fn periods(live: &[&DeviceSignals]) -> Option<Vec<f64>> {
    live.iter()
        .map(|d| {
            d.util_period
                .filter(|p| p.strength >= 0.3)
                .and(d.util_period_s)
        })
        .collect()
}

/// The sample times (seconds) at which every device has a dip flag, the most recent
/// [`MAX_SAMPLES`], and each device's flags (1 = dip) at those times.
fn aligned(live: &[&DeviceSignals]) -> (Vec<f64>, Vec<Vec<f64>>) {
    // The sampler reads every GPU in the same tick, so times match exactly; the key rounds
    // them to 0.1 ms as `dip_agreement` does.
    let key = |t: f64| (t * 1e4).round() as u64;
    let mut by_t: std::collections::BTreeMap<u64, Vec<Option<bool>>> = Default::default();
    for (i, d) in live.iter().enumerate() {
        for (t, dip) in &d.dips {
            by_t.entry(key(*t))
                .or_insert_with(|| vec![None; live.len()])[i] = *dip;
        }
    }
    let rows: Vec<(u64, Vec<bool>)> = by_t
        .into_iter()
        .filter_map(|(k, v)| v.into_iter().collect::<Option<Vec<bool>>>().map(|v| (k, v)))
        .collect();
    let rows = &rows[rows.len().saturating_sub(MAX_SAMPLES)..];
    let times = rows.iter().map(|(k, _)| *k as f64 / 1e4).collect();
    let flags = (0..live.len())
        .map(|i| {
            rows.iter()
                .map(|(_, v)| f64::from(u8::from(v[i])))
                .collect()
        })
        .collect();
    (times, flags)
}

/// The lag (in samples, within ±`max_lag`) at which `b` shifted back agrees best with `a`,
/// and the gain in correlation over lag 0. `None` when either series never changes.
fn best_lag(a: &[f64], b: &[f64], max_lag: usize) -> Option<(i64, f64)> {
    let at = |lag: i64| -> Option<f64> {
        let n = a.len() as i64;
        let (from, to) = (0.max(-lag), n.min(n - lag));
        if to - from < 8 {
            return None;
        }
        let xs = &a[from as usize..to as usize];
        let ys = &b[(from + lag) as usize..(to + lag) as usize];
        correlation(xs, ys).filter(|r| r.is_finite())
    };
    let zero = at(0)?;
    let lim = max_lag as i64;
    let (mut best, mut best_r) = (0i64, zero);
    for lag in -lim..=lim {
        if let Some(r) = at(lag) {
            // Ties keep the smaller shift: a longer lag must agree better to win.
            if r > best_r + 1e-9 || (r >= best_r - 1e-9 && lag.abs() < best.abs()) {
                best = lag;
                best_r = r;
            }
        }
    }
    Some((best, best_r - zero))
}
