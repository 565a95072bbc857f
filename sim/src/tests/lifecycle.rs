//! Init refcount, scenario loading, system queries, enumeration, argument checks.

use std::ffi::{c_char, c_int, c_uint};

use super::*;
use crate::exports::identity::nvmlDeviceGetName;
use crate::exports::system::*;

#[test]
fn init_is_refcounted() {
    let _s = Session::uninitialised(SQUARE);
    let mut n: c_uint = 0;
    // SAFETY: valid out pointer.
    assert_eq!(unsafe { nvmlDeviceGetCount(&mut n) }, ERROR_UNINITIALIZED);
    assert_eq!(nvmlInit(), SUCCESS);
    assert_eq!(nvmlInitWithFlags(1), SUCCESS);
    assert_eq!(state::refcount(), 2);
    assert_eq!(nvmlShutdown(), SUCCESS);
    assert_eq!(
        // SAFETY: valid out pointer.
        unsafe { nvmlDeviceGetCount(&mut n) },
        SUCCESS,
        "one reference left"
    );
    assert_eq!(n, 1);
    assert_eq!(nvmlShutdown(), SUCCESS);
    // SAFETY: valid out pointer.
    assert_eq!(unsafe { nvmlDeviceGetCount(&mut n) }, ERROR_UNINITIALIZED);
    assert_eq!(nvmlShutdown(), SUCCESS, "extra shutdowns are harmless");
    assert_eq!(state::refcount(), 0);
}

#[cfg(not(feature = "old-driver"))]
#[test]
fn versioned_init_and_count_match_the_plain_ones() {
    let _s = Session::uninitialised(SQUARE);
    assert_eq!(nvmlInit_v2(), SUCCESS);
    let mut n: c_uint = 0;
    // SAFETY: valid out pointer.
    assert_eq!(unsafe { nvmlDeviceGetCount_v2(&mut n) }, SUCCESS);
    assert_eq!(n, 1);
    let mut h: NvmlDevice = std::ptr::null_mut();
    // SAFETY: valid out pointer.
    assert_eq!(unsafe { nvmlDeviceGetHandleByIndex_v2(0, &mut h) }, SUCCESS);
    assert!(!h.is_null());
    let mut cuda: c_int = 0;
    assert_eq!(
        // SAFETY: valid out pointer.
        unsafe { nvmlSystemGetCudaDriverVersion_v2(&mut cuda) },
        SUCCESS
    );
    assert_eq!(cuda, 12040);
}

