//! Step and phase timings in bounded memory, for any number of steps.
//!
//! A [`StepLog`] keeps, for whole steps and for each phase (data, forward, backward,
//! optimizer, custom ones): the exact count, sum, minimum and maximum; an exact record of
//! every step (start, duration, each phase's duration) for the first
//! [`EXACT_STEPS`] steps; and, once a run goes past those, a [`QuantileSketch`] per phase
//! that still gives p50/p95/p99 within [`SKETCH_RELATIVE_ERROR`]. Its worst-case size is
//! [`StepLog::worst_case_bytes`], whatever the run length.
//!
//! This is plain data with no threads or clocks (it builds for `wasm32-unknown-unknown`).
//! The live markers that feed it from a training loop are [`crate::session`]; what the rules
//! read of it is [`crate::signals::steps`].

#[cfg(test)]
mod delta;
mod log;
mod sketch;

pub use crate::recording::{merge_delta, stats_from_rows};
pub use crate::report::STEP_KEY;
pub use log::{StepLog, EXACT_STEPS, EXACT_STEP_BYTES, MAX_SKETCHES};
pub use sketch::{
    QuantileSketch, MANTISSA_BITS, SKETCH_BUCKETS, SKETCH_BYTES, SKETCH_MAX_EXP, SKETCH_MIN_EXP,
    SKETCH_RELATIVE_ERROR,
};

/// Most phases a run can have: the four built-in ones and up to 12 custom ones.
pub const MAX_PHASES: usize = 16;

/// Names of the built-in phases, in id order.
pub const BUILTIN_PHASES: [&str; 4] = ["data", "forward", "backward", "optimizer"];

/// A phase of a training step: one of the built-in ones or a custom one registered by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PhaseId(pub u16);

impl PhaseId {
    /// Waiting for the next batch (the data loader).
    pub const DATA: PhaseId = PhaseId(0);
    /// The forward pass.
    pub const FORWARD: PhaseId = PhaseId(1);
    /// The backward pass.
    pub const BACKWARD: PhaseId = PhaseId(2);
    /// The optimizer step.
    pub const OPTIMIZER: PhaseId = PhaseId(3);
    /// The first id given to a custom phase.
    pub const FIRST_CUSTOM: u16 = 4;

    /// The id as an index into per-phase arrays.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }

    /// True for ids below [`MAX_PHASES`].
    pub fn is_valid(self) -> bool {
        self.index() < MAX_PHASES
    }
}
