//! What the GPUs, their links and the host do during the phases the loop marks.
//!
//! Step markers record how long each phase of a step took, not where in the step it ran.
//! Two phases have a fixed place in a training step: the data phase comes first (the batch
//! is fetched before the forward pass; [`super::steps`] places it so too) and the optimizer
//! step comes last (`optimizer.step()` is the last thing a step does before the next batch).
//! So the samples taken in the last `optimizer` seconds of each kept step are the
//! optimizer's, and what the GPU, the PCIe/NVLink links and the host show there can be set
//! against the rest of the step. Also here: how much of the spread of step times the compute
//! phases carry (varying input shapes make them vary) and whether the loop is an inference loop (it marks forward
//! passes and never a backward pass or an optimizer step). Not for rendering.

use crate::metric::GpuMetric;
use crate::report::{Report, SeriesData, StepsData};
use crate::stats::percentile_sorted;

use super::DIP_UTIL;

/// Fewest kept steps with a compute phase from which the spread of its duration is read.
pub const MIN_STEPS_FOR_SPREAD: usize = 8;

/// One quantity inside the phase's windows and in the rest of the steps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InOut {
    /// Mean over the samples inside the windows.
    pub inside: f64,
    /// Mean over the samples in the rest of the steps.
    pub outside: f64,
}

/// What the samples show during one phase, placed in every kept step.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PhaseWindow {
    /// The job GPUs' utilization samples inside the windows (all GPUs together).
    pub samples: usize,
    /// Mean utilization inside and outside the windows, %.
    pub util: Option<InOut>,
    /// Of the utilization samples inside, the share below [`DIP_UTIL`].
    pub idle_share: Option<f64>,
    /// Mean PCIe throughput over the receive and transmit samples, inside and outside.
    pub pcie: Option<InOut>,
    /// Mean NVLink throughput over the receive and transmit samples, inside and outside.
    pub nvlink: Option<InOut>,
    /// Host CPU busy (all cores), %, inside and outside.
    pub host_cpu: Option<InOut>,
    /// The recorded process tree's CPU, % of one core, inside and outside.
    pub proc_cpu: Option<InOut>,
    /// How far the windows were moved against the samples, seconds (see `aligned_window`).
    pub shift_s: f64,
}

/// What the rules read of the phases beyond their shares of step time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PhaseActivity {
    /// The optimizer phase, placed at the end of each kept step, when it was marked.
    pub optimizer: Option<PhaseWindow>,
    /// Interquartile range of forward + backward time per kept step, seconds, when either
    /// was marked in at least [`MIN_STEPS_FOR_SPREAD`] steps.
    pub compute_iqr_s: Option<f64>,
    /// Interquartile range of the kept steps' durations, seconds (same condition).
    pub step_iqr_s: Option<f64>,
    /// The loop marks forward passes in most steps and never a backward pass or an
    /// optimizer step: an inference (serving) loop, not training.
    pub inference_only: bool,
    /// The marked phase other than data, forward and backward that takes the largest share
    /// of the total step time (all steps), with that share: where idle time the data phase
    /// does not hold most likely falls.
    pub largest_other: Option<(String, f64)>,
}

impl PhaseActivity {
    /// The phase activity of a report, `None` when it has no steps.
    pub fn from_report(report: &Report) -> Option<PhaseActivity> {
        let steps = report.steps.as_ref().filter(|s| s.count > 0)?;
        let n = steps.t.len().min(steps.duration.len());
        let col = |name: &str, i: usize| -> f64 {
            steps
                .phase_durations
                .get(name)
                .and_then(|c| c.0.get(i))
                .map_or(f64::NAN, |v| f64::from(*v))
        };
        let dur = |i: usize| f64::from(steps.duration.0[i]);
        let spans: Vec<(f64, f64)> = (0..n).map(|i| (steps.t[i], steps.t[i] + dur(i))).collect();
        let opt: Vec<(f64, f64)> = (0..n)
            .filter(|i| col("optimizer", *i).is_finite() && col("optimizer", *i) > 0.0)
            .map(|i| (spans[i].1 - col("optimizer", i).min(dur(i)), spans[i].1))
            .collect();
        let compute: Vec<f64> = (0..n)
            .filter_map(|i| {
                let parts = [col("forward", i), col("backward", i)];
                parts
                    .iter()
                    .any(|p| p.is_finite())
                    .then(|| parts.iter().filter(|p| p.is_finite()).sum())
            })
            .collect();
        Some(PhaseActivity {
            optimizer: (!opt.is_empty()).then(|| aligned_window(report, &spans, &opt)),
            compute_iqr_s: iqr(compute),
            step_iqr_s: iqr((0..n).map(dur).filter(|d| d.is_finite()).collect()),
            inference_only: inference_only(steps, n),
            largest_other: largest_other(steps),
        })
    }
}

