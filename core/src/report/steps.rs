//! Step and phase timings in the report (`steps`), recorded by the step markers.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::column::Column;

/// Summary statistics of one phase (or of whole steps), seconds.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct PhaseStats {
    /// Number of occurrences.
    pub count: u64,
    /// Exact total, seconds.
    pub sum_s: f64,
    /// Exact minimum, seconds.
    pub min_s: f64,
    /// Exact maximum, seconds.
    pub max_s: f64,
    /// Median, seconds (exact while every step is kept, else within `quantile_error`).
    pub p50_s: f64,
    /// 95th percentile, seconds.
    pub p95_s: f64,
    /// 99th percentile, seconds.
    pub p99_s: f64,
}

/// Step markers' results.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct StepsData {
    /// Phase names in id order: `data`, `forward`, `backward`, `optimizer`, then custom ones.
    pub phases: Vec<String>,
    /// Steps completed.
    pub count: u64,
    /// Per-step records kept exactly: start time of each step, seconds since the run started.
    pub t: Vec<f64>,
    /// Wall duration of each kept step, seconds.
    pub duration: Column,
    /// Per phase: its CPU-side duration in each kept step (`null` when the step had no such phase).
    pub phase_durations: BTreeMap<String, Column>,
    /// Per phase: GPU-measured durations attached by the caller (e.g. from CUDA events), when any.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub gpu_phase_durations: BTreeMap<String, Column>,
    /// Statistics over all steps: key `step` for whole steps, then one per phase.
    pub stats: BTreeMap<String, PhaseStats>,
    /// Statistics of the GPU-measured phase durations, per phase, when any were attached.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub gpu_stats: BTreeMap<String, PhaseStats>,
    /// How many steps are kept exactly (the rest only enter `stats`).
    pub exact_steps: u64,
    /// Relative error bound of the quantiles in `stats` once steps beyond `exact_steps` exist;
    /// 0 while every step is kept (the quantiles are then exact).
    pub quantile_error: f64,
    /// Markers that fitted no step and were left out: a step end without a step, a phase id
    /// of [`crate::steps::MAX_PHASES`] or more, a GPU duration with no step to attach to.
    pub ignored_markers: u64,
    /// Heap bytes the step storage used at the end.
    pub memory_bytes: u64,
    /// The most the step storage can use, whatever the run length.
    pub memory_bound_bytes: u64,
}
