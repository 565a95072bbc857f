//! The step markers of the C ABI: the functions a training loop calls every step.
//!
//! The hot path: a marker finds its session in the calling thread's cache (no lock), checks
//! its state and phase id, and stores a clock reading in the thread's ring.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use gpuwhy_core::session::ThreadMarkers;
use gpuwhy_core::steps::PhaseId;

use crate::boundary::{guard, Fail, Res};
use crate::gpuwhy_phase_id;
use crate::gpuwhy_status::{self, *};
use crate::handle::{self, fork_generation, gpuwhy_session, Lane};
use crate::state::{Inner, POISONED};

/// One marker, as the exports call it.
#[derive(Clone, Copy)]
enum Op {
    StepBegin,
    Phase(u32),
    StepEnd,
    GpuPhase(u32, f64),
    SetMain,
    StepDiscard,
}

/// Records `op` on the thread's lane of `inner`.
#[inline(always)]
fn apply(inner: &Inner, lane: &ThreadMarkers, op: Op) -> Res {
    match op {
        Op::StepBegin => lane.step_begin(),
        Op::Phase(p) => lane.phase(known_phase(inner, p)?),
        Op::StepEnd => lane.step_end(),
        Op::GpuPhase(p, seconds) => lane.attach_gpu_phase(known_phase(inner, p)?, seconds),
        Op::SetMain => lane.set_main_thread(),
        Op::StepDiscard => lane.step_discard(),
    }
    Ok(())
}

// The kinds of marker, as [`mark`]'s constant parameter (a closure in a generic function is
// a type of its own per instance, so each export gets its own catch_unwind body).
const STEP_BEGIN: u8 = 0;
const PHASE: u8 = 1;
const STEP_END: u8 = 2;
const GPU_PHASE: u8 = 3;
const SET_MAIN: u8 = 4;
const STEP_DISCARD: u8 = 5;

/// Runs marker `op` on the calling thread's lane of session `h`: from the thread's cache
/// when it marked this running session last (no lock, one thread-local read, one state
/// load), else through [`mark_slow`]. In a child process after fork() it does nothing and
/// succeeds.
///
/// Each export passes its own `op`, a constant, so the whole hot path is specialised and
/// inlined into the export: no dispatch on the kind of marker (docs/benchmarks.md).
#[inline(always)]
fn mark<const K: u8>(h: *mut gpuwhy_session, phase: u32, seconds: f64) -> gpuwhy_status {
    let op = match K {
        STEP_BEGIN => Op::StepBegin,
        PHASE => Op::Phase(phase),
        STEP_END => Op::StepEnd,
        GPU_PHASE => Op::GpuPhase(phase, seconds),
        SET_MAIN => Op::SetMain,
        _ => Op::StepDiscard,
    };
    let token = h as usize;
    guard(
        || match handle::running(token) {
            Some((inner, lane)) => apply(inner, lane, op),
            None => mark_slow(token, op),
        },
        || poison(token),
    )
}

/// [`mark`] for everything but a running session this thread marked last: another session,
/// the thread's first marker (the lookup caches it), a stopped, freed or poisoned session,
/// or a child process after fork().
#[cold]
#[inline(never)]
fn mark_slow(token: usize, op: Op) -> Res {
    let on = |inner: &Arc<Inner>, lane: &Lane| -> Res {
        if inner.fork_gen != fork_generation() {
            return Ok(());
        }
        inner.usable()?;
        apply(inner, lane.get(), op)
    };
    if let Some(r) = handle::cached(token, on) {
        return r;
    }
    // The thread's first marker in this session: the lookup caches it (or fails).
    let inner = handle::find(token)?;
    match handle::cached(token, on) {
        Some(r) => r,
        // Freed in between, or the cache is unavailable (thread teardown).
        None => {
            inner.usable()?;
            Err(Fail::new(
                GPUWHY_INVALID_HANDLE,
                "this thread can no longer mark (it is exiting)",
            ))
        }
    }
}

/// Checks a phase id against the session's registered phases.
#[inline]
fn known_phase(inner: &Inner, phase: u32) -> Result<PhaseId, Fail> {
    if phase < inner.phases.load(Ordering::Acquire) {
        Ok(PhaseId(phase as u16))
    } else {
        Err(Fail::new(
            GPUWHY_UNKNOWN_PHASE,
            format!("phase id {phase} was never registered in this session"),
        ))
    }
}

