use super::*;
use std::sync::atomic::AtomicUsize;

/// Guards against a hang only; no test waits this long when it passes.
const HANG: Duration = Duration::from_secs(60);

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
    assert_eq!(ManualClock::new(f64::NAN).scale, 1.0);
}

#[test]
fn a_manual_clock_reads_what_it_was_advanced_by_times_its_scale() {
    let m = ManualClock::new(4.0);
    let c = Clock::Manual(m.clone());
    assert_eq!(c.now(), 0.0);
    m.advance(Duration::from_millis(250));
    assert_eq!(c.elapsed(), Duration::from_millis(250));
    assert_eq!(c.now(), 1.0);
    assert_eq!(c.scale(), 4.0);
}

/// A thread ticking every 0.1 clock seconds, as the sampler does, counting its ticks.
fn ticker(m: &ManualClock, stop: &Stopper, ticks: &AtomicUsize) {
    let c = Clock::Manual(m.clone());
    let mut next = 0.0;
    loop {
        ticks.fetch_add(1, Ordering::SeqCst);
        next += 0.1;
        if c.wait_until(stop, next) {
            return;
        }
    }
}

#[test]
fn waits_on_a_manual_clock_end_when_it_is_advanced_and_settle_sees_the_ticks_done() {
    let m = ManualClock::new(1.0);
    let stop = Stopper::default();
    let ticks = AtomicUsize::new(0);
    std::thread::scope(|s| {
        // Registered before the thread runs, as the recorder does, so settle waits for it.
        let r = m.register();
        s.spawn(|| {
            let _r = r;
            ticker(&m, &stop, &ticks);
        });
        assert!(
            m.settle(HANG),
            "the first tick is done and the thread waits"
        );
        assert_eq!(ticks.load(Ordering::SeqCst), 1);
        assert!(m.advance_and_settle(Duration::from_millis(50), HANG));
        assert_eq!(ticks.load(Ordering::SeqCst), 1, "not due yet");
        assert!(m.advance_and_settle(Duration::from_millis(50), HANG));
        assert_eq!(ticks.load(Ordering::SeqCst), 2);
        assert!(m.advance_and_settle(Duration::from_millis(300), HANG));
        assert_eq!(ticks.load(Ordering::SeqCst), 5, "one tick per due deadline");
        stop.stop();
    });
    assert!(m.settle(HANG), "no registered thread is left");
}

#[test]
fn stopping_wakes_a_wait_on_a_manual_clock_that_never_moves() {
    let m = ManualClock::new(1.0);
    let stop = Stopper::default();
    std::thread::scope(|s| {
        let r = m.register();
        let t = s.spawn(|| {
            let _r = r;
            Clock::Manual(m.clone()).wait_until(&stop, 3600.0)
        });
        assert!(m.settle(HANG));
        stop.stop();
        assert!(t.join().expect("thread"), "woken by the stop");
    });
}
