//! Power, temperature, the PCIe and NVLink byte counters and the clock-event counters through
//! one `nvmlDeviceGetFieldValues` call per tick, each falling back to its own call when its field
//! is not answered; the report says which path each metric took.

use gpuwhy::report::Report;
use gpuwhy_tests::{patched, record, Run};
use serde_json::{json, Value};

/// Per-tick reading (`RecorderConfig::nvml_samples` off): these tests read the field batch every
/// tick and count its calls, which buffered mode does not make (its calls are counted in
/// `samples.rs` and `samples_cadence.rs`).
fn per_tick() -> Run {
    Run {
        nvml_samples: Some(false),
        ..Run::default()
    }
}

/// One H100 moving a steady 2,000,000 KB/s in and 500,000 KB/s out over PCIe.
fn steady_pcie(faults: Value) -> String {
    let base = json!({
        "devices": [{"metrics": {
            "util_gpu": {"constant": 90},
            "pcie_rx_kbs": {"constant": 2000000},
            "pcie_tx_kbs": {"constant": 500000}
        }}],
        "demo": {"duration_s": 4}
    });
    patched(&base.to_string(), &[("faults", faults)])
}

fn via(r: &Report, metric: &str) -> Option<String> {
    r.devices[0].capabilities[metric].via.clone()
}

fn median(r: &Report, metric: &str) -> f32 {
    let mut v: Vec<f32> = r.series[0].data.metrics[metric].present().collect();
    assert!(!v.is_empty(), "{metric} has values");
    v.sort_by(f32::total_cmp);
    v[v.len() / 2]
}

#[test]
fn batched_metrics_come_from_the_field_call_and_each_metric_names_its_function() {
    let r = record(&steady_pcie(json!([])), &per_tick()).expect("records");
    for m in ["temp", "power", "pcie_rx", "pcie_tx"] {
        assert_eq!(
            via(&r, m).as_deref(),
            Some("nvmlDeviceGetFieldValues"),
            "{m}"
        );
    }
    assert_eq!(
        via(&r, "util_gpu").as_deref(),
        Some("nvmlDeviceGetUtilizationRates")
    );
    // The byte counters' rate: 2,000,000 KB/s × 1024 bytes = 2048 MB/s; 500,000 KB/s = 512 MB/s.
    assert!(
        (median(&r, "pcie_rx") - 2048.0).abs() < 2.0,
        "{}",
        median(&r, "pcie_rx")
    );
    assert!(
        (median(&r, "pcie_tx") - 512.0).abs() < 1.0,
        "{}",
        median(&r, "pcie_tx")
    );
    // Counters give a rate on every tick after the first, not only on the slow ones.
    let rates = r.series[0].data.metrics["pcie_rx"].present().count();
    let ticks = r.series[0].data.metrics["util_gpu"].present().count();
    assert!(rates + 1 >= ticks, "{rates} rates in {ticks} ticks");
}

#[test]
fn without_field_values_each_metric_falls_back_to_its_own_call() {
    let refused = json!([{"kind": "error", "function": "nvmlDeviceGetFieldValues", "code": 3}]);
    let r = record(&steady_pcie(refused), &per_tick()).expect("records");
    assert_eq!(via(&r, "temp").as_deref(), Some("nvmlDeviceGetTemperature"));
    assert_eq!(via(&r, "power").as_deref(), Some("nvmlDeviceGetPowerUsage"));
    assert_eq!(
        via(&r, "pcie_rx").as_deref(),
        Some("nvmlDeviceGetPcieThroughput")
    );
    assert_eq!(
        via(&r, "clock_reasons").as_deref(),
        Some("nvmlDeviceGetCurrentClocksEventReasons"),
        "without counters the mask is read every tick"
    );
    assert!(
        (median(&r, "pcie_rx") - 2048.0).abs() < 2.0,
        "{}",
        median(&r, "pcie_rx")
    );
    // The refusal is remembered: the field call is not repeated every tick.
    let fields_first = record(&steady_pcie(json!([])), &per_tick()).expect("records");
    let per_tick = |r: &Report| r.overhead.nvml_calls as f64 / r.overhead.ticks.max(1) as f64;
    assert!(
        per_tick(&r) > per_tick(&fields_first),
        "refused {} vs batched {} calls per tick",
        per_tick(&r),
        per_tick(&fields_first)
    );
}

#[test]
fn a_gpu_that_refuses_one_field_reads_only_that_metric_by_its_own_call() {
    // A device whose power call is unsupported refuses field 186 too (the simulator keeps
    // them alike): power is unavailable, the other fields still come batched.
    let base = json!({
        "devices": [{"unsupported": ["nvmlDeviceGetPowerUsage"], "metrics": {"util_gpu": {"constant": 90}}}],
        "demo": {"duration_s": 3}
    });
    let r = record(&base.to_string(), &per_tick()).expect("records");
    let cap = &r.devices[0].capabilities["power"];
    assert!(!cap.available, "{cap:?}");
    assert!(
        cap.reason
            .as_deref()
            .unwrap_or("")
            .contains("nvmlDeviceGetPowerUsage"),
        "the single call's refusal is the reason: {cap:?}"
    );
    assert_eq!(via(&r, "temp").as_deref(), Some("nvmlDeviceGetFieldValues"));
}

#[test]
fn clock_event_reasons_come_from_the_policy_counters_with_the_mask_held_between_reads() {
    // Power cap (0x4, counted by field 74) and hardware slowdown (0x8, which no stable field
    // counts, so it comes from the mask read once a second) the whole run.
    let base = json!({
        "devices": [{"metrics": {
            "util_gpu": {"constant": 90},
            "clock_event_reasons": {"constant": 12}
        }}],
        "demo": {"duration_s": 4}
    });
    let r = record(&base.to_string(), &per_tick()).expect("records");
    assert_eq!(
        via(&r, "clock_reasons").as_deref(),
        Some("nvmlDeviceGetFieldValues")
    );
    let reasons: Vec<f32> = r.series[0].data.metrics["clock_reasons"]
        .present()
        .collect();
    let ticks = r.series[0].data.metrics["util_gpu"].present().count();
    assert!(
        reasons.len() + 1 >= ticks,
        "{} readings in {ticks} ticks",
        reasons.len()
    );
    assert!(
        reasons.iter().all(|b| *b == 12.0),
        "counted and held bits together on every tick: {reasons:?}"
    );
}
