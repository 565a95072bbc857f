//! Loading and initialising NVML off the caller's thread.
//!
//! `nvmlInit` takes seconds on a driver without persistence mode (it brings every GPU up),
//! and a session must start and take markers meanwhile. The sampler thread loads NVML
//! itself; [`crate::collect::Recorder::start`] waits for it at most [`START_WAIT`], so a
//! fast init (the usual case, and a missing library) is settled when `start` returns, and a
//! slow one is not waited for. A recording stopped while NVML is still initialising is
//! handed back after at most [`STOP_WAIT`] without GPU metrics, saying why; the sampler
//! thread is left to finish the init and exits without touching the recording.

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use super::clock::Clock;
use super::sampler::lock;
use crate::nvml::Nvml;
use crate::recording::Recording;
use crate::report::Event;

/// How long `Recorder::start` waits for NVML to load and initialise before returning.
pub(super) const START_WAIT: Duration = Duration::from_millis(200);

/// How long stopping waits for an NVML init still running before giving up on it: long
/// enough that a loaded machine's slow `dlopen` does not cost a short run its GPU data,
/// short enough that a job ending during a multi-second init is not held up.
pub(super) const STOP_WAIT: Duration = Duration::from_secs(1);

/// Wall seconds of init above which the report says the GPU samples started late.
pub const SLOW_INIT_S: f64 = 0.5;

/// Where the NVML load stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Loading,
    Loaded,
    /// The recording stopped during the load; the sampler thread must leave it alone.
    Abandoned,
}

/// The load's stage, which the caller's thread can wait on.
#[derive(Debug)]
pub(super) struct Load {
    stage: Mutex<(Stage, Option<Instant>)>,
    cv: Condvar,
}

impl Default for Load {
    fn default() -> Self {
        Load {
            stage: Mutex::new((Stage::Loading, None)),
            cv: Condvar::new(),
        }
    }
}

impl Load {
    /// The sampler thread's report that the load ended at `at` (whatever its result):
    /// false when the recording was abandoned meanwhile, and the thread must exit without
    /// recording.
    pub fn finish(&self, at: Instant) -> bool {
        let mut s = lock(&self.stage);
        if s.0 == Stage::Abandoned {
            return false;
        }
        *s = (Stage::Loaded, Some(at));
        self.cv.notify_all();
        true
    }

    /// When the load ended, once it has.
    pub fn ended_at(&self) -> Option<Instant> {
        lock(&self.stage).1
    }

    /// Waits up to `timeout` for the load to finish; true once it has.
    pub fn wait(&self, timeout: Duration) -> bool {
        let s = lock(&self.stage);
        let (s, _) = self
            .cv
            .wait_timeout_while(s, timeout, |s| s.0 == Stage::Loading)
            .unwrap_or_else(|p| p.into_inner());
        s.0 == Stage::Loaded
    }

    /// Waits up to `timeout`, then gives up on a load still running: true when it finished
    /// (join the sampler thread), false when it was abandoned (do not).
    pub fn finish_or_abandon(&self, timeout: Duration) -> bool {
        if self.wait(timeout) {
            return true;
        }
        let mut s = lock(&self.stage);
        if s.0 == Stage::Loading {
            s.0 = Stage::Abandoned;
            return false;
        }
        true
    }
}

/// Loads NVML on the sampler thread and notes the outcome in `rec`: why there are no GPU
/// metrics when it failed, the source, and a `nvml_slow_init` event when init took longer
/// than [`SLOW_INIT_S`] (the ticks it held up are also counted as skipped). Returns the
/// library and the instant its init returned.
pub(super) fn load_nvml(
    rec: &Mutex<Recording>,
    cfg: &super::RecorderConfig,
    clock: &Clock,
) -> (Option<Nvml>, Instant) {
    if cfg.no_gpu {
        return (None, Instant::now());
    }
    let wall = Instant::now();
    let loaded = Nvml::load(cfg.nvml_path.as_deref());
    let ended = Instant::now();
    let took_s = ended.duration_since(wall).as_secs_f64();
    let mut rec = lock(rec);
    let nvml = match loaded {
        Ok(n) => Some(n),
        Err(e) => {
            rec.gpu_absent_reason = Some(e.to_string());
            None
        }
    };
    if rec.run.source.is_empty() {
        rec.run.source = if nvml.is_some() { "nvml" } else { "none" }.into();
    }
    if nvml.is_some() && took_s > SLOW_INIT_S {
        let t = (clock.now() * 1e4).round() / 1e4;
        rec.push_event(Event {
            t_s: t,
            device: None,
            kind: "nvml_slow_init".into(),
            code: None,
            detail: format!(
                "NVML took {took_s:.1} s to load and initialise (a driver without persistence mode?): \
                 no GPU samples before {t:.1} s; markers and steps were recorded meanwhile"
            ),
        });
    }
    (nvml, ended)
}

/// Why a recording stopped during the NVML init has no GPU metrics.
pub(super) fn abandoned_reason(after_s: f64) -> String {
    format!(
        "NVML was still initialising when the recording stopped {after_s:.1} s after it started: \
         no GPU metrics were recorded (a driver without persistence mode can take seconds; \
         `nvidia-smi -pm 1` enables it)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finished_load_is_waited_for_and_a_running_one_is_abandoned() {
        let l = Load::default();
        assert!(!l.wait(Duration::from_millis(5)));
        assert!(!l.finish_or_abandon(Duration::from_millis(5)), "abandoned");
        assert!(
            !l.finish(Instant::now()),
            "the thread hears it was abandoned"
        );
        assert_eq!(l.ended_at(), None);
        let l = Load::default();
        std::thread::scope(|s| {
            s.spawn(|| {
                assert!(l.finish(Instant::now()));
            });
            assert!(l.finish_or_abandon(Duration::from_secs(10)));
        });
        assert!(l.wait(Duration::ZERO));
        assert!(l.ended_at().is_some());
    }
}
