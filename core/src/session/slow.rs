//! Slow steps, so the recording keeps the samples around them at full resolution.
//!
//! A long recording folds most of its samples into buckets (`docs/report-format.md`,
//! "Retention") and keeps full resolution in windows around what happened. A step much
//! slower than the loop's usual one is such a moment: the samples during it say what the GPU
//! was doing while the loop waited. Each lane keeps a running estimate of its typical step
//! time — a frugal streaming median (Ma, Muthukrishnan and Sandler, "Frugal Streaming for
//! Estimating Quantiles", 2013): each step moves the estimate by a small fixed fraction
//! towards itself, so one outlier barely moves it — and a step longer than
//! [`SLOW_FACTOR`] times that estimate, once [`WARMUP_STEPS`] steps are seen, asks the
//! recording for a window.

/// A step at least this many times the lane's typical step is slow.
pub const SLOW_FACTOR: f64 = 3.0;
/// Steps a lane needs before its estimate is trusted.
pub const WARMUP_STEPS: u64 = 20;
/// Fraction of the estimate each step moves it by, up or down.
const STEP_FRACTION: f64 = 0.02;
/// Window times waiting for the sampler; further slow steps before it takes them are not
/// given windows (the recording's window budget could not keep them all anyway).
const MAX_PENDING: usize = 64;
/// Half the span one window keeps (the recording keeps 30 s each side of a window's time).
const HALF_WINDOW_S: f64 = 30.0;

/// Per lane: steps seen and the typical step time; and the window times not yet taken.
#[derive(Debug, Clone, Default)]
pub struct SlowSteps {
    lanes: Vec<(u64, f64)>,
    pending: Vec<f64>,
}

impl SlowSteps {
    /// A tracker for `lanes` lanes.
    pub fn new(lanes: usize) -> Self {
        SlowSteps {
            lanes: vec![(0, 0.0); lanes],
            pending: Vec::new(),
        }
    }

    /// Counts a step of `lane` that started at `start` and lasted `duration` (seconds), and
    /// asks for a window when it is slow: one at its middle, or, for a step longer than a
    /// window, one at each end.
    pub fn observe(&mut self, lane: usize, start: f64, duration: f64) {
        let Some((n, typical)) = self.lanes.get_mut(lane) else {
            return;
        };
        if !(duration.is_finite() && duration >= 0.0) {
            return;
        }
        let slow = *n >= WARMUP_STEPS && *typical > 0.0 && duration > SLOW_FACTOR * *typical;
        if *n == 0 {
            *typical = duration;
        } else if duration > *typical {
            *typical *= 1.0 + STEP_FRACTION;
        } else if duration < *typical {
            *typical *= 1.0 - STEP_FRACTION;
        }
        *n += 1;
        if !slow {
            return;
        }
        let end = start + duration;
        if duration <= 2.0 * HALF_WINDOW_S {
            self.push(start + duration / 2.0);
        } else {
            self.push(start + HALF_WINDOW_S);
            self.push(end - HALF_WINDOW_S);
        }
    }

    fn push(&mut self, t: f64) {
        if self.pending.len() < MAX_PENDING {
            self.pending.push(t);
        }
    }

    /// Moves the window times asked for so far to `out`.
    pub fn take(&mut self, out: &mut Vec<f64>) {
        out.append(&mut self.pending);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_three_times_the_usual_asks_for_one_window_at_its_middle() {
        let mut s = SlowSteps::new(2);
        let mut t = 0.0;
        for _ in 0..50 {
            s.observe(0, t, 0.1);
            t += 0.1;
        }
        let mut out = Vec::new();
        s.take(&mut out);
        assert!(out.is_empty(), "{out:?}");
        s.observe(0, t, 1.0);
        s.take(&mut out);
        assert_eq!(out.len(), 1);
        assert!((out[0] - (t + 0.5)).abs() < 1e-9, "{out:?}");
        // Twice the usual is not slow; another lane has its own estimate.
        out.clear();
        s.observe(0, t + 1.0, 0.2);
        s.observe(1, 0.0, 5.0);
        s.take(&mut out);
        assert!(out.is_empty(), "{out:?}");
    }

    #[test]
    fn the_first_steps_and_a_long_step_are_handled() {
        let mut s = SlowSteps::new(1);
        let mut out = Vec::new();
        // Too few steps to know what is usual.
        for i in 0..5 {
            s.observe(0, f64::from(i), if i == 4 { 10.0 } else { 0.5 });
        }
        s.take(&mut out);
        assert!(out.is_empty(), "{out:?}");
        for i in 5..40 {
            s.observe(0, f64::from(i), 0.5);
        }
        // A two-minute stall: a window at each end.
        s.observe(0, 100.0, 120.0);
        s.take(&mut out);
        assert_eq!(out, vec![130.0, 190.0]);
        // Lanes past the tracker's are ignored, as are NaN durations.
        s.observe(3, 0.0, 1.0);
        s.observe(0, 0.0, f64::NAN);
        out.clear();
        s.take(&mut out);
        assert!(out.is_empty());
    }
}
