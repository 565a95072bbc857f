//! What a session handle refers to: the recording while it runs, its report once stopped.

use std::ffi::CString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};
use std::sync::{Mutex, MutexGuard};

use gpuwhy_core::report::{journal::journal_path, write_atomic, Report};
use gpuwhy_core::session::{MarkerHandle, Session};

use crate::boundary::Fail;
use crate::gpuwhy_status::*;

/// Recording.
pub(crate) const RUNNING: u8 = 0;
/// Stopped: the report exists.
pub(crate) const STOPPED: u8 = 1;
/// An internal error happened on this session.
pub(crate) const POISONED: u8 = 2;
/// Freed: the handle no longer names it (threads may still hold a reference).
pub(crate) const FREED: u8 = 3;

/// A session, shared by the registry and the threads that mark it.
pub(crate) struct Inner {
    /// The number its handle carries.
    pub token: usize,
    /// [`crate::handle::fork_generation`] when it was created: a different one means this is
    /// a child process that inherited the session.
    pub fork_gen: u32,
    pub state: AtomicU8,
    /// Phases registered so far (ids below are valid).
    pub phases: AtomicU32,
    pub markers: MarkerHandle,
    pub life: Mutex<Life>,
    pub output: Option<PathBuf>,
}

/// The part that changes when the session stops.
pub(crate) enum Life {
    Running(Session),
    Stopped(Done),
    /// Between the two, or after a panic while stopping.
    Gone,
}

/// A stopped session's report.
pub(crate) struct Done {
    pub json: String,
    pub top_id: CString,
    pub top_title: CString,
    pub top_confidence: f64,
}

impl Done {
    fn new(report: &Report) -> Done {
        let c = |s: &str| CString::new(s.replace('\0', " ")).unwrap_or_default();
        let (id, title, conf) = match report.findings.first() {
            Some(f) => (c(&f.id), c(&f.title), f.confidence),
            None => (c("none"), c("no bottleneck found"), 0.0),
        };
        Done {
            json: report.to_json(),
            top_id: id,
            top_title: title,
            top_confidence: conf,
        }
    }
}

impl Inner {
    pub fn new(token: usize, fork_gen: u32, session: Session, output: Option<PathBuf>) -> Inner {
        Inner {
            token,
            fork_gen,
            state: AtomicU8::new(RUNNING),
            phases: AtomicU32::new(gpuwhy_core::steps::BUILTIN_PHASES.len() as u32),
            markers: session.marker_handle(),
            life: Mutex::new(Life::Running(session)),
            output,
        }
    }

    pub fn life(&self) -> MutexGuard<'_, Life> {
        self.life.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The status a call on this session gets before doing anything, by its state.
    #[inline]
    pub fn usable(&self) -> Result<(), Fail> {
        match self.state.load(Ordering::Acquire) {
            RUNNING => Ok(()),
            STOPPED => Err(Fail::new(GPUWHY_STOPPED, "the session is stopped")),
            POISONED => Err(poisoned()),
            _ => Err(freed()),
        }
    }

    /// Stops recording, keeps the diagnosed report and writes it to the configured output.
    /// A failed write keeps the report (the journal stays too) and says so.
    pub fn stop(&self) -> Result<(), Fail> {
        match self.stop_and_save()? {
            None => Ok(()),
            Some(e) => Err(kept_in_memory(&e)),
        }
    }

    /// [`Inner::stop`], for a session being freed: a failed write is reported without the
    /// advice to retry, since nothing is kept.
    pub fn stop_for_free(&self) -> Result<(), Fail> {
        match self.stop_and_save()? {
            None => Ok(()),
            Some(e) => {
                let journal = self.output.as_deref().map(journal_path).unwrap_or_default();
                Err(Fail::new(
                    GPUWHY_IO,
                    format!("{e}; the session is freed without its report: the crash journal {} keeps the recording up to its last flush (read it with gpuwhy diagnose)", journal.display()),
                ))
            }
        }
    }

    /// Stops recording and keeps the diagnosed report; writes it to the configured output.
    /// `Ok(Some(e))`: stopped, but the write failed with `e`.
    fn stop_and_save(&self) -> Result<Option<String>, Fail> {
        let mut life = self.life();
        let session = match std::mem::replace(&mut *life, Life::Gone) {
            Life::Running(s) => s,
            other => {
                *life = other;
                return Err(Fail::new(GPUWHY_STOPPED, "the session is already stopped"));
            }
        };
        // Markers from now on are refused; those in flight are folded by finish.
        let _ = self
            .state
            .compare_exchange(RUNNING, STOPPED, Ordering::AcqRel, Ordering::Acquire);
        let report = session.finish();
        let done = Done::new(&report);
        let written = self
            .output
            .as_ref()
            .map(|path| write_atomic(path, done.json.as_bytes()).map(|()| path));
        *life = Life::Stopped(done);
        drop(life);
        match written {
            None => Ok(None),
            Some(Ok(path)) => {
                let _ = std::fs::remove_file(journal_path(path));
                Ok(None)
            }
            Some(Err(e)) => Ok(Some(e.to_string())),
        }
    }

    /// Writes the stopped session's report to `path`, atomically.
    pub fn write(&self, path: &std::path::Path) -> Result<(), Fail> {
        let life = self.life();
        let Life::Stopped(done) = &*life else {
            return Err(not_stopped());
        };
        write_atomic(path, done.json.as_bytes()).map_err(|e| kept_in_memory(&e.to_string()))
    }
}

fn kept_in_memory(error: &str) -> Fail {
    Fail::new(
        GPUWHY_IO,
        format!("{error}; the report is kept in memory: retry gpuwhy_session_write_report with another path, or read it with gpuwhy_session_report_json"),
    )
}

pub(crate) fn not_stopped() -> Fail {
    Fail::new(
        GPUWHY_NOT_STOPPED,
        "the session is still recording: call gpuwhy_session_stop first",
    )
}

pub(crate) fn poisoned() -> Fail {
    Fail::new(
        GPUWHY_POISONED,
        "the session was poisoned by an earlier internal error; free it and start a new one",
    )
}

pub(crate) fn freed() -> Fail {
    Fail::new(
        GPUWHY_INVALID_HANDLE,
        "the session was freed; the handle must not be used again",
    )
}
