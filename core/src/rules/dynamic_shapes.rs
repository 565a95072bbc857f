//! `dynamic_shapes`: shapes change from step to step.

use super::traced::*;
use super::{action, confidence, evidence, experiment, Rule, RuleDoc, RuleMeta, Weight};
use crate::report::Comparator;
use crate::report::Finding;
use crate::report::FindingSource;
use crate::report::{Cost, Severity};
use crate::signals::Signals;
use crate::trace::TraceSummary;

/// Step time IQR over p50 from which step times vary a lot without a pattern.
pub const MIN_IQR_OVER_P50: f64 = 0.3;
/// Step time p95 over p50 from which the tail is long.
pub const MIN_P95_OVER_P50: f64 = 1.5;
/// Autocorrelation strength below which the variation has no period (else periodic_stall).
pub const MAX_PERIOD_STRENGTH: f64 = 0.3;
/// Spread of memory used (p95 − p5) over total from which allocations follow the shapes.
pub const MEM_SWING: f64 = 0.05;
/// Share of the step-time spread (IQR, seconds) the forward + backward phases must carry
/// for the spread to be shapes: changing shapes change the compute, and forward and backward
/// are most of a training step, so they carry most of its spread. Under a third of it, the
/// spread lies elsewhere (input waits, idle time between requests in serving).
pub const MIN_COMPUTE_SPREAD_SHARE: f64 = 0.33;

static META: RuleMeta = RuleMeta {
    id: "dynamic_shapes",
    title: "Input shapes change every step",
    severity: Severity::Medium,
    doc: RuleDoc {
        detects: "Step times that vary widely without a period, with memory use swinging along; not when the loop marks forward/backward phases and they carry under a third of the step-time spread (IQR), since varying shapes vary the compute.",
        why: "Varying shapes defeat kernel autotuning, CUDA Graphs and torch.compile (recompiles), and fragment the allocator.",
        evidence: "Step time IQR/p50 and p95/p50; absence of periodicity; mem_used p95 − p5 over total.",
        first: "Pad or bucket inputs to a few fixed shapes, then compile or capture graphs.",
    },
};

/// See the module docs.
pub struct DynamicShapes;

impl Rule for DynamicShapes {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn evaluate(&self, s: &Signals) -> Option<crate::report::Finding> {
        // A profiler trace measures this directly: trust it first.
        if let Some(f) = s.trace.as_ref().and_then(|t| traced(t, &META)) {
            return Some(f);
        }
        let st = s.steps.as_ref()?;
        let e1 = evidence(
            "step time IQR / p50",
            st.iqr_over_p50,
            Comparator::AtLeast,
            MIN_IQR_OVER_P50,
            "ratio",
            None,
        );
        let e2 = evidence(
            "step time p95 / p50",
            st.p95_over_p50,
            Comparator::AtLeast,
            MIN_P95_OVER_P50,
            "ratio",
            None,
        );
        if !(e1.agrees || e2.agrees) {
            return None;
        }
        // A regular pattern is a periodic stall, not shapes.
        if st
            .outlier_spacing_cv
            .is_some_and(|cv| cv < super::periodic_stall::MAX_SPACING_CV)
        {
            return None;
        }
        // Shapes vary the compute: where the loop marks it and it carries little of the
        // spread, the spread is elsewhere (an input wait, idle time between requests).
        if let Some((compute, step)) = s
            .phase_activity
            .as_ref()
            .and_then(|p| p.compute_iqr_s.zip(p.step_iqr_s))
        {
            if step > 0.0 && compute < MIN_COMPUTE_SPREAD_SHARE * step {
                return None;
            }
        }
        let strength = st.step_period.map_or(0.0, |p| p.strength);
        let e3 = evidence(
            "step-time autocorrelation at its dominant period",
            strength,
            Comparator::Below,
            MAX_PERIOD_STRENGTH,
            "r",
            None,
        );
        if !e3.agrees {
            return None;
        }
        // The wide spread (IQR or p95, one of them at least) fired the rule: a prior that
        // agrees by construction; the absent period agrees by the check above.
        let spread = Weight::Prior(2.0);
        let mut ev = vec![e1, e2, e3.weighing(1.0)];
        ev.extend(memory_swings(s));
        let mut f = META.finding(
            confidence(&ev, &[spread]) * 0.8,
            format!("Step time varies widely (p95 {:.1}× p50) without a pattern: input shapes change from step to step.", st.p95_over_p50),
            ev,
        );
        f.source = Some(FindingSource::Steps);
        f.lost_share_basis = Some("not estimated: varying shapes change how long steps take, not a share of idle time; what padding or bucketing saves shows in a compare".into());
        f.devices = s.sampled_devices().map(|d| d.index).collect();
        f.actions = vec![
            action(Cost::Low, "Bucket sequences by length (a length-grouped sampler) to cut padding and shape churn"),
            action(Cost::Medium, "Pad to a few fixed shapes, then torch.compile (dynamic=False) or CUDA Graphs"),
        ];
        f.experiment = experiment(
            "Pad every batch to a fixed length (one change)",
            "step time IQR/p50 falls below 0.1; with compile/graphs, step time p50 falls",
            "step time IQR/p50",
        );
        f.unseen.push("The shapes themselves are not recorded; a profiler trace with record_shapes=True lists them.".into());
        Some(f)
    }
}

