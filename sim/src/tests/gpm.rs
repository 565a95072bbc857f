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
        metricId: 0,
        nvmlReturn: 12345,
        value: -1.0,
        shortName: std::ptr::null_mut(),
        longName: std::ptr::null_mut(),
        unit: std::ptr::null_mut(),
    };
    let mut get = Box::new(NvmlGpmMetricsGet {
        version: GPM_METRICS_GET_VERSION,
        numMetrics: ids.len() as u32,
        sample1: s1,
        sample2: s2,
        metrics: [blank; GPM_METRIC_MAX],
    });
    for (m, id) in get.metrics.iter_mut().zip(ids) {
        m.metricId = *id;
    }
    get
}

#[test]
fn support_follows_the_architecture() {
    let s = Session::start(GPM);
    let mut support = NvmlGpmSupport {
        version: 2,
        isSupportedDevice: 7,
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
    assert_eq!(support.isSupportedDevice, 1, "Hopper");
    assert_eq!(
        // SAFETY: as above.
        unsafe { nvmlGpmQueryDeviceSupport(s.handle(1), &mut support) },
        SUCCESS
    );
    assert_eq!(support.isSupportedDevice, 0, "Ampere");
    let smp = sample();
    assert_eq!(nvmlGpmSampleGet(s.handle(1), smp), ERROR_NOT_SUPPORTED);
    assert_eq!(nvmlGpmSampleFree(smp), SUCCESS);
}

#[test]
fn metrics_are_interval_means_and_entries_past_num_metrics_are_cleared() {
    let s = Session::start(GPM);
    let h = s.handle(0);
    let (s1, s2) = (sample(), sample());
    s.advance(10.0);
    assert_eq!(nvmlGpmSampleGet(h, s1), SUCCESS);
    s.advance(2.0);
    assert_eq!(nvmlGpmSampleGet(h, s2), SUCCESS);
    let mut get = request(s1, s2, &[1, 2, 4, 60, 5]);
    get.numMetrics = 4;
    // SAFETY: `get` is a full, initialised struct.
    assert_eq!(unsafe { nvmlGpmMetricsGet(&mut *get) }, SUCCESS);
    let m = &get.metrics;
    assert_eq!(m[0].nvmlReturn, SUCCESS);
    assert!(
        (m[0].value - 50.0).abs() < 5.0,
        "a 50% square wave over 2 s means ~50: {}",
        m[0].value
    );
    assert!((m[1].value - 80.0).abs() < 1e-9, "{}", m[1].value);
    assert_eq!(
        m[2].nvmlReturn, ERROR_NOT_SUPPORTED,
        "integer util is not modelled"
    );
    assert_eq!((m[3].nvmlReturn, m[3].value), (SUCCESS, 0.0));
    assert!(!m[0].unit.is_null());
    assert_eq!(
        (m[4].metricId, m[4].nvmlReturn, m[4].value),
        (0, SUCCESS, 0.0),
        "entries past numMetrics are cleared, as a full-length driver may"
    );
    assert_eq!(m[GPM_METRIC_MAX - 1].nvmlReturn, SUCCESS);
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
    too_many.numMetrics = GPM_METRIC_MAX as u32 + 1;
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

/// The 98-entry `nvmlGpmMetricsGet_t` of the 11.8–12.8 headers, followed by a guard that
/// covers the rest of the newest header's struct (so the simulator's writes stay inside
/// this test's allocation).
#[repr(C)]
struct Undersized {
    version: u32,
    num_metrics: u32,
    sample1: NvmlGpmSample,
    sample2: NvmlGpmSample,
    metrics: [NvmlGpmMetric; 98],
    guard: [u64; (GPM_METRIC_MAX - 98) * 5],
}

const GUARD: u64 = 0x5A5A_5A5A_5A5A_5A5A;

#[test]
fn a_buffer_shorter_than_the_newest_header_gets_overwritten() {
    let s = Session::start(GPM);
    let h = s.handle(0);
    let (s1, s2) = (sample(), sample());
    assert_eq!(nvmlGpmSampleGet(h, s1), SUCCESS);
    s.advance(1.0);
    assert_eq!(nvmlGpmSampleGet(h, s2), SUCCESS);
    let full = request(s1, s2, &[2]);
    let mut old = Box::new(Undersized {
        version: GPM_METRICS_GET_VERSION,
        num_metrics: 1,
        sample1: s1,
        sample2: s2,
        metrics: [full.metrics[0]; 98],
        guard: [GUARD; (GPM_METRIC_MAX - 98) * 5],
    });
    assert_eq!(
        std::mem::size_of::<Undersized>(),
        std::mem::size_of::<NvmlGpmMetricsGet>()
    );
    let get: *mut Undersized = &mut *old;
    // SAFETY: the allocation is as long as the newest header's struct; its first part is
    // an initialised 98-entry struct with one metric requested.
    assert_eq!(unsafe { nvmlGpmMetricsGet(get.cast()) }, SUCCESS);
    assert_eq!(old.metrics[0].nvmlReturn, SUCCESS);
    assert!(
        old.guard.iter().any(|w| *w != GUARD),
        "the memory after a 98-entry buffer was written"
    );
    // The newest header's struct with its own guard after it: nothing past it is touched.
    #[repr(C)]
    struct Guarded {
        get: NvmlGpmMetricsGet,
        guard: [u64; 8],
    }
    let mut new = Box::new(Guarded {
        get: *request(s1, s2, &[2]),
        guard: [GUARD; 8],
    });
    // SAFETY: a full, initialised struct.
    assert_eq!(unsafe { nvmlGpmMetricsGet(&mut new.get) }, SUCCESS);
    assert!(new.guard.iter().all(|w| *w == GUARD));
}
