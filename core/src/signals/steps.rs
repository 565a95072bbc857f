//! Step signals: what the rules read of the step markers.
//!
//! Step-time percentiles, each phase's share of step time (median and p95 over steps, never
//! the mean), backward/forward ratios, GPU-measured over CPU-side time, step-time outliers
//! and whether they recur with a fixed period, dispersion, periodicity of the step-time
//! series, and whether near-zero GPU utilization falls inside data phases. Computed from a
//! report's `steps` (the per-step series use the steps kept exactly), its events and its GPU
//! samples. Not for rendering: see the report for the raw numbers.

use crate::report::{DeviceSeries, Event, PhaseStats, Report, StepsData};
use crate::stats::{median, percentile_sorted};
use crate::steps::{BUILTIN_PHASES, STEP_KEY};

use super::stats::{dominant_period, Period};
use super::NEAR_ZERO_UTIL;

/// A step cycle is an outlier above `p50 + max(OUTLIER_MADS × MAD, OUTLIER_MIN_EXCESS × p50)`.
/// Three median absolute deviations is the usual robust cut (≈ 2σ for normal data, Leys et
/// al. 2013); the floor of half the median keeps tight distributions (MAD ≈ 0) from calling
/// ordinary jitter an outlier: a periodic stall the guides describe (eval, checkpoint,
/// a sync for logging) costs at least half a step.
pub const OUTLIER_MADS: f64 = 3.0;
/// See [`OUTLIER_MADS`].
pub const OUTLIER_MIN_EXCESS: f64 = 0.5;

/// Outliers whose excess over the median step is at least this share of the median
/// outlier's excess count as the same stall when reading its period; smaller ones are
/// incidental hiccups.
pub const SAME_STALL_SIZE: f64 = 0.5;

/// One phase's share of step time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PhaseShare {
    /// Phase name (`data`, `forward`, …).
    pub name: String,
    /// Median over kept steps of (phase time / step time); a step without the phase counts 0.
    pub p50: f64,
    /// 95th percentile of the same per-step shares.
    pub p95: f64,
    /// The phase's total time over the total step time, all steps (0–1).
    pub total: f64,
    /// Kept steps that had this phase.
    pub steps: usize,
}

/// Step cycles far above the median, and how regularly they recur.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepOutliers {
    /// The threshold, seconds (see [`OUTLIER_MADS`]).
    pub threshold_s: f64,
    /// Outlier cycles among the kept steps.
    pub count: usize,
    /// Time the outliers spent above the median cycle, over the total cycle time (0–1): what
    /// the stalls cost.
    pub excess_share: f64,
    /// Median spacing of consecutive outliers, in steps (from 2 spacings, i.e. 3 outliers).
    pub period_steps: Option<f64>,
    /// Coefficient of variation of that spacing (std / mean): near 0 for a fixed period.
    pub spacing_cv: Option<f64>,
    /// Event kinds marked during outlier cycles, with the number of outliers each occurred
    /// in, most frequent first.
    pub event_kinds: Vec<(String, usize)>,
}

/// Everything the rules read of the step markers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepSignals {
    /// Steps recorded.
    pub count: u64,
    /// Steps kept exactly, which the per-step signals below use.
    pub kept: usize,
    /// Step duration p50, seconds (all steps; exact or within the report's `quantile_error`).
    pub step_p50_s: f64,
    /// Step duration p95, seconds.
    pub step_p95_s: f64,
    /// Step duration p99, seconds.
    pub step_p99_s: f64,
    /// Total step time, seconds (all steps).
    pub step_total_s: f64,
    /// Share of each phase that occurred, in phase id order.
    pub phases: Vec<PhaseShare>,
    /// Median over kept steps of CPU-side backward / forward time.
    pub bwd_fwd_ratio_p50: Option<f64>,
    /// The same from GPU-measured durations, when attached.
    pub gpu_bwd_fwd_ratio_p50: Option<f64>,
    /// Median over kept steps of GPU-measured (forward + backward) / CPU-side (forward +
    /// backward), over the phases both were measured for: far below 1 when the CPU issues
    /// work much slower than the GPU runs it (launch-bound), about 1 when the CPU waits for
    /// the GPU (synchronising).
    pub gpu_cpu_ratio_p50: Option<f64>,
    /// Outlier cycles. A step's cycle is from its start to the next step's start, so work
    /// between steps (evaluation, checkpoints) counts; the last step's cycle is its duration.
    pub outliers: StepOutliers,
    /// Interquartile range of kept step durations over their median.
    pub iqr_over_p50: Option<f64>,
    /// Step duration p95 over p50 (all steps).
    pub p95_over_p50: f64,
    /// Dominant repeat of the step-cycle series, lag in steps (autocorrelation).
    pub period: Option<Period>,
    /// Time between steps over the total cycle time of the kept steps (0–1).
    pub between_steps_share: Option<f64>,
    /// Of the GPU samples below [`NEAR_ZERO_UTIL`] taken while kept steps ran, the share
    /// that fall inside a data phase. A step's data phase is placed at its start (data is
    /// assumed to come first in a step; only per-step phase durations are recorded).
    pub dips_in_data_share: Option<f64>,
    /// The share a sample would have by chance: data-phase time over the span of the kept
    /// steps. Dips in data phases well above this mean the GPU idles because of input.
    pub dips_in_data_expected: Option<f64>,
    /// Near-zero samples that were compared (all GPUs).
    pub dip_samples: usize,
}

