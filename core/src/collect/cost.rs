//! Measuring the recorder's own cost: NVML call latency and the sampler thread's CPU time.

use std::time::Instant;

/// Count, total and maximum wall time of NVML calls.
#[derive(Debug, Clone, Default)]
pub struct CallStats {
    /// Calls made.
    pub calls: u64,
    /// Total wall time, µs.
    pub total_us: f64,
    /// Slowest call, µs.
    pub max_us: f64,
    /// The slowest call's function.
    pub max_function: Option<&'static str>,
}

impl CallStats {
    /// Runs `f`, timing it as one call of `function`.
    pub fn time<T>(&mut self, function: &'static str, f: impl FnOnce() -> T) -> T {
        let t0 = Instant::now();
        let out = f();
        let us = t0.elapsed().as_secs_f64() * 1e6;
        self.calls += 1;
        self.total_us += us;
        if us > self.max_us {
            self.max_us = us;
            self.max_function = Some(function);
        }
        out
    }
}

/// CPU time (user + system) consumed so far by the calling thread, seconds; `None` where the
/// kernel does not expose it. Read from `/proc/thread-self/schedstat` (nanoseconds) with
/// `/proc/thread-self/stat` (clock ticks) as fallback. Called twice per recording, not per tick.
pub fn thread_cpu_seconds() -> Option<f64> {
    if let Ok(s) = std::fs::read_to_string("/proc/thread-self/schedstat") {
        if let Some(ns) = s
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<f64>().ok())
        {
            return Some(ns / 1e9);
        }
    }
    let s = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    let rest = &s[s.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After the comm field: state(0) ... utime(11) stime(12), in USER_HZ (100 on Linux).
    let ticks = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_grows_with_work() {
        let Some(a) = thread_cpu_seconds() else {
            return;
        };
        let mut x = 0u64;
        let t = Instant::now();
        while t.elapsed().as_millis() < 30 {
            x = x.wrapping_mul(31).wrapping_add(7);
        }
        std::hint::black_box(x);
        let b = thread_cpu_seconds().expect("available once");
        assert!(b > a, "{b} > {a}");
    }

    #[test]
    fn call_stats_track_the_slowest() {
        let mut s = CallStats::default();
        s.time("fast", || ());
        s.time("slow", || {
            std::thread::sleep(std::time::Duration::from_millis(2))
        });
        assert_eq!(s.calls, 2);
        assert_eq!(s.max_function, Some("slow"));
    }
}
