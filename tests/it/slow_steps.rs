//! A step much slower than the loop's usual one keeps the samples around it at full
//! resolution, after the last hour's ring has moved past it (`docs/report-format.md`,
//! "Retention"); the time around it that nothing marked is folded into buckets.

use std::time::Duration;

use gpuwhy::collect::{Clock, ManualClock, RecorderConfig};
use gpuwhy::session::Session;
use gpuwhy_tests::{install_sim, patched, scenario};
use serde_json::Value;

/// Guards a wait for the sampler against a hang only.
const HANG: Duration = Duration::from_secs(120);

#[test]
fn a_slow_step_keeps_the_samples_around_it_at_full_resolution() {
    let text = patched(
        scenario("healthy").expect("bundled scenario"),
        &[("speed", Value::from(1.0))],
    );
    let sim = install_sim(&text, false).expect("simulator installs");
    // One sample a second; 10 first rows, a ring of 120 (two minutes), windows of ±30 s.
    let cfg = RecorderConfig {
        nvml_path: Some(sim.lib().to_path_buf()),
        host: false,
        interval_s: 1.0,
        full_rows: 130,
        coarse_buckets: 32,
        ..RecorderConfig::default()
    };
    let clock = ManualClock::new(1.0);
    let s = Session::start_with_clock(cfg.into(), Clock::Manual(clock.clone()))
        .expect("session starts");
    assert!(
        s.recorder().wait_probed(HANG),
        "the simulated GPU is opened"
    );
    let step = |secs: u64| {
        s.step_begin();
        for _ in 0..secs {
            assert!(clock.advance_and_settle(Duration::from_secs(1), HANG));
        }
        s.step_end();
    };
    // 100 steps of a second, one of six (from 100 s to 106 s), then five minutes more.
    for _ in 0..100 {
        step(1);
    }
    step(6);
    for _ in 0..300 {
        step(1);
    }
    let report = s.finish();
    let t = &report.series[0].data.t;
    let rows_in = |a: f64, b: f64| t.iter().filter(|x| **x >= a && **x <= b).count();
    // The slow step and 30 s either side of its middle (103 s) are rows; so are the first
    // ten seconds and the last two minutes.
    assert_eq!(rows_in(80.0, 126.0), 47, "rows {t:?}");
    assert!(rows_in(0.0, 9.0) >= 9, "rows {t:?}");
    assert!(rows_in(290.0, 406.0) >= 110, "rows {t:?}");
    // What lies between was not marked: folded into buckets.
    assert_eq!(rows_in(20.0, 60.0), 0, "rows {t:?}");
    assert_eq!(rows_in(150.0, 270.0), 0, "rows {t:?}");
    let coarse = report.series[0].data.coarse.as_ref().expect("buckets");
    assert!(coarse
        .t_start
        .iter()
        .zip(&coarse.t_end)
        .any(|(a, b)| *a <= 40.0 && *b >= 40.0 || *a >= 20.0 && *b <= 60.0));
}
