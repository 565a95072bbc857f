//! The per-rank section of a merged job report (`ranks`), written by `gpuwhy merge`.
//!
//! A job report does not carry the ranks' samples (a thousand ranks' series would not fit in
//! one file); it carries one summary row per rank — step and phase medians, each GPU's
//! utilization median, the rank's own findings — and what the merge derived from them:
//! the nodes, the stragglers and the utilization imbalance. `gpuwhy diagnose` re-derives the
//! job's findings from these rows, so a newer gpuwhy can re-judge an older job report.
//! A number written as `null` (a NaN) is read back as NaN rather than refused.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::column::f64_or_nan;
use super::finding::Finding;

/// Median and 95th percentile of a step or phase time on one rank, seconds.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct PhaseTimes {
    /// Median, seconds.
    #[serde(deserialize_with = "f64_or_nan")]
    pub p50_s: f64,
    /// 95th percentile, seconds.
    #[serde(deserialize_with = "f64_or_nan")]
    pub p95_s: f64,
}

/// One rank's step markers, summarised.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RankSteps {
    /// Steps the rank completed.
    pub count: u64,
    /// Whole-step time.
    pub step: PhaseTimes,
    /// Per phase name (`data`, `forward`, …, custom ones).
    pub phases: BTreeMap<String, PhaseTimes>,
}

/// One GPU as a rank's report saw it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RankGpu {
    /// NVML index on the rank's node.
    pub index: u32,
    /// Product name.
    pub name: Option<String>,
    /// `GPU-…` UUID.
    pub uuid: Option<String>,
    /// Median `util_gpu`, %.
    pub util_p50: Option<f64>,
    /// Median SM clock while loaded (`util_gpu` ≥ 50 %), MHz.
    pub sm_clock_p50_mhz: Option<f64>,
    /// Median power draw, W.
    pub power_p50_w: Option<f64>,
}

/// One finding of a rank's own diagnosis.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RankFinding {
    /// Rule id.
    pub id: String,
    /// Its confidence on that rank.
    #[serde(deserialize_with = "f64_or_nan")]
    pub confidence: f64,
}

/// One rank's row.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RankSummary {
    /// The rank.
    pub rank: u32,
    /// Host name of its node.
    pub host: String,
    /// Its rank among the ranks on its node, as its report recorded it (`LOCAL_RANK`);
    /// `null` when it did not.
    pub local_rank: Option<u32>,
    /// The report file it came from.
    pub file: String,
    /// Wall-clock start relative to the job's earliest start, seconds.
    #[serde(deserialize_with = "f64_or_nan")]
    pub offset_s: f64,
    /// Seconds it recorded.
    #[serde(deserialize_with = "f64_or_nan")]
    pub duration_s: f64,
    /// False when its recording was cut short.
    pub complete: bool,
    /// NVML index of the rank's own GPU, when it can be told (see `docs/merge.md`).
    pub gpu: Option<u32>,
    /// Median `util_gpu` of its own GPU (of all its GPUs when its own cannot be told), %.
    pub util_p50: Option<f64>,
    /// The GPUs its report holds.
    pub gpus: Vec<RankGpu>,
    /// Its step markers, when it used them.
    pub steps: Option<RankSteps>,
    /// Its own findings, most important first.
    pub findings: Vec<RankFinding>,
}

/// A rank slower than the others in one phase (or in whole steps).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Straggler {
    /// The rank.
    pub rank: u32,
    /// Its node.
    pub host: String,
    /// The phase responsible, or `step` when no phase explains it.
    pub phase: String,
    /// The rank's p50 of that phase, seconds.
    #[serde(deserialize_with = "f64_or_nan")]
    pub p50_s: f64,
    /// The median of the other ranks' p50 of that phase, seconds.
    #[serde(deserialize_with = "f64_or_nan")]
    pub others_p50_s: f64,
    /// `p50_s / others_p50_s`.
    #[serde(deserialize_with = "f64_or_nan")]
    pub ratio: f64,
    /// `p50_s − others_p50_s`: what the rank adds to every step, seconds.
    #[serde(deserialize_with = "f64_or_nan")]
    pub excess_s: f64,
    /// The rank's step time p50, seconds.
    #[serde(deserialize_with = "f64_or_nan")]
    pub step_p50_s: f64,
}

/// A GPU whose utilization stands out.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct GpuSpot {
    /// Its node.
    pub host: String,
    /// NVML index on that node.
    pub index: u32,
    /// The rank whose own GPU it is, when known.
    pub rank: Option<u32>,
    /// Median `util_gpu`, %.
    #[serde(deserialize_with = "f64_or_nan")]
    pub util_p50: f64,
    /// Signed distance from the job's median, points.
    #[serde(deserialize_with = "f64_or_nan")]
    pub distance: f64,
}

/// One node of the job.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct NodeSummary {
    /// Host name.
    pub host: String,
    /// Its ranks, ascending.
    pub ranks: Vec<u32>,
    /// Distinct GPUs its ranks' reports hold.
    pub gpus: usize,
    /// Median of its GPUs' `util_gpu` p50, %.
    pub util_p50: Option<f64>,
    /// Median of its ranks' step time p50, seconds.
    pub step_p50_s: Option<f64>,
}

/// How evenly the job's GPUs were used.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Imbalance {
    /// Distinct GPUs with utilization samples (a GPU seen by several ranks counts once).
    pub gpus: usize,
    /// Median of the GPUs' `util_gpu` p50, %.
    #[serde(deserialize_with = "f64_or_nan")]
    pub util_p50_median: f64,
    /// Largest minus smallest GPU `util_gpu` p50, points.
    #[serde(deserialize_with = "f64_or_nan")]
    pub util_p50_spread: f64,
    /// GPUs further than the threshold from the median, furthest first (at most 32).
    pub outliers: Vec<GpuSpot>,
    /// How many GPUs are further than the threshold, listed or not.
    pub outlier_count: usize,
    /// Largest minus smallest node median, points (`null` with one node).
    pub node_spread: Option<f64>,
    /// Nodes whose median is further than the threshold from the median of node medians.
    pub node_outliers: Vec<String>,
}

/// The `ranks` section of a merged job report.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RanksData {
    /// `WORLD_SIZE` the ranks reported, when they did.
    pub world_size: Option<u32>,
    /// Ranks below `world_size` with no report.
    pub missing: Vec<u32>,
    /// Latest start minus earliest start, seconds.
    #[serde(deserialize_with = "f64_or_nan")]
    pub start_spread_s: f64,
    /// Seconds during which every rank was recording.
    #[serde(deserialize_with = "f64_or_nan")]
    pub overlap_s: f64,
    /// One row per rank, by rank.
    pub ranks: Vec<RankSummary>,
    /// One row per node, by host name.
    pub nodes: Vec<NodeSummary>,
    /// Ranks slower than the others, largest excess first.
    pub stragglers: Vec<Straggler>,
    /// Utilization imbalance across GPUs and nodes, when any GPU had samples.
    pub imbalance: Option<Imbalance>,
    /// For each rule id found on any rank, that finding from the rank where it was most
    /// confident: the text, evidence and actions of the job-level finding.
    pub exemplars: Vec<Exemplar>,
}

/// A rank's finding standing for all the ranks with the same finding.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Exemplar {
    /// The rank it came from.
    pub rank: u32,
    /// The finding as that rank's diagnosis wrote it.
    pub finding: Finding,
}