#[test]
fn an_invalid_scenario_fails_init_with_unknown() {
    let _s = Session::uninitialised(r#"{"devices": [{"metrics": {"power": 1}}]}"#);
    assert_eq!(nvmlInit(), ERROR_UNKNOWN);
    assert_eq!(state::refcount(), 0);
}

#[test]
fn init_error_makes_init_fail_with_that_code() {
    let _s = Session::uninitialised(r#"{"init_error": 9}"#);
    assert_eq!(nvmlInit(), 9);
    assert_eq!(state::refcount(), 0);
}

#[test]
fn system_strings_honour_their_length() {
    let _s = Session::start(r#"{"driver_version": "535.129.03", "cuda_driver_version": 12020}"#);
    let mut buf = [0 as c_char; 80];
    assert_eq!(
        // SAFETY: `buf` is valid for 80 bytes.
        unsafe { nvmlSystemGetDriverVersion(buf.as_mut_ptr(), 80) },
        SUCCESS
    );
    assert_eq!(text(&buf), "535.129.03");
    assert_eq!(
        // SAFETY: `buf` is valid for 80 bytes (the call is told 10).
        unsafe { nvmlSystemGetDriverVersion(buf.as_mut_ptr(), 10) },
        ERROR_INSUFFICIENT_SIZE
    );
    assert_eq!(
        // SAFETY: `buf` is valid for 80 bytes.
        unsafe { nvmlSystemGetNVMLVersion(buf.as_mut_ptr(), 80) },
        SUCCESS
    );
    assert!(text(&buf).ends_with(".535.129.03"), "{}", text(&buf));
    let mut cuda: c_int = 0;
    assert_eq!(
        // SAFETY: valid out pointer.
        unsafe { nvmlSystemGetCudaDriverVersion(&mut cuda) },
        SUCCESS
    );
    assert_eq!(cuda, 12020);
}

#[test]
fn nvml_version_answers_before_init() {
    let _s = Session::uninitialised(r#"{"nvml_version": "12.999"}"#);
    let mut buf = [0 as c_char; 80];
    assert_eq!(
        // SAFETY: `buf` is valid for 80 bytes.
        unsafe { nvmlSystemGetNVMLVersion(buf.as_mut_ptr(), 80) },
        SUCCESS
    );
    assert_eq!(text(&buf), "12.999");
    assert_eq!(state::refcount(), 0, "no run was started");
}

#[test]
fn null_pointers_are_invalid_arguments() {
    let s = Session::start(SQUARE);
    let h = s.handle(0);
    let null_u32 = std::ptr::null_mut::<c_uint>();
    // SAFETY: every call below passes NULL, which the functions accept and refuse.
    unsafe {
        assert_eq!(nvmlDeviceGetCount(null_u32), ERROR_INVALID_ARGUMENT);
        assert_eq!(
            nvmlDeviceGetHandleByIndex(0, std::ptr::null_mut()),
            ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            nvmlSystemGetDriverVersion(std::ptr::null_mut(), 80),
            ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            nvmlSystemGetCudaDriverVersion(std::ptr::null_mut()),
            ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            nvmlDeviceGetName(h, std::ptr::null_mut(), 96),
            ERROR_INVALID_ARGUMENT
        );
        use crate::exports::{clocks::*, events::*, identity::*, pcie::*, processes::*, usage::*};
        assert_eq!(
            nvmlDeviceGetUUID(h, std::ptr::null_mut(), 96),
            ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            nvmlDeviceGetPciInfo(h, std::ptr::null_mut()),
            ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            nvmlDeviceGetArchitecture(h, null_u32),
            ERROR_INVALID_ARGUMENT
        );
        let mut major = 0;
        assert_eq!(
            nvmlDeviceGetCudaComputeCapability(h, &mut major, std::ptr::null_mut()),
            ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            nvmlDeviceGetUtilizationRates(h, std::ptr::null_mut()),
            ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            nvmlDeviceGetMemoryInfo(h, std::ptr::null_mut()),
            ERROR_INVALID_ARGUMENT
        );
        assert_eq!(nvmlDeviceGetPowerUsage(h, null_u32), ERROR_INVALID_ARGUMENT);
        assert_eq!(
            nvmlDeviceGetTemperature(h, 0, null_u32),
            ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            nvmlDeviceGetClockInfo(h, 1, null_u32),
            ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            nvmlDeviceGetCurrentClocksThrottleReasons(h, std::ptr::null_mut()),
            ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            nvmlDeviceGetPcieThroughput(h, 0, null_u32),
            ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            nvmlDeviceGetCurrPcieLinkWidth(h, null_u32),
            ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            nvmlDeviceGetComputeRunningProcesses_v2(h, null_u32, std::ptr::null_mut()),
            ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            crate::exports::fields::nvmlDeviceGetFieldValues(h, 1, std::ptr::null_mut()),
            ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            nvmlEventSetCreate(std::ptr::null_mut()),
            ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            nvmlEventSetWait(std::ptr::null_mut(), std::ptr::null_mut(), 0),
            ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            nvmlEventSetFree(std::ptr::null_mut()),
            ERROR_INVALID_ARGUMENT
        );
    }
}

#[test]
fn bad_handles_and_indices_are_invalid_arguments() {
    let _s = Session::start(SQUARE);
    let mut h: NvmlDevice = std::ptr::null_mut();
    assert_eq!(
        // SAFETY: valid out pointer.
        unsafe { nvmlDeviceGetHandleByIndex(1, &mut h) },
        ERROR_INVALID_ARGUMENT
    );
    let mut buf = [0 as c_char; 96];
    let forged = std::ptr::without_provenance_mut(0x1000);
    assert_eq!(
        // SAFETY: the handle is only compared, never dereferenced; `buf` is valid for 96 bytes.
        unsafe { nvmlDeviceGetName(forged, buf.as_mut_ptr(), 96) },
        ERROR_INVALID_ARGUMENT
    );
    assert_eq!(
        // SAFETY: as above, with NULL.
        unsafe { nvmlDeviceGetName(std::ptr::null_mut(), buf.as_mut_ptr(), 96) },
        ERROR_INVALID_ARGUMENT
    );
}

#[test]
fn handles_stay_valid_across_re_init_of_the_same_scenario() {
    let s = Session::start(SQUARE);
    let before = s.handle(0);
    assert_eq!(nvmlShutdown(), SUCCESS);
    assert_eq!(nvmlInit(), SUCCESS);
    assert_eq!(
        s.handle(0),
        before,
        "the device table is reused, not leaked again"
    );
}
