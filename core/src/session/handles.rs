//! Handles to a session's markers: a cloneable one ([`MarkerHandle`]) and one thread's own
//! lane ([`ThreadMarkers`]), which the C ABI caches per thread.

use std::sync::Arc;

use super::fold::{code, DISCARD, GPU, MAIN, PHASE, STEP_BEGIN, STEP_END};
use super::lanes::{Markers, ThreadLane};
#[cfg(doc)]
use super::{Session, RINGS_BOUND_BYTES};
use crate::steps::PhaseId;

/// A cloneable handle to a session's markers ([`Session::marker_handle`]).
#[derive(Debug, Clone)]
pub struct MarkerHandle(pub(super) Arc<Markers>);

impl MarkerHandle {
    /// [`Session::step_begin`].
    #[inline(always)]
    pub fn step_begin(&self) {
        step_begin(&*self.0);
    }

    /// [`Session::phase`].
    #[inline(always)]
    pub fn phase(&self, phase: PhaseId) {
        enter(&*self.0, phase);
    }

    /// [`Session::step_end`].
    #[inline(always)]
    pub fn step_end(&self) {
        step_end(&*self.0);
    }

    /// [`Session::event`].
    pub fn event(&self, name: &str) {
        self.0.event(name);
    }

    /// [`Session::step_discard`].
    #[inline(always)]
    pub fn step_discard(&self) {
        step_discard(&*self.0);
    }

    /// [`Session::attach_gpu_phase`].
    #[inline(always)]
    pub fn attach_gpu_phase(&self, phase: PhaseId, seconds: f64) {
        attach(&*self.0, phase, seconds);
    }

    /// [`Session::set_main_thread`].
    pub fn set_main_thread(&self) {
        main_thread(&*self.0);
    }

    /// A lane of the calling thread's own for these markers (see [`ThreadMarkers`]). Each
    /// call claims another lane: keep one per thread.
    pub fn for_this_thread(&self) -> ThreadMarkers {
        ThreadMarkers(self.0.claim_lane())
    }
}

/// Where a marker goes: the session's markers through the thread-local lane cache, or a
/// lane the thread holds ([`ThreadMarkers`]).
pub(super) trait Sink {
    fn now_ns(&self) -> u64;
    fn push(&self, a: u64, b: u64);
}

impl Sink for Markers {
    #[inline(always)]
    fn now_ns(&self) -> u64 {
        Markers::now_ns(self)
    }
    #[inline(always)]
    fn push(&self, a: u64, b: u64) {
        Markers::push(self, a, b);
    }
}

impl Sink for ThreadLane {
    #[inline(always)]
    fn now_ns(&self) -> u64 {
        ThreadLane::now_ns(self)
    }
    #[inline(always)]
    fn push(&self, a: u64, b: u64) {
        ThreadLane::push(self, a, b);
    }
}

#[inline(always)]
pub(super) fn step_begin(m: &impl Sink) {
    let t = m.now_ns();
    m.push(t, code(STEP_BEGIN, 0));
}

#[inline(always)]
pub(super) fn enter(m: &impl Sink, phase: PhaseId) {
    let t = m.now_ns();
    m.push(t, code(PHASE, phase.0));
}

#[inline(always)]
pub(super) fn step_end(m: &impl Sink) {
    let t = m.now_ns();
    m.push(t, code(STEP_END, 0));
}

pub(super) fn main_thread(m: &impl Sink) {
    let t = m.now_ns();
    m.push(t, code(MAIN, 0));
}

#[inline(always)]
pub(super) fn step_discard(m: &impl Sink) {
    let t = m.now_ns();
    m.push(t, code(DISCARD, 0));
}

#[inline(always)]
pub(super) fn attach(m: &impl Sink, phase: PhaseId, seconds: f64) {
    m.push(seconds.to_bits(), code(GPU, phase.0));
}

/// One thread's own markers of a session ([`MarkerHandle::for_this_thread`]): the same
/// markers as the session's, through a lane this value owns, so a marker needs no
/// thread-local lookup. Not `Send`: it belongs to the thread that made it. Dropping it ends
/// the thread's open step and frees its lane; it keeps the session's marker state alive
/// until then (the rings, at most [`RINGS_BOUND_BYTES`] in all).
#[derive(Debug)]
pub struct ThreadMarkers(ThreadLane);

impl ThreadMarkers {
    /// [`Session::step_begin`].
    #[inline(always)]
    pub fn step_begin(&self) {
        step_begin(&self.0);
    }

    /// [`Session::phase`].
    #[inline(always)]
    pub fn phase(&self, phase: PhaseId) {
        enter(&self.0, phase);
    }

    /// [`Session::step_end`].
    #[inline(always)]
    pub fn step_end(&self) {
        step_end(&self.0);
    }

    /// [`Session::event`].
    pub fn event(&self, name: &str) {
        self.0.event(name);
    }

    /// [`Session::step_discard`].
    #[inline(always)]
    pub fn step_discard(&self) {
        step_discard(&self.0);
    }

    /// [`Session::attach_gpu_phase`].
    #[inline(always)]
    pub fn attach_gpu_phase(&self, phase: PhaseId, seconds: f64) {
        attach(&self.0, phase, seconds);
    }

    /// [`Session::set_main_thread`], for the thread that holds these markers.
    pub fn set_main_thread(&self) {
        main_thread(&self.0);
    }
}
