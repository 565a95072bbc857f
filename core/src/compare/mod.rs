//! Comparing a baseline report with a candidate: did the one change help, and did the
//! diagnosis move the way the finding's experiment predicted?
//!
//! Medians and tails, never means; a rank test on the per-step samples says whether a
//! difference is significant. Runs on different hardware are refused unless forced.

mod baseline;
mod checks;

pub use crate::report::{Change, Comparison, GpuChange, StepChange, VerdictDiff};
pub use crate::stats::{mann_whitney, mann_whitney_sorted, normal_cdf, MannWhitney, ALPHA, MAX_N};
pub use baseline::BaselineComparison;
pub use checks::{ExperimentCheck, Outcome};

use crate::report::Report;
use crate::signals::stats::{dist, Dist};
use crate::signals::Signals;
use crate::stats::percentile_sorted;

impl Change {
    /// A change from `a` to `b`.
    pub fn new(a: f64, b: f64) -> Change {
        Change {
            baseline: a,
            candidate: b,
            relative: (a.abs() > f64::EPSILON).then(|| b / a - 1.0),
        }
    }
}

/// Why two reports cannot be compared.
pub fn incomparable(a: &Report, b: &Report) -> Option<String> {
    if a.devices.len() != b.devices.len() {
        return Some(format!(
            "the baseline has {} GPU(s) and the candidate {}",
            a.devices.len(),
            b.devices.len()
        ));
    }
    for (x, y) in a.devices.iter().zip(&b.devices) {
        if x.name != y.name {
            return Some(format!(
                "GPU {} is a {} in the baseline and a {} in the candidate",
                x.index,
                x.name.as_deref().unwrap_or("?"),
                y.name.as_deref().unwrap_or("?")
            ));
        }
    }
    None
}

/// The finite values of `v`, sorted.
fn sorted_finite(v: &[f64]) -> Vec<f64> {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    s.sort_by(f64::total_cmp);
    s
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
            let (dx, dy): (Option<Dist>, Option<Dist>) = (
                dist(x.present().map(f64::from)),
                dist(y.present().map(f64::from)),
            );
            if let (Some(dx), Some(dy)) = (dx, dy) {
                phases.push((name.clone(), Change::new(dx.p50, dy.p50)));
            }
        }
    }
    let (qa, qb) = (sorted_finite(&va), sorted_finite(&vb));
    let q = |p: f64| Change::new(percentile_sorted(&qa, p), percentile_sorted(&qb, p));
    Some(StepChange {
        p50_s: q(0.5),
        p95_s: q(0.95),
        p99_s: q(0.99),
        throughput: Change::new(rate(&va), rate(&vb)),
        test: mann_whitney(&va, &vb),
        phases,
    })
}

fn util_samples(r: &Report, index: u32) -> Vec<f64> {
    r.series
        .iter()
        .find(|s| s.device == index)
        .and_then(|s| s.data.metrics.get("util_gpu"))
        .map(|c| c.present().map(f64::from).collect())
        .unwrap_or_default()
}

/// Compares two diagnosed reports. Refuses (`Err` with the reason) runs on different GPU
/// counts or models unless `force`.
pub fn compare(a: &Report, b: &Report, force: bool) -> Result<Comparison, String> {
    let why = incomparable(a, b);
    if let (Some(w), false) = (&why, force) {
        return Err(format!(
            "the runs are not comparable: {w}; compare runs on the same hardware, or pass --force"
        ));
    }
    let (sa, sb) = (Signals::from_report(a), Signals::from_report(b));
    let gpus = sa
        .devices
        .iter()
        .zip(&sb.devices)
        .map(|(x, y)| GpuChange {
            index: x.index,
            util_p50: x.util.zip(y.util).map(|(p, q)| Change::new(p.p50, q.p50)),
            power_p50: x.power.zip(y.power).map(|(p, q)| Change::new(p.p50, q.p50)),
            sm_clock_p50: x
                .sm_clock_loaded
                .zip(y.sm_clock_loaded)
                .map(|(p, q)| Change::new(p.p50, q.p50)),
            util_test: mann_whitney(&util_samples(a, x.index), &util_samples(b, y.index)),
        })
        .collect();
    let verdict = verdict_diff(a, b);
    let steps = step_change(a, b);
    let experiments = a
        .findings
        .iter()
        .map(|f| checks::check(f, &sa, &sb, a, b))
        .collect();
    let mut c = Comparison {
        labels: (
            a.run.label.clone().unwrap_or_else(|| "baseline".into()),
            b.run.label.clone().unwrap_or_else(|| "candidate".into()),
        ),
        forced_despite: why,
        steps,
        gpus,
        verdict,
        experiments,
        summary: String::new(),
    };
    c.summary = summary(c.steps.as_ref(), &c.verdict);
    Ok(c)
}

/// How the findings moved from `a` (the baseline) to `b`: the top findings, and the
/// findings resolved, new and in both (with both confidences), each in its report's order.
pub fn verdict_diff(a: &Report, b: &Report) -> VerdictDiff {
    let mut v = VerdictDiff {
        baseline_top: (a.verdict.id.clone(), a.verdict.confidence),
        candidate_top: (b.verdict.id.clone(), b.verdict.confidence),
        resolved: Vec::new(),
        new: Vec::new(),
        persisting: Vec::new(),
    };
    for x in &a.findings {
        match b.findings.iter().find(|y| y.id == x.id) {
            Some(y) => v
                .persisting
                .push((x.id.clone(), x.confidence, y.confidence)),
            None => v.resolved.push(x.id.clone()),
        }
    }
    for y in &b.findings {
        if !a.findings.iter().any(|x| x.id == y.id) {
            v.new.push(y.id.clone());
        }
    }
    v
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

#[cfg(test)]
mod tests {
    use super::VerdictDiff;

    #[test]
    fn a_confidence_that_is_not_a_number_reads_back_as_nan() {
        let v = VerdictDiff {
            baseline_top: ("data_starvation".into(), f64::NAN),
            candidate_top: ("none".into(), 0.0),
            resolved: Vec::new(),
            new: Vec::new(),
            persisting: vec![("launch_bound".into(), 0.75, f64::NAN)],
        };
        let json = serde_json::to_string(&v).expect("writes");
        assert!(json.contains("[\"launch_bound\",0.75,null]"), "{json}");
        let back: VerdictDiff = serde_json::from_str(&json).expect("reads back");
        assert!(back.baseline_top.1.is_nan() && back.persisting[0].2.is_nan());
        assert_eq!(back.persisting[0].1, 0.75);
        assert_eq!(back.candidate_top, ("none".to_string(), 0.0));
    }
}
