//! Cross-GPU activity: how busy, how idle and how hard-working each GPU of a job is over the
//! run (time-weighted), and how their waits line up at the same sample times.
//!
//! Utilization alone cannot tell a computing GPU from one that waits inside a collective:
//! NCCL keeps a kernel resident while it waits, so a waiting rank reads ~100 % utilization at
//! low power. These signals therefore also read power against the GPU's own compute power,
//! and the clocks, power and memory activity under load, so that rules can compare GPUs with
//! each other — a straggler, a throttled GPU and a job-wide collective wait look alike per
//! GPU and differ across GPUs. See `docs/rules.md`, "Cross-GPU evidence".
//!
//! Not for: deciding anything (the rules `rank_imbalance`, `throttling` and `comm_sync` do),
//! nor comparing two runs (that is [`crate::compare`]).

use std::collections::BTreeMap;

use super::device::{column, DeviceSignals, DIP_UTIL, LOAD_UTIL};
use super::stats::{dist, percentile_sorted};
use super::timeshare::{indexed, typical_gap, Span};
use super::CrossSignals;
use crate::metric::GpuMetric;
use crate::report::{Report, SeriesData};

/// A sample that is not idle (utilization ≥ [`DIP_UTIL`]) but whose power is below this
/// fraction of the GPU's own compute power counts as a wait: a kernel is resident (a
/// collective spinning on a flag) but the SMs do little. Compute phases of one training step vary in power by a few
/// tens of percent (DESIGN.md: "a rank waiting in a collective reads ~100 % utilization at low
/// power"); an NVLink/NCCL wait draws near idle power, well under 60 % of compute power.
pub const WAIT_POWER_FRACTION: f64 = 0.6;

/// A sample this many points below the GPU's own busy level (the 90th percentile of its
/// utilization) also counts as a wait: a rank that finished its share early and waits shows
/// a drop, not always to zero nor at lower power (DESIGN.md: "waiting on a collective shows as
/// a drop"); identical GPUs on identical work vary by a few points.
pub const SLACK_UTIL_POINTS: f64 = 15.0;

/// Percentile of a GPU's loaded power taken as its compute power: high enough to be the
/// compute phases, low enough that a few boost spikes do not set it.
pub const COMPUTE_POWER_QUANTILE: f64 = 0.9;

/// One GPU of the job, over the whole run. Shares are of the time covered by its
/// utilization samples, each row and bucket weighted by the time it stands for, as
/// [`super::timeshare`] defines it (the same weighting as [`super::busy`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GpuActivity {
    /// NVML index.
    pub index: u32,
    /// Product name (power is only compared between GPUs of one product or against limits).
    pub name: String,
    /// Seconds covered by utilization samples.
    pub seconds: f64,
    /// Time-weighted mean utilization, %.
    pub util_mean: f64,
    /// Share of time with utilization below [`DIP_UTIL`].
    pub idle_share: f64,
    /// Share of time not idle but working well below the GPU's own level: under
    /// [`WAIT_POWER_FRACTION`] of its compute power, or [`SLACK_UTIL_POINTS`] under its busy
    /// utilization (`None` when neither level is known).
    pub spin_share: Option<f64>,
    /// Idle plus spinning: the share of time this GPU waited.
    pub wait_share: f64,
    /// The wait share counted one way at a time: idle plus the time below the busy level
    /// (`.0`), idle plus the time at low power (`.1`). [`Self::wait_share`] takes the larger
    /// way per GPU, which compares GPUs by different ways when their waits show differently:
    /// a straggler whose only waits are short phases that a utilization sample happened to
    /// catch, against ranks whose long waits inside a collective show at low power alone.
    /// Compared way by way, the two do not mix.
    pub wait_by: (f64, f64),
    /// Share of time with utilization at or above [`LOAD_UTIL`].
    pub loaded_share: f64,
    /// Median utilization under load, %.
    pub util_loaded: Option<f64>,
    /// Median clock under load, MHz (the metric named by [`CrossSignals::clock_metric`]).
    pub clock_loaded: Option<f64>,
    /// Median power under load, W.
    pub power_loaded: Option<f64>,
    /// Enforced power limit, W, when known.
    pub power_limit: Option<f64>,
    /// Median memory-controller activity under load, %.
    pub util_mem_loaded: Option<f64>,
}

