//! The rule catalogue: one rule per file, each a unit struct implementing [`Rule`] with
//! constant metadata and documentation, reading only [`Signals`].
//!
//! Thresholds are named constants whose docs say where the number comes from.

mod allocator_stall;
mod busy_not_working;
mod catalogue;
mod comm_sync;
mod cpu_optimizer;
mod data_starvation;
mod declares;
mod dynamic_shapes;
mod gpu_fault;
mod host_sync;
mod host_transfer;
mod idle_gpu;
mod launch_bound;
mod memory_bound;
mod memory_headroom;
mod near_miss;
mod pcie_degraded;
mod periodic_stall;
mod pipeline_bubble;
mod rank_imbalance;
mod recompute_overhead;
mod shared_gpu;
pub(crate) mod short_log;
mod small_batch;
mod throttling;
pub(crate) mod traced;
pub(crate) mod unexplained_idle;

pub use allocator_stall::AllocatorStall;
pub use busy_not_working::BusyNotWorking;
pub use catalogue::catalogue_markdown;
pub use comm_sync::CommSync;
pub use cpu_optimizer::CpuOptimizer;
pub use data_starvation::DataStarvation;
pub use declares::{Needs, Produces, Relation, MIN_SERIES_SAMPLES};
pub use dynamic_shapes::DynamicShapes;
pub use gpu_fault::GpuFault;
pub use host_sync::HostSync;
pub use host_transfer::HostTransfer;
pub use idle_gpu::IdleGpu;
pub use launch_bound::LaunchBound;
pub use memory_bound::MemoryBound;
pub use memory_headroom::MemoryHeadroom;
pub use pcie_degraded::PcieDegraded;
pub use periodic_stall::PeriodicStall;
pub use pipeline_bubble::PipelineBubble;
pub use rank_imbalance::{RankImbalance, MAX_NAMED};
pub use recompute_overhead::RecomputeOverhead;
pub use shared_gpu::SharedGpu;
pub use small_batch::SmallBatch;
pub use throttling::Throttling;
pub use unexplained_idle::UnexplainedIdle;

use crate::report::{Comparator, FindingSource};
use crate::report::{Evidence, Finding, Severity};
use crate::signals::Signals;

/// A rule's documentation, under the catalogue's fixed headings.
#[derive(Debug, Clone, Copy)]
pub struct RuleDoc {
    /// What it detects.
    pub detects: &'static str,
    /// Why it matters.
    pub why: &'static str,
    /// The evidence it uses.
    pub evidence: &'static str,
    /// What to try first.
    pub first: &'static str,
}

/// Constant metadata of a rule.
#[derive(Debug, Clone, Copy)]
pub struct RuleMeta {
    /// Stable snake_case id (a contract: reports and scripts use it).
    pub id: &'static str,
    /// Short title.
    pub title: &'static str,
    /// Default severity.
    pub severity: Severity,
    /// Documentation.
    pub doc: RuleDoc,
}

impl RuleMeta {
    /// A finding of this rule with its metadata filled in; the rest comes from the rule.
    pub(crate) fn finding(
        &self,
        confidence: f64,
        summary: String,
        evidence: Vec<Evidence>,
    ) -> Finding {
        Finding {
            id: self.id.into(),
            title: self.title.into(),
            severity: self.severity,
            confidence: round(confidence.clamp(0.0, 1.0)),
            summary,
            lost_share: None,
            lost_share_basis: None,
            devices: Vec::new(),
            evidence,
            actions: Vec::new(),
            experiment: crate::report::Experiment::default(),
            unseen: Vec::new(),
            source: Some(FindingSource::Samples),
            caused_by: None,
        }
    }
}

/// Builds an action.
pub(crate) fn action(cost: crate::report::Cost, text: &str) -> crate::report::Action {
    crate::report::Action {
        text: text.into(),
        cost,
    }
}

/// Builds the confirming experiment.
pub(crate) fn experiment(change: &str, expect: &str, metric: &str) -> crate::report::Experiment {
    crate::report::Experiment {
        change: change.into(),
        expect: expect.into(),
        metric: metric.into(),
    }
}

/// Unavailable GPM, said once per finding that would have used it.
pub(crate) const NO_GPM: &str = "GPM metrics (SM occupancy, tensor activity, DRAM bandwidth) are unavailable on this GPU (Hopper and newer have them): memory-bound and compute-bound cannot be told apart from samples; run Nsight Compute on the main kernels.";

/// A diagnosis rule.
pub trait Rule: Sync {
    /// The rule's metadata.
    fn meta(&self) -> &'static RuleMeta;
    /// The finding, when the rule fires.
    fn evaluate(&self, signals: &Signals) -> Option<Finding>;
    /// What its finding needs before it can speak from samples: a pattern over time by
    /// default.
    fn needs(&self) -> Needs {
        Needs::Series
    }
    /// The findings its mechanism can produce: when one holds beside this rule's on the
    /// related GPUs, this rule's finding is the cause and carries its measured cost.
    fn produces(&self) -> &'static [Produces] {
        &[]
    }
}

/// Every rule, in catalogue order.
pub static RULES: &[&dyn Rule] = &[
    &DataStarvation,
    &LaunchBound,
    &BusyNotWorking,
    &MemoryBound,
    &MemoryHeadroom,
    &SmallBatch,
    &RecomputeOverhead,
    &CommSync,
    &RankImbalance,
    &HostTransfer,
    &HostSync,
    &Throttling,
    &PcieDegraded,
    &PeriodicStall,
    &DynamicShapes,
    &GpuFault,
    &AllocatorStall,
    &CpuOptimizer,
    &SharedGpu,
    &PipelineBubble,
    &IdleGpu,
    &UnexplainedIdle,
];

