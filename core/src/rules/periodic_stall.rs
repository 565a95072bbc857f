//! `periodic_stall`: something stops training every N steps.

use super::{action, evidence, experiment, round, Rule, RuleDoc, RuleMeta};
use crate::report::Comparator;
use crate::report::FindingSource;
use crate::report::{Cost, Severity};
use crate::signals::Signals;

/// Fewest outliers that can show a period.
pub const MIN_OUTLIERS: u64 = 3;
/// Largest coefficient of variation of the outlier spacing that still counts as "fixed period".
pub const MAX_SPACING_CV: f64 = 0.2;

static META: RuleMeta = RuleMeta {
    id: "periodic_stall",
    title: "Training stalls every N steps",
    severity: Severity::Medium,
    doc: RuleDoc {
        detects: "Step-time spikes that recur with a fixed period in steps (evaluation, checkpointing, logging with an implicit sync), optionally matching eval/checkpoint events. Without such events, a stall every GPU sits out together while NVLink/PCIe traffic rises is left to comm_sync (a collective every N micro-steps of gradient accumulation).",
        why: "A stall every N steps is time the GPUs spend idle; it often hides in averages and shows only in p95/p99.",
        evidence: "Count of step-time outliers, their spacing in steps and its regularity; eval/checkpoint events.",
        first: "Evaluate less often or in another process, checkpoint asynchronously, log from another thread without forcing a sync.",
    },
};

/// See the module docs.
pub struct PeriodicStall;

impl Rule for PeriodicStall {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn evaluate(&self, s: &Signals) -> Option<crate::report::Finding> {
        let st = s.steps.as_ref()?;
        let period = st.outlier_period_steps?;
        let cv = st.outlier_spacing_cv?;
        let mut ev = vec![
            evidence(
                "step-time outliers",
                st.outliers as f64,
                Comparator::AtLeast,
                MIN_OUTLIERS as f64,
                "steps",
                None,
            ),
            evidence(
                "coefficient of variation of outlier spacing",
                cv,
                Comparator::Below,
                MAX_SPACING_CV,
                "ratio",
                None,
            ),
        ];
        if !ev.iter().all(|e| e.agrees) {
            return None;
        }
        ev.push(evidence(
            "outlier period",
            period,
            Comparator::Above,
            1.0,
            "steps",
            None,
        ));
        let kinds: Vec<&str> = ["eval", "checkpoint", "log"]
            .into_iter()
            .filter(|k| s.events.iter().any(|e| e.kind == *k))
            .collect();
        // A stall that every GPU sits out together while the links carry a burst, with no
        // eval/checkpoint/log event, is a collective (every N micro-steps of gradient
        // accumulation): `comm_sync` names it.
        if kinds.is_empty() && super::comm_sync::collective_in_dips(s) {
            return None;
        }
        let conf = if kinds.is_empty() { 0.7 } else { 0.9 };
        let cause = if kinds.is_empty() {
            String::new()
        } else {
            format!(" ({} events recorded)", kinds.join(", "))
        };
        let (lost, basis) = cost(st);
        let mut f = META.finding(conf, format!("Every ~{period:.0} steps a step takes far longer than the median{cause}: a periodic stall{}.", lost.map_or(String::new(), |l| format!(" costing ~{:.0}% of the run", l * 100.0))), ev);
        f.source = Some(FindingSource::Steps);
        f.lost_share = lost;
        f.lost_share_basis = Some(basis);
        f.devices = s.sampled_devices().map(|d| d.index).collect();
        f.actions = vec![
            action(Cost::Low, "Evaluate less often, or on a smaller validation subset"),
            action(Cost::Medium, "Checkpoint asynchronously (torch.distributed.checkpoint async_save) or from another process"),
            action(Cost::Medium, "Log from another thread and avoid .item()/printing tensors on the logging step"),
        ];
        f.experiment = experiment(
            &format!(
                "Double the eval/checkpoint interval (one change) — now ~every {period:.0} steps"
            ),
            "The outliers halve in number; step time p50 unchanged, p99 and total time fall",
            "step-time outliers; step time p99",
        );
        Some(f)
    }
}

/// What the stalls cost, with its basis: the time the stall steps spent above a normal
/// step, over the run's step time (evaluation and checkpoints between steps included); a
/// stall every N steps never moves the median or, when rarer than 1 in 20, the p95.
fn cost(st: &crate::signals::StepView) -> (Option<f64>, String) {
    if st.stall_excess_share > 0.0 {
        (
            Some(round(st.stall_excess_share.clamp(0.0, 1.0))),
            "time-weighted: time the outlier steps spent above the median step cycle, over the total step-cycle time".to_string(),
        )
    } else if st.count > 0 && st.step_p50_s > 0.0 {
        let excess = (st.step_p95_s - st.step_p50_s).max(0.0) * st.outliers as f64;
        (
            Some(round((excess / (st.step_p50_s * st.count as f64 + excess)).clamp(0.0, 1.0))),
            "estimated from the step-time p95 over p50 for each outlier (the per-step cycles were not kept)".to_string(),
        )
    } else {
        (None, "not estimated: no step times".to_string())
    }
}