impl GpuActivity {
    /// Loaded power on a scale comparable across GPUs: over the power limit when every GPU
    /// compared has one (`by_limit`), else in watts.
    pub fn power_scaled(&self, by_limit: bool) -> Option<f64> {
        let p = self.power_loaded?;
        if by_limit {
            self.power_limit.filter(|l| *l > 0.0).map(|l| p / l)
        } else {
            Some(p)
        }
    }
}

/// What one aligned sample time held across the job's GPUs.
#[derive(Default)]
struct Tally {
    seen: usize,
    waiting: usize,
    idle: usize,
    working: u32,
}

/// Estimated share of bucket `k`'s samples with power below `limit`. A training GPU's power
/// alternates between a compute level and a wait level, so a bucket's mean sits between its
/// minimum and maximum in proportion to the time at each: the share at the low level is
/// `(max − mean) / (max − min)` when the limit lies between them. Not exact (the samples'
/// joint values are folded), unlike the band shares of utilization.
fn low_power_share(data: &SeriesData, k: usize, limit: f64) -> f64 {
    let Some(c) = data
        .coarse
        .as_ref()
        .and_then(|c| c.metrics.get(GpuMetric::Power.name()))
    else {
        return 0.0;
    };
    let at = |col: &crate::report::Column| col.0.get(k).map_or(f64::NAN, |v| f64::from(*v));
    let (mn, mean, mx) = (at(&c.min), at(&c.mean), at(&c.max));
    if !(mn.is_finite() && mean.is_finite() && mx.is_finite()) {
        return 0.0;
    }
    if mx < limit {
        1.0
    } else if mn >= limit || mx <= mn {
        0.0
    } else {
        ((mx - mean) / (mx - mn)).clamp(0.0, 1.0)
    }
}

fn loaded_median(v: &[f64], util: &[f64]) -> Option<f64> {
    dist(
        v.iter()
            .zip(util)
            .filter(|(_, u)| **u >= LOAD_UTIL)
            .map(|(x, _)| *x),
    )
    .map(|d| d.p50)
}

/// The GPU's power under load (its compute power) and its busy utilization level, both at
/// [`COMPUTE_POWER_QUANTILE`]: what a sample's power and utilization are compared with to tell
/// a wait from work. `None` where not known.
fn levels(util: &[f64], power: &[f64]) -> (Option<f64>, Option<f64>) {
    let mut loaded_power: Vec<f64> = power
        .iter()
        .zip(util)
        .filter(|(p, u)| p.is_finite() && **u >= LOAD_UTIL)
        .map(|(p, _)| *p)
        .collect();
    loaded_power.sort_by(f64::total_cmp);
    let compute_power = (!loaded_power.is_empty())
        .then(|| percentile_sorted(&loaded_power, COMPUTE_POWER_QUANTILE))
        .filter(|p| *p > 0.0);
    let mut present: Vec<f64> = util.iter().copied().filter(|u| u.is_finite()).collect();
    present.sort_by(f64::total_cmp);
    let busy_level = (!present.is_empty())
        .then(|| percentile_sorted(&present, COMPUTE_POWER_QUANTILE))
        .filter(|b| *b >= LOAD_UTIL);
    (compute_power, busy_level)
}

