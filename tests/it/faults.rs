//! The fault matrix: NVML functions failing with each plausible error at scattered times,
//! and slow calls. The recording goes on, the other GPU is untouched, faults are listed.

use gpuwhy_tests::{record, scenario, Run};
use serde_json::{json, Value};

/// Per-device functions gpuwhy's sampler calls every tick or every second on a GPU that
/// answers field values (power and PCIe throughput come through `nvmlDeviceGetFieldValues`
/// there; their single calls are the fallback, tested in `field_batch`).
const FUNCTIONS: [&str; 8] = [
    "nvmlDeviceGetUtilizationRates",
    "nvmlDeviceGetMemoryInfo_v2",
    "nvmlDeviceGetClockInfo",
    "nvmlDeviceGetPerformanceState",
    "nvmlDeviceGetCurrentClocksEventReasons",
    "nvmlDeviceGetCurrPcieLinkGeneration",
    "nvmlDeviceGetCurrPcieLinkWidth",
    "nvmlDeviceGetFieldValues",
];

/// NOT_SUPPORTED, NO_PERMISSION, TIMEOUT, UNKNOWN, DEPRECATED, FUNCTION_NOT_FOUND.
const CODES: [u32; 6] = [3, 4, 10, 999, 26, 13];

/// Per-tick reading (`RecorderConfig::nvml_samples` off): these tests inject faults into, or
/// count, the calls made every tick, which buffered mode does not make. Buffered mode's own
/// faults (`nvmlDeviceGetSamples` failing, a GPU lost between reads) are tested in
/// `samples.rs`.
fn per_tick() -> Run {
    Run {
        nvml_samples: Some(false),
        ..Run::default()
    }
}

/// The bundled `healthy` scenario with `n` copies of its GPU and these `faults`.
fn healthy_gpus(n: usize, faults: Vec<Value>) -> String {
    let mut v: Value = serde_json::from_str(scenario("healthy").expect("bundled")).expect("json");
    let dev = v["devices"][0].clone();
    v["devices"] = Value::Array(vec![dev; n]);
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
        &healthy_gpus(2, faults),
        &Run {
            duration_s: Some(12.0),
            speed: 4.0,
            ..per_tick()
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
        json!({"kind": "latency", "device": 0, "function": "nvmlDeviceGetUtilizationRates", "ms": 300, "from_s": 1.0, "until_s": 3.0}),
    ];
    let r = record(
        &healthy_gpus(2, faults),
        &Run {
            duration_s: Some(6.0),
            speed: 1.0,
            ..per_tick()
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
        Some("nvmlDeviceGetUtilizationRates")
    );
    let t = &r.series[1].data.t;
    assert!(
        t.last().copied().unwrap_or(0.0) > 5.0,
        "recording went on to the end"
    );
}

/// The functions above each answer GPU_IS_LOST on a GPU of their own, at scattered times:
/// that GPU's series stop there with a `gpu_lost` event naming the call, and the others
/// (and a GPU with no fault) keep recording to the end.
#[test]
fn gpu_is_lost_from_any_function_stops_only_that_gpu() {
    let n = FUNCTIONS.len();
    let faults = FUNCTIONS
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let from = 1.5 + i as f64 * 0.25;
            json!({"kind": "error", "device": i, "function": f, "code": 15, "from_s": from})
        })
        .collect();
    let r = record(
        &healthy_gpus(n + 1, faults),
        &Run {
            duration_s: Some(8.0),
            speed: 4.0,
            ..per_tick()
        },
    )
    .expect("records");
    assert_eq!(r.devices.len(), n + 1);
    let end = r.run.duration_s;
    for (i, f) in FUNCTIONS.iter().enumerate() {
        let lost = r.devices[i]
            .lost_at_s
            .unwrap_or_else(|| panic!("GPU {i} ({f} answering GPU_IS_LOST) is marked lost"));
        assert!(lost >= 1.5 && lost < end, "GPU {i} lost at {lost} s");
        let ev = r
            .events
            .iter()
            .find(|e| e.kind == "gpu_lost" && e.device == Some(i as u32))
            .unwrap_or_else(|| panic!("a gpu_lost event for GPU {i}"));
        assert!(ev.detail.contains(f), "the event names {f}: {}", ev.detail);
        let last = r.series[i].data.t.last().copied().unwrap_or(0.0);
        assert!(last <= lost, "GPU {i}: no sample after it was lost");
    }
    let healthy = &r.series[n].data.t;
    assert!(
        healthy.last().copied().unwrap_or(0.0) > end - 0.5,
        "the GPU without faults recorded to the end"
    );
    assert!(r.devices[n].lost_at_s.is_none());
}

