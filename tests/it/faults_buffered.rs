//! The fault matrix in buffered mode (`RecorderConfig::nvml_samples`): the calls buffered
//! mode makes — the sample buffers, memory, the field batch and the slow reads, once a
//! second or every tick by the cadence — failing at scattered times. `faults.rs` injects the
//! same faults into per-tick reading.

use gpuwhy_tests::{record, scenario, Run};
use serde_json::{json, Value};

/// The per-device functions a buffered GPU calls on its read tick (and the field batch on
/// the ticks between, in a second read every tick).
const FUNCTIONS: [&str; 8] = [
    "nvmlDeviceGetSamples",
    "nvmlDeviceGetMemoryInfo_v2",
    "nvmlDeviceGetClockInfo",
    "nvmlDeviceGetPerformanceState",
    "nvmlDeviceGetCurrentClocksEventReasons",
    "nvmlDeviceGetCurrPcieLinkGeneration",
    "nvmlDeviceGetCurrPcieLinkWidth",
    "nvmlDeviceGetFieldValues",
];

/// The bundled `healthy` scenario with `n` copies of its GPU and these `faults`.
fn healthy_gpus(n: usize, faults: Vec<Value>) -> String {
    let mut v: Value = serde_json::from_str(scenario("healthy").expect("bundled")).expect("json");
    let dev = v["devices"][0].clone();
    v["devices"] = Value::Array(vec![dev; n]);
    v["faults"] = Value::Array(faults);
    v.to_string()
}

/// Each call above answers GPU_IS_LOST on a GPU of its own: that GPU is found lost at its
/// next read (within a second), its rows stop there with a `gpu_lost` event naming the call
/// and the rows committed at its reads before stay; the others, and a GPU with no fault,
/// record to the end.
#[test]
fn gpu_is_lost_from_any_call_of_buffered_mode_stops_only_that_gpu() {
    let n = FUNCTIONS.len();
    let faults = FUNCTIONS
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let from = 2.5 + i as f64 * 0.25;
            json!({"kind": "error", "device": i, "function": f, "code": 15, "from_s": from})
        })
        .collect();
    let run = Run {
        duration_s: Some(8.0),
        speed: 4.0,
        nvml_samples: Some(true),
        ..Run::default()
    };
    let r = record(&healthy_gpus(n + 1, faults), &run).expect("records");
    let end = r.run.duration_s;
    for (i, f) in FUNCTIONS.iter().enumerate() {
        let from = 2.5 + i as f64 * 0.25;
        let lost = r.devices[i]
            .lost_at_s
            .unwrap_or_else(|| panic!("GPU {i} ({f} answering GPU_IS_LOST) is marked lost"));
        assert!(lost >= from - 0.1 && lost < end, "GPU {i} lost at {lost} s");
        let ev = r
            .events
            .iter()
            .find(|e| e.kind == "gpu_lost" && e.device == Some(i as u32))
            .unwrap_or_else(|| panic!("a gpu_lost event for GPU {i}"));
        assert!(ev.detail.contains(f), "the event names {f}: {}", ev.detail);
        let t = &r.series[i].data.t;
        let last = t.last().copied().unwrap_or(0.0);
        assert!(last <= lost, "GPU {i}: no row after it was lost");
        assert!(
            t.len() >= 15,
            "GPU {i}: {} rows kept before the loss",
            t.len()
        );
    }
    let healthy = &r.series[n].data.t;
    assert!(
        healthy.last().copied().unwrap_or(0.0) > end - 0.5,
        "the GPU without faults recorded to the end"
    );
    assert!(r.devices[n].lost_at_s.is_none());
    assert_eq!(
        r.devices[n].capabilities["util_gpu"].via.as_deref(),
        Some("nvmlDeviceGetSamples"),
        "read from the sample buffers"
    );
}

/// NOT_SUPPORTED, NO_PERMISSION, TIMEOUT, UNKNOWN, DEPRECATED, FUNCTION_NOT_FOUND.
const CODES: [u32; 6] = [3, 4, 10, 999, 26, 13];

/// Every call above failing with every error in short windows on one GPU: a refused sample
/// type sends that GPU back to per-tick reads, a transient failure is a gap and a fault, and
/// either way the GPU keeps a row every tick with no zero for a failed read, and the other GPU
/// is untouched.
#[test]
fn every_call_of_buffered_mode_failing_with_every_error_leaves_a_complete_report() {
    let mut faults = Vec::new();
    for (i, f) in FUNCTIONS.iter().enumerate() {
        for (j, code) in CODES.iter().enumerate() {
            // Scattered, deterministic windows from 1 s on, after every metric was read once,
            // each longer than a second so that it holds a read (a shorter one can fall
            // between two reads and meet no call at all).
            let from = 1.0 + ((i * 7 + j * 5) % 16) as f64 * 0.5;
            faults.push(json!({"kind": "error", "device": 0, "function": f, "code": code, "from_s": from, "until_s": from + 1.1}));
        }
    }
    let run = Run {
        duration_s: Some(12.0),
        speed: 4.0,
        nvml_samples: Some(true),
        ..Run::default()
    };
    let r = record(&healthy_gpus(2, faults), &run).expect("records");
    let (n0, n1) = (r.series[0].data.t.len(), r.series[1].data.t.len());
    assert!(n1 >= 100, "the healthy GPU kept its cadence: {n1} rows");
    assert_eq!(n0, n1, "the faulty GPU has a row every tick");
    let on_dev0 = r.faults.iter().filter(|f| f.device == Some(0)).count();
    assert!(on_dev0 >= 3, "faults are listed: {:?}", r.faults);
    assert!(
        r.faults.iter().all(|f| f.device != Some(1)),
        "GPU 1 had no faults: {:?}",
        r.faults
    );
    for m in ["util_gpu", "power", "sm_clock", "temp"] {
        let c = &r.devices[0].capabilities[m];
        assert!(c.available, "{m}: {c:?}");
    }
    let util = &r.series[0].data.metrics["util_gpu"].0;
    assert!(
        util[util.len() - 10..].iter().all(|v| !v.is_nan()),
        "util_gpu recorded after the last fault window"
    );
    assert!(!util.contains(&0.0), "never a zero for a failed read");
}
