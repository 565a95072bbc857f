//! A live recording with step and phase markers: what a training loop embeds.
//!
//! A [`Session`] samples the GPUs and the host (it owns a [`Recorder`]) and takes markers
//! from the training loop: [`Session::step_begin`], [`Session::phase`], [`Session::step_end`],
//! one-off [`Session::event`]s, and GPU-measured phase durations
//! ([`Session::attach_gpu_phase`]). [`Session::finish`] returns the diagnosed report with its
//! `steps` section. `docs/steps.md` explains what the phase times mean.
//!
//! Markers are built for the hot path: each costs one monotonic clock read and a few stores
//! into a ring that the calling thread owns; no lock, allocation or system call. The sampler
//! thread folds the rings into a bounded [`StepLog`](crate::steps::StepLog) every tick, and
//! journals the steps with the samples, so a killed run keeps its steps up to the last flush.
//!
//! Not for reading reports: see [`crate::report`] and [`crate::signals`].

mod fold;
mod handles;
mod lanes;
mod pass;
mod provisional;
mod ring;
mod slow;
mod threads;
mod traces;

pub use lanes::{MAX_EVENT_KINDS, MAX_LANES, MAX_NAME_BYTES, RINGS_BOUND_BYTES};
pub use pass::{window_time, STRENGTH_BIN_S};
pub use provisional::{
    provisional_pass, PassOutcome, PassStats, Provisional, MAX_WINDOWS_PER_PASS,
    PROVISIONAL_PERIOD_S,
};
pub use ring::{RING_BYTES, RING_SLOTS};

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use crate::analysis::diagnose;
use crate::collect::{Clock, Recorder, RecorderConfig, SamplerHook};
use crate::compare::BaselineComparison;
use crate::report::journal::JournalLine;
use crate::report::{DataLoaderInfo, Event, Report, StepsData};
use crate::steps::{PhaseId, BUILTIN_PHASES, EXACT_STEPS, MAX_PHASES, STEP_KEY};
use crate::{Error, Result};
use fold::Folder;
use handles::{attach, enter, main_thread, step_begin, step_discard, step_end};
pub use handles::{MarkerHandle, ThreadMarkers};
use lanes::Markers;

/// How to record a session.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// GPU and host sampling, journal, time scale.
    pub recorder: RecorderConfig,
    /// Steps kept exactly, with every phase ([`EXACT_STEPS`] by default); later steps only
    /// enter the totals and quantile sketches.
    pub exact_steps: usize,
    /// A baseline report to compare the run with at [`Session::finish`]: the report then
    /// carries the comparison (its `comparison` section, see [`BaselineComparison`]). A
    /// baseline that cannot be read, or a run on other hardware, leaves the reason there
    /// instead; the report itself is never lost to it.
    pub baseline: Option<PathBuf>,
    /// Recorded seconds between two passes of the provisional diagnosis, which keeps the
    /// rows around each new finding's evidence at full resolution (`docs/report-format.md`,
    /// "Retention"); [`PROVISIONAL_PERIOD_S`] by default, `None` to turn it off.
    pub provisional_period_s: Option<f64>,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            recorder: RecorderConfig::default(),
            exact_steps: EXACT_STEPS,
            baseline: None,
            provisional_period_s: Some(PROVISIONAL_PERIOD_S),
        }
    }
}

impl From<RecorderConfig> for SessionConfig {
    fn from(recorder: RecorderConfig) -> Self {
        SessionConfig {
            recorder,
            ..SessionConfig::default()
        }
    }
}

/// A running recording that also takes step markers.
///
/// Every method takes `&self` and may be called from any thread. Each thread that marks
/// steps gets its own step sequence (up to [`MAX_LANES`] threads; more share one), so two
/// threads running their own loops do not cut each other's steps, and a helper thread's
/// micro-steps are not pooled with the training loop's: the report's steps are the loop's
/// ([`Session::set_main_thread`]) and the others are listed in `steps.threads`. Dropping a session without
/// [`Session::finish`] stops sampling and discards what was recorded (the journal, if any,
/// stays).
#[derive(Debug)]
pub struct Session {
    // Dropped before the recorder: its thread reads the recording.
    provisional: Option<Provisional>,
    recorder: Recorder,
    markers: Arc<Markers>,
    baseline: Option<PathBuf>,
    extras: Mutex<Extras>,
}

