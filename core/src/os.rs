//! The operating-system calls gpuwhy makes outside NVML, behind safe functions.
//!
//! This and [`crate::nvml`] are the only modules with `unsafe` code (besides the C ABI).

/// CPU time consumed by the calling thread, nanoseconds (`CLOCK_THREAD_CPUTIME_ID`), or
/// `None` where the clock is not available. Cheap enough to call a few times per sampler tick.
pub fn thread_cpu_ns() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec that outlives the call; clock_gettime
        // only writes it and reports failure by returning -1, which is checked.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        if rc == 0 {
            return Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
        }
    }
    None
}

/// The monotonic clock (`CLOCK_MONOTONIC`, the clock of [`std::time::Instant`] on Linux), in
/// nanoseconds from an arbitrary start; `None` where it cannot be read. One vDSO call, and
/// none of `Instant`'s checked arithmetic: the step markers' clock.
#[inline(always)]
pub fn monotonic_ns() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec that outlives the call; clock_gettime
        // only writes it and reports failure by returning -1, which is checked.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        if rc == 0 {
            return Some((ts.tv_sec as u64).wrapping_mul(1_000_000_000) + ts.tv_nsec as u64);
        }
    }
    None
}

/// Clock ticks per second used by `/proc` CPU times (`USER_HZ`).
pub fn clock_ticks_per_second() -> f64 {
    #[cfg(unix)]
    {
        // SAFETY: sysconf only looks up a configuration value: it takes no pointers, has no
        // preconditions, and reports failure by returning -1, which is handled below.
        let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        if ticks > 0 {
            return ticks as f64;
        }
    }
    // USER_HZ is 100 on every architecture Linux supports.
    100.0
}

/// A gate that `fork()` waits at: closed around work that must not be in progress when
/// the process is copied (a child would inherit a lock held, or state half-changed), and by
/// a pre-fork handler, which so waits for that work to end. Not reentrant.
pub struct ForkGate(std::sync::atomic::AtomicBool);

impl ForkGate {
    /// An open gate.
    pub const fn new() -> Self {
        ForkGate(std::sync::atomic::AtomicBool::new(false))
    }

    /// Closes the gate, waiting while it is closed.
    pub fn close(&self) {
        use std::sync::atomic::Ordering;
        while self
            .0
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            std::thread::yield_now();
        }
    }

    /// Opens the gate (in a fork child too).
    pub fn open(&self) {
        self.0.store(false, std::sync::atomic::Ordering::Release);
    }

    /// Runs `f` with the gate closed, opening it again however `f` ends.
    pub fn with<R>(&self, f: impl FnOnce() -> R) -> R {
        struct Open<'g>(&'g ForkGate);
        impl Drop for Open<'_> {
            fn drop(&mut self) {
                self.0.open();
            }
        }
        self.close();
        let _open = Open(self);
        f()
    }
}

impl Default for ForkGate {
    fn default() -> Self {
        Self::new()
    }
}

/// Closed while one of gpuwhy's threads is inside the dynamic loader (dlopen, dlsym, dladdr,
/// dlclose; see [`with_loader`]). The loader holds its own lock during those calls, and
/// fork() copies that lock as it is: a child forked while gpuwhy's sampler thread loads NVML
/// would inherit it locked, and hang at its first thread-local destructor registration or
/// library load. A library embedding gpuwhy closes this gate in its pre-fork handler, so
/// fork waits for such a call to end.
pub static LOADER_GATE: ForkGate = ForkGate::new();

/// Runs `f`, which calls into the dynamic loader, behind [`LOADER_GATE`].
pub fn with_loader<R>(f: impl FnOnce() -> R) -> R {
    LOADER_GATE.with(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_cpu_time_advances_with_work() {
        let a = thread_cpu_ns().expect("Linux has a thread CPU clock");
        let mut x = 1u64;
        for i in 0..2_000_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
        }
        std::hint::black_box(x);
        assert!(thread_cpu_ns().expect("again") > a);
        assert!(clock_ticks_per_second() >= 100.0);
        let (a, b) = (monotonic_ns(), monotonic_ns());
        assert!(a.is_some() && b >= a);
    }
}
