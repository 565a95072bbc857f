//! Step and phase timings in the report (`steps`), recorded by the step markers.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::column::Column;

/// The key of whole-step statistics in [`StepsData::stats`]; no phase may have this name.
pub const STEP_KEY: &str = "step";

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
    /// When more than one thread marked steps: each marking thread's own step sequence,
    /// summarised (empty, and absent from the JSON, when one thread did). Everything else in
    /// this section is the training loop's, the thread with [`ThreadSteps::main`] set; the
    /// others' steps are only here, so a helper thread's micro-steps never dilute the loop's.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<ThreadSteps>,
}

/// One marking thread's step sequence, summarised (`steps.threads[]`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct ThreadSteps {
    /// The thread's lane: 0, 1, … in the order threads first marked (a lane given up by a
    /// thread that ended is reused by the next one); lane 8 is shared by threads beyond 8.
    pub lane: u32,
    /// True for the training loop, the thread the rest of `steps` describes.
    pub main: bool,
    /// On the main thread, why it was taken for the training loop: `named` (the caller named
    /// it), `data_phase` (it marks the data phase), `most_time` (no thread marks a data phase:
    /// the one whose steps cover the most time).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chosen_by: Option<String>,
    /// Steps this thread completed.
    pub count: u64,
    /// Its statistics: key `step` for whole steps, then one per phase it entered.
    pub stats: BTreeMap<String, PhaseStats>,
    /// Its GPU-measured phase statistics, when it attached any.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub gpu_stats: BTreeMap<String, PhaseStats>,
    /// Its markers that fitted no step.
    pub ignored_markers: u64,
}
