//! The demo trainer: replays a schedule with real sleeps and emits step markers on the
//! same clock as the simulated GPU.
//!
//! The simulated GPU's time starts at its first `nvmlInit` (`t = wall since init × speed`);
//! the trainer's starts when it is called (`wall = t / speed`). Start it right after the
//! recorder that initialises NVML has started: the skew is the time between that init and
//! the call (a few milliseconds of wall time, so `speed` times that in simulated time), and
//! it delays every marker by the same amount. Phase shares and step times do not depend
//! on it; only the alignment of utilization dips with phases does, by that much.
//!
//! Deadlines are absolute (origin + t / speed), so sleep overshoot never accumulates.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::schedule::Schedule;

/// Where the trainer's markers go. Implemented by an adapter to gpuwhy's step-marker
/// session (or by tests); the trainer calls it from its own thread, in this order per
/// step: `step_begin`, then per phase `event` (for phases that mark one) and `phase`,
/// `gpu_phase` once the phase is over (when it has `gpu_ms`), and finally `step_end`.
pub trait Markers {
    /// A step begins.
    fn step_begin(&self);
    /// A phase begins (the previous one, if any, ends).
    fn phase(&self, name: &str);
    /// The step ends.
    fn step_end(&self);
    /// A one-off event (`eval`, `checkpoint`, …) happens now.
    fn event(&self, name: &str);
    /// The GPU-measured duration of the phase `name` that just ended, in seconds of the
    /// trainer's wall clock (simulated seconds / speed), the clock the other markers use.
    fn gpu_phase(&self, name: &str, seconds: f64);
}

/// Markers that go nowhere.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoMarkers;

impl Markers for NoMarkers {
    fn step_begin(&self) {}
    fn phase(&self, _name: &str) {}
    fn step_end(&self) {}
    fn event(&self, _name: &str) {}
    fn gpu_phase(&self, _name: &str, _seconds: f64) {}
}

/// What a trainer run did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TrainerRun {
    /// Steps completed (`step_end` called).
    pub steps: u64,
    /// The latest any marker came after its deadline, wall seconds (sleep overshoot).
    pub max_late_s: f64,
    /// Whether `stop` ended the run before the schedule did.
    pub stopped: bool,
}

/// The longest single sleep, so `stop` is noticed quickly.
const POLL: Duration = Duration::from_millis(20);

/// Replays `schedule` from now: see [`run_trainer_from`].
pub fn run_trainer(
    schedule: &Schedule,
    speed: f64,
    stop: &AtomicBool,
    markers: &dyn Markers,
) -> TrainerRun {
    run_trainer_from(schedule, speed, Instant::now(), stop, markers)
}

/// Where the trainer's time comes from: it waits on it for each marker's simulated time.
/// The wall clock ([`WallPacer`]) replays in real time; tests use one that jumps straight
/// to each deadline, so they need not sleep.
pub trait Pacer {
    /// Waits until simulated time `t_s` (spinning instead of sleeping when `spin`, for a
    /// CPU-bound phase); false when `stop` was set first (and then `run.stopped` is set).
    fn wait_until(&self, t_s: f64, spin: bool, stop: &AtomicBool, run: &mut TrainerRun) -> bool;
}

/// Real time: simulated time `t` is `origin + t / speed`.
#[derive(Debug, Clone, Copy)]
pub struct WallPacer {
    /// The instant of simulated time 0.
    pub origin: Instant,
    /// Simulated seconds per wall second.
    pub speed: f64,
}

impl Pacer for WallPacer {
    fn wait_until(&self, t_s: f64, spin: bool, stop: &AtomicBool, run: &mut TrainerRun) -> bool {
        let deadline = self.origin + Duration::from_secs_f64(t_s.max(0.0) / self.speed);
        wait_until(deadline, spin, stop, run)
    }
}

/// Replays `schedule` as if simulated time 0 were `origin`: before each step, phase and
/// step end it sleeps until `origin + t / speed` and then emits the marker. Phases with
/// `cpu_busy` are spent spinning instead of sleeping. Returns when the schedule ends or
/// `stop` is set (checked at least every 20 ms); a step cut short gets no `step_end`.
pub fn run_trainer_from(
    schedule: &Schedule,
    speed: f64,
    origin: Instant,
    stop: &AtomicBool,
    markers: &dyn Markers,
) -> TrainerRun {
    let speed = valid_speed(speed);
    run_trainer_paced(schedule, speed, &WallPacer { origin, speed }, stop, markers)
}

fn valid_speed(speed: f64) -> f64 {
    if speed > 0.0 && speed.is_finite() {
        speed
    } else {
        1.0
    }
}

/// [`run_trainer_from`] with the waits done by `pacer`; GPU-measured phase times are
/// divided by `speed` like the wall times the markers see.
pub fn run_trainer_paced(
    schedule: &Schedule,
    speed: f64,
    pacer: &dyn Pacer,
    stop: &AtomicBool,
    markers: &dyn Markers,
) -> TrainerRun {
    let speed = valid_speed(speed);
    let mut run = TrainerRun::default();
    for step in schedule.steps() {
        if !pacer.wait_until(step.start_s, false, stop, &mut run) {
            return run;
        }
        markers.step_begin();
        for span in step.phases {
            let phase = schedule.phase(span);
            if !pacer.wait_until(span.start_s, false, stop, &mut run) {
                return run;
            }
            if phase.marks_event() {
                markers.event(&phase.name);
            }
            markers.phase(&phase.name);
            if !pacer.wait_until(span.end_s, phase.cpu_busy, stop, &mut run) {
                return run;
            }
            if let Some(gpu_s) = span.gpu_s {
                markers.gpu_phase(&phase.name, gpu_s / speed);
            }
        }
        markers.step_end();
        run.steps += 1;
    }
    run
}

/// Sleeps (or spins) until `deadline`; false when `stop` was set first.
fn wait_until(deadline: Instant, spin: bool, stop: &AtomicBool, run: &mut TrainerRun) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            run.stopped = true;
            return false;
        }
        let now = Instant::now();
        let Some(left) = deadline
            .checked_duration_since(now)
            .filter(|d| !d.is_zero())
        else {
            run.max_late_s = run
                .max_late_s
                .max(now.saturating_duration_since(deadline).as_secs_f64());
            return true;
        };
        if spin {
            let until = now + left.min(POLL);
            while Instant::now() < until {
                std::hint::spin_loop();
            }
        } else {
            std::thread::sleep(left.min(POLL));
        }
    }
}
