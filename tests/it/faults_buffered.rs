//! The fault matrix in buffered mode (`RecorderConfig::nvml_samples`): the calls buffered
//! mode makes — the sample buffers, memory, the field batch and the slow reads, once a
//! second or every tick by the cadence — failing at scattered times. `faults.rs` injects the
//! same faults into per-tick reading.

use gpuwhy_tests::{record, Run};

use crate::fault_matrix::{
    assert_complete, assert_each_lost, error_windows, healthy_gpus, lost_faults,
};

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

/// Each call above answers GPU_IS_LOST on a GPU of its own: that GPU is found lost at its
/// next read (within a second), its rows stop there with a `gpu_lost` event naming the call
/// and the rows committed at its reads before stay; the others, and a GPU with no fault,
/// record to the end.
#[test]
fn gpu_is_lost_from_any_call_of_buffered_mode_stops_only_that_gpu() {
    let n = FUNCTIONS.len();
    let run = Run {
        duration_s: Some(8.0),
        speed: 4.0,
        nvml_samples: Some(true),
        ..Run::default()
    };
    let r = record(&healthy_gpus(n + 1, lost_faults(&FUNCTIONS, 2.5)), &run).expect("records");
    for (i, t) in assert_each_lost(&r, &FUNCTIONS, 2.5).iter().enumerate() {
        assert!(
            t.len() >= 15,
            "GPU {i}: {} rows kept before the loss",
            t.len()
        );
    }
    assert_eq!(
        r.devices[n].capabilities["util_gpu"].via.as_deref(),
        Some("nvmlDeviceGetSamples"),
        "read from the sample buffers"
    );
}

/// Every call above failing with every error in windows of 1.1 s on one GPU: a refused sample
/// type sends that GPU back to per-tick reads, a transient failure is a gap and a fault, and
/// either way the GPU keeps a row every tick with no zero for a failed read, and the other GPU
/// is untouched.
#[test]
fn every_call_of_buffered_mode_failing_with_every_error_leaves_a_complete_report() {
    // Each window is longer than a second so that it holds a read (a shorter one can fall
    // between two reads and meet no call at all).
    let run = Run {
        duration_s: Some(12.0),
        speed: 4.0,
        nvml_samples: Some(true),
        ..Run::default()
    };
    let r = record(&healthy_gpus(2, error_windows(&FUNCTIONS, 1.1)), &run).expect("records");
    assert_complete(&r, 3);
}
