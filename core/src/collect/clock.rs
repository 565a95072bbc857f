//! The recorder's and the session's clock, and the sampler's cancellable wait.
//!
//! Time comes from a [`Clock`]: the real monotonic clock by default ([`ScaledClock`]), or a
//! [`ManualClock`] that moves only when a test advances it. A sampler waiting on a manual
//! clock wakes when the test advances it past the wait's end or stops the recorder, and
//! [`ManualClock::settle`] lets the test wait until the sampler has done the ticks that
//! were due, so tests never sleep to synchronise with the sampler thread.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Plain counters behind the lock: a panic elsewhere leaves them usable.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A scale factor that is finite and positive, else 1.
fn valid_scale(scale: f64) -> f64 {
    if scale.is_finite() && scale > 0.0 {
        scale
    } else {
        1.0
    }
}

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
        ScaledClock {
            start: Instant::now(),
            scale: valid_scale(scale),
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

/// What a [`ManualClock`] shares between its clones and the threads waiting on it.
#[derive(Debug, Default)]
struct ManualState {
    /// Unscaled nanoseconds since the clock's origin (read without the lock by markers).
    now_ns: AtomicU64,
    /// Threads registered as waiters, and the deadlines of those parked in a wait.
    waits: Mutex<Waits>,
    cv: Condvar,
}

#[derive(Debug, Default)]
struct Waits {
    registered: usize,
    parked: Vec<u64>,
}

/// A clock that moves only when told: for tests, so they need not sleep.
///
/// It reads 0 when made; [`ManualClock::advance`] moves it forward and wakes the threads
/// waiting on it. Clones share one time.
#[derive(Debug, Clone)]
pub struct ManualClock {
    state: Arc<ManualState>,
    scale: f64,
}

impl ManualClock {
    /// A clock reading 0 whose seconds count `scale` report seconds (as [`ScaledClock`]).
    pub fn new(scale: f64) -> Self {
        ManualClock {
            state: Arc::default(),
            scale: valid_scale(scale),
        }
    }

    /// The scale factor.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// Unscaled time since the clock was made.
    pub fn elapsed(&self) -> Duration {
        Duration::from_nanos(self.elapsed_ns())
    }

    /// Unscaled nanoseconds since the clock was made: one atomic load.
    #[inline]
    pub fn elapsed_ns(&self) -> u64 {
        self.state.now_ns.load(Ordering::Acquire)
    }

    /// Moves the clock forward by `d` (unscaled) and wakes the threads waiting on it.
    pub fn advance(&self, d: Duration) {
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        let _waits = lock(&self.state.waits);
        let now = self.state.now_ns.load(Ordering::Acquire);
        self.state
            .now_ns
            .store(now.saturating_add(ns), Ordering::Release);
        self.state.cv.notify_all();
    }

    /// Waits until every thread registered on this clock (the sampler of a recorder
    /// started with it) is parked in a wait that ends after the current time: the ticks
    /// that were due are done. `timeout` (wall) only guards against a hang; false when it
    /// passed first.
    pub fn settle(&self, timeout: Duration) -> bool {
        let waits = lock(&self.state.waits);
        let (waits, _) = self
            .state
            .cv
            .wait_timeout_while(waits, timeout, |w| {
                let now = self.state.now_ns.load(Ordering::Acquire);
                w.parked.iter().filter(|d| **d > now).count() < w.registered
            })
            .unwrap_or_else(|p| p.into_inner());
        let now = self.state.now_ns.load(Ordering::Acquire);
        waits.parked.iter().filter(|d| **d > now).count() >= waits.registered
    }

    /// [`Self::advance`], then [`Self::settle`].
    pub fn advance_and_settle(&self, d: Duration, timeout: Duration) -> bool {
        self.advance(d);
        self.settle(timeout)
    }

    /// Counts the calling thread as one that [`Self::settle`] waits for, until the
    /// returned guard drops.
    pub(crate) fn register(&self) -> Registration {
        lock(&self.state.waits).registered += 1;
        Registration(Arc::clone(&self.state))
    }

    /// Waits until the clock reads `deadline_ns` or `stop` is stopped; true when stopped.
    fn wait_until(&self, stop: &Stopper, deadline_ns: u64) -> bool {
        stop.link(&self.state);
        let mut waits = lock(&self.state.waits);
        waits.parked.push(deadline_ns);
        self.state.cv.notify_all();
        let stopped = loop {
            if stop.is_stopped() {
                break true;
            }
            if self.elapsed_ns() >= deadline_ns {
                break false;
            }
            waits = self.state.cv.wait(waits).unwrap_or_else(|p| p.into_inner());
        };
        if let Some(i) = waits.parked.iter().position(|d| *d == deadline_ns) {
            waits.parked.swap_remove(i);
        }
        stopped
    }
}

/// A thread's place among a [`ManualClock`]'s waiters; dropping it leaves.
#[derive(Debug)]
pub(crate) struct Registration(Arc<ManualState>);

impl Drop for Registration {
    fn drop(&mut self) {
        lock(&self.0.waits).registered -= 1;
        self.0.cv.notify_all();
    }
}

/// Where the recorder's and the session's time comes from.
#[derive(Debug, Clone)]
pub enum Clock {
    /// The monotonic clock, scaled (every real recording).
    Real(ScaledClock),
    /// A clock tests move by hand.
    Manual(ManualClock),
}

impl Clock {
    /// The real clock, starting now, at `scale`.
    pub fn real(scale: f64) -> Self {
        Clock::Real(ScaledClock::new(scale))
    }

    /// Scaled seconds since the origin: the report's time axis.
    pub fn now(&self) -> f64 {
        match self {
            Clock::Real(c) => c.now(),
            Clock::Manual(m) => m.elapsed().as_secs_f64() * m.scale,
        }
    }

    /// Unscaled time since the origin.
    pub fn elapsed(&self) -> Duration {
        match self {
            Clock::Real(c) => c.origin().elapsed(),
            Clock::Manual(m) => m.elapsed(),
        }
    }

    /// The scale factor.
    pub fn scale(&self) -> f64 {
        match self {
            Clock::Real(c) => c.scale(),
            Clock::Manual(m) => m.scale,
        }
    }

    /// Waits until the clock reads `t` scaled seconds, returning early (with `true`) when
    /// `stop` is stopped.
    pub fn wait_until(&self, stop: &Stopper, t: f64) -> bool {
        match self {
            Clock::Real(c) => stop.wait(c.wall(t - c.now())),
            Clock::Manual(m) => {
                // Rounded, so a deadline reached by adding intervals is not a nanosecond late.
                let ns = (t / m.scale * 1e9).round().max(0.0) as u64;
                m.wait_until(stop, ns)
            }
        }
    }
}

/// A stop flag that a sleeping thread can be woken by.
#[derive(Debug, Default)]
pub struct Stopper {
    stopped: Mutex<bool>,
    cv: Condvar,
    /// Manual clocks a thread waits on through this stopper: stopping wakes them too.
    linked: Mutex<Vec<Arc<ManualState>>>,
}

impl Stopper {
    /// Asks the waiting thread to stop and wakes it.
    pub fn stop(&self) {
        {
            let mut s = lock(&self.stopped);
            *s = true;
            self.cv.notify_all();
        }
        // The flag is set before each clock's lock is taken, so a waiter either sees it
        // or is already waiting and gets this notification.
        for m in lock(&self.linked).iter() {
            let _waits = lock(&m.waits);
            m.cv.notify_all();
        }
    }

    /// True once [`Self::stop`] was called.
    pub fn is_stopped(&self) -> bool {
        *lock(&self.stopped)
    }

    /// Sleeps up to `d`, returning early (with `true`) when stopped.
    pub fn wait(&self, d: Duration) -> bool {
        let guard = lock(&self.stopped);
        let (guard, _) = self
            .cv
            .wait_timeout_while(guard, d, |stopped| !*stopped)
            .unwrap_or_else(|p| p.into_inner());
        *guard
    }

    fn link(&self, m: &Arc<ManualState>) {
        let mut linked = lock(&self.linked);
        if !linked.iter().any(|l| Arc::ptr_eq(l, m)) {
            linked.push(Arc::clone(m));
        }
    }
}

#[cfg(test)]
mod tests;
