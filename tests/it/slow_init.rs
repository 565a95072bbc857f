//! `nvmlInit` taking seconds (a driver without persistence mode): the session starts and
//! takes markers while NVML is still initialising, the report says when GPU samples began,
//! and a session that ends before the init does is handed back without waiting for it,
//! saying why. Slow calls during the run (50-500 ms each) never hold up a marker either.

use std::time::Duration;

use gpuwhy::collect::{Clock, ManualClock, RecorderConfig};
use gpuwhy::session::Session;
use gpuwhy::steps::PhaseId;
use gpuwhy_tests::{install_sim, patched, scenario, SimDir};
use serde_json::{json, Value};

/// Simulation speed, and so the recorder's clock scale.
const SPEED: f64 = 4.0;

/// Guards a wait for the sampler against a hang only; a passing test never waits this long.
const HANG: Duration = Duration::from_secs(120);

/// A session on two simulated H100s whose first `nvmlInit` takes `delay_ms` (of real
/// time: the simulator sleeps), with samples and markers timed by a manual clock.
fn slow_session(delay_ms: u64) -> (SimDir, Session, ManualClock) {
    let base = scenario("healthy").expect("bundled");
    let v: Value = serde_json::from_str(base).expect("json");
    let dev = v["devices"][0].clone();
    let text = patched(
        base,
        &[
            ("speed", Value::from(SPEED)),
            ("init_delay_ms", Value::from(delay_ms)),
            ("devices", json!([dev.clone(), dev])),
        ],
    );
    let sim = install_sim(&text, false).expect("simulator installs");
    let cfg = RecorderConfig {
        nvml_path: Some(sim.lib().to_path_buf()),
        time_scale: SPEED,
        host: false,
        ..RecorderConfig::default()
    };
    let clock = ManualClock::new(SPEED);
    let session = Session::start_with_clock(cfg.into(), Clock::Manual(clock.clone()))
        .expect("session starts");
    (sim, session, clock)
}

/// One step of four phases, each `ms` on the clock. With `settle`, the sampler takes every
/// tick that falls due before the step goes on.
fn step(s: &Session, clock: &ManualClock, ms: u64, settle: bool) {
    s.step_begin();
    for p in [
        PhaseId::DATA,
        PhaseId::FORWARD,
        PhaseId::BACKWARD,
        PhaseId::OPTIMIZER,
    ] {
        s.phase(p);
        clock.advance(Duration::from_millis(ms));
        if settle {
            assert!(clock.settle(HANG));
        }
    }
    s.step_end();
}

#[test]
fn markers_are_taken_while_nvml_initialises_and_the_late_start_is_reported() {
    // 1.5 s of init: far longer than the 200 ms `Session::start` waits for it.
    let (_sim, session, clock) = slow_session(1500);
    assert!(
        !session.recorder().wait_probed(Duration::ZERO),
        "the session started before NVML finished initialising"
    );
    // Steps during the init: markers never wait for NVML.
    for _ in 0..5 {
        step(&session, &clock, 10, false);
    }
    assert!(
        session.recorder().wait_probed(HANG),
        "the GPUs are listed once init finishes"
    );
    for _ in 0..5 {
        step(&session, &clock, 10, true);
    }
    // Half a second more, one 0.1 s tick at a time (the clock's seconds are scaled).
    for _ in 0..20 {
        assert!(clock.advance_and_settle(Duration::from_millis(25), HANG));
    }
    let report = session.finish();

    let steps = report.steps.as_ref().expect("steps recorded");
    assert_eq!(steps.count, 10, "every step was kept");
    assert_eq!(steps.ignored_markers, 0);
    assert_eq!(
        report.devices.len(),
        2,
        "both GPUs were found after the init"
    );
    assert_eq!(report.gpu_absent_reason, None);
    let first_sample = report.series[0].data.t[0];
    // The first steps were marked before any GPU sample existed: the markers' clock ran
    // from the session start, not from the end of the init.
    assert!(
        steps.t[0] < first_sample,
        "first step at {} s, first GPU sample at {first_sample} s",
        steps.t[0]
    );
    let t = &steps.t;
    assert!(
        t.windows(2).all(|w| w[1] > w[0]),
        "step times increase: {t:?}"
    );
    let slow = report
        .events
        .iter()
        .find(|e| e.kind == "nvml_slow_init")
        .expect("the slow init is in the report's events");
    assert!(
        slow.detail.contains("no GPU samples before"),
        "{}",
        slow.detail
    );
    assert!(
        (slow.t_s - first_sample).abs() <= 0.5 * SPEED,
        "the event marks when samples began: {} vs {first_sample}",
        slow.t_s
    );
    assert!(
        report.overhead.skipped_ticks > 0,
        "the ticks the init held up are counted as skipped: {:?}",
        report.overhead
    );
    // After the init the sampler keeps its cadence on both GPUs.
    for s in &report.series {
        let t = &s.data.t;
        assert!(t.len() >= 3, "{} samples", t.len());
        let gaps: Vec<f64> = t.windows(2).map(|w| w[1] - w[0]).collect();
        let median = {
            let mut g = gaps.clone();
            g.sort_by(f64::total_cmp);
            g[g.len() / 2]
        };
        // The interval is in the recorder's (scaled) seconds, like every report time.
        assert!(
            (median - 0.1).abs() < 0.05,
            "median spacing {median} s at a 0.1 s interval"
        );
    }
    // The report is written and read back with its events.
    let text = report.to_json();
    let back = gpuwhy::report::Report::from_slice(text.as_bytes(), std::path::Path::new("r.json"))
        .expect("reads back");
    assert!(back.events.iter().any(|e| e.kind == "nvml_slow_init"));
}