/// What the caller tells the session besides markers, read at [`Session::finish`].
#[derive(Debug, Default)]
struct Extras {
    data_loader: Option<DataLoaderInfo>,
    traces: Vec<PathBuf>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Session {
    /// Starts sampling (see [`Recorder::start`]: a missing GPU is not an error) and opens the
    /// markers. Report times count from this moment, in the recorder's scaled seconds.
    pub fn start(cfg: SessionConfig) -> Result<Session> {
        Self::start_inner(cfg, None)
    }

    /// [`Session::start`], with samples and markers timed by `clock` instead of a real
    /// clock started now: tests pass a [`crate::collect::ManualClock`] and advance it
    /// instead of sleeping (see [`Recorder::start_with_clock`]).
    pub fn start_with_clock(cfg: SessionConfig, clock: Clock) -> Result<Session> {
        Self::start_inner(cfg, Some(clock))
    }

    fn start_inner(cfg: SessionConfig, clock: Option<Clock>) -> Result<Session> {
        // The markers count time from the recorder's clock, which exists only once the
        // recorder runs, and the recorder needs its hook to start: the hook finds the
        // markers through a slot filled right after.
        let names: Vec<String> = BUILTIN_PHASES.map(String::from).to_vec();
        let exact = cfg.exact_steps;
        let baseline = cfg.baseline;
        let period = cfg.provisional_period_s;
        let slot: Arc<OnceLock<Arc<Markers>>> = Arc::default();
        let hook = Arc::new(LateHook(Arc::clone(&slot)));
        let recorder = match clock {
            Some(c) => Recorder::start_with_clock(cfg.recorder, Some(hook), c)?,
            None => Recorder::start_with_hook(cfg.recorder, Some(hook))?,
        };
        let clock = recorder.time();
        let markers = Arc::new_cyclic(|me| {
            Markers::new(
                me.clone(),
                clock,
                Folder::new(exact, MAX_LANES + 1, clock.scale()),
                names,
            )
        });
        // The hook does nothing until the markers exist; no marker can precede this.
        let _ = slot.set(Arc::clone(&markers));
        let provisional = match period {
            Some(p) => Some(Provisional::for_recorder(&recorder, p)?),
            None => None,
        };
        Ok(Session {
            provisional,
            recorder,
            markers,
            baseline,
            extras: Mutex::default(),
        })
    }

    /// Records the loop's data loader settings into the report (`run.data_loader`); a later
    /// call replaces them.
    pub fn set_data_loader(&self, loader: DataLoaderInfo) {
        lock(&self.extras).data_loader = Some(loader);
    }

    /// Has [`Session::finish`] read the profiler trace at `path` (a PyTorch/Kineto trace of
    /// some of this run's steps, `.json` or `.json.gz`) and diagnose the samples and steps
    /// with it, as `gpuwhy diagnose run.json --trace` does. The path goes into
    /// `run.traces`; a trace that cannot be read then is an event in the report
    /// (`trace_unreadable`), never a lost report.
    pub fn add_trace(&self, path: impl Into<PathBuf>) {
        lock(&self.extras).traces.push(path.into());
    }

    /// What the provisional diagnosis's passes did so far (all zero when it is off).
    pub fn provisional_stats(&self) -> PassStats {
        self.provisional
            .as_ref()
            .map(Provisional::stats)
            .unwrap_or_default()
    }

    /// The recorder, for live GPU values ([`Recorder::live`]) and its clock.
    pub fn recorder(&self) -> &Recorder {
        &self.recorder
    }

    /// The id of phase `name`, registering it if it is new. The built-in phases `data`,
    /// `forward`, `backward` and `optimizer` are always registered ([`PhaseId::DATA`] …).
    /// Registering an existing name returns its id.
    ///
    /// Errors: an empty name, the reserved name `step`, a name longer than
    /// [`MAX_NAME_BYTES`], or more than [`MAX_PHASES`] phases in all.
    pub fn register_phase(&self, name: &str) -> Result<PhaseId> {
        let mut names = lock(&self.markers.names);
        if let Some(i) = names.iter().position(|n| n == name) {
            return Ok(PhaseId(i as u16));
        }
        if name.is_empty() || name == STEP_KEY || name.len() > MAX_NAME_BYTES {
            return Err(Error::InvalidArgument(format!(
                "phase name {name:?} is not allowed: use 1 to {MAX_NAME_BYTES} bytes, and not \"{STEP_KEY}\" (the key of whole-step statistics)"
            )));
        }
        if names.len() >= MAX_PHASES {
            return Err(Error::InvalidArgument(format!(
                "cannot register phase {name:?}: a run has at most {MAX_PHASES} phases (the 4 built-in ones and {} custom ones); reuse an existing phase or merge rare ones",
                MAX_PHASES - BUILTIN_PHASES.len()
            )));
        }
        names.push(name.to_string());
        Ok(PhaseId((names.len() - 1) as u16))
    }

    /// Begins a step on the calling thread (a step still open there ends first).
    #[inline]
    pub fn step_begin(&self) {
        step_begin(&*self.markers);
    }

    /// Enters `phase` on the calling thread: ends its current phase and starts this one
    /// (begins a step first if none is open). Entering a phase twice in a step adds up.
    #[inline]
    pub fn phase(&self, phase: PhaseId) {
        enter(&*self.markers, phase);
    }

    /// Ends the calling thread's step (and its phase). Without an open step it is counted in
    /// `ignored_markers`.
    #[inline]
    pub fn step_end(&self) {
        step_end(&*self.markers);
    }

    /// Drops the calling thread's open step: nothing of it is recorded. For a loop that
    /// learns only afterwards that the step it began will not happen (the wait for a batch
    /// that turned out to be the end of the data, a framework's hook after the last step).
    /// Without an open step it does nothing.
    #[inline]
    pub fn step_discard(&self) {
        step_discard(&*self.markers);
    }

    /// Marks a one-off event now (`eval`, `checkpoint`, `log`, any name); it becomes a report
    /// event of that kind. Names are kept for up to [`MAX_EVENT_KINDS`] kinds (later kinds
    /// become `other`) and cut to [`MAX_NAME_BYTES`]. Takes a short lock to look the name
    /// up; meant for rare events, not for every step.
    pub fn event(&self, name: &str) {
        self.markers.event(name);
    }

    /// Attaches a GPU-measured duration of `phase`, in seconds (e.g. the time between two
    /// CUDA events, `start.elapsed_time(end) / 1000`). It goes to the calling thread's
    /// current step if that step has already entered `phase`, else to its last completed
    /// step; several attachments to one step's phase add up. Not a finite non-negative
    /// number, or no step to attach to: ignored (and counted).
    #[inline]
    pub fn attach_gpu_phase(&self, phase: PhaseId, seconds: f64) {
        attach(&*self.markers, phase, seconds);
    }

    /// Names the calling thread the training loop: the report's `steps` (and so the
    /// diagnosis) are its steps, and other marking threads are listed apart in
    /// `steps.threads`. Without it the loop is the thread that marks a data phase, else the
    /// one whose steps cover the most time (see `docs/steps.md`). Costs one marker; the
    /// latest call wins. Through a [`ThreadMarkers`], call its own `set_main_thread`.
    pub fn set_main_thread(&self) {
        main_thread(&*self.markers);
    }

    /// A handle to this session's markers that can be cloned and kept apart from the
    /// session (the C ABI keeps one per thread). Its markers do the same as the session's;
    /// after [`Session::finish`] they are still safe to call and are simply not recorded.
    pub fn marker_handle(&self) -> MarkerHandle {
        MarkerHandle(Arc::clone(&self.markers))
    }

    /// Folds the markers published so far into the step log now, on the calling thread.
    /// The sampler does this every tick; call it before [`Session::steps`] to see the latest.
    pub fn fold(&self) {
        let mut f = lock(&self.markers.fold);
        self.markers.drain_all(&mut f);
    }

    /// The steps so far, as they would appear in the report (GPU durations still pending for
    /// the latest step of each thread are not in yet).
    pub fn steps(&self) -> StepsData {
        let names = lock(&self.markers.names).clone();
        let mut f = lock(&self.markers.fold);
        self.markers.drain_all(&mut f);
        self.data(&f, &names)
    }

    fn data(&self, f: &Folder, names: &[String]) -> StepsData {
        data(&self.markers, f, names)
    }
    /// Stops sampling and markers and returns the diagnosed report. Its `steps` section is
    /// absent when no marker was ever used; steps still open are dropped. With a
    /// [`SessionConfig::baseline`], its `comparison` section holds the comparison (or why
    /// there is none).
    pub fn finish(mut self) -> Report {
        if let Some(mut p) = self.provisional.take() {
            p.stop();
        }
        {
            // Settle every step first, so the recorder's last journal flush has them all.
            let mut f = lock(&self.markers.fold);
            self.markers.drain_all(&mut f);
            f.finish();
        }
        let mut rec = self.recorder.stop();
        // Stopped on purpose, with everything recorded: a complete run (a caller that knows
        // better, like `gpuwhy record`, says why it ended afterwards).
        rec.run.complete = true;
        if rec.run.ended_by.is_none() {
            rec.run.ended_by = Some("session finished".into());
        }
        let names = lock(&self.markers.names).clone();
        let mut f = lock(&self.markers.fold);
        self.markers.drain_all(&mut f);
        f.finish();
        let mut events = Vec::new();
        f.take_events(&mut events);
        for e in events {
            rec.push_event(e);
        }
        let used = f.used() || self.markers.ring_bytes() > 0;
        if used {
            rec.steps = Some(data(&self.markers, &f, &names));
        }
        drop(f);
        let extras = std::mem::take(&mut *lock(&self.extras));
        rec.run.data_loader = extras.data_loader;
        let trace = traces::read(&extras.traces, &mut rec);
        let mut report = Report::from_recording(&rec);
        match trace {
            Some(t) => crate::analysis::diagnose_traced(&mut report, &t),
            None => diagnose(&mut report),
        }
        if let Some(path) = &self.baseline {
            report.comparison = Some(BaselineComparison::of(&report, path));
        }
        report
    }
}

/// The report's steps: the log and the rings' memory.
fn data(markers: &Markers, f: &Folder, names: &[String]) -> StepsData {
    let mut d = f.to_data(names);
    d.memory_bytes += markers.ring_bytes() as u64;
    d.memory_bound_bytes += RINGS_BOUND_BYTES as u64;
    d
}

/// The sampler's hook, pointing at the markers once they exist.
struct LateHook(Arc<OnceLock<Arc<Markers>>>);

impl SamplerHook for LateHook {
    fn tick(&self, events: &mut Vec<Event>) {
        if let Some(m) = self.0.get() {
            m.tick(events);
        }
    }

    fn journal(&self, lines: &mut Vec<JournalLine>) {
        if let Some(m) = self.0.get() {
            m.journal(lines);
        }
    }

    fn windows(&self, times: &mut Vec<f64>) {
        if let Some(m) = self.0.get() {
            m.windows(times);
        }
    }

    fn quiet(&self) -> bool {
        // Not quiet before the markers exist (they do a moment after the sampler starts):
        // a first tick found quiet let the sampler sleep through its first second, and a
        // loop marking from the start filled its ring and folded it itself.
        self.0.get().is_some_and(|m| m.quiet())
    }
}

#[cfg(test)]
mod tests;
