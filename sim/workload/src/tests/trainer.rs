//! The demo trainer replaying a workload's schedule through a pacer.

use super::*;

/// A pacer that jumps to each deadline at once: simulated time is exactly what the
/// schedule says, and nothing sleeps. It stops the run (as another thread would) when
/// asked to wait past `stop_after_s`, and notes which waits were to spin.
struct JumpPacer {
    now: std::cell::Cell<f64>,
    stop_after_s: f64,
    spins: Mutex<Vec<(f64, bool)>>,
}

impl JumpPacer {
    fn new(stop_after_s: f64) -> Self {
        JumpPacer {
            now: std::cell::Cell::new(0.0),
            stop_after_s,
            spins: Mutex::new(Vec::new()),
        }
    }
}

impl Pacer for JumpPacer {
    fn wait_until(&self, t_s: f64, spin: bool, stop: &AtomicBool, run: &mut TrainerRun) -> bool {
        if t_s > self.stop_after_s {
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            run.stopped = true;
            return false;
        }
        self.now.set(self.now.get().max(t_s));
        self.spins
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((t_s, spin));
        true
    }
}

/// Markers written down with the pacer's simulated time.
struct Log<'a> {
    pacer: &'a JumpPacer,
    calls: Mutex<Vec<(f64, String)>>,
}

impl Log<'_> {
    fn push(&self, what: String) {
        let t = self.pacer.now.get();
        self.calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((t, what));
    }
}

impl Markers for Log<'_> {
    fn step_begin(&self) {
        self.push("begin".into());
    }
    fn phase(&self, name: &str) {
        self.push(format!("phase {name}"));
    }
    fn step_end(&self) {
        self.push("end".into());
    }
    fn event(&self, name: &str) {
        self.push(format!("event {name}"));
    }
    fn gpu_phase(&self, name: &str, seconds: f64) {
        self.push(format!("gpu {name} {seconds:.4}"));
    }
}

#[test]
fn the_trainer_replays_the_schedule_on_the_simulated_clock() {
    let s = Schedule::new(&workload(BASIC), 4.0);
    let speed = 20.0;
    let pacer = JumpPacer::new(f64::INFINITY);
    let log = Log {
        pacer: &pacer,
        calls: Mutex::new(Vec::new()),
    };
    let stop = AtomicBool::new(false);
    let run = run_trainer_paced(&s, speed, &pacer, &stop, &log);
    assert_eq!(run.steps, s.len() as u64);
    assert!(!run.stopped);
    let calls = log.calls.into_inner().unwrap_or_else(|e| e.into_inner());
    let names: Vec<&str> = calls.iter().take(7).map(|(_, c)| c.as_str()).collect();
    assert_eq!(
        names,
        [
            "begin",
            "phase data",
            "phase forward",
            "gpu forward 0.0025",
            "phase backward",
            "phase optimizer",
            "end"
        ]
    );
    assert!(calls.iter().any(|(_, c)| c == "event eval"));
    // Every marker at its simulated time: the eval phase where step 2 schedules it.
    let eval_at = s.step(2).map(|st| st.phases[4].start_s).expect("step 2");
    let (t, _) = calls
        .iter()
        .find(|(_, c)| c == "phase eval")
        .expect("eval marked");
    assert_eq!(*t, eval_at);
    let (t_end, _) = calls.last().expect("calls");
    assert_eq!(*t_end, s.end_s());
    assert!(
        calls.windows(2).all(|w| w[1].0 >= w[0].0),
        "markers in time order"
    );
}

#[test]
fn the_wall_pacer_counts_simulated_time_from_its_origin_at_its_speed() {
    // Deadlines already past: no wait, and how late each came is measured, not asserted.
    let p = WallPacer {
        origin: std::time::Instant::now()
            .checked_sub(std::time::Duration::from_secs(10))
            .expect("the machine has been up for 10 s"),
        speed: 2.0,
    };
    let stop = AtomicBool::new(false);
    let mut run = TrainerRun::default();
    assert!(p.wait_until(4.0, false, &stop, &mut run));
    assert!(run.max_late_s >= 8.0, "{run:?}");
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(
        !p.wait_until(1e9, false, &stop, &mut run),
        "a stop ends any wait"
    );
    assert!(run.stopped);
}

#[test]
fn the_trainer_stops_when_asked_and_spins_through_busy_phases() {
    let w = workload(r#"{"phases": [{"name": "forward", "ms": 50, "cpu_busy": true}]}"#);
    let s = Schedule::new(&w, 1000.0);
    // Stopped while waiting for the end of the third step's phase.
    let pacer = JumpPacer::new(0.12);
    let stop = AtomicBool::new(false);
    let run = run_trainer_paced(&s, 1.0, &pacer, &stop, &NoMarkers);
    assert!(run.stopped);
    assert_eq!(run.steps, 2, "{run:?}");
    let spins = pacer.spins.into_inner().unwrap_or_else(|e| e.into_inner());
    // Per step: wait for its start, its phase's start (sleeping), its phase's end (spinning).
    let kinds: Vec<bool> = spins.iter().map(|(_, spin)| *spin).collect();
    assert_eq!(
        kinds,
        [false, false, true, false, false, true, false, false]
    );
}
