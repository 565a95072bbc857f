//! The provisional diagnosis: while a session records, every [`PROVISIONAL_PERIOD_S`] of
//! recorded time a thread of its own diagnoses the rows recorded since its last pass and
//! marks a window around each new finding's evidence, so that the rows a finding cites are
//! still at full resolution in the report after they have left the recent ring
//! (`docs/report-format.md`, "Retention").
//!
//! The pass runs on recorded time: it waits on the recording's clock (a test's
//! [`crate::collect::ManualClock`] counts it among the threads `settle` waits for), and it
//! runs off the sampler thread, holding the sampler's lock only to copy the stretch's rows and
//! to mark the windows ([`crate::collect::RecordingAccess`]).

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use super::pass::{copy_stretch, diagnose_stretch, window_time, worth_a_window, Stretch};
use crate::collect::{thread_cpu_seconds, Clock, Recorder, RecordingAccess, Stopper};
use crate::recording::{Recording, PRIO_FINDING, RECENT_ROWS_DEFAULT};
use crate::{Error, Result};

/// Recorded seconds between two passes: ten minutes, a sixth of the recent ring's hour
/// ([`RECENT_ROWS_DEFAULT`] rows at the default 100 ms), so a pass that runs late by up to
/// 50 minutes still marks its windows before their rows leave the ring.
pub const PROVISIONAL_PERIOD_S: f64 = 600.0;

/// Most windows one pass marks (its costliest new findings): a pass cannot crowd the window
/// budget (`MAX_WINDOWS` = 64) out on its own.
pub const MAX_WINDOWS_PER_PASS: usize = 2;

/// Fewest GPU rows a stretch needs to be diagnosed (ten seconds of one GPU at 100 ms); the
/// rows of a shorter one wait for the next pass.
const MIN_ROWS: usize = 100;

// The ring must outlast a pass, or the windows would come too late.
const _: () = assert!(PROVISIONAL_PERIOD_S * 10.0 < RECENT_ROWS_DEFAULT as f64);

/// What one pass found and asked for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PassOutcome {
    /// Rules whose findings were worth a window in this stretch (new or not).
    pub rules: Vec<String>,
    /// Windows asked for: recording time of the window's middle and the reason,
    /// `finding:<rule id>`; only for rules the previous pass did not find, at most
    /// [`MAX_WINDOWS_PER_PASS`].
    pub windows: Vec<(f64, String)>,
    /// GPU rows diagnosed, over all GPUs.
    pub gpu_rows: usize,
    /// Bytes of rows copied out of the recording: the pass's transient, besides its report.
    pub copied_bytes: usize,
    /// Recording time of the last row diagnosed (where the next pass starts).
    pub last_t: f64,
    /// Wall seconds spent copying the rows (the session's thread holds the sampler's lock
    /// that long).
    pub copy_s: f64,
    /// Wall seconds spent building the stretch's report and running the rules.
    pub diagnose_s: f64,
}

/// One pass over the rows of `rec` after `after` seconds (all of them for `None`), given
/// the rules the previous pass found. Plain function: the session's thread runs it in two
/// halves around the lock, and benchmarks run it whole.
pub fn provisional_pass(rec: &Recording, after: Option<f64>, previous: &[String]) -> PassOutcome {
    let (s, copy_s) = timed(|| copy_stretch(rec, after));
    judge(s, copy_s, previous)
}

/// `f`'s result and the wall seconds it took.
fn timed<R>(f: impl FnOnce() -> R) -> (R, f64) {
    let start = Instant::now();
    let r = f();
    (r, start.elapsed().as_secs_f64())
}

fn judge(s: Stretch, copy_s: f64, previous: &[String]) -> PassOutcome {
    let mut out = PassOutcome {
        gpu_rows: s.gpu_rows(),
        copied_bytes: s.bytes(),
        last_t: s.last_t(),
        copy_s,
        ..PassOutcome::default()
    };
    if out.gpu_rows < MIN_ROWS {
        return out;
    }
    let origin = s.origin;
    let (report, diagnose_s) = timed(|| diagnose_stretch(s));
    out.diagnose_s = diagnose_s;
    for f in worth_a_window(&report) {
        out.rules.push(f.id.clone());
        if out.windows.len() < MAX_WINDOWS_PER_PASS && !previous.contains(&f.id) {
            let t = origin + window_time(&report, f);
            out.windows.push((t, format!("finding:{}", f.id)));
        }
    }
    out
}

