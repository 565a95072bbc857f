//! The simulator's deliberate waits (a slow init, a latency fault, an event wait with a
//! timeout): real sleeps, since the recorder under test runs on real time, counted per thread
//! so the simulator's own tests check how long a call was made to wait without timing it.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

thread_local! {
    /// Milliseconds this thread was made to wait by the simulator.
    static PAUSED_MS: Cell<u64> = const { Cell::new(0) };
}

/// True while an init is in its deliberate delay.
static INIT_PAUSING: AtomicBool = AtomicBool::new(false);

/// Waits `ms` milliseconds on the calling thread and counts them.
pub fn pause(ms: u64) {
    if ms == 0 {
        return;
    }
    PAUSED_MS.with(|p| p.set(p.get() + ms));
    std::thread::sleep(Duration::from_millis(ms));
}

/// [`pause`] for an init's delay, with [`init_pausing`] true meanwhile.
pub fn pause_init(ms: u64) {
    INIT_PAUSING.store(true, Ordering::SeqCst);
    pause(ms);
    INIT_PAUSING.store(false, Ordering::SeqCst);
}

/// Milliseconds the calling thread has been made to wait so far.
#[cfg(test)]
pub fn paused_ms() -> u64 {
    PAUSED_MS.with(Cell::get)
}

/// Whether an init is in its deliberate delay right now.
#[cfg(test)]
pub fn init_pausing() -> bool {
    INIT_PAUSING.load(Ordering::SeqCst)
}
