//! Full resolution around a finding's evidence: the session's provisional diagnosis marks a
//! window around a condition that came and went early in a long recording, before its rows
//! leave the recent ring, so the final report still shows them at full resolution.
//!
//! The bundled `power_cap` scenario is changed so that the GPU is power-capped (clock-event
//! reason SwPowerCap, SM clock near 915 MHz) only from 600 s to 2,400 s, and played for two
//! simulated hours (interval 0.5 s, speed ×600, about 12 s of real time) into a session that
//! keeps few continuous rows (4,200: the first 161 s and a ring of about 32 minutes), so that
//! by the end the condition's rows have left the ring. With the provisional diagnosis (a pass
//! every 300 recorded seconds) the report keeps a window of rows inside the condition; without
//! it, only buckets cover that stretch.
//!
//! The final report names `throttling` either way: the buckets count their loaded samples by
//! clock-event reason, so the share of the run spent capped (a quarter) is the same whether
//! its rows were kept or folded (`core/src/signals/reasons.rs`).

use std::path::PathBuf;
use std::time::Duration;

use gpuwhy::collect::{Clock, ManualClock, RecorderConfig};
use gpuwhy::metric::GpuMetric;
use gpuwhy::report::Report;
use gpuwhy::session::{Session, SessionConfig};
use gpuwhy_tests::{install_sim, patched, record_session, scenario, Run};
use serde_json::{json, Value};

/// When the power cap holds, recorded seconds.
const CAPPED: (f64, f64) = (600.0, 2_400.0);

/// `power_cap`, capped only during [`CAPPED`], sampled every 0.5 s.
fn early_power_cap() -> String {
    let mut v: Value = serde_json::from_str(scenario("power_cap").expect("bundled")).expect("JSON");
    v["demo"]["interval_ms"] = Value::from(500);
    let (a, b) = CAPPED;
    let m = &mut v["devices"][0]["metrics"];
    m["clock_event_reasons"] = json!({"steps": [[0, 0], [a, 4], [b, 0]]});
    m["sm_clock_mhz"] = json!({"steps": [[0, 1380], [a, 915], [b, 1380]], "noise": 15});
    v.to_string()
}

fn small_ring(cfg: &mut SessionConfig) {
    cfg.recorder.full_rows = 4_200;
    cfg.recorder.coarse_buckets = 256;
    cfg.provisional_period_s = Some(300.0);
}

fn small_ring_without_passes(cfg: &mut SessionConfig) {
    small_ring(cfg);
    cfg.provisional_period_s = None;
}

fn two_hours(configure: fn(&mut SessionConfig), journal: Option<PathBuf>) -> Report {
    let run = Run {
        duration_s: Some(7_200.0),
        speed: 600.0,
        configure: Some(configure),
        journal,
        ..Run::default()
    };
    record_session(&early_power_cap(), &run).expect("records")
}

/// The report's full-resolution rows of GPU 0 inside [`CAPPED`]: (time, SM clock).
fn rows_while_capped(r: &Report) -> Vec<(f64, f32)> {
    let data = &r.series[0].data;
    let clock = &data.metrics[GpuMetric::SmClock.name()].0;
    data.t
        .iter()
        .zip(clock)
        .filter(|(t, _)| (CAPPED.0..CAPPED.1).contains(*t))
        .map(|(t, c)| (*t, *c))
        .collect()
}

#[test]
fn an_early_condition_keeps_full_resolution_rows_around_its_finding() {
    let dir = tempfile::tempdir().expect("temp dir");
    let journal = dir.path().join("run.json.partial");
    let r = two_hours(small_ring, Some(journal.clone()));
    let data = &r.series[0].data;
    let coarse = data.coarse.as_ref().expect("most of two hours is folded");
    assert!(
        coarse.t_start.len() > 10,
        "{} buckets",
        coarse.t_start.len()
    );
    let rows = rows_while_capped(&r);
    // One window of a minute at 0.5 s: about 120 rows, all of them capped, less the ticks a
    // loaded machine made the sampler skip (at 600x a tick is 0.8 ms of wall time; with six
    // busy loops on two cores a third of them were skipped, leaving 78 to 96 rows).
    let o = &r.overhead;
    let done = o.ticks as f64 / (o.ticks + o.skipped_ticks).max(1) as f64;
    assert!(
        (100.0 * done..=250.0).contains(&(rows.len() as f64)),
        "{} rows kept inside the capped stretch ({:.0} % of the ticks done)",
        rows.len(),
        done * 100.0
    );
    let slow = rows.iter().filter(|(_, c)| *c < 1_000.0).count();
    assert!(
        slow * 10 >= rows.len() * 9,
        "the rows kept show the cap: {slow} of {} below 1000 MHz",
        rows.len()
    );
    // The rows are consecutive samples: a window, not scattered survivors.
    let span = rows.last().map(|x| x.0).unwrap_or(0.0) - rows[0].0;
    assert!(span <= 61.0, "window spans {span} s");
    // The report says why it kept them.
    let w: Vec<_> = r
        .windows
        .iter()
        .filter(|w| w.reason == "finding:throttling")
        .collect();
    assert_eq!(w.len(), 1, "{:?}", r.windows);
    assert_eq!(
        (w[0].t_start, w[0].t_end),
        (rows[0].0, rows[rows.len() - 1].0)
    );
    // The window's rows do not tilt the share: it is the run's, a quarter.
    let (share, named) = throttled(&r);
    assert!((0.2..0.3).contains(&share), "throttled share {share}");
    assert!(
        named,
        "{:?}",
        r.findings.iter().map(|f| &f.id).collect::<Vec<_>>()
    );
    // A run killed before its report keeps the window too: the crash journal carries the
    // marks a replay cannot make by itself, and `gpuwhy diagnose run.json.partial` reads it.
    let back = Report::load(&journal).expect("the journal replays");
    assert!(!back.run.complete);
    // Replayed from its lines, without a checkpoint, into a recording of the recorder's
    // capacities (the journal's header carries them): the same rows.
    assert_eq!(rows_while_capped(&back), rows, "the window's rows replayed");
    let kept: Vec<_> = back
        .windows
        .iter()
        .filter(|w| w.reason == "finding:throttling")
        .collect();
    assert_eq!(kept, w, "{:?}", back.windows);
}

