//! The [`Recorder`] handle that owns the sampler thread: starting it, reading what it has
//! recorded so far, and stopping it. The thread's body is in `run`.

use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{SystemTime, UNIX_EPOCH};

use super::clock::{Clock, ScaledClock, Stopper};
use super::hook::SamplerHook;
use super::live::LiveGpu;
use super::RecorderConfig;
use crate::host::host_facts;
use crate::recording::{HostRecording, Recording};
use crate::report::{rfc3339_utc, DeviceInfo, HostFacts};
use crate::Result;

mod commit;
mod open;
mod run;
mod tick;

use run::run_sampler;

struct Shared {
    stop: Stopper,
    rec: Mutex<Recording>,
    live: Mutex<Vec<LiveGpu>>,
    /// Journal errors are reported once, not per flush.
    journal_error: Mutex<Option<String>>,
    /// Set once the sampler has counted and opened the GPUs.
    probed: super::ready::Ready,
    /// Where the sampler thread's NVML load and init stand.
    load: super::init::Load,
}

impl Shared {
    /// The state shared with a sampler that will record into `rec`.
    fn new(rec: Recording) -> Self {
        Shared {
            stop: Stopper::default(),
            rec: Mutex::new(rec),
            live: Mutex::new(Vec::new()),
            journal_error: Mutex::new(None),
            probed: Default::default(),
            load: Default::default(),
        }
    }
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock leaves plain data behind; keep using it.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A running recording. Dropping it stops and joins the sampler thread.
pub struct Recorder {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    /// The real clock started with the recording (what [`Recorder::clock`] returns).
    wall: ScaledClock,
    /// The clock the recording's times come from.
    time: Clock,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder").finish_non_exhaustive()
    }
}

fn now_unix_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

impl Recorder {
    /// Starts the sampler thread, which loads NVML (unless `no_gpu`), probes the GPUs and
    /// samples.
    ///
    /// A missing NVML or GPU does not fail: the recording goes on without GPU metrics and
    /// [`Recorder::gpu_absent_reason`] says why. Only a bad configuration or a thread that
    /// cannot be spawned is an error. NVML's init can take seconds (no persistence mode):
    /// this waits for it at most 200 ms, so a missing library is already reported when it
    /// returns, and the clock (and markers) run while a slow init goes on; the report then
    /// says when GPU samples began (see `collect::init`).
    pub fn start(cfg: RecorderConfig) -> Result<Recorder> {
        Self::start_with_hook(cfg, None)
    }

    /// [`Recorder::start`], with `hook` called by the sampler thread every tick and before
    /// every journal flush.
    pub fn start_with_hook(
        cfg: RecorderConfig,
        hook: Option<Arc<dyn SamplerHook>>,
    ) -> Result<Recorder> {
        Self::start_inner(cfg, hook, None)
    }

    /// [`Recorder::start_with_hook`], with the recording's times read from `clock` instead
    /// of a real clock started now. A test passes a [`Clock::Manual`] so the sampler ticks
    /// only when the test advances the clock (its scale then replaces `cfg.time_scale`);
    /// [`crate::collect::ManualClock::settle`] waits until the ticks due are done.
    pub fn start_with_clock(
        cfg: RecorderConfig,
        hook: Option<Arc<dyn SamplerHook>>,
        clock: Clock,
    ) -> Result<Recorder> {
        Self::start_inner(cfg, hook, Some(clock))
    }

    fn start_inner(
        cfg: RecorderConfig,
        hook: Option<Arc<dyn SamplerHook>>,
        clock: Option<Clock>,
    ) -> Result<Recorder> {
        cfg.validate()?;
        let mut run = cfg.run.clone();
        run.start_unix_ms = now_unix_ms();
        run.start = rfc3339_utc(run.start_unix_ms);
        run.interval_s = cfg.interval_s;
        run.complete = false;
        let facts = if cfg.host {
            host_facts()
        } else {
            HostFacts::default()
        };
        run.host = facts.hostname.clone();
        let mut rec = Recording::with_capacity(run, cfg.full_rows, cfg.coarse_buckets);
        if cfg.no_gpu {
            rec.gpu_absent_reason = Some("GPU sampling was turned off (no_gpu)".into());
            if rec.run.source.is_empty() {
                rec.run.source = "none".into();
            }
        }
        if cfg.host {
            rec.host = Some(HostRecording::new(
                facts.clone(),
                facts.logical_cpus.max(crate::host::cpu_count_logical()),
            ));
        }
        let shared = Arc::new(Shared::new(rec));
        let s2 = Arc::clone(&shared);
        // The time axis of the report: sample times and step markers both count from here.
        let time = clock.unwrap_or_else(|| Clock::real(cfg.time_scale));
        let wall = match &time {
            Clock::Real(c) => *c,
            Clock::Manual(m) => ScaledClock::new(m.scale()),
        };
        // Registered before the thread exists, so a test's `settle` waits for its first tick.
        let registered = match &time {
            Clock::Manual(m) => Some(m.register()),
            Clock::Real(_) => None,
        };
        let clock = time.clone();
        let thread = std::thread::Builder::new()
            .name("gpuwhy-sampler".into())
            .spawn(move || {
                let _registered = registered;
                run_sampler(&s2, &cfg, clock, hook.as_deref());
            })
            .map_err(|e| {
                crate::Error::InvalidArgument(format!("cannot start the sampler thread: {e}"))
            })?;
        shared.load.wait(super::init::START_WAIT);
        Ok(Recorder {
            shared,
            thread: Some(thread),
            wall,
            time,
        })
    }