/// What the passes so far cost and did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PassStats {
    /// Passes run (stretches too short to diagnose included).
    pub passes: u64,
    /// Windows marked.
    pub windows: u64,
    /// CPU time of all passes, seconds (when the kernel tells a thread's CPU time).
    pub cpu_s: f64,
    /// CPU time of the costliest pass, seconds.
    pub max_cpu_s: f64,
    /// Most bytes one pass copied out of the recording.
    pub max_copied_bytes: usize,
    /// The last pass's outcome.
    pub last: PassOutcome,
}

/// The provisional-diagnosis thread. A [`super::Session`] runs one of its own; a program that
/// records with a bare [`Recorder`] (as `gpuwhy record` does) starts one with
/// [`Provisional::for_recorder`]. Dropping it stops and joins the thread.
#[derive(Debug)]
pub struct Provisional {
    stop: Arc<Stopper>,
    stats: Arc<Mutex<PassStats>>,
    thread: Option<JoinHandle<()>>,
}

impl Provisional {
    /// Starts the thread for `recorder`'s recording: a pass every `period_s` seconds of its
    /// recorded time ([`PROVISIONAL_PERIOD_S`] is the sessions' default). Stop it (or drop
    /// it) before stopping the recorder. Errors: a period that is not a positive number, or
    /// a thread that cannot be spawned.
    pub fn for_recorder(recorder: &Recorder, period_s: f64) -> Result<Provisional> {
        Self::start(recorder.access(), recorder.time().clone(), period_s)
    }

    /// Starts the thread: a pass every `period` recorded seconds of `clock`.
    pub(crate) fn start(access: RecordingAccess, clock: Clock, period: f64) -> Result<Provisional> {
        if !(period.is_finite() && period > 0.0) {
            return Err(Error::InvalidArgument(format!(
                "provisional_period_s = {period} is not a positive number of seconds; use e.g. {PROVISIONAL_PERIOD_S}, or None to turn the provisional diagnosis off"
            )));
        }
        let stop = Arc::new(Stopper::default());
        let stats = Arc::new(Mutex::new(PassStats::default()));
        // Registered before the thread runs, so a test's `settle` waits for its passes.
        let registration = match &clock {
            Clock::Manual(m) => Some(m.register()),
            Clock::Real(_) => None,
        };
        let (s, st) = (Arc::clone(&stop), Arc::clone(&stats));
        let thread = std::thread::Builder::new()
            .name("gpuwhy-provisional".into())
            .spawn(move || {
                let _registration = registration;
                run(&access, &clock, period, &s, &st);
            })
            .map_err(|e| {
                Error::InvalidArgument(format!(
                    "cannot start the provisional-diagnosis thread ({e}); set provisional_period_s to None to record without it"
                ))
            })?;
        Ok(Provisional {
            stop,
            stats,
            thread: Some(thread),
        })
    }

    /// Stops the thread (a pass in progress finishes first) and returns what the passes did.
    pub fn stop(&mut self) -> PassStats {
        self.stop.stop();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.stats()
    }

    /// What the passes so far did.
    pub fn stats(&self) -> PassStats {
        super::lock(&self.stats).clone()
    }
}

impl Drop for Provisional {
    fn drop(&mut self) {
        self.stop();
    }
}

fn run(
    access: &RecordingAccess,
    clock: &Clock,
    period: f64,
    stop: &Stopper,
    stats: &Mutex<PassStats>,
) {
    let mut after: Option<f64> = None;
    let mut previous: Vec<String> = Vec::new();
    let mut next = period;
    while !clock.wait_until(stop, next) {
        let cpu0 = thread_cpu_seconds();
        let (stretch, copy_s) = timed(|| access.with(|rec| copy_stretch(rec, after)));
        let out = judge(stretch, copy_s, &previous);
        if !out.windows.is_empty() {
            access.with(|rec| {
                for (t, reason) in &out.windows {
                    rec.mark_window_because(*t, PRIO_FINDING, reason);
                }
            });
        }
        let cpu = match (cpu0, thread_cpu_seconds()) {
            (Some(a), Some(b)) => (b - a).max(0.0),
            _ => 0.0,
        };
        if out.gpu_rows >= MIN_ROWS {
            previous.clone_from(&out.rules);
            after = Some(out.last_t);
        }
        let mut st = super::lock(stats);
        st.passes += 1;
        st.windows += out.windows.len() as u64;
        st.cpu_s += cpu;
        st.max_cpu_s = st.max_cpu_s.max(cpu);
        st.max_copied_bytes = st.max_copied_bytes.max(out.copied_bytes);
        st.last = out;
        drop(st);
        // A fixed grid: passes that fell behind are not bunched up.
        let now = clock.now();
        next += period;
        while next <= now {
            next += period;
        }
    }
}