/// A GPU removed mid-run (the device count drops from 3 to 2, and the GPU after it moves
/// down one index): the recorder keeps the handles it took at the start, so the removed
/// GPU is reported lost at its time and the others keep recording under their own indices.
#[test]
fn a_gpu_removed_mid_run_is_reported_and_the_others_keep_recording() {
    let faults = vec![json!({"kind": "gpu_removed", "device": 1, "at_s": 3.0})];
    let r = record(
        &healthy_gpus(3, faults),
        &Run {
            duration_s: Some(8.0),
            speed: 4.0,
            ..per_tick()
        },
    )
    .expect("records");
    assert_eq!(
        r.devices.len(),
        3,
        "every GPU listed at the start is reported"
    );
    let lost = r.devices[1]
        .lost_at_s
        .expect("the removed GPU is marked lost");
    assert!((3.0..4.5).contains(&lost), "lost at {lost} s");
    assert!(r
        .events
        .iter()
        .any(|e| e.kind == "gpu_lost" && e.device == Some(1)));
    assert!(
        r.events.iter().all(|e| e.kind != "xid"),
        "a removal raises no XID: {:?}",
        r.events
    );
    let end = r.run.duration_s;
    for i in [0usize, 2] {
        assert_eq!(r.devices[i].index, i as u32, "GPU {i} keeps its index");
        assert!(r.devices[i].lost_at_s.is_none(), "GPU {i} is not lost");
        let t = &r.series[i].data.t;
        assert!(
            t.last().copied().unwrap_or(0.0) > end - 0.5,
            "GPU {i} recorded to the end"
        );
        assert!(
            t.len() >= 60,
            "GPU {i} kept its cadence: {} samples",
            t.len()
        );
    }
    assert_eq!(r.series[0].data.t.len(), r.series[2].data.t.len());
    // The report is written with the loss in it, and reads back.
    let text = r.to_json();
    let back = gpuwhy::report::Report::from_slice(text.as_bytes(), std::path::Path::new("r.json"))
        .expect("reads back");
    assert_eq!(back.devices[1].lost_at_s, Some(lost));
}

/// Functions gpuwhy calls once per GPU when it opens it (static facts, GPM and event
/// support), and the system-wide ones (versions, the XID event set).
const OPEN_FUNCTIONS: [&str; 13] = [
    "nvmlDeviceGetName",
    "nvmlDeviceGetUUID",
    "nvmlDeviceGetPciInfo_v3",
    "nvmlDeviceGetArchitecture",
    "nvmlDeviceGetCudaComputeCapability",
    "nvmlDeviceGetEnforcedPowerLimit",
    "nvmlDeviceGetMaxClockInfo",
    "nvmlDeviceGetMaxPcieLinkGeneration",
    "nvmlDeviceGetMaxPcieLinkWidth",
    "nvmlDeviceGetTemperatureThreshold",
    "nvmlDeviceGetSupportedEventTypes",
    "nvmlDeviceRegisterEvents",
    "nvmlGpmQueryDeviceSupport",
];
const SYSTEM_FUNCTIONS: [&str; 5] = [
    "nvmlSystemGetDriverVersion",
    "nvmlSystemGetNVMLVersion",
    "nvmlSystemGetCudaDriverVersion_v2",
    "nvmlEventSetCreate",
    "nvmlEventSetWait_v2",
];