fn iqr(mut v: Vec<f64>) -> Option<f64> {
    if v.len() < MIN_STEPS_FOR_SPREAD {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(percentile_sorted(&v, 0.75) - percentile_sorted(&v, 0.25))
}

/// The marked phase besides data, forward and backward with the largest total time, and its
/// share of the total step time.
fn largest_other(steps: &StepsData) -> Option<(String, f64)> {
    let total = steps.stats.get(crate::report::STEP_KEY)?.sum_s;
    steps
        .phases
        .iter()
        .filter(|n| !matches!(n.as_str(), "data" | "forward" | "backward"))
        .filter_map(|n| Some((n.clone(), steps.stats.get(n)?.sum_s / total)))
        .filter(|(_, x)| x.is_finite() && *x > 0.0)
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// Forward marked in at least half the kept steps; backward and optimizer in no step.
fn inference_only(steps: &StepsData, n: usize) -> bool {
    let kept = |name: &str| {
        steps
            .phase_durations
            .get(name)
            .map_or(0, |c| c.0.iter().take(n).filter(|v| v.is_finite()).count())
    };
    let never =
        |name: &str| kept(name) == 0 && steps.stats.get(name).is_none_or(|s| s.sum_s <= 0.0);
    n > 0 && kept("forward") * 2 >= n && never("backward") && never("optimizer")
}

/// Whether `t` falls in one of the sorted, disjoint `windows`.
fn inside(windows: &[(f64, f64)], t: f64) -> bool {
    let k = windows.partition_point(|w| w.0 <= t);
    k > 0 && t < windows[k - 1].1
}

/// Splits one column's samples taken during the steps into inside and outside `windows`.
fn split(
    data: &SeriesData,
    metric: &str,
    spans: &[(f64, f64)],
    windows: &[(f64, f64)],
    acc: &mut [Vec<f64>; 2],
) {
    let Some(c) = data.metrics.get(metric) else {
        return;
    };
    for (t, v) in data.t.iter().zip(&c.0) {
        let v = f64::from(*v);
        if v.is_finite() && inside(spans, *t) {
            acc[usize::from(!inside(windows, *t))].push(v);
        }
    }
}

fn in_out(acc: &[Vec<f64>; 2]) -> Option<InOut> {
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    (!acc[0].is_empty() && !acc[1].is_empty()).then(|| InOut {
        inside: mean(&acc[0]),
        outside: mean(&acc[1]),
    })
}

/// [`window`] at the shift of the markers against the samples, within one sampling interval
/// either way, at which the GPUs idle most inside the windows. Markers and samples share a
/// clock, but a sample's time is its tick, and the reading comes when the sampler thread
/// gets to it: on a loaded host, or for a job whose markers are taken on another thread,
/// the two agree only to about one interval. A shift that small cannot make a GPU that works
/// through a phase several intervals long look idle in it: at most one interval of the
/// window moves onto a neighbouring phase.
fn aligned_window(report: &Report, spans: &[(f64, f64)], windows: &[(f64, f64)]) -> PhaseWindow {
    let dt = report.run.interval_s.max(0.0);
    let mut best: Option<PhaseWindow> = None;
    for k in -SHIFT_STEPS..=SHIFT_STEPS {
        let d = dt * f64::from(k) / f64::from(SHIFT_STEPS);
        let moved = |v: &[(f64, f64)]| v.iter().map(|(a, b)| (a + d, b + d)).collect::<Vec<_>>();
        let mut w = window(report, &moved(spans), &moved(windows));
        w.shift_s = d;
        let better = match &best {
            None => true,
            Some(b) => {
                let (x, y) = (w.idle_share.unwrap_or(0.0), b.idle_share.unwrap_or(0.0));
                x > y + 1e-9 || (x >= y - 1e-9 && d.abs() < b.shift_s.abs())
            }
        };
        if better {
            best = Some(w);
        }
    }
    best.unwrap_or_default()
}

/// Shifts tried each way, in quarters of the sampling interval.
pub const SHIFT_STEPS: i32 = 4;

/// The samples inside `windows` (sorted by start) against the rest of the steps `spans`.
fn window(report: &Report, spans: &[(f64, f64)], windows: &[(f64, f64)]) -> PhaseWindow {
    let mut spans = spans.to_vec();
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut windows = windows.to_vec();
    windows.sort_by(|a, b| a.0.total_cmp(&b.0));
    let job = |i: u32| report.run.job_gpus.as_ref().is_none_or(|j| j.is_job(i));
    let gpus: Vec<&SeriesData> = report
        .series
        .iter()
        .filter(|s| job(s.device))
        .map(|s| &s.data)
        .collect();
    let gather = |metrics: &[GpuMetric]| {
        let mut acc = [Vec::new(), Vec::new()];
        for d in &gpus {
            for m in metrics {
                split(d, m.name(), &spans, &windows, &mut acc);
            }
        }
        acc
    };
    let util = gather(&[GpuMetric::UtilGpu]);
    let pcie = gather(&[GpuMetric::PcieRx, GpuMetric::PcieTx]);
    let nvlink = gather(&[GpuMetric::NvlinkRx, GpuMetric::NvlinkTx]);
    let host = |metric: &str| {
        let mut acc = [Vec::new(), Vec::new()];
        if let Some(h) = report.host.as_ref() {
            split(&h.data, metric, &spans, &windows, &mut acc);
        }
        in_out(&acc)
    };
    PhaseWindow {
        samples: util[0].len(),
        idle_share: (!util[0].is_empty()).then(|| {
            util[0].iter().filter(|u| **u < DIP_UTIL).count() as f64 / util[0].len() as f64
        }),
        util: in_out(&util),
        pcie: in_out(&pcie),
        nvlink: in_out(&nvlink),
        host_cpu: host("cpu_total"),
        proc_cpu: host("proc_cpu"),
        shift_s: 0.0,
    }
}