/// Builds an evidence item.
pub(crate) fn evidence(
    metric: &str,
    value: f64,
    cmp: Comparator,
    threshold: f64,
    unit: &str,
    device: Option<u32>,
) -> Evidence {
    Evidence {
        metric: metric.to_string(),
        value: round(value),
        threshold,
        agrees: cmp.holds(value, threshold),
        comparison: cmp,
        unit: unit.to_string(),
        device,
        time_range: None,
        weight: None,
    }
}

/// Builds an evidence item whose agreement the caller decides (a merged job's ratios, where
/// "agrees" is the signal's own test rather than the comparator's), for no one device.
pub(crate) fn ev(
    metric: String,
    value: f64,
    cmp: Comparator,
    threshold: f64,
    unit: &str,
    agrees: bool,
) -> Evidence {
    Evidence {
        metric,
        value: round(value),
        threshold,
        comparison: cmp,
        unit: unit.into(),
        device: None,
        time_range: None,
        agrees,
        weight: None,
    }
}

/// A weight in a finding's confidence that belongs to no evidence item.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Weight {
    /// What the rule's firing condition itself establishes, standing for no one item: it
    /// agrees by construction (`data_starvation`'s sawtooth or data phase, `comm_sync`'s
    /// synchronized dips, `dynamic_shapes`' spread of step times, `launch_bound`'s GPU/CPU
    /// ratio at or near its threshold and its steady mid-level utilization).
    Prior(f64),
    /// A signal the rule checks but that could not be measured on this input: it counts
    /// against the finding, as a signal checked that did not agree.
    Unmeasured(f64),
}

impl Weight {
    /// The weight and whether it agrees.
    fn counted(self) -> (f64, bool) {
        match self {
            Weight::Prior(w) => (w, true),
            Weight::Unmeasured(w) => (w, false),
        }
    }
}

/// Confidence from evidence: the weighted share of the checked signals that agree, over the
/// evidence items that carry a weight and the weights that belong to none (`others`).
pub(crate) fn confidence(evidence: &[Evidence], others: &[Weight]) -> f64 {
    let weighted: Vec<(f64, bool)> = others
        .iter()
        .map(|w| w.counted())
        .chain(
            evidence
                .iter()
                .filter_map(|e| e.weight.map(|w| (w, e.agrees))),
        )
        .collect();
    let total: f64 = weighted.iter().map(|w| w.0).sum();
    if total <= 0.0 {
        return 0.0;
    }
    round(weighted.iter().filter(|w| w.1).map(|w| w.0).sum::<f64>() / total)
}

/// Rounds to three decimals for stable, readable reports.
pub(crate) fn round(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// A device list with its verb in agreement: `GPU 0 sits`, `GPUs 0, 3 sit`.
pub(crate) fn verb(devs: &[u32], one: &str, many: &str) -> String {
    format!(
        "{} {}",
        gpus(devs),
        if devs.len() == 1 { one } else { many }
    )
}

/// Formats a device list: `GPU 0`, `GPUs 0, 3`.
pub(crate) fn gpus(devs: &[u32]) -> String {
    let list = devs
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    if devs.len() == 1 {
        format!("GPU {list}")
    } else {
        format!("GPUs {list}")
    }
}

#[cfg(test)]
mod registry_tests {
    use super::*;

    #[test]
    fn ids_are_unique_snake_case() {
        let mut seen = std::collections::BTreeSet::new();
        for r in RULES {
            let id = r.meta().id;
            assert!(
                id.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{id}"
            );
            assert!(seen.insert(id), "duplicate rule id {id}");
            assert!(!r.meta().doc.detects.is_empty() && !r.meta().doc.first.is_empty());
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;

#[cfg(test)]
mod mechanism_tests;

#[cfg(test)]
mod weight_tests {
    use super::tests::{constant, diagnosed, find, h100, report, GpuMetric, N};
    use super::*;

    fn item(agrees: bool) -> Evidence {
        let value = if agrees { 1.0 } else { 0.0 };
        evidence("m", value, Comparator::AtLeast, 0.5, "x", None)
    }

    #[test]
    fn confidence_counts_the_weighed_items_and_the_named_weights_only() {
        let ev = [
            item(true).weighing(2.0),
            item(false).weighing(1.0),
            item(true),
            item(false),
        ];
        assert_eq!(confidence(&ev, &[]), round(2.0 / 3.0));
        let others = [Weight::Prior(3.0), Weight::Unmeasured(1.0)];
        assert_eq!(confidence(&ev, &others), round(5.0 / 7.0));
        assert_eq!(confidence(&ev[2..], &[]), 0.0, "nothing weighed");
        assert_eq!(confidence(&[], &[Weight::Prior(2.0)]), 1.0);
    }

    #[test]
    fn a_rule_weighs_the_signals_it_checks_and_not_the_context() {
        // small_batch from samples alone: utilization is the context that let it be judged;
        // power, free memory and the clock are the signals, weighing 1 each.
        let r = diagnosed(report(vec![(
            h100(0),
            vec![
                (GpuMetric::UtilGpu, constant(55.0, N)),
                (GpuMetric::Power, constant(250.0, N)),
                (GpuMetric::MemUsed, constant(12_000.0, N)),
                (GpuMetric::SmClock, constant(1980.0, N)),
            ],
        )]));
        let f = find(&r, "small_batch").expect("fires");
        let weights: Vec<Option<f64>> = f.evidence.iter().map(|e| e.weight).collect();
        assert_eq!(weights, [None, Some(1.0), Some(1.0), Some(1.0)]);
        assert_eq!(f.confidence, round(confidence(&f.evidence, &[]) * 0.6));
        let text = serde_json::to_string(f).expect("writes");
        assert_eq!(text.matches("\"weight\":1.0").count(), 3, "{text}");
    }
}
