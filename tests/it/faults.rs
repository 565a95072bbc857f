//! The fault matrix: NVML functions failing with each plausible error at scattered times,
//! and slow calls. The recording goes on, the other GPU is untouched, faults are listed.

use gpuwhy_tests::{record, Run};
use serde_json::{json, Value};

use crate::fault_matrix::{
    assert_complete, assert_each_lost, error_windows, healthy_gpus, lost_faults, CODES,
};

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

/// Every function above failing with every error in windows of 0.4 s on one GPU: each
/// failed call is a gap in a row every tick, and the other GPU is untouched.
#[test]
fn every_function_failing_with_every_error_leaves_a_complete_report() {
    let r = record(
        &healthy_gpus(2, error_windows(&FUNCTIONS, 0.4)),
        &Run {
            duration_s: Some(12.0),
            speed: 4.0,
            ..per_tick()
        },
    )
    .expect("records");
    assert_complete(&r, 6);
    let util = &r.series[0].data.metrics["util_gpu"].0;
    assert!(
        util.iter().any(|v| v.is_nan()),
        "failed calls are gaps, not zeros"
    );
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
    let r = record(
        &healthy_gpus(FUNCTIONS.len() + 1, lost_faults(&FUNCTIONS, 1.5)),
        &Run {
            duration_s: Some(8.0),
            speed: 4.0,
            ..per_tick()
        },
    )
    .expect("records");
    assert_each_lost(&r, &FUNCTIONS, 1.5);
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
const OPEN_FUNCTIONS: [&str; 14] = [
    "nvmlDeviceGetName",
    "nvmlDeviceGetUUID",
    "nvmlDeviceGetPciInfo_v3",
    "nvmlDeviceGetArchitecture",
    "nvmlDeviceGetCudaComputeCapability",
    "nvmlDeviceGetEnforcedPowerLimit",
    "nvmlDeviceGetMaxClockInfo",
    "nvmlDeviceGetMaxPcieLinkGeneration",
    "nvmlDeviceGetMaxPcieLinkWidth",
    "nvmlDeviceGetGpuMaxPcieLinkGeneration",
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
