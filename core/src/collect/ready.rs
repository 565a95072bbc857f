//! A one-way flag a thread can wait on: "the sampler has found its GPUs".

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// Set once; waiters wake when it is.
#[derive(Debug, Default)]
pub(super) struct Ready {
    done: Mutex<bool>,
    cv: Condvar,
}

impl Ready {
    /// Sets the flag and wakes every waiter.
    pub fn set(&self) {
        *self.done.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.cv.notify_all();
    }

    /// Waits until the flag is set or `timeout` passes; true when it is set.
    pub fn wait(&self, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        let mut done = self.done.lock().unwrap_or_else(|p| p.into_inner());
        while !*done {
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            done = match self.cv.wait_timeout(done, left) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_waiter_wakes_when_set_and_times_out_otherwise() {
        let r = Ready::default();
        assert!(!r.wait(Duration::from_millis(10)));
        std::thread::scope(|s| {
            s.spawn(|| {
                r.set();
            });
            assert!(r.wait(Duration::from_secs(10)));
        });
        assert!(r.wait(Duration::ZERO));
    }
}
