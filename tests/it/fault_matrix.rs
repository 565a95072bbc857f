//! What the fault matrices of per-tick reading (`faults.rs`) and buffered mode
//! (`faults_buffered.rs`) share: the scenario, the error codes, where the faults go and what
//! every report must show whichever calls failed.

use gpuwhy::report::Report;
use gpuwhy_tests::scenario;
use serde_json::{json, Value};

/// NOT_SUPPORTED, NO_PERMISSION, TIMEOUT, UNKNOWN, DEPRECATED, FUNCTION_NOT_FOUND.
pub const CODES: [u32; 6] = [3, 4, 10, 999, 26, 13];

/// The bundled `healthy` scenario with `n` copies of its GPU and these `faults`.
pub fn healthy_gpus(n: usize, faults: Vec<Value>) -> String {
    let mut v: Value = serde_json::from_str(scenario("healthy").expect("bundled")).expect("json");
    let dev = v["devices"][0].clone();
    v["devices"] = Value::Array(vec![dev; n]);
    v["faults"] = Value::Array(faults);
    v.to_string()
}

/// Every function of `functions` failing on GPU 0 with every code of [`CODES`], each in a
/// window `width_s` long: scattered, deterministic windows from 1 s on, after every metric
/// was read once.
pub fn error_windows(functions: &[&str], width_s: f64) -> Vec<Value> {
    let mut faults = Vec::new();
    for (i, f) in functions.iter().enumerate() {
        for (j, code) in CODES.iter().enumerate() {
            let from = 1.0 + ((i * 7 + j * 5) % 16) as f64 * 0.5;
            faults.push(json!({"kind": "error", "device": 0, "function": f, "code": code, "from_s": from, "until_s": from + width_s}));
        }
    }
    faults
}

/// A report of [`error_windows`] on GPU 0 of two: GPU 0 keeps a row every tick (as many as
/// GPU 1, which kept its cadence), at least `listed` faults are listed on it and none on
/// GPU 1, the metrics that worked before stay on (a mid-run NOT_SUPPORTED is a gap),
/// utilization is recorded after the last window, and a failed read is never a zero.
pub fn assert_complete(r: &Report, listed: usize) {
    assert_eq!(r.devices.len(), 2);
    let (n0, n1) = (r.series[0].data.t.len(), r.series[1].data.t.len());
    assert!(n1 >= 100, "the healthy GPU kept its cadence: {n1} rows");
    assert_eq!(n0, n1, "the faulty GPU has a row every tick");
    let on_dev0: Vec<&str> = r
        .faults
        .iter()
        .filter(|f| f.device == Some(0))
        .map(|f| f.function.as_str())
        .collect();
    assert!(on_dev0.len() >= listed, "faults are listed: {on_dev0:?}");
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

/// The time from which function `i` of a GPU-lost matrix answers GPU_IS_LOST.
fn lost_from(first_s: f64, i: usize) -> f64 {
    first_s + i as f64 * 0.25
}

/// Each function of `functions` answering GPU_IS_LOST on a GPU of its own (GPU `i` for the
/// `i`th), from `first_s` on, a quarter of a second apart.
pub fn lost_faults(functions: &[&str], first_s: f64) -> Vec<Value> {
    functions
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let from = lost_from(first_s, i);
            json!({"kind": "error", "device": i, "function": f, "code": 15, "from_s": from})
        })
        .collect()
}

/// A report of [`lost_faults`] on one GPU per function and one more without faults: each
/// GPU is marked lost after its fault started and before the end, with a `gpu_lost` event
/// naming the call and no row after; the last GPU recorded to the end. Returns each lost
/// GPU's rows, for what a mode adds.
pub fn assert_each_lost<'r>(r: &'r Report, functions: &[&str], first_s: f64) -> Vec<&'r [f64]> {
    let n = functions.len();
    assert_eq!(r.devices.len(), n + 1);
    let end = r.run.duration_s;
    let mut rows = Vec::new();
    for (i, f) in functions.iter().enumerate() {
        let from = lost_from(first_s, i);
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
        rows.push(t.as_slice());
    }
    let healthy = &r.series[n].data.t;
    assert!(
        healthy.last().copied().unwrap_or(0.0) > end - 0.5,
        "the GPU without faults recorded to the end"
    );
    assert!(r.devices[n].lost_at_s.is_none());
    rows
}