/// The share of bucket `k` (`span` its weight and bands) spent spinning, each way: its share
/// below the busy level and its share at low power, less its idle share (`levels`: compute
/// power and busy level). The bucket spins for the larger of the two.
fn bucket_spin(
    data: &SeriesData,
    k: usize,
    span: &Span,
    (compute_power, busy_level): (Option<f64>, Option<f64>),
    idle_frac: f64,
) -> (f64, f64) {
    let slack_frac = busy_level.map_or(0.0, |b| {
        (span.below(b - SLACK_UTIL_POINTS) - idle_frac).max(0.0)
    });
    let power_frac = compute_power.map_or(0.0, |c| {
        (low_power_share(data, k, WAIT_POWER_FRACTION * c) - idle_frac).max(0.0)
    });
    let most = 1.0 - idle_frac;
    (slack_frac.min(most), power_frac.min(most))
}

/// One GPU's activity and, per full-resolution sample time, whether it waited.
///
/// The rows spin for the longer of their time below the busy level and their time at low
/// power, as a bucket estimates it ([`bucket_spin`]), not for the time with either:
/// utilization describes the driver's last sample period (1/6 s to 1 s, docs/nvml-facts.md)
/// and power another instant, so at each edge between computing and waiting some rows show
/// one without the other, and counting either would add those edges to the wait. A wait
/// shows in both where both are known; a rank spinning in a collective at full utilization
/// shows at low power alone, one whose utilization drops in either.
fn activity(
    d: &DeviceSignals,
    data: &SeriesData,
    interval_s: f64,
    clock: GpuMetric,
) -> (GpuActivity, Vec<(u64, bool, bool)>) {
    // Weights and exact band shares per value of `column(data, ..)` (rows, then buckets).
    let spans = indexed(data, interval_s);
    let w: Vec<f64> = spans.iter().map(|s| s.w).collect();
    let tick = lineup_tick(&data.t, interval_s);
    let col = |m: GpuMetric| {
        let mut v = column(data, m);
        v.resize(w.len(), f64::NAN);
        v
    };
    let (util, power) = (col(GpuMetric::UtilGpu), col(GpuMetric::Power));
    let (compute_power, busy_level) = levels(&util, &power);
    let slack = move |u: f64| busy_level.is_some_and(|b| u < b - SLACK_UTIL_POINTS);
    let spinning = |u: f64, p: f64| {
        u >= DIP_UTIL && p.is_finite() && compute_power.is_some_and(|c| p < WAIT_POWER_FRACTION * c)
    };
    let (mut total, mut sum, mut idle, mut spin, mut loaded) = (0.0, 0.0, 0.0, 0.0, 0.0);
    // Time below the busy level and at low power, apart (see above): rows', then buckets'.
    let (mut row, mut bucket) = ([0.0; 2], [0.0; 2]);
    let mut flags = Vec::with_capacity(data.t.len());
    for (i, (u, p)) in util.iter().zip(&power).enumerate() {
        if !u.is_finite() {
            continue;
        }
        let low = *u < DIP_UTIL;
        let (slacked, powered) = (!low && slack(*u), !low && spinning(*u, *p));
        let spun = slacked || powered;
        total += w[i];
        sum += u * w[i];
        // A bucket counts the share of its values below the dip and under load exactly, and
        // estimates its share spinning (see `bucket_spin`).
        let idle_frac = spans[i].below(DIP_UTIL);
        idle += w[i] * idle_frac;
        match i.checked_sub(data.t.len()) {
            Some(k) => {
                let levels = (compute_power, busy_level);
                let (slacked, powered) = bucket_spin(data, k, &spans[i], levels, idle_frac);
                spin += w[i] * slacked.max(powered);
                bucket[0] += w[i] * slacked;
                bucket[1] += w[i] * powered;
            }
            None => {
                row[0] += w[i] * f64::from(u8::from(slacked));
                row[1] += w[i] * f64::from(u8::from(powered));
            }
        }
        loaded += w[i] * spans[i].at_least(LOAD_UTIL);
        if let Some(t) = data.t.get(i) {
            flags.push(((t / tick).round() as u64, low || spun, low));
        }
    }
    spin += row[0].max(row[1]);
    let total_s = total.max(f64::EPSILON);
    let wait_by = |k: usize| (idle + bucket[k] + row[k]) / total_s;
    let spin_share = (compute_power.is_some() || busy_level.is_some()).then(|| spin / total_s);
    let a = GpuActivity {
        index: d.index,
        name: d.name.clone(),
        seconds: total,
        util_mean: sum / total_s,
        idle_share: idle / total_s,
        spin_share,
        wait_share: (idle + spin) / total_s,
        wait_by: (wait_by(0), wait_by(1)),
        loaded_share: loaded / total_s,
        util_loaded: loaded_median(&util, &util),
        clock_loaded: loaded_median(&col(clock), &util),
        power_loaded: loaded_median(&power, &util),
        power_limit: d.power_limit_w,
        util_mem_loaded: loaded_median(&col(GpuMetric::UtilMem), &util),
    };
    (a, flags)
}