/// The share of loaded samples the final report says were throttled, and whether it names
/// `throttling`.
fn throttled(r: &Report) -> (f64, bool) {
    let share = gpuwhy::signals::Signals::from_report(r).devices[0]
        .throttled_share
        .unwrap_or(0.0);
    (share, r.findings.iter().any(|f| f.id == "throttling"))
}

#[test]
fn without_the_provisional_pass_only_buckets_cover_the_early_condition() {
    let r = two_hours(small_ring_without_passes, None);
    assert_eq!(rows_while_capped(&r), Vec::new());
    assert!(r.windows.is_empty(), "{:?}", r.windows);
    // The capped quarter of the run counts from the buckets alone.
    let (share, named) = throttled(&r);
    assert!((0.2..0.3).contains(&share), "throttled share {share}");
    assert!(
        named,
        "{:?}",
        r.findings.iter().map(|f| &f.id).collect::<Vec<_>>()
    );
    let coarse = r.series[0].data.coarse.as_ref().expect("buckets");
    assert!(coarse
        .t_start
        .iter()
        .any(|t| (CAPPED.0..CAPPED.1).contains(t)));
}

/// The passes run on the session's clock: on a test's manual clock, one every 600 recorded
/// seconds however slowly the test advances it, each done before `settle` returns.
#[test]
fn passes_follow_the_recorded_time_of_a_manual_clock() {
    let speed = 100.0;
    let mut v: Value = serde_json::from_str(scenario("power_cap").expect("bundled")).expect("JSON");
    let m = &mut v["devices"][0]["metrics"];
    m["clock_event_reasons"] = json!(4);
    m["sm_clock_mhz"] = json!({"constant": 915, "noise": 15});
    let text = patched(&v.to_string(), &[("speed", Value::from(speed))]);
    let sim = install_sim(&text, false).expect("install");
    let cfg = RecorderConfig {
        interval_s: 1.0,
        nvml_path: Some(sim.lib().to_path_buf()),
        time_scale: speed,
        ..RecorderConfig::default()
    };
    let clock = ManualClock::new(speed);
    let session = Session::start_with_clock(SessionConfig::from(cfg), Clock::Manual(clock.clone()))
        .expect("starts");
    let tick = Duration::from_secs_f64(1.0 / speed);
    // 1,300 recorded seconds: passes at 600 s and 1,200 s.
    for i in 0..1_300 {
        assert!(clock.advance_and_settle(tick, Duration::from_secs(120)));
        if i == 598 {
            assert_eq!(
                session.provisional_stats().passes,
                0,
                "no pass before 600 s"
            );
        }
    }
    let st = session.provisional_stats();
    assert_eq!(st.passes, 2);
    // The cap holds throughout: a window at the first pass only, none for the same finding
    // again.
    assert_eq!(st.windows, 1, "{st:?}");
    assert_eq!(st.last.rules, vec!["throttling".to_string()]);
    assert!(st.last.windows.is_empty());
    // The second pass took only the rows after the first one's.
    assert!(
        (590..=610).contains(&st.last.gpu_rows),
        "{} rows",
        st.last.gpu_rows
    );
    let r = session.finish();
    let w: Vec<_> = r
        .windows
        .iter()
        .filter(|w| w.reason == "finding:throttling")
        .collect();
    assert_eq!(w.len(), 1, "{:?}", r.windows);
    assert!(w[0].t_end <= 661.0, "{:?}", w[0]);
}
