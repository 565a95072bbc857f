//! `rank_imbalance`: one GPU or rank is a straggler.

use super::{evidence, round, Rule, RuleDoc, RuleMeta};
use crate::report::{Action, Cost, Experiment, Finding, Severity};
use crate::signals::Signals;

/// Spread of per-GPU median utilization (points) above which GPUs are out of balance.
/// DESIGN.md's catalogue: "per-GPU SM util differs > 10 points".
pub const MAX_UTIL_SPREAD: f64 = 10.0;

/// Relative clock difference of the outlier against the others' median that points at the
/// outlier's hardware (throttling) rather than its data.
pub const CLOCK_GAP: f64 = 0.10;

static META: RuleMeta = RuleMeta {
    id: "rank_imbalance",
    title: "One GPU is out of step with the others",
    severity: Severity::High,
    doc: RuleDoc {
        detects: "Per-GPU median utilization that differs by more than 10 points across the GPUs of a job, naming the GPU furthest from the rest.",
        why: "In synchronous data-parallel training every step waits for the slowest rank; one straggler slows all of them.",
        evidence: "Per-GPU utilization medians and their spread; the outlier's SM clock against the others'.",
        first: "Give every rank the same batch size and an even data shard; look for another process on the outlier GPU; check the outlier for throttling.",
    },
};

/// See the module docs.
pub struct RankImbalance;

impl Rule for RankImbalance {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn evaluate(&self, s: &Signals) -> Option<Finding> {
        // A profiler trace measures this directly (issue 6): trust it first.
        if let Some(f) = s
            .trace
            .as_ref()
            .and_then(|t| crate::trace::findings::rank_imbalance(t, &META))
        {
            return Some(f);
        }
        let spread = s.cross.util_p50_spread?;
        let (outlier, distance) = s.cross.util_outlier?;
        if spread <= MAX_UTIL_SPREAD {
            return None;
        }
        let mut ev = vec![evidence(
            "spread of per-GPU util_gpu p50",
            spread,
            ">",
            MAX_UTIL_SPREAD,
            "points",
            None,
        )];
        for (d, u) in &s.cross.util_p50_by_device {
            ev.push(evidence("util_gpu p50", *u, ">=", 0.0, "%", Some(*d)));
        }
        let mut conf: f64 = 0.7;
        let mut cause = String::new();
        let others: Vec<f64> = s
            .cross
            .clock_p50_by_device
            .iter()
            .filter(|c| c.0 != outlier)
            .map(|c| c.1)
            .collect();
        if let (Some(mine), false) = (
            s.cross.clock_p50_by_device.iter().find(|c| c.0 == outlier),
            others.is_empty(),
        ) {
            let mut sorted = others.clone();
            sorted.sort_by(f64::total_cmp);
            let med = sorted[sorted.len() / 2];
            if med > 0.0 {
                let gap = (med - mine.1) / med;
                let e = evidence(
                    "outlier sm_clock below the others' median",
                    gap,
                    ">=",
                    CLOCK_GAP,
                    "fraction",
                    Some(outlier),
                );
                if e.agrees {
                    conf += 0.2;
                    cause = format!(
                        " Its SM clock is {:.0}% below the others': look at its cooling and power.",
                        gap * 100.0
                    );
                }
                ev.push(e);
            }
        }
        Some(Finding {
            id: META.id.into(),
            title: META.title.into(),
            severity: META.severity,
            confidence: round(conf.min(1.0)),
            summary: format!(
                "GPU {outlier} is {distance:.0} points away from the other GPUs' median utilization (spread {spread:.0} points); in synchronous training the others wait for it.{cause}"
            ),
            lost_share: Some(round((spread / 100.0).min(1.0))),
            lost_share_basis: None,
            devices: vec![outlier],
            evidence: ev,
            actions: vec![
                Action { text: "Check that every rank gets the same batch size and an evenly sized data shard (DistributedSampler, drop_last)".into(), cost: Cost::Low },
                Action { text: format!("Look for other processes on GPU {outlier} (`nvidia-smi`) and for throttling on it"), cost: Cost::Low },
                Action { text: "Move the straggling rank to another GPU or node".into(), cost: Cost::Medium },
            ],
            experiment: Experiment {
                change: format!("Swap the work of GPU {outlier} with another GPU (or exclude it) and rerun"),
                expect: "If the GPU is the cause, the imbalance follows the GPU; if the data is, it follows the shard. The spread of util_gpu p50 falls below 10 points once fixed".into(),
                metric: "spread of per-GPU util_gpu p50".into(),
            },
            unseen: vec!["Per-rank step times were not recorded; merge per-rank reports (or add step markers) to see which phase the straggler spends longer in.".into()],
        })
    }
}
