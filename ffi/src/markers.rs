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

/// Runs marker `f` on the calling thread's lane of session `h`: from the thread's cache when
/// it used this session last (no lock), else after a lookup that caches it. In a child
/// process after fork() it does nothing and succeeds.
#[inline(always)]
fn mark(h: *mut gpuwhy_session, f: impl Fn(&Inner, &ThreadMarkers) -> Res) -> gpuwhy_status {
    let token = h as usize;
    guard(
        || {
            let on = |inner: &Arc<Inner>, lane: &Lane| -> Res {
                if inner.fork_gen != fork_generation() {
                    return Ok(());
                }
                inner.usable()?;
                f(inner, lane.get())
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
        },
        || poison(token),
    )
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
    mark(session, |_, lane| {
        lane.step_begin();
        Ok(())
    })
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
    mark(session, |inner, lane| {
        lane.phase(known_phase(inner, phase)?);
        Ok(())
    })
}

/// Ends the calling thread's step and its phase. Same cost and errors as
/// gpuwhy_step_begin(); a step end without an open step is counted in the report
/// (`steps.ignored_markers`), not an error.
#[no_mangle]
pub extern "C" fn gpuwhy_step_end(session: *mut gpuwhy_session) -> gpuwhy_status {
    mark(session, |_, lane| {
        lane.step_end();
        Ok(())
    })
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
    mark(session, |inner, lane| {
        lane.attach_gpu_phase(known_phase(inner, phase)?, seconds);
        Ok(())
    })
}

fn poison(token: usize) {
    if let Ok(i) = handle::find(token) {
        i.state.store(POISONED, Ordering::Release);
    }
}
