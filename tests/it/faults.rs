//! The fault matrix: NVML functions failing with each plausible error at scattered times,
//! and slow calls. The recording goes on, the other GPU is untouched, faults are listed.

use gpuwhy_tests::{record, scenario, Run};
use serde_json::{json, Value};

/// Per-device functions gpuwhy's sampler calls every tick or every second.
const FUNCTIONS: [&str; 11] = [
    "nvmlDeviceGetUtilizationRates",
    "nvmlDeviceGetMemoryInfo_v2",
    "nvmlDeviceGetPowerUsage",
    "nvmlDeviceGetClockInfo",
    "nvmlDeviceGetPerformanceState",
    "nvmlDeviceGetCurrentClocksEventReasons",
    "nvmlDeviceGetTemperatureV",
    "nvmlDeviceGetCurrPcieLinkGeneration",
    "nvmlDeviceGetCurrPcieLinkWidth",
    "nvmlDeviceGetPcieThroughput",
    "nvmlDeviceGetFieldValues",
];

/// NOT_SUPPORTED, NO_PERMISSION, TIMEOUT, UNKNOWN, DEPRECATED, FUNCTION_NOT_FOUND.
const CODES: [u32; 6] = [3, 4, 10, 999, 26, 13];

fn two_gpus(faults: Vec<Value>) -> String {
    let mut v: Value = serde_json::from_str(scenario("healthy").expect("bundled")).expect("json");
    let dev = v["devices"][0].clone();
    v["devices"] = json!([dev.clone(), dev]);
    v["faults"] = Value::Array(faults);
    v.to_string()
}

#[test]
fn every_function_failing_with_every_error_leaves_a_complete_report() {
    let mut faults = Vec::new();
    for (i, f) in FUNCTIONS.iter().enumerate() {
        for (j, code) in CODES.iter().enumerate() {
            // Scattered, deterministic windows from 1 s on, after every metric was read once.
            let from = 1.0 + ((i * 7 + j * 5) % 16) as f64 * 0.5;
            faults.push(json!({"kind": "error", "device": 0, "function": f, "code": code, "from_s": from, "until_s": from + 0.4}));
        }
    }
    let r = record(
        &two_gpus(faults),
        &Run {
            duration_s: Some(12.0),
            speed: 4.0,
            ..Run::default()
        },
    )
    .expect("records");
    assert_eq!(r.devices.len(), 2);
    let n0 = r.series[0].data.t.len();
    let n1 = r.series[1].data.t.len();
    assert!(n1 >= 100, "the healthy GPU kept its cadence: {n1} samples");
    assert_eq!(
        n0, n1,
        "the faulty GPU has a row every tick, with gaps where calls failed"
    );
    let on_dev0: Vec<&str> = r
        .faults
        .iter()
        .filter(|f| f.device == Some(0))
        .map(|f| f.function.as_str())
        .collect();
    assert!(on_dev0.len() >= 6, "faults are listed: {on_dev0:?}");
    assert!(
        r.faults.iter().all(|f| f.device != Some(1)),
        "GPU 1 had no faults: {:?}",
        r.faults
    );
    // Metrics that worked before the faults stay on: a mid-run NOT_SUPPORTED is a gap.
    for m in ["util_gpu", "power", "sm_clock", "temp"] {
        assert!(
            r.devices[0].capabilities[m].available,
            "{m}: {:?}",
            r.devices[0].capabilities[m]
        );
    }
    let util = &r.series[0].data.metrics["util_gpu"].0;
    assert!(
        util[util.len() - 10..].iter().all(|v| !v.is_nan()),
        "util_gpu recorded after the last fault window"
    );
    assert!(
        util.iter().any(|v| v.is_nan()),
        "failed calls are gaps, not zeros"
    );
    assert!(!util.contains(&0.0), "never a zero for a failed read");
}

#[test]
fn slow_calls_are_survived_and_the_missed_cadence_is_recorded() {
    let faults = vec![
        json!({"kind": "latency", "device": 0, "function": "nvmlDeviceGetPowerUsage", "ms": 300, "from_s": 1.0, "until_s": 3.0}),
    ];
    let r = record(
        &two_gpus(faults),
        &Run {
            duration_s: Some(6.0),
            speed: 1.0,
            ..Run::default()
        },
    )
    .expect("records");
    assert!(
        r.overhead.late_ticks > 0,
        "late ticks counted: {:?}",
        r.overhead
    );
    assert!(
        r.overhead.nvml_call_max_us >= 250_000.0,
        "the slow call shows: {}",
        r.overhead.nvml_call_max_us
    );
    assert_eq!(
        r.overhead.nvml_call_max_function.as_deref(),
        Some("nvmlDeviceGetPowerUsage")
    );
    let t = &r.series[1].data.t;
    assert!(
        t.last().copied().unwrap_or(0.0) > 5.0,
        "recording went on to the end"
    );
}
