//! Buffered mode's adaptive cadence: a GPU reads its field batch every tick only in the
//! seconds after one that showed PCIe/NVLink traffic or a clock slowdown, once a second
//! otherwise, with power from the driver's power samples (docs/nvml-loading.md, "Buffered
//! mode").

use gpuwhy::report::Report;
use gpuwhy_tests::{record, Run};
use serde_json::{json, Value};

/// One H100 at 90 % whose PCIe receive traffic plays `phases` ([ms, KB/s] each) over and
/// over.
fn traffic(phases: &[(u32, u32)], duration_s: f64) -> String {
    let phases: Vec<Value> = phases
        .iter()
        .enumerate()
        .map(|(i, (ms, kbs))| json!({"name": format!("p{i}"), "ms": ms, "levels": {"util_gpu": 90, "pcie_rx_kbs": kbs}}))
        .collect();
    json!({
        "demo": {"duration_s": duration_s, "interval_ms": 100},
        "workload": {"phases": phases},
        "devices": [{"preset": "H100-SXM5-80GB"}],
    })
    .to_string()
}

/// 150 ms at 40 GB/s every 500 ms: bursts a once-a-second average would hide.
const BURSTS: [(u32, u32); 2] = [(150, 40_000_000), (350, 0)];
/// No traffic.
const QUIET: [(u32, u32); 1] = [(500, 0)];
/// 20 GB/s throughout.
const STEADY: [(u32, u32); 1] = [(500, 20_000_000)];

fn buffered() -> Run {
    Run {
        nvml_samples: Some(true),
        ..Run::default()
    }
}

/// NVML calls per GPU per tick.
fn calls_per_tick(r: &Report) -> f64 {
    r.overhead.nvml_calls as f64 / (r.overhead.ticks.max(1) as f64 * r.devices.len() as f64)
}

/// (time, value) of `metric`'s rows on GPU 0.
fn rows(r: &Report, metric: &str) -> Vec<(f64, f32)> {
    let d = &r.series[0].data;
    let v = &d.metrics[metric].0;
    d.t.iter().copied().zip(v.iter().copied()).collect()
}

#[test]
fn quiet_or_steady_links_are_read_once_a_second_and_bursts_every_tick() {
    let run = |p: &[(u32, u32)]| record(&traffic(p, 10.0), &buffered()).expect("records");
    let (quiet, steady, bursts) = (run(&QUIET), run(&STEADY), run(&BURSTS));
    let (q, s, b) = (
        calls_per_tick(&quiet),
        calls_per_tick(&steady),
        calls_per_tick(&bursts),
    );
    // Read once: no call between reads. Every tick: the field batch as well, 9 more calls a
    // second less the power samples' read.
    assert!(
        b > q + 0.5,
        "bursts {b} vs quiet {q} calls per GPU per tick"
    );
    assert!(
        b > s + 0.5,
        "bursts {b} vs steady {s} calls per GPU per tick"
    );
    // Every row has power, from the power samples in the seconds read once.
    for r in [&quiet, &steady] {
        let power = rows(r, "power");
        let gaps = power.iter().filter(|p| p.1.is_nan()).count();
        assert!(gaps <= 1, "{gaps} rows without power");
        assert_eq!(
            r.devices[0].capabilities["power"].via.as_deref(),
            Some("nvmlDeviceGetSamples")
        );
    }
    assert_eq!(
        bursts.devices[0].capabilities["power"].via.as_deref(),
        Some("nvmlDeviceGetFieldValues")
    );
    // Steady traffic read once keeps its level in every row.
    let pcie: Vec<f32> = rows(&steady, "pcie_rx")
        .into_iter()
        .skip(20)
        .map(|x| x.1)
        .collect();
    assert!(
        pcie.iter().all(|v| (*v - 20_480.0).abs() < 1_000.0),
        "{pcie:?}"
    );
}

#[test]
fn bursts_switch_to_every_tick_and_quiet_back_to_once() {
    // 4 s of bursts, then 4 s without traffic, twice.
    let mut cycle: Vec<(u32, u32)> = BURSTS.repeat(8);
    cycle.push((4_000, 0));
    let r = record(&traffic(&cycle, 16.0), &buffered()).expect("records");
    let pcie = rows(&r, "pcie_rx");
    // Bursts read every tick show in rows above the 12 GB/s a second's average gives, in
    // each burst stretch (its first second, read once after a quiet stretch, excepted).
    for start in [0.0, 8.0] {
        let peaks = pcie
            .iter()
            .filter(|(t, v)| (start + 1.5..start + 4.0).contains(t) && *v > 20_000.0)
            .count();
        assert!(peaks >= 3, "{peaks} burst rows from {start} s: {pcie:?}");
    }
    // The quiet stretches hold no traffic.
    for (t, v) in &pcie {
        if (5.5..7.9).contains(&t.rem_euclid(8.0)) {
            assert!(*v < 1.0, "quiet at {t} s: {v} MB/s");
        }
    }
    let c = calls_per_tick(&r);
    let run = |p: &[(u32, u32)]| record(&traffic(p, 16.0), &buffered()).expect("records");
    let (q, b) = (calls_per_tick(&run(&QUIET)), calls_per_tick(&run(&BURSTS)));
    assert!(
        q + 0.2 < c && c + 0.2 < b,
        "quiet {q} < mixed {c} < bursts {b}"
    );
}
