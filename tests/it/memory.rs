//! A days-long simulated run stays within the recording's documented memory bound.

use std::time::Duration;

use gpuwhy::collect::{Clock, ManualClock, Recorder, RecorderConfig};
use gpuwhy_tests::{install_sim, patched, scenario};
use serde_json::Value;

#[test]
fn two_simulated_days_stay_within_the_documented_bound() {
    let speed = 40_000.0;
    let text = patched(
        scenario("data_starvation").expect("bundled"),
        &[("speed", Value::from(speed))],
    );
    let sim = install_sim(&text, false).expect("install");
    let cfg = RecorderConfig {
        interval_s: 10.0,
        nvml_path: Some(sim.lib().to_path_buf()),
        host: false,
        time_scale: speed,
        // Test-sized capacities so the coarse part fills and compacts many times.
        full_rows: 1_000,
        coarse_buckets: 128,
        ..RecorderConfig::default()
    };
    // Two simulated days, tick by tick on the test's clock: every one of the 17,280 ticks
    // is taken, however loaded the machine.
    let clock = ManualClock::new(speed);
    let rec = Recorder::start_with_clock(cfg, None, Clock::Manual(clock.clone())).expect("starts");
    let ticks = 17_280;
    let tick = Duration::from_secs_f64(10.0 / speed);
    for _ in 0..ticks {
        // The timeout only guards against a hang.
        assert!(clock.advance_and_settle(tick, Duration::from_secs(120)));
    }
    let r = rec.stop();
    let d = &r.devices[0];
    assert!(
        (r.run.duration_s - 2.0 * 86_400.0).abs() < 1.0,
        "simulated {} s",
        r.run.duration_s
    );
    // A row at 0, one per tick, and the last at the stop.
    assert!(
        d.series.total_rows() > ticks,
        "{} rows",
        d.series.total_rows()
    );
    assert_eq!(d.series.times().len(), 1_000);
    assert!(d.series.coarse().len() <= 128);
    assert!(
        d.series.coarse().rows_per_bucket >= 32,
        "compacted {} times",
        d.series.coarse().rows_per_bucket
    );
    assert!(
        r.heap_bytes() <= r.worst_case_bytes(),
        "{} > bound {}",
        r.heap_bytes(),
        r.worst_case_bytes()
    );
    let c = d.series.coarse();
    assert!(
        c.t_end[c.len() - 1] > 86_400.0,
        "the buckets cover the whole run"
    );
}
