//! The simulated cost of an NVML call: every exported call spends a configurable time busy
//! on the calling thread, as a real driver call spends it in the kernel (docs/scenarios.md,
//! "Call cost"), so a benchmark sees what fewer calls save.
//!
//! `GPUWHY_SIM_CALL_US` sets the microseconds per call, read at every `nvmlInit*`; unset or
//! empty it is 0, so tests pay nothing. [`REAL_DRIVER_CALL_US`] is the figure to set for a
//! real driver's cost.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The environment variable that sets the per-call cost, microseconds.
pub const ENV_CALL_US: &str = "GPUWHY_SIM_CALL_US";

/// A real driver's cost per call, microseconds: one NVML call measured at about 22 µs on an
/// RTX 5080 (four metrics in ~0.09 ms, davidboulay/OpenKraken pull request 3) and 360 µs on a
/// Tesla K40m (~2,743 `nvmlDeviceGetPowerUsage` calls per second, wookayin/gpustat issue 76);
/// the lower, recent figure is used (docs/scenarios.md, "Call cost").
pub const REAL_DRIVER_CALL_US: u64 = 20;

/// The cost per call in nanoseconds, set at init.
static CALL_NS: AtomicU64 = AtomicU64::new(0);

/// Reads [`ENV_CALL_US`] (at init). A value that is not a non-negative number is ignored (0),
/// since init has no way to say why.
pub fn configure() {
    let ns = nanoseconds(std::env::var(ENV_CALL_US).ok().as_deref());
    CALL_NS.store(ns, Ordering::Relaxed);
}

/// The cost in nanoseconds that a value of [`ENV_CALL_US`] asks for.
fn nanoseconds(value: Option<&str>) -> u64 {
    let us = value
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v >= 0.0)
        .unwrap_or(0.0);
    (us * 1e3) as u64
}

/// Spends the configured cost busy on this thread (a sleep would not show as CPU time, and a
/// real call's time is the kernel driver's work on the caller's thread).
pub fn spend() {
    let ns = CALL_NS.load(Ordering::Relaxed);
    if ns == 0 {
        return;
    }
    let until = Instant::now() + Duration::from_nanos(ns);
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cost_is_microseconds_and_defaults_to_zero() {
        assert_eq!(nanoseconds(Some("15")), 15_000);
        assert_eq!(nanoseconds(Some(" 2.5 ")), 2_500);
        assert_eq!(nanoseconds(Some("not a number")), 0);
        assert_eq!(nanoseconds(Some("-3")), 0);
        assert_eq!(nanoseconds(None), 0);
    }
}