    /// The recording's real clock: report times are its seconds since
    /// [`ScaledClock::origin`], times the clock's scale, unless the recorder was started
    /// with another clock ([`Recorder::time`]).
    pub fn clock(&self) -> ScaledClock {
        self.wall
    }

    /// The clock the recording's times come from.
    pub fn time(&self) -> &Clock {
        &self.time
    }

    /// Why there are no GPU metrics, if there are none.
    pub fn gpu_absent_reason(&self) -> Option<String> {
        lock(&self.shared.rec).gpu_absent_reason.clone()
    }

    /// The latest values per GPU.
    pub fn live(&self) -> Vec<LiveGpu> {
        lock(&self.shared.live).clone()
    }

    /// Waits (at most `timeout`) until the sampler thread has counted and opened the GPUs,
    /// which it does first, off the caller's thread; true once it has. After that
    /// [`Recorder::devices`] and [`Recorder::gpu_absent_reason`] are settled.
    pub fn wait_probed(&self, timeout: std::time::Duration) -> bool {
        self.shared.probed.wait(timeout)
    }

    /// The instant NVML's load and init returned on the sampler thread, failed or not
    /// (`None` while it runs; with `no_gpu`, when the thread started). A simulated GPU's
    /// time 0 is this instant, so a replay of its workload counts from it.
    pub fn nvml_ready_at(&self) -> Option<std::time::Instant> {
        self.shared.load.ended_at()
    }

    /// Devices probed so far.
    pub fn devices(&self) -> Vec<DeviceInfo> {
        lock(&self.shared.rec)
            .devices
            .iter()
            .map(|d| d.info.clone())
            .collect()
    }

    /// The first journal error, if writing the journal failed.
    pub fn journal_error(&self) -> Option<String> {
        lock(&self.shared.journal_error).clone()
    }

    /// A copy of everything recorded so far (the sampler keeps running).
    pub fn snapshot(&self) -> Recording {
        lock(&self.shared.rec).clone()
    }

    /// A handle through which another thread reads or marks the recording in progress,
    /// briefly, under the sampler's lock (see [`RecordingAccess`]).
    pub fn access(&self) -> RecordingAccess {
        RecordingAccess(Arc::clone(&self.shared))
    }

    /// Stops sampling, joins the thread and returns the recording.
    pub fn stop(mut self) -> Recording {
        self.join();
        let mut rec = lock(&self.shared.rec);
        std::mem::replace(&mut *rec, Recording::new(Default::default()))
    }

    fn join(&mut self) {
        self.shared.stop.stop();
        let Some(t) = self.thread.take() else { return };
        if self.shared.load.finish_or_abandon(super::init::STOP_WAIT) {
            // A panicking sampler leaves its recording behind; nothing else to do.
            let _ = t.join();
            return;
        }
        // NVML is still initialising: do not wait for it. The thread finishes the init on
        // its own and exits without touching the recording.
        drop(t);
        let now = self.time.now();
        let mut rec = lock(&self.shared.rec);
        if rec.gpu_absent_reason.is_none() {
            rec.gpu_absent_reason = Some(super::init::abandoned_reason(now));
        }
        rec.run.duration_s = now;
    }
}

/// The recording in progress, for a thread other than the sampler's: the session's
/// provisional diagnosis copies the latest rows and marks windows through it. Each call holds
/// the sampler's lock while `f` runs, so `f` must be short (the sampler waits meanwhile).
/// After [`Recorder::stop`] it sees an empty recording.
#[derive(Clone)]
pub struct RecordingAccess(Arc<Shared>);

impl std::fmt::Debug for RecordingAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordingAccess").finish_non_exhaustive()
    }
}

impl RecordingAccess {
    /// Runs `f` on the recording under the sampler's lock.
    pub fn with<R>(&self, f: impl FnOnce(&mut Recording) -> R) -> R {
        f(&mut lock(&self.0.rec))
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.join();
    }
}