/// Every call made when the GPUs are opened failing from the start, with each error in
/// turn (GPU_IS_LOST included): GPU 0's facts calls fail, GPU 1 cannot even be opened
/// (unless the error sends gpuwhy to an older symbol), the system calls fail. The run still
/// records GPU 0's samples and the untouched GPU 2, lists GPU 1 with the reason, and the
/// report is written. (The facts calls that failed are not listed as faults: the facts are
/// simply absent.)
#[test]
fn open_time_and_system_calls_failing_from_the_start_leave_a_report() {
    for code in CODES.iter().chain(&[15]) {
        let mut faults: Vec<Value> = OPEN_FUNCTIONS
            .iter()
            .map(|f| json!({"kind": "error", "device": 0, "function": f, "code": code}))
            .collect();
        faults.push(json!({"kind": "error", "device": 1, "function": "nvmlDeviceGetHandleByIndex_v2", "code": code}));
        faults.extend(
            SYSTEM_FUNCTIONS
                .iter()
                .map(|f| json!({"kind": "error", "function": f, "code": code})),
        );
        let r = record(
            &healthy_gpus(3, faults),
            &Run {
                duration_s: Some(4.0),
                speed: 4.0,
                ..per_tick()
            },
        )
        .unwrap_or_else(|e| panic!("code {code}: the recording starts: {e}"));
        assert_eq!(r.devices.len(), 3, "code {code}: every GPU is listed");
        let n0 = r.series[0].data.t.len();
        let n2 = r.series.last().map_or(0, |s| s.data.t.len());
        if [13, 26].contains(code) {
            // FUNCTION_NOT_FOUND and DEPRECATED send the binding to the older symbol,
            // which is not faulted: GPU 1 opens through it and records.
            let sym = r
                .nvml
                .as_ref()
                .map(|n| &n.symbols["nvmlDeviceGetHandleByIndex"]);
            assert_eq!(
                sym,
                Some(&Some("nvmlDeviceGetHandleByIndex".to_string())),
                "code {code}: fell back"
            );
            assert_eq!(r.series[1].data.t.len(), n2, "code {code}: GPU 1 records");
        } else {
            let why = r.devices[1].capabilities["util_gpu"].reason.as_deref();
            assert!(
                why.is_some_and(|w| w.contains("device handle unavailable")),
                "code {code}: GPU 1 says why it has no data: {why:?}"
            );
        }
        assert!(
            r.devices[0].name.is_none(),
            "code {code}: GPU 0's name failed"
        );
        assert!(
            n2 >= 30,
            "code {code}: GPU 2 kept its cadence: {n2} samples"
        );
        assert_eq!(n0, n2, "code {code}: GPU 0 is still sampled");
        assert!(r.devices[2].lost_at_s.is_none() && r.devices[2].name.is_some());
        let text = r.to_json();
        gpuwhy::report::Report::from_slice(text.as_bytes(), std::path::Path::new("r.json"))
            .unwrap_or_else(|e| panic!("code {code}: the report reads back: {e}"));
    }
}

#[test]
fn calls_failing_while_the_gpus_are_opened_are_listed_as_faults() {
    // Whole-run windows: these calls are made once, when the GPUs are opened.
    let faults = vec![
        json!({"kind": "error", "device": 0, "function": "nvmlDeviceGetName", "code": 999, "from_s": 0.0, "until_s": 1000.0}),
        json!({"kind": "error", "device": 0, "function": "nvmlDeviceGetEnforcedPowerLimit", "code": 10, "from_s": 0.0, "until_s": 1000.0}),
        // "Not supported here" is a missing fact, not a fault.
        json!({"kind": "error", "device": 1, "function": "nvmlDeviceGetUUID", "code": 3, "from_s": 0.0, "until_s": 1000.0}),
        json!({"kind": "error", "device": 2, "function": "nvmlDeviceGetHandleByIndex_v2", "code": 999, "from_s": 0.0, "until_s": 1000.0}),
    ];
    let r = record(
        &healthy_gpus(3, faults),
        &Run {
            duration_s: Some(2.0),
            speed: 4.0,
            ..per_tick()
        },
    )
    .expect("records");
    let listed: Vec<(Option<u32>, &str, u32, u64)> = r
        .faults
        .iter()
        .map(|f| (f.device, f.function.as_str(), f.code, f.count))
        .collect();
    for want in [
        (Some(0), "nvmlDeviceGetName", 999, 1),
        (Some(0), "nvmlDeviceGetEnforcedPowerLimit", 10, 1),
        (Some(2), "nvmlDeviceGetHandleByIndex_v2", 999, 1),
    ] {
        assert!(listed.contains(&want), "{want:?} in {listed:?}");
    }
    assert!(
        listed.iter().all(|f| f.0 != Some(1)),
        "NOT_SUPPORTED is no fault: {listed:?}"
    );
    assert_eq!(r.devices.len(), 3);
    assert_eq!(r.devices[0].name, None);
    assert_eq!(r.devices[0].power_limit_w, None);
    assert!(r.devices[1].name.is_some() && r.devices[1].uuid.is_none());
    assert!(!r.devices[2].capabilities["util_gpu"].available);
    // The GPUs that opened are sampled as usual.
    assert!(r.series.iter().filter(|s| !s.data.t.is_empty()).count() >= 2);
}
