//! A simulated training-loop **workload** for the simulated NVML (`nvml-sim`) and the demo
//! trainer that replays it.
//!
//! A scenario's `workload` key describes one training step — phases (`data`, `forward`,
//! `backward`, `optimizer`, custom ones such as `eval` every N steps), their durations
//! with deterministic jitter, optional GPU-measured durations, varying input shapes,
//! memory that follows them, what the GPU shows during each phase, and per-device
//! modifiers (a straggler, lagging devices). [`Schedule`] turns it into a deterministic
//! timeline; the simulator reads [`Schedule::state_at`] to play each device's metrics, and
//! [`run_trainer`] replays the same timeline with real sleeps, emitting step markers
//! through the [`Markers`] trait, so samples and phases agree as in a real job.
//!
//! The crate is pure: no gpuwhy, no NVML. The format is documented in `docs/scenarios.md`.

mod rng;
mod schedule;
mod spec;
mod trainer;

#[cfg(test)]
mod tests;

pub use schedule::{PhaseSpan, Schedule, State, Step};
pub use spec::{
    DeviceMod, Levels, Memory, PhaseSpec, Shapes, Workload, BUILTIN_PHASES, DEFAULT_DURATION_S,
    DEFAULT_JITTER, DEFAULT_UTIL_NOISE, IDLE, KEYS, MAX_STEPS, WAIT,
};
pub use trainer::{
    run_trainer, run_trainer_from, run_trainer_paced, Markers, NoMarkers, Pacer, TrainerRun,
    WallPacer,
};

/// What can be wrong with a workload.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The JSON does not parse or has the wrong shape (the message has line and column).
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    /// A field has a value the workload cannot play.
    #[error("{0}")]
    Invalid(String),
}
