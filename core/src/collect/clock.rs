//! The sampler's clock and its cancellable wait.

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// Seconds since the recording started, optionally running faster than wall time.
///
/// `scale` > 1 lets a simulated GPU whose scenario runs at `speed` be sampled at the
/// scenario's own pace (days of simulated time in seconds). Real recordings use 1.
#[derive(Debug, Clone, Copy)]
pub struct ScaledClock {
    start: Instant,
    scale: f64,
}

impl ScaledClock {
    /// A clock starting now.
    pub fn new(scale: f64) -> Self {
        let scale = if scale.is_finite() && scale > 0.0 {
            scale
        } else {
            1.0
        };
        ScaledClock {
            start: Instant::now(),
            scale,
        }
    }

    /// Scaled seconds since start.
    pub fn now(&self) -> f64 {
        self.start.elapsed().as_secs_f64() * self.scale
    }

    /// Wall duration of `secs` scaled seconds.
    pub fn wall(&self, secs: f64) -> Duration {
        Duration::from_secs_f64((secs / self.scale).max(0.0))
    }

    /// The scale factor.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The instant the clock reads 0: the start of the recording.
    pub fn origin(&self) -> Instant {
        self.start
    }
}

/// A stop flag that a sleeping thread can be woken by.
#[derive(Debug, Default)]
pub struct Stopper {
    stopped: Mutex<bool>,
    cv: Condvar,
}

impl Stopper {
    /// Asks the waiting thread to stop and wakes it.
    pub fn stop(&self) {
        let mut s = self.stopped.lock().unwrap_or_else(|p| p.into_inner());
        *s = true;
        self.cv.notify_all();
    }

    /// True once [`Self::stop`] was called.
    pub fn is_stopped(&self) -> bool {
        *self.stopped.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sleeps up to `d`, returning early (with `true`) when stopped.
    pub fn wait(&self, d: Duration) -> bool {
        let guard = self.stopped.lock().unwrap_or_else(|p| p.into_inner());
        let (guard, _) = self
            .cv
            .wait_timeout_while(guard, d, |stopped| !*stopped)
            .unwrap_or_else(|p| p.into_inner());
        *guard
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn stop_wakes_a_long_wait() {
        let s = Arc::new(Stopper::default());
        let s2 = Arc::clone(&s);
        let t = std::thread::spawn(move || s2.wait(Duration::from_secs(3600)));
        s.stop();
        assert!(
            t.join().expect("thread"),
            "the wait ends because of the stop, not the timeout"
        );
    }

    #[test]
    fn scale_maps_scaled_to_wall_time() {
        let c = ScaledClock::new(100.0);
        assert_eq!(c.wall(10.0), Duration::from_millis(100));
        assert_eq!(ScaledClock::new(-1.0).scale(), 1.0);
    }
}
