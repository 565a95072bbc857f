//! The comparison of two runs as plain data: what `gpuwhy compare` prints and what a report
//! that named a baseline carries in its `comparison` section. `compare` computes it (and
//! `stats` the rank test); the model only holds it, so it depends on nothing above it.

use serde::{Deserialize, Serialize};

/// One number before and after.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// Baseline value (`null` in JSON, NaN here, when it could not be computed).
    #[serde(deserialize_with = "super::f64_or_nan")]
    pub baseline: f64,
    /// Candidate value.
    #[serde(deserialize_with = "super::f64_or_nan")]
    pub candidate: f64,
    /// Relative change, candidate / baseline − 1 (`null` when the baseline is 0).
    pub relative: Option<f64>,
}

/// Step-time comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepChange {
    /// Median step time, seconds.
    pub p50_s: Change,
    /// 95th percentile, seconds.
    pub p95_s: Change,
    /// 99th percentile, seconds.
    pub p99_s: Change,
    /// Steps per second over all recorded steps.
    pub throughput: Change,
    /// Rank test on the per-step durations.
    pub test: Option<MannWhitney>,
    /// Per phase: median duration, seconds.
    pub phases: Vec<(String, Change)>,
}

/// Per-GPU comparison of medians.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuChange {
    /// NVML index.
    pub index: u32,
    /// util_gpu p50, %.
    pub util_p50: Option<Change>,
    /// Power p50, W.
    pub power_p50: Option<Change>,
    /// SM clock p50 under load, MHz.
    pub sm_clock_p50: Option<Change>,
    /// Rank test on the utilization samples.
    pub util_test: Option<MannWhitney>,
}

/// How the findings moved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerdictDiff {
    /// Baseline's top finding and its confidence.
    #[serde(deserialize_with = "named_or_nan")]
    pub baseline_top: (String, f64),
    /// Candidate's top finding and its confidence.
    #[serde(deserialize_with = "named_or_nan")]
    pub candidate_top: (String, f64),
    /// Findings of the baseline gone in the candidate.
    pub resolved: Vec<String>,
    /// Findings new in the candidate.
    pub new: Vec<String>,
    /// Findings in both, with their confidence before and after.
    #[serde(deserialize_with = "persisting_or_nan")]
    pub persisting: Vec<(String, f64, f64)>,
}

/// A confidence that was not a number is written `null` (as every report number): read it
/// back as NaN rather than refusing the report.
fn named_or_nan<'de, D: serde::Deserializer<'de>>(d: D) -> Result<(String, f64), D::Error> {
    let (id, x) = <(String, Option<f64>)>::deserialize(d)?;
    Ok((id, x.unwrap_or(f64::NAN)))
}

/// As [`named_or_nan`], for the findings in both runs.
fn persisting_or_nan<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Vec<(String, f64, f64)>, D::Error> {
    let v = Vec::<(String, Option<f64>, Option<f64>)>::deserialize(d)?;
    Ok(v.into_iter()
        .map(|(id, a, b)| (id, a.unwrap_or(f64::NAN), b.unwrap_or(f64::NAN)))
        .collect())
}

/// A whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Labels of the two runs.
    pub labels: (String, String),
    /// Why the runs are not strictly comparable, when comparing was forced.
    pub forced_despite: Option<String>,
    /// Step times, when both runs recorded steps.
    pub steps: Option<StepChange>,
    /// Per GPU.
    pub gpus: Vec<GpuChange>,
    /// Findings before and after.
    pub verdict: VerdictDiff,
    /// Each baseline finding's experiment, checked against the candidate.
    pub experiments: Vec<ExperimentCheck>,
    /// One-line summary.
    pub summary: String,
}

/// Whether the prediction held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The metric moved as predicted, by more than the noise margin.
    Held,
    /// It did not move, or moved the other way.
    NotHeld,
    /// The metric is missing from one of the runs.
    Unknown,
}

/// One finding's experiment, checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentCheck {
    /// The baseline finding.
    pub finding: String,
    /// The metric the experiment predicts a change in.
    pub metric: String,
    /// `down` or `up`.
    pub expected: String,
    /// Baseline value.
    pub baseline: Option<f64>,
    /// Candidate value.
    pub candidate: Option<f64>,
    /// The verdict.
    pub outcome: Outcome,
}

/// The `comparison` section of a report whose session named a baseline.
///
/// Exactly one of `result` and `error` is set: a baseline that cannot be read, or a run that
/// cannot be compared with it, never costs the report itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaselineComparison {
    /// The baseline report's path, as given.
    pub baseline: String,
    /// Baseline → this run, as `gpuwhy compare BASELINE THIS` reports it.
    #[serde(default)]
    pub result: Option<Comparison>,
    /// Why there is no comparison: the baseline could not be read, or the runs are not
    /// comparable (different GPU count or model).
    #[serde(default)]
    pub error: Option<String>,
}

/// Result of a two-sided Mann–Whitney U test (normal approximation with tie correction).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MannWhitney {
    /// U statistic of the first sample.
    #[serde(deserialize_with = "super::f64_or_nan")]
    pub u: f64,
    /// Standardised statistic.
    #[serde(deserialize_with = "super::f64_or_nan")]
    pub z: f64,
    /// Two-sided p-value.
    #[serde(deserialize_with = "super::f64_or_nan")]
    pub p: f64,
    /// `p` below `stats::ALPHA`.
    pub significant: bool,
}
