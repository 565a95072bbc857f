//! Trace-backed findings: what the rules conclude when a profiler trace measured the cause
//! directly. Each rule calls its function here first (guarded by `if let Some(t) =
//! &s.trace`) and falls back to its sample-based logic when the trace does not show the
//! pattern. A trace measures kernels and launches, so these findings carry more confidence
//! than the sample-based ones.

use super::summary::{RankSummary, TraceSummary};

mod comm;
mod cpu;
mod host;

pub use comm::{comm_sync, rank_imbalance};
pub use cpu::{allocator_stall, cpu_optimizer, data_starvation};
pub use host::{dynamic_shapes, host_sync, host_transfer, launch_bound};

/// GPU idle share of the traced span from which idle time is worth a finding (TraceLens's
/// agent flags idle above 15 %; `docs/references.md#tracelens`).
pub const MIN_IDLE_SHARE: f64 = 0.15;
/// Share of the traced span that the GPU gaps under one CPU activity (the DataLoader,
/// allocator calls, syncs, CPU work) must cost for a finding: torch-tb-profiler's performance
/// recommendation flags the DataLoader from 5 % of the step time (`docs/trace-format.md`,
/// "What the CPU was doing").
pub const MIN_CAUSE_SHARE: f64 = 0.05;
/// Share of the GPU's idle time that Python between launches (and host work the trace does
/// not name) must hold for `launch_bound`: a majority, as [`MIN_HOST_WAIT_SHARE`].
pub const MIN_LAUNCH_SHARE: f64 = 0.5;
/// Share of the main stream's idle time that is host wait from which the CPU is the cause
/// (HTA's idle breakdown; a majority).
pub const MIN_HOST_WAIT_SHARE: f64 = 0.5;
/// Mean kernel duration (µs) below which kernels are "small" (the field guides: < ~20 µs).
pub const SMALL_KERNEL_MEAN_US: f64 = 20.0;
/// Kernels per step from which a step is a small-op storm (the field guides: thousands per step).
pub const STORM_KERNELS_PER_STEP: f64 = 1000.0;
/// Exposed (not overlapped) communication over the span from which communication costs
/// time (torch-tb-profiler recommends acting above 10 % communication; §2.2).
pub const MIN_EXPOSED_COMM_SHARE: f64 = 0.10;
/// Host↔device copy time over the span from which copies cost time (same 10 % bar).
pub const MIN_HOST_COPY_SHARE: f64 = 0.10;
/// Synchronizing calls per step (p50) from which host syncs stall the launch queue: one per
/// step (logging a loss) drains the queue once; several per step are the `.item()`/print
/// pattern the guides name as the first fix for launch-bound jobs.
pub const MIN_SYNCS_PER_STEP: f64 = 2.0;
/// Steps needed before step-time spread means anything.
pub const MIN_STEPS: usize = 8;
/// Step time IQR over p50 from which step times vary a lot (as the `dynamic_shapes` rule).
pub const MIN_STEP_IQR: f64 = 0.3;
/// Kernels-per-step p95 over p50 from which the launched work changes from step to step.
pub const KERNEL_COUNT_SWING: f64 = 1.2;
/// Communication start skew over the step time from which one rank holds the others up.
pub const MIN_SKEW_OVER_STEP: f64 = 0.05;
/// Share of steps in which the same rank reaches the collective last.
pub const MIN_STRAGGLER_SHARE: f64 = 0.5;

pub(super) fn worst(t: &TraceSummary, key: impl Fn(&RankSummary) -> f64) -> Option<&RankSummary> {
    t.ranks.iter().max_by(|a, b| key(a).total_cmp(&key(b)))
}

pub(super) fn rank_note(t: &TraceSummary, r: &RankSummary) -> String {
    if t.ranks.len() > 1 {
        format!(" (rank {})", r.rank)
    } else {
        String::new()
    }
}

/// How every trace-backed finding's `unseen` note on the inclusion choices begins; it also
/// marks the finding as measured from the trace.
pub const CHOICES_NOTE: &str = "Trace inclusion choices: ";

/// Whether `f` was concluded from a profiler trace.
pub fn from_trace(f: &crate::report::Finding) -> bool {
    f.unseen.iter().any(|u| u.starts_with(CHOICES_NOTE))
}

pub(super) fn choices_unseen(t: &TraceSummary) -> String {
    format!("{CHOICES_NOTE}{}.", t.choices_text.join("; "))
}
