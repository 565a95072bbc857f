//! GPM through the ABI: support query, samples, interval means, the `numMetrics` bound.

use super::*;
use crate::exports::gpm::*;

const GPM: &str = r#"{
  "devices": [
    {"metrics": {"util_gpu": {"square": {"period_s": 1, "duty": 0.5, "high": 100, "low": 0}},
                 "gpm_sm_util": {"steps": [[0, 20], [5, 80]]}}},
    {"preset": "A100-SXM4-80GB"}
  ]
}"#;

fn sample() -> NvmlGpmSample {
    let mut s: NvmlGpmSample = std::ptr::null_mut();
    // SAFETY: valid out pointer.
    assert_eq!(unsafe { nvmlGpmSampleAlloc(&mut s) }, SUCCESS);
    s
}

fn request(s1: NvmlGpmSample, s2: NvmlGpmSample, ids: &[u32]) -> Box<NvmlGpmMetricsGet> {
    let blank = NvmlGpmMetric {
        metric_id: 0,
        nvml_return: 12345,
        value: -1.0,
        short_name: std::ptr::null(),
        long_name: std::ptr::null(),
        unit: std::ptr::null(),
    };
    let mut get = Box::new(NvmlGpmMetricsGet {
        version: GPM_METRICS_GET_VERSION,
        num_metrics: ids.len() as u32,
        sample1: s1,
        sample2: s2,
        metrics: [blank; GPM_METRIC_MAX],
    });
    for (m, id) in get.metrics.iter_mut().zip(ids) {
        m.metric_id = *id;
    }
    get
}

#[test]
fn support_follows_the_architecture() {
    let s = Session::start(GPM);
    let mut support = NvmlGpmSupport {
        version: 2,
        is_supported_device: 7,
    };
    assert_eq!(
        // SAFETY: valid in/out pointer.
        unsafe { nvmlGpmQueryDeviceSupport(s.handle(0), &mut support) },
        ERROR_ARGUMENT_VERSION_MISMATCH
    );
    support.version = GPM_SUPPORT_VERSION;
    assert_eq!(
        // SAFETY: as above.
        unsafe { nvmlGpmQueryDeviceSupport(s.handle(0), &mut support) },
        SUCCESS
    );
    assert_eq!(support.is_supported_device, 1, "Hopper");
    assert_eq!(
        // SAFETY: as above.
        unsafe { nvmlGpmQueryDeviceSupport(s.handle(1), &mut support) },
        SUCCESS
    );
    assert_eq!(support.is_supported_device, 0, "Ampere");
    let smp = sample();
    assert_eq!(nvmlGpmSampleGet(s.handle(1), smp), ERROR_NOT_SUPPORTED);
    assert_eq!(nvmlGpmSampleFree(smp), SUCCESS);
}

#[test]
fn metrics_are_interval_means_and_only_num_metrics_entries_are_written() {
    let s = Session::start(GPM);
    let h = s.handle(0);
    let (s1, s2) = (sample(), sample());
    s.advance(10.0);
    assert_eq!(nvmlGpmSampleGet(h, s1), SUCCESS);
    s.advance(2.0);
    assert_eq!(nvmlGpmSampleGet(h, s2), SUCCESS);
    let mut get = request(s1, s2, &[1, 2, 4, 60, 5]);
    get.num_metrics = 4;
    // SAFETY: `get` is a full, initialised struct.
    assert_eq!(unsafe { nvmlGpmMetricsGet(&mut *get) }, SUCCESS);
    let m = &get.metrics;
    assert_eq!(m[0].nvml_return, SUCCESS);
    assert!(
        (m[0].value - 50.0).abs() < 5.0,
        "a 50% square wave over 2 s means ~50: {}",
        m[0].value
    );
    assert!((m[1].value - 80.0).abs() < 1e-9, "{}", m[1].value);
    assert_eq!(
        m[2].nvml_return, ERROR_NOT_SUPPORTED,
        "integer util is not modelled"
    );
    assert_eq!((m[3].nvml_return, m[3].value), (SUCCESS, 0.0));
    assert!(!m[0].unit.is_null());
    assert_eq!(
        (m[4].nvml_return, m[4].value),
        (12345, -1.0),
        "entry past numMetrics untouched"
    );
    // Samples in the wrong order, bad versions and too many metrics are refused.
    let mut swapped = request(s2, s1, &[1]);
    assert_eq!(
        // SAFETY: as above.
        unsafe { nvmlGpmMetricsGet(&mut *swapped) },
        ERROR_INVALID_ARGUMENT
    );
    let mut versioned = request(s1, s2, &[1]);
    versioned.version = 2;
    assert_eq!(
        // SAFETY: as above.
        unsafe { nvmlGpmMetricsGet(&mut *versioned) },
        ERROR_ARGUMENT_VERSION_MISMATCH
    );
    let mut too_many = request(s1, s2, &[1]);
    too_many.num_metrics = GPM_METRIC_MAX as u32 + 1;
    assert_eq!(
        // SAFETY: refused before any entry is read.
        unsafe { nvmlGpmMetricsGet(&mut *too_many) },
        ERROR_INVALID_ARGUMENT
    );
    let fresh = sample();
    let mut untaken = request(s1, fresh, &[1]);
    assert_eq!(
        // SAFETY: as above.
        unsafe { nvmlGpmMetricsGet(&mut *untaken) },
        ERROR_INVALID_ARGUMENT
    );
}