/// Begins a step on the calling thread (a step still open on this thread ends first).
///
/// The hot path: one clock read and a few stores, no lock, no allocation, no system call
/// after the thread's first marker. Each thread has its own step sequence. Errors:
/// GPUWHY_NULL_ARGUMENT, GPUWHY_INVALID_HANDLE, GPUWHY_STOPPED, GPUWHY_POISONED (nothing is
/// recorded). In a child process after fork() it does nothing and returns GPUWHY_OK.
#[no_mangle]
pub extern "C" fn gpuwhy_step_begin(session: *mut gpuwhy_session) -> gpuwhy_status {
    mark::<STEP_BEGIN>(session, 0, 0.0)
}

/// Enters phase `phase` on the calling thread: ends the current phase, starts this one
/// (beginning a step if none is open). Entering a phase twice in one step adds up.
///
/// Same cost and errors as gpuwhy_step_begin(), plus GPUWHY_UNKNOWN_PHASE for an id that
/// is neither built in (GPUWHY_PHASE_*) nor registered.
#[no_mangle]
pub extern "C" fn gpuwhy_phase(
    session: *mut gpuwhy_session,
    phase: gpuwhy_phase_id,
) -> gpuwhy_status {
    mark::<PHASE>(session, phase, 0.0)
}

/// Ends the calling thread's step and its phase. Same cost and errors as
/// gpuwhy_step_begin(); a step end without an open step is counted in the report
/// (`steps.ignored_markers`), not an error.
#[no_mangle]
pub extern "C" fn gpuwhy_step_end(session: *mut gpuwhy_session) -> gpuwhy_status {
    mark::<STEP_END>(session, 0, 0.0)
}

/// Attaches a GPU-measured duration of `phase` in seconds (e.g. cudaEventElapsedTime / 1000)
/// to the calling thread's current step if it has entered `phase`, else to its last
/// completed step. A negative or non-finite value is ignored (and counted). Same cost and
/// errors as gpuwhy_phase().
#[no_mangle]
pub extern "C" fn gpuwhy_gpu_phase(
    session: *mut gpuwhy_session,
    phase: gpuwhy_phase_id,
    seconds: f64,
) -> gpuwhy_status {
    mark::<GPU_PHASE>(session, phase, seconds)
}

/// Names the calling thread the training loop: the report's `steps` section, and so the
/// diagnosis, is this thread's step sequence, and other threads that mark steps (helper
/// threads micro-stepping their own work) are listed apart in `steps.threads` with their
/// own numbers. Without this call the loop is the thread that marks GPUWHY_PHASE_DATA, else
/// the one whose steps cover the most time. Call it once from the training thread, any
/// time before gpuwhy_session_stop(); the latest call wins.
///
/// Costs one marker (same cost as gpuwhy_step_begin()). Errors: GPUWHY_NULL_ARGUMENT,
/// GPUWHY_INVALID_HANDLE, GPUWHY_STOPPED, GPUWHY_POISONED (nothing is recorded). In a child
/// process after fork() it does nothing and returns GPUWHY_OK. Thread-safe: it concerns
/// the calling thread only.
#[no_mangle]
pub extern "C" fn gpuwhy_session_set_main_thread(session: *mut gpuwhy_session) -> gpuwhy_status {
    mark::<SET_MAIN>(session, 0, 0.0)
}

/// Drops the calling thread's open step: nothing of it is recorded. For a loop that learns
/// only afterwards that the step it began will not happen (the wait for a batch that turned
/// out to be the end of the data; a framework hook after the last step). Without an open
/// step it does nothing. Same cost and errors as gpuwhy_step_begin().
#[no_mangle]
pub extern "C" fn gpuwhy_step_discard(session: *mut gpuwhy_session) -> gpuwhy_status {
    mark::<STEP_DISCARD>(session, 0, 0.0)
}

fn poison(token: usize) {
    if let Ok(i) = handle::find(token) {
        i.state.store(POISONED, Ordering::Release);
    }
}
