//! Two reports side by side: a baseline and a candidate (the same job with one change).
//!
//! What `gpuwhy compare` says, in the page: the verdict-level diff in its words, step time
//! p50/p95/p99 and throughput with the rank test on the per-step samples, per-phase medians,
//! and per-GPU utilization and power medians. The numbers are core's own types
//! ([`gpuwhy::compare`]) filled here from the reports as read, with core's statistics
//! ([`stats`]), because calling core's `compare` would bring its signals (the statistics
//! every rule reads) into the module: measured, 142.8 → 173.4 kB gzipped, past the 150 kB
//! goal. What needs the signals is left
//! to the command: whether each finding's experiment held, and SM clocks under load. The
//! native tests check that the summary line here is the one `gpuwhy compare` prints.

pub mod html;
pub mod stats;

use gpuwhy::compare::{summary, verdict_diff, Change, GpuChange, StepChange, VerdictDiff};
use gpuwhy::report::{Report, SeriesData};

use stats::{mann_whitney, median, quantile, sorted};

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

// Plain loops below rather than iterator chains: each chain is its own generic code in the
// module, and the module has a size goal (see the module docs).

fn step_change(a: &Report, b: &Report) -> Option<StepChange> {
    let (sa, sb) = (a.steps.as_ref()?, b.steps.as_ref()?);
    let (va, vb) = (stats::present(&sa.duration), stats::present(&sb.duration));
    if va.is_empty() || vb.is_empty() {
        return None;
    }
    // Summed in the report's order, as core sums them.
    let rate = |v: &[f32]| {
        let mut total = 0.0f64;
        for x in v {
            total += f64::from(*x);
        }
        v.len() as f64 / total.max(f64::EPSILON)
    };
    let mut phases = Vec::new();
    for name in &sa.phases {
        if let (Some(x), Some(y)) = (sa.phase_durations.get(name), sb.phase_durations.get(name)) {
            if let (Some(dx), Some(dy)) = (median(&x.0), median(&y.0)) {
                phases.push((name.clone(), Change::new(dx, dy)));
            }
        }
    }
    let (qa, qb) = (sorted(&va), sorted(&vb));
    let q = |p: f64| Change::new(quantile(&qa, p), quantile(&qb, p));
    Some(StepChange {
        p50_s: q(0.5),
        p95_s: q(0.95),
        p99_s: q(0.99),
        throughput: Change::new(rate(&va), rate(&vb)),
        test: mann_whitney(&va, &vb),
        phases,
    })
}

/// Median of a metric's samples and its coarse buckets' means, as core's signals read a
/// series.
fn p50_with_coarse(data: &SeriesData, metric: &str) -> Option<f64> {
    let mut v = Vec::new();
    if let Some(c) = data.metrics.get(metric) {
        v.extend_from_slice(&c.0);
    }
    if let Some(cc) = data.coarse.as_ref().and_then(|c| c.metrics.get(metric)) {
        v.extend_from_slice(&cc.mean.0);
    }
    median(&v)
}

fn p50_change(a: &SeriesData, b: &SeriesData, metric: &str) -> Option<Change> {
    Some(Change::new(
        p50_with_coarse(a, metric)?,
        p50_with_coarse(b, metric)?,
    ))
}

/// Utilization at full resolution (what core's rank test takes).
fn util(d: &SeriesData) -> &[f32] {
    d.metrics.get("util_gpu").map_or(&[], |c| &c.0)
}

fn gpu_changes(a: &View, b: &View) -> Vec<GpuChange> {
    let mut out = Vec::new();
    for pos in 0..a.gpus.len().min(b.gpus.len()) {
        let (Some(x), Some(y)) = (a.series(pos), b.series(pos)) else {
            continue;
        };
        let (x, y) = (&x.data, &y.data);
        out.push(GpuChange {
            index: a.gpus[pos].index,
            util_p50: p50_change(x, y, "util_gpu"),
            power_p50: p50_change(x, y, "power"),
            sm_clock_p50: None,
            util_test: mann_whitney(util(x), util(y)),
        });
    }
    out
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
    let mut out = Vec::new();
    for (x, y) in a.gpus.iter().zip(&b.gpus) {
        let label = if x.label == y.label {
            x.label.clone()
        } else {
            format!("{} / {}", x.label, y.label)
        };
        out.push((x.pos, label));
    }
    out
}