fn values(c: &crate::report::Column) -> impl Iterator<Item = f64> + '_ {
    c.0.iter().map(|v| f64::from(*v))
}

/// Median over kept steps of `num(i) / den(i)` where both are present and `den` > 0.
fn ratio_p50(n: usize, f: impl Fn(usize) -> Option<(f64, f64)>) -> Option<f64> {
    median(
        (0..n)
            .filter_map(&f)
            .filter(|(a, b)| a.is_finite() && b.is_finite() && *b > 0.0)
            .map(|(a, b)| a / b)
            .collect(),
    )
}

impl StepSignals {
    /// The step signals of a report, `None` when it has no steps.
    pub fn from_report(report: &Report) -> Option<StepSignals> {
        let steps = report.steps.as_ref()?;
        (steps.count > 0).then(|| Self::compute(steps, &report.events, &report.series))
    }

    /// The step signals of `steps`, with the run's `events` and GPU `series`.
    pub fn compute(steps: &StepsData, events: &[Event], series: &[DeviceSeries]) -> StepSignals {
        let step = steps.stats.get(STEP_KEY).cloned().unwrap_or_default();
        let n = steps.t.len().min(steps.duration.len());
        let dur: Vec<f64> = values(&steps.duration).take(n).collect();
        let cpu = |name: &str, i: usize| -> f64 {
            steps
                .phase_durations
                .get(name)
                .and_then(|c| c.0.get(i))
                .map_or(f64::NAN, |v| f64::from(*v))
        };
        let gpu = |name: &str, i: usize| -> f64 {
            steps
                .gpu_phase_durations
                .get(name)
                .and_then(|c| c.0.get(i))
                .map_or(f64::NAN, |v| f64::from(*v))
        };
        let (fwd, bwd) = (BUILTIN_PHASES[1], BUILTIN_PHASES[2]);
        let mut s = StepSignals {
            count: steps.count,
            kept: n,
            step_p50_s: step.p50_s,
            step_p95_s: step.p95_s,
            step_p99_s: step.p99_s,
            step_total_s: step.sum_s,
            p95_over_p50: if step.p50_s > 0.0 {
                step.p95_s / step.p50_s
            } else {
                f64::NAN
            },
            phases: phase_shares(steps, &dur, &step),
            bwd_fwd_ratio_p50: ratio_p50(n, |i| Some((cpu(bwd, i), cpu(fwd, i)))),
            gpu_bwd_fwd_ratio_p50: ratio_p50(n, |i| Some((gpu(bwd, i), gpu(fwd, i)))),
            gpu_cpu_ratio_p50: ratio_p50(n, |i| {
                let pairs: Vec<(f64, f64)> = [fwd, bwd]
                    .iter()
                    .map(|p| (gpu(p, i), cpu(p, i)))
                    .filter(|(g, c)| g.is_finite() && c.is_finite())
                    .collect();
                (!pairs.is_empty()).then(|| {
                    pairs
                        .iter()
                        .fold((0.0, 0.0), |(g, c), (a, b)| (g + a, c + b))
                })
            }),
            ..Default::default()
        };
        let mut sorted: Vec<f64> = dur.iter().copied().filter(|d| d.is_finite()).collect();
        sorted.sort_by(f64::total_cmp);
        let p50 = percentile_sorted(&sorted, 0.5);
        if !sorted.is_empty() && p50 > 0.0 {
            s.iqr_over_p50 =
                Some((percentile_sorted(&sorted, 0.75) - percentile_sorted(&sorted, 0.25)) / p50);
        }
        let cycles = cycles(&steps.t[..n], &dur);
        let total: f64 = cycles.iter().sum();
        if total > 0.0 {
            s.between_steps_share = Some(
                cycles
                    .iter()
                    .zip(&dur)
                    .map(|(c, d)| (c - d).max(0.0))
                    .sum::<f64>()
                    / total,
            );
        }
        s.outliers = outliers(&steps.t[..n], &cycles, events);
        s.period = dominant_period(&cycles);
        let data = (0..n)
            .map(|i| cpu(BUILTIN_PHASES[0], i))
            .collect::<Vec<_>>();
        dips_in_data(&mut s, &steps.t[..n], &dur, &data, series);
        s
    }
}

