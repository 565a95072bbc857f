//! Two reports side by side: a baseline and a candidate (the same job with one change).
//!
//! What `gpuwhy compare` says, in the page: the verdict-level diff in its words, step time
//! p50/p95/p99 and throughput with the rank test on the per-step samples, per-phase medians,
//! and per-GPU utilization and power medians. The numbers are core's own types
//! ([`gpuwhy::compare`]) filled here from the reports as read, because calling core's
//! `compare` would bring its signals (the statistics every rule reads) into the module:
//! measured, 142.8 → 173.4 kB gzipped, past the 150 kB goal. What needs the signals is left
//! to the command: whether each finding's experiment held, and SM clocks under load. The
//! native tests check that the summary line here is the one `gpuwhy compare` prints.

pub mod html;

use gpuwhy::compare::{mann_whitney, Change, GpuChange, StepChange, VerdictDiff};
use gpuwhy::report::{Report, SeriesData};
use gpuwhy::signals::stats::{dist, percentile_sorted};

use crate::view::View;

/// The comparison of a baseline with a candidate, as the page shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Diff {
    /// Labels of the two runs (the run's label, else `baseline` / `candidate`).
    pub labels: (String, String),
    /// Why `gpuwhy compare` would refuse these runs without `--force` (different GPU
    /// counts or models); the page shows the comparison with this warning.
    pub incomparable: Option<String>,
    /// Step times, when both runs recorded steps.
    pub steps: Option<StepChange>,
    /// Per GPU, paired in index order; SM clocks under load are not computed here.
    pub gpus: Vec<GpuChange>,
    /// Findings before and after.
    pub verdict: VerdictDiff,
    /// The line `gpuwhy compare` leads with.
    pub summary: String,
}

/// Why two reports would not be compared without `--force` (as core's `incomparable`).
pub fn incomparable(a: &Report, b: &Report) -> Option<String> {
    gpuwhy::compare::incomparable(a, b)
}

/// The present values of `v` at quantile `q`, NaN when there are none.
fn percentile(v: &[f64], q: f64) -> f64 {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    s.sort_by(f64::total_cmp);
    percentile_sorted(&s, q)
}

fn step_change(a: &Report, b: &Report) -> Option<StepChange> {
    let (sa, sb) = (a.steps.as_ref()?, b.steps.as_ref()?);
    let va: Vec<f64> = sa.duration.present().map(f64::from).collect();
    let vb: Vec<f64> = sb.duration.present().map(f64::from).collect();
    if va.is_empty() || vb.is_empty() {
        return None;
    }
    let rate = |v: &[f64]| v.len() as f64 / v.iter().sum::<f64>().max(f64::EPSILON);
    let mut phases = Vec::new();
    for name in &sa.phases {
        if let (Some(x), Some(y)) = (sa.phase_durations.get(name), sb.phase_durations.get(name)) {
            let (dx, dy) = (
                dist(x.present().map(f64::from)),
                dist(y.present().map(f64::from)),
            );
            if let (Some(dx), Some(dy)) = (dx, dy) {
                phases.push((name.clone(), Change::new(dx.p50, dy.p50)));
            }
        }
    }
    Some(StepChange {
        p50_s: Change::new(percentile(&va, 0.5), percentile(&vb, 0.5)),
        p95_s: Change::new(percentile(&va, 0.95), percentile(&vb, 0.95)),
        p99_s: Change::new(percentile(&va, 0.99), percentile(&vb, 0.99)),
        throughput: Change::new(rate(&va), rate(&vb)),
        test: mann_whitney(&va, &vb),
        phases,
    })
}

/// A metric's samples and its coarse buckets' means, as core's signals read a series.
fn with_coarse(data: &SeriesData, metric: &str) -> Vec<f64> {
    let mut out: Vec<f64> = data
        .metrics
        .get(metric)
        .map(|c| c.0.iter().map(|v| f64::from(*v)).collect())
        .unwrap_or_default();
    if let Some(cc) = data.coarse.as_ref().and_then(|c| c.metrics.get(metric)) {
        out.extend(cc.mean.0.iter().map(|v| f64::from(*v)));
    }
    out
}

/// Utilization samples at full resolution (what core's rank test takes).
fn util_samples(data: &SeriesData) -> Vec<f64> {
    data.metrics
        .get("util_gpu")
        .map(|c| c.present().map(f64::from).collect())
        .unwrap_or_default()
}