/// Per sampled GPU, how far memory in use swings (p95 − p5 over the total): shapes that
/// change from step to step make the allocator's footprint move with them.
fn memory_swings(s: &Signals) -> Vec<crate::report::Evidence> {
    let mut ev = Vec::new();
    for d in s.sampled_devices() {
        if let Some(m) = d.mem_used_ratio {
            let e = evidence(
                "mem_used p95 − p5 over total",
                m.p95 - m.p5,
                Comparator::AtLeast,
                MEM_SWING,
                "ratio",
                Some(d.index),
            );
            ev.push(e.weighing(1.0));
        }
    }
    ev
}

// Evidence from a profiler trace, tried first when one is attached.

/// Steps needed before step-time spread means anything.
pub const MIN_STEPS: usize = 8;

/// Step time IQR over p50 from which step times vary a lot (as the `dynamic_shapes` rule).
pub const MIN_STEP_IQR: f64 = 0.3;

/// Kernels-per-step p95 over p50 from which the launched work changes from step to step.
pub const KERNEL_COUNT_SWING: f64 = 1.2;

/// `dynamic_shapes` from a trace: step times and the launched work change step to step.
fn traced(t: &TraceSummary, meta: &RuleMeta) -> Option<Finding> {
    let r = worst(t, |r| r.step_stats.iqr_over_p50)?;
    let st = &r.step_stats;
    if st.count < MIN_STEPS {
        return None;
    }
    let e1 = evidence(
        "step time IQR / p50 (trace)",
        st.iqr_over_p50,
        Comparator::AtLeast,
        MIN_STEP_IQR,
        "ratio",
        None,
    );
    let swing = if st.kernels.p50 > 0.0 {
        st.kernels.p95 / st.kernels.p50
    } else {
        1.0
    };
    let e2 = evidence(
        "kernels per step p95 / p50",
        swing,
        Comparator::AtLeast,
        KERNEL_COUNT_SWING,
        "ratio",
        None,
    );
    if !(e1.agrees && e2.agrees) {
        return None;
    }
    let mut f = meta.finding(
        0.85,
        format!(
            "Step times vary widely (IQR {:.0}% of the median){} and so does the launched work (kernels per step p95 {:.1}× p50): shapes change from step to step.",
            st.iqr_over_p50 * 100.0,
            rank_note(t, r),
            swing
        ),
        vec![e1, e2],
    );
    f.actions = vec![
        action(
            Cost::Low,
            "Bucket sequences by length (a length-grouped sampler) to cut padding and shape churn",
        ),
        action(
            Cost::Medium,
            "Pad to a few fixed shapes, then torch.compile (dynamic=False) or CUDA Graphs",
        ),
    ];
    f.experiment = experiment(
        "Pad every batch to a fixed length (one change), profile again",
        "step time IQR/p50 falls below 0.1 and kernels per step become constant",
        "trace step time IQR/p50",
    );
    mark_traced(&mut f, t);
    Some(f)
}