/// The tick sample times are lined up to across GPUs: the interval, else the typical gap
/// between rows (CSV logs stamp each GPU's row separately, a few milliseconds apart).
fn lineup_tick(t: &[f64], interval_s: f64) -> f64 {
    if interval_s > 0.0 {
        interval_s
    } else {
        typical_gap(t, interval_s)
    }
}

/// The clock the job's GPUs are compared on: the SM clock where any GPU recorded one, else
/// the graphics clock (all `nvidia-smi dmon` gives: its `pclk`). Rules compare ratios
/// between GPUs under the same load, which hold for either domain (`docs/rules.md`,
/// "Cross-GPU evidence").
fn clock_metric(report: &Report) -> GpuMetric {
    let has = |m: GpuMetric| {
        report.series.iter().any(|s| {
            s.data
                .metrics
                .get(m.name())
                .is_some_and(|c| c.0.iter().any(|v| v.is_finite()))
        })
    };
    if !has(GpuMetric::SmClock) && has(GpuMetric::GraphicsClock) {
        GpuMetric::GraphicsClock
    } else {
        GpuMetric::SmClock
    }
}

/// Fills the cross-GPU activity of `out` from the report's samples of the job's GPUs.
pub(super) fn extend(report: &Report, devices: &[DeviceSignals], out: &mut CrossSignals) {
    let clock = clock_metric(report);
    out.clock_metric = clock.name();
    let mut by_t: BTreeMap<u64, Tally> = BTreeMap::new();
    for d in devices.iter().filter(|d| d.job && d.util.is_some()) {
        let Some(series) = report.series.iter().find(|s| s.device == d.index) else {
            continue;
        };
        let (a, flags) = activity(d, &series.data, report.run.interval_s, clock);
        for (t, waiting, idle) in flags {
            let e = by_t.entry(t).or_default();
            e.seen += 1;
            e.waiting += usize::from(waiting);
            e.idle += usize::from(idle);
            if !waiting {
                e.working = d.index;
            }
        }
        out.activity.push(a);
    }
    let n = out.activity.len();
    if n < 2 {
        return;
    }
    let full: Vec<&Tally> = by_t.values().filter(|t| t.seen == n).collect();
    if full.is_empty() {
        return;
    }
    let mut lone: BTreeMap<u32, usize> = BTreeMap::new();
    for t in full.iter().filter(|t| t.waiting + 1 == n) {
        *lone.entry(t.working).or_default() += 1;
    }
    out.aligned_samples = full.len();
    let share = |k: usize| Some(k as f64 / full.len() as f64);
    out.all_idle_share = share(full.iter().filter(|t| t.idle == n).count());
    out.all_wait_share = share(full.iter().filter(|t| t.waiting == n).count());
    out.lone_working = lone
        .into_iter()
        .max_by_key(|(d, k)| (*k, std::cmp::Reverse(*d)))
        .map(|(d, k)| (d, k as f64 / full.len() as f64));
}