fn p50_change(a: &SeriesData, b: &SeriesData, metric: &str) -> Option<Change> {
    let x = dist(with_coarse(a, metric))?;
    let y = dist(with_coarse(b, metric))?;
    Some(Change::new(x.p50, y.p50))
}

fn gpu_changes(a: &View, b: &View) -> Vec<GpuChange> {
    (0..a.gpus.len().min(b.gpus.len()))
        .filter_map(|pos| {
            let (x, y) = (&a.series(pos)?.data, &b.series(pos)?.data);
            Some(GpuChange {
                index: a.gpus[pos].index,
                util_p50: p50_change(x, y, "util_gpu"),
                power_p50: p50_change(x, y, "power"),
                sm_clock_p50: None,
                util_test: mann_whitney(&util_samples(x), &util_samples(y)),
            })
        })
        .collect()
}

fn verdict_diff(a: &Report, b: &Report) -> VerdictDiff {
    let ids = |r: &Report| {
        r.findings
            .iter()
            .map(|f| (f.id.clone(), f.confidence))
            .collect::<Vec<_>>()
    };
    let (fa, fb) = (ids(a), ids(b));
    VerdictDiff {
        baseline_top: (a.verdict.id.clone(), a.verdict.confidence),
        candidate_top: (b.verdict.id.clone(), b.verdict.confidence),
        resolved: fa
            .iter()
            .filter(|x| !fb.iter().any(|y| y.0 == x.0))
            .map(|x| x.0.clone())
            .collect(),
        new: fb
            .iter()
            .filter(|y| !fa.iter().any(|x| x.0 == y.0))
            .map(|y| y.0.clone())
            .collect(),
        persisting: fa
            .iter()
            .filter_map(|x| {
                fb.iter()
                    .find(|y| y.0 == x.0)
                    .map(|y| (x.0.clone(), x.1, y.1))
            })
            .collect(),
    }
}

/// The line `gpuwhy compare` leads with: the step-time change and its significance, then
/// where the top finding went (`data_starvation 0.82 → resolved; new top finding: …`).
pub fn summary(steps: Option<&StepChange>, v: &VerdictDiff) -> String {
    let mut parts = Vec::new();
    if let Some(s) = steps {
        let rel = s.p50_s.relative.unwrap_or(0.0) * 100.0;
        let sig = match s.test {
            Some(t) if t.significant => format!("significant, p = {:.2e}", t.p),
            Some(t) => format!("not significant, p = {:.2}", t.p),
            None => "no test".into(),
        };
        parts.push(format!("step time p50 {rel:+.1}% ({sig})"));
    }
    let (a, b) = (&v.baseline_top, &v.candidate_top);
    parts.push(if a.0 == b.0 {
        format!("{} {:.2} → {:.2}", a.0, a.1, b.1)
    } else if v.resolved.contains(&a.0) {
        format!(
            "{} {:.2} → resolved; new top finding: {} {:.2}",
            a.0, a.1, b.0, b.1
        )
    } else {
        format!("top finding {} {:.2} → {} {:.2}", a.0, a.1, b.0, b.1)
    });
    parts.join("; ")
}

impl Diff {
    /// Compares `a` (the baseline) with `b` (the candidate) as read.
    pub fn of(a: &View, b: &View) -> Diff {
        let (ra, rb) = (&a.report, &b.report);
        let steps = step_change(ra, rb);
        let verdict = verdict_diff(ra, rb);
        let summary = summary(steps.as_ref(), &verdict);
        Diff {
            labels: (
                ra.run.label.clone().unwrap_or_else(|| "baseline".into()),
                rb.run.label.clone().unwrap_or_else(|| "candidate".into()),
            ),
            incomparable: incomparable(ra, rb),
            steps,
            gpus: gpu_changes(a, b),
            verdict,
            summary,
        }
    }
}

/// GPUs both runs have samples of, as `(position, label)` with both labels when they
/// differ: what the page lays out one utilization chart for.
pub fn gpu_pairs(a: &View, b: &View) -> Vec<(usize, String)> {
    a.gpus
        .iter()
        .zip(&b.gpus)
        .map(|(x, y)| {
            let label = if x.label == y.label {
                x.label.clone()
            } else {
                format!("{} / {}", x.label, y.label)
            };
            (x.pos, label)
        })
        .collect()
}