#[test]
fn a_session_ending_during_the_init_does_not_wait_for_it_and_says_why() {
    // An init far longer than the session: finishing must not wait for it.
    let (_sim, session, clock) = slow_session(20_000);
    for _ in 0..3 {
        step(&session, &clock, 5, false);
    }
    let report = session.finish();
    let why = report
        .gpu_absent_reason
        .as_deref()
        .expect("the report says why there are no GPU metrics");
    assert!(why.contains("still initialising"), "{why}");
    assert!(report.devices.is_empty() && report.series.is_empty());
    let steps = report.steps.as_ref().expect("the steps are kept");
    assert_eq!(steps.count, 3);
    assert!(report.run.duration_s > 0.0);
    assert!(report.to_json().contains("still initialising"));
}

/// Every sampled NVML function taking 50 to 500 ms in scattered windows on GPU 0 (a driver
/// without persistence mode): the one sampler thread falls behind and counts it, both GPUs
/// still get a row every tick to the end, and a training thread's markers never wait for
/// a slow call.
#[test]
fn slow_calls_everywhere_never_hold_up_a_marker() {
    let functions = [
        "nvmlDeviceGetUtilizationRates",
        "nvmlDeviceGetMemoryInfo_v2",
        "nvmlDeviceGetPowerUsage",
        "nvmlDeviceGetClockInfo",
        "nvmlDeviceGetTemperatureV",
        "nvmlDeviceGetPcieThroughput",
        "nvmlDeviceGetFieldValues",
    ];
    let base = scenario("healthy").expect("bundled");
    let v: Value = serde_json::from_str(base).expect("json");
    let dev = v["devices"][0].clone();
    let faults: Vec<Value> = functions
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let ms = [50, 120, 250, 500][i % 4];
            let from = 0.5 + i as f64 * 0.4;
            json!({"kind": "latency", "device": 0, "function": f, "ms": ms, "from_s": from, "until_s": from + 0.6})
        })
        .collect();
    let text = patched(
        base,
        &[
            ("speed", Value::from(1.0)),
            ("devices", json!([dev.clone(), dev])),
            ("faults", Value::Array(faults)),
        ],
    );
    let sim = install_sim(&text, false).expect("simulator installs");
    let cfg = RecorderConfig {
        nvml_path: Some(sim.lib().to_path_buf()),
        host: false,
        ..RecorderConfig::default()
    };
    // The real clock: the sampler must fall behind real time for its late ticks to show.
    let session = Session::start(cfg.into()).expect("session starts");
    let end = std::time::Instant::now() + Duration::from_secs(4);
    let mut steps = 0;
    while std::time::Instant::now() < end {
        session.step_begin();
        session.phase(PhaseId::FORWARD);
        session.step_end();
        steps += 1;
        // Pacing the loop like a training step, not waiting for another thread.
        std::thread::sleep(Duration::from_millis(5));
    }
    let report = session.finish();
    let marked = report.steps.as_ref().expect("steps");
    assert_eq!(marked.count, steps, "every marker was recorded");
    // Markers went on inside every window of slow calls: the training thread was not held
    // while the sampler waited on the driver. (Markers take no lock the sampler holds; how
    // long one takes is measured by `cargo xtask bench`, not asserted here.)
    for (i, f) in functions.iter().enumerate() {
        let from = 0.5 + i as f64 * 0.4;
        let inside = marked.t.iter().filter(|t| (from..from + 0.6).contains(*t));
        assert!(inside.count() > 0, "no marker during the slow {f} calls");
    }
    let o = &report.overhead;
    assert!(o.late_ticks > 0 && o.skipped_ticks > 0, "{o:?}");
    assert!(o.nvml_call_max_us >= 450_000.0, "{o:?}");
    let (n0, n1) = (report.series[0].data.t.len(), report.series[1].data.t.len());
    assert_eq!(n0, n1, "both GPUs have a row every tick");
    let last = report.series[1].data.t.last().copied().unwrap_or(0.0);
    assert!(last > 3.5, "the recording went on to the end: {last}");
}
