//! The sampler sleeps through ticks with nothing to read (docs/nvml-loading.md, "Buffered
//! mode"): a buffered GPU read once a second needs no call between its reads, so the thread
//! wakes about once a second, and every tick still has its row.

use gpuwhy::report::Report;
use gpuwhy_tests::{record, Run};
use serde_json::{json, Value};

/// Two H100s at a steady 70 % for 20 s; `workload` adds the demo trainer's steps.
fn scenario(workload: Option<Value>) -> String {
    let mut v = json!({
        "demo": {"duration_s": 20.0, "interval_ms": 100},
        "devices": [
            {"preset": "H100-SXM5-80GB", "metrics": {"util_gpu": 70, "pcie_rx_kbs": 1000}},
            {"preset": "H100-SXM5-80GB", "metrics": {"util_gpu": 70, "pcie_rx_kbs": 1000}},
        ],
    });
    if let Some(w) = workload {
        v["workload"] = w;
    }
    v.to_string()
}

fn run(buffered: bool) -> Run {
    Run {
        nvml_samples: Some(buffered),
        ..Run::default()
    }
}

/// (wake-ups, ticks) of a recording.
fn wakeups(r: &Report) -> (u64, u64) {
    (r.overhead.wakeups.expect("counted"), r.overhead.ticks)
}

/// The largest gap between two rows of GPU `i`, report seconds, and its row count.
fn largest_gap(r: &Report, i: usize) -> (f64, usize) {
    let t = &r.series[i].data.t;
    let gap = t.windows(2).map(|w| w[1] - w[0]).fold(0.0, f64::max);
    (gap, t.len())
}

#[test]
fn quiet_buffered_gpus_wake_the_sampler_about_once_a_second() {
    let r = record(&scenario(None), &run(true)).expect("records");
    let (woke, ticks) = wakeups(&r);
    assert!(ticks >= 160, "{ticks} ticks");
    // One wake-up a second, every tick of the first second (no second read before it to
    // decide the cadence) and the last one: about 30 for 200 ticks.
    assert!(woke * 4 <= ticks, "{woke} wake-ups for {ticks} ticks");
    // The ticks slept through have their rows all the same, filled at the next read.
    for i in 0..2 {
        let (gap, rows) = largest_gap(&r, i);
        let missed = r.overhead.skipped_ticks as usize;
        assert!(
            rows + missed + 2 >= ticks as usize,
            "GPU {i}: {rows} rows, {ticks} ticks"
        );
        assert!(gap < 0.35, "GPU {i}: a {gap} s gap between rows");
        let util = &r.series[i].data.metrics["util_gpu"].0;
        let filled = util.iter().filter(|v| v.is_finite()).count();
        assert!(
            filled + 12 >= rows,
            "GPU {i}: {filled} of {rows} rows have utilization"
        );
    }
}

#[test]
fn gpus_read_every_tick_wake_it_every_tick() {
    let r = record(&scenario(None), &run(false)).expect("records");
    let (woke, ticks) = wakeups(&r);
    // Ticks a busy machine made late are skipped, not counted in `ticks`.
    assert_eq!(woke, ticks);
}

#[test]
fn step_markers_coming_every_tick_keep_it_waking_every_tick() {
    // 20 ms steps: markers to fold on every tick.
    let steps = json!({"phases": [
        {"name": "data", "ms": 5, "levels": {"util_gpu": 10}},
        {"name": "compute", "ms": 15, "levels": {"util_gpu": 95}},
    ]});
    // At twice real time, so a tick is 50 ms of wall time: a trainer thread held off the
    // CPU by a busy machine for a whole tick leaves it without markers, and the sampler
    // sleeps through up to a second after it.
    let r = record(
        &scenario(Some(steps)),
        &Run {
            speed: 2.0,
            duration_s: Some(6.0),
            ..run(true)
        },
    )
    .expect("records");
    let (woke, ticks) = wakeups(&r);
    // Sleeping whenever nothing else is due: about one wake-up in five.
    assert!(
        woke * 3 >= ticks * 2,
        "{woke} wake-ups for {ticks} ticks with markers every tick"
    );
    assert!(
        r.steps.as_ref().is_some_and(|s| s.count > 100),
        "steps recorded"
    );
}