fn phase_shares(steps: &StepsData, dur: &[f64], step: &PhaseStats) -> Vec<PhaseShare> {
    steps
        .phases
        .iter()
        .filter_map(|name| {
            let col = steps.phase_durations.get(name);
            let total = steps.stats.get(name).map_or(0.0, |s| s.sum_s);
            if col.is_none() && total == 0.0 {
                return None;
            }
            let mut shares = Vec::with_capacity(dur.len());
            let mut present = 0;
            for (i, d) in dur.iter().enumerate() {
                if !(d.is_finite() && *d > 0.0) {
                    continue;
                }
                let p = col
                    .and_then(|c| c.0.get(i))
                    .map_or(f64::NAN, |v| f64::from(*v));
                if p.is_finite() {
                    present += 1;
                    shares.push(p / d);
                } else {
                    shares.push(0.0);
                }
            }
            shares.sort_by(f64::total_cmp);
            Some(PhaseShare {
                name: name.clone(),
                p50: percentile_sorted(&shares, 0.5),
                p95: percentile_sorted(&shares, 0.95),
                total: if step.sum_s > 0.0 {
                    total / step.sum_s
                } else {
                    f64::NAN
                },
                steps: present,
            })
        })
        .collect()
}

/// Start-to-next-start time of each step when the next step starts after this one ends
/// (one sequence), else its duration.
fn cycles(t: &[f64], dur: &[f64]) -> Vec<f64> {
    (0..dur.len())
        .map(|i| match t.get(i + 1) {
            Some(next) if *next - t[i] >= dur[i] => *next - t[i],
            _ => dur[i],
        })
        .collect()
}

fn outliers(t: &[f64], cycles: &[f64], events: &[Event]) -> StepOutliers {
    let mut out = StepOutliers::default();
    let Some(p50) = median(cycles.to_vec()) else {
        return out;
    };
    let Some(mad) = median(cycles.iter().map(|c| (c - p50).abs()).collect()) else {
        return out;
    };
    out.threshold_s = p50 + (OUTLIER_MADS * mad).max(OUTLIER_MIN_EXCESS * p50);
    let idx: Vec<usize> = (0..cycles.len())
        .filter(|i| cycles[*i] > out.threshold_s)
        .collect();
    out.count = idx.len();
    let total: f64 = cycles.iter().filter(|c| c.is_finite()).sum();
    if total > 0.0 {
        out.excess_share = idx.iter().map(|i| cycles[*i] - p50).sum::<f64>() / total;
    }
    // The period is read from the outliers of the stall's own size: a stall repeats with
    // about the same cost (an eval, a checkpoint), while a few much smaller hiccups (the
    // scheduler, a page fault) between them must not break its spacing.
    let big =
        median(idx.iter().map(|i| cycles[*i] - p50).collect()).map_or(0.0, |m| m * SAME_STALL_SIZE);
    let main: Vec<usize> = idx
        .iter()
        .copied()
        .filter(|i| cycles[*i] - p50 >= big)
        .collect();
    let gaps: Vec<f64> = main.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
    if gaps.len() >= 2 {
        out.period_steps = median(gaps.clone());
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
        out.spacing_cv = Some(var.sqrt() / mean);
    }
    let mut kinds: Vec<(String, usize)> = Vec::new();
    for i in &idx {
        let (a, b) = (t[*i], t[*i] + cycles[*i]);
        let mut seen: Vec<&str> = events
            .iter()
            .filter(|e| e.device.is_none() && e.t_s >= a && e.t_s < b)
            .map(|e| e.kind.as_str())
            .collect();
        seen.sort_unstable();
        seen.dedup();
        for k in seen {
            match kinds.iter_mut().find(|(n, _)| n == k) {
                Some((_, c)) => *c += 1,
                None => kinds.push((k.to_string(), 1)),
            }
        }
    }
    kinds.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out.event_kinds = kinds;
    out
}

fn dips_in_data(
    s: &mut StepSignals,
    t: &[f64],
    dur: &[f64],
    data: &[f64],
    series: &[DeviceSeries],
) {
    let mut spans: Vec<(f64, f64)> = (0..t.len())
        .filter(|i| data[*i].is_finite() && data[*i] > 0.0)
        .map(|i| (t[i], t[i] + data[i]))
        .collect();
    if spans.is_empty() {
        return;
    }
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    let start = t.iter().copied().fold(f64::INFINITY, f64::min);
    let end = (0..t.len())
        .map(|i| t[i] + dur[i])
        .fold(f64::NEG_INFINITY, f64::max);
    if end <= start {
        return;
    }
    s.dips_in_data_expected = Some(spans.iter().map(|(a, b)| b - a).sum::<f64>() / (end - start));
    let (mut dips, mut inside) = (0usize, 0usize);
    for d in series {
        let Some(util) = d.data.metrics.get(crate::metric::GpuMetric::UtilGpu.name()) else {
            continue;
        };
        for (ts, u) in d.data.t.iter().zip(&util.0) {
            if !(u.is_finite() && f64::from(*u) < NEAR_ZERO_UTIL && *ts >= start && *ts <= end) {
                continue;
            }
            dips += 1;
            let k = spans.partition_point(|sp| sp.0 <= *ts);
            if k > 0 && *ts <= spans[k - 1].1 {
                inside += 1;
            }
        }
    }
    s.dip_samples = dips;
    if dips > 0 {
        s.dips_in_data_share = Some(inside as f64 / dips as f64);
    }
}

#[cfg(test)]
mod tests;
