//! `recompute_overhead`: activation checkpointing costs more than it buys.

use super::{action, evidence, experiment, round, Rule, RuleDoc, RuleMeta};
use crate::report::Comparator;
use crate::report::FindingSource;
use crate::report::{Cost, Severity};
use crate::signals::Signals;

/// Backward over forward time p50 above which the backward recomputes the forward: a plain
/// backward costs about twice the forward (two matmuls per forward matmul); activation
/// checkpointing adds one forward, ~3× (docs/references.md#field-guides).
pub const MAX_BWD_FWD_RATIO: f64 = 2.6;
/// Memory used p95 over total below which the memory checkpointing saved is not being spent.
pub const HEADROOM_MEM_USED: f64 = 0.7;

static META: RuleMeta = RuleMeta {
    id: "recompute_overhead",
    title: "Activation checkpointing costs more than it buys",
    severity: Severity::Medium,
    doc: RuleDoc {
        detects: "Backward taking well over twice the forward (recomputation) while memory stays far from full.",
        why: "Checkpointing trades ~30 % more compute for memory; if the freed memory is not spent on a larger batch or sequence, the trade is a loss.",
        evidence: "Backward/forward time ratio p50 (GPU-measured when attached); mem_used p95 over total.",
        first: "Spend the freed memory (larger batch/sequence) or checkpoint fewer layers; disable checkpointing if memory allows.",
    },
};

/// See the module docs.
pub struct RecomputeOverhead;

impl Rule for RecomputeOverhead {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn evaluate(&self, s: &Signals) -> Option<crate::report::Finding> {
        let ratio = s.steps.as_ref()?.bwd_fwd_ratio_p50?;
        let er = evidence(
            "backward / forward time p50",
            ratio,
            Comparator::Above,
            MAX_BWD_FWD_RATIO,
            "ratio",
            None,
        );
        if !er.agrees {
            return None;
        }
        let mem: Vec<f64> = s
            .sampled_devices()
            .filter_map(|d| d.mem_used_ratio.map(|m| m.p95))
            .collect();
        let mut ev = vec![er];
        let mut conf = 0.6;
        if !mem.is_empty() {
            let m = mem.iter().copied().fold(0.0, f64::max);
            let e = evidence(
                "mem_used p95 / memory total (highest GPU)",
                m,
                Comparator::Below,
                HEADROOM_MEM_USED,
                "ratio",
                None,
            );
            if !e.agrees {
                return None;
            }
            conf = 0.8;
            ev.push(e);
        }
        // The recomputed forward is the excess over a plain 2× backward.
        let lost = (ratio - 2.0) / (1.0 + ratio);
        let mut f = META.finding(
            conf,
            format!("Backward takes {ratio:.1}× the forward (about 2× without recomputation) while memory is far from full: checkpointing recomputes work it does not need to."),
            ev,
        );
        f.source = Some(FindingSource::Steps);
        f.lost_share = Some(round(lost.clamp(0.0, 1.0)));
        f.lost_share_basis = Some("backward time beyond twice the forward, over forward plus backward ((ratio − 2) / (1 + ratio), backward/forward p50)".into());
        f.devices = s.sampled_devices().map(|d| d.index).collect();
        f.actions = vec![
            action(
                Cost::Low,
                "Disable activation checkpointing (or checkpoint fewer layers) if the memory fits",
            ),
            action(
                Cost::Low,
                "Otherwise spend the freed memory: larger batch or sequence length",
            ),
        ];
        f.experiment = experiment(
            "Turn activation checkpointing off (one change)",
            "backward/forward ratio falls to about 2 and step time p50 falls; mem_used rises",
            "backward/forward ratio; step time p50",
        );
        Some(f)
    }
}
