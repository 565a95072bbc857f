//! Device getters: identity, versioned structs, patterns through the ABI, processes, fields.

use std::ffi::{c_char, c_uint};

use super::*;
use crate::exports::clocks::*;
use crate::exports::fields::nvmlDeviceGetFieldValues;
use crate::exports::identity::*;
use crate::exports::pcie::*;
use crate::exports::processes::*;
use crate::exports::usage::*;

#[test]
fn identity_matches_the_preset() {
    let s = Session::start(SQUARE);
    let h = s.handle(0);
    let mut buf = [0 as c_char; 96];
    assert_eq!(
        // SAFETY: `buf` is valid for 96 bytes.
        unsafe { nvmlDeviceGetName(h, buf.as_mut_ptr(), 96) },
        SUCCESS
    );
    assert_eq!(text(&buf), "NVIDIA H100 80GB HBM3");
    assert_eq!(
        // SAFETY: as above; the call is told 5 bytes.
        unsafe { nvmlDeviceGetName(h, buf.as_mut_ptr(), 5) },
        ERROR_INSUFFICIENT_SIZE
    );
    assert_eq!(
        // SAFETY: `buf` is valid for 96 bytes.
        unsafe { nvmlDeviceGetUUID(h, buf.as_mut_ptr(), 96) },
        SUCCESS
    );
    assert!(text(&buf).starts_with("GPU-"));
    let mut pci = std::mem::MaybeUninit::<NvmlPciInfo>::uninit();
    assert_eq!(
        // SAFETY: `pci` is valid for one write.
        unsafe { nvmlDeviceGetPciInfo_v2(h, pci.as_mut_ptr()) },
        SUCCESS
    );
    // SAFETY: SUCCESS means the whole struct was written.
    let pci = unsafe { pci.assume_init() };
    assert_eq!(pci.pciDeviceId, 0x2330_10DE);
    assert_eq!(text(&pci.busId), "00000000:18:00.0");
    assert_eq!(text(&pci.busIdLegacy), "0000:18:00.0");
    assert_eq!(get_u32(nvmlDeviceGetArchitecture, h), 9);
    let (mut major, mut minor) = (0, 0);
    assert_eq!(
        // SAFETY: valid out pointers.
        unsafe { nvmlDeviceGetCudaComputeCapability(h, &mut major, &mut minor) },
        SUCCESS
    );
    assert_eq!((major, minor), (9, 0));
}

#[test]
fn memory_v1_counts_reserved_as_used_and_v2_does_not() {
    let s = Session::start(SQUARE);
    let h = s.handle(0);
    let mut v1 = NvmlMemory {
        total: 0,
        free: 0,
        used: 0,
    };
    // SAFETY: valid out pointer.
    assert_eq!(unsafe { nvmlDeviceGetMemoryInfo(h, &mut v1) }, SUCCESS);
    assert_eq!(v1.total, 81_559 << 20);
    assert_eq!(v1.used, (1024 + 512) << 20);
    assert_eq!(v1.free + v1.used, v1.total);
    #[cfg(not(feature = "old-driver"))]
    {
        let mut v2 = NvmlMemoryV2 {
            version: 2,
            total: 0,
            reserved: 0,
            free: 0,
            used: 0,
        };
        assert_eq!(
            // SAFETY: valid in/out pointer with `version` set.
            unsafe { nvmlDeviceGetMemoryInfo_v2(h, &mut v2) },
            ERROR_ARGUMENT_VERSION_MISMATCH
        );
        v2.version = MEMORY_V2_VERSION;
        // SAFETY: as above.
        assert_eq!(unsafe { nvmlDeviceGetMemoryInfo_v2(h, &mut v2) }, SUCCESS);
        assert_eq!(v2.used, 1024 << 20);
        assert_eq!(v2.reserved, 512 << 20);
        assert_eq!(v2.free, v1.free);
        assert_eq!(v2.version, MEMORY_V2_VERSION);
    }
}

#[cfg(not(feature = "old-driver"))]
#[test]
fn temperature_v_checks_version_and_sensor() {
    let s = Session::start(SQUARE);
    let h = s.handle(0);
    let mut t = NvmlTemperature {
        version: 1,
        sensorType: 0,
        temperature: -1,
    };
    assert_eq!(
        // SAFETY: valid in/out pointer.
        unsafe { nvmlDeviceGetTemperatureV(h, &mut t) },
        ERROR_ARGUMENT_VERSION_MISMATCH
    );
    t.version = TEMPERATURE_V1_VERSION;
    // NVML_TEMPERATURE_GPU_MAX exists in the header; a GPU without it says NOT_SUPPORTED.
    t.sensorType = TEMPERATURE_GPU_MAX;
    assert_eq!(
        // SAFETY: as above.
        unsafe { nvmlDeviceGetTemperatureV(h, &mut t) },
        ERROR_NOT_SUPPORTED
    );
    t.sensorType = TEMPERATURE_COUNT;
    assert_eq!(
        // SAFETY: as above.
        unsafe { nvmlDeviceGetTemperatureV(h, &mut t) },
        ERROR_INVALID_ARGUMENT
    );
    t.sensorType = 0;
    // SAFETY: as above.
    assert_eq!(unsafe { nvmlDeviceGetTemperatureV(h, &mut t) }, SUCCESS);
    assert!((32..=68).contains(&t.temperature), "{}", t.temperature);
}

#[test]
fn unknown_enum_values_are_invalid_arguments() {
    let s = Session::start(SQUARE);
    let h = s.handle(0);
    let mut v: c_uint = 0;
    // SAFETY: valid out pointers throughout.
    unsafe {
        assert_eq!(
            nvmlDeviceGetTemperature(h, 2, &mut v),
            ERROR_INVALID_ARGUMENT
        );
        // Sensor 1 (NVML_TEMPERATURE_GPU_MAX) is known but absent on the simulated GPUs.
        assert_eq!(
            nvmlDeviceGetTemperature(h, TEMPERATURE_GPU_MAX, &mut v),
            ERROR_NOT_SUPPORTED
        );
        assert_eq!(nvmlDeviceGetClockInfo(h, 4, &mut v), ERROR_INVALID_ARGUMENT);
        assert_eq!(
            nvmlDeviceGetMaxClockInfo(h, 99, &mut v),
            ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            nvmlDeviceGetPcieThroughput(h, 2, &mut v),
            ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            nvmlDeviceGetTemperatureThreshold(h, 8, &mut v),
            ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            nvmlDeviceGetTemperatureThreshold(h, 5, &mut v),
            ERROR_NOT_SUPPORTED
        );
        assert_eq!(nvmlDeviceGetTemperatureThreshold(h, 1, &mut v), SUCCESS);
        assert_eq!(v, 89);
        assert_eq!(nvmlDeviceGetMaxClockInfo(h, 1, &mut v), SUCCESS);
        assert_eq!(v, 1980);
    }
}

#[test]
fn power_follows_the_utilization_square_wave_in_phase() {
    let s = Session::start(SQUARE);
    let h = s.handle(0);
    let read = || {
        let mut u = NvmlUtilization { gpu: 0, memory: 0 };
        // SAFETY: valid out pointer.
        assert_eq!(unsafe { nvmlDeviceGetUtilizationRates(h, &mut u) }, SUCCESS);
        (u.gpu, get_u32(nvmlDeviceGetPowerUsage, h))
    };
    // Sim time starts near 0: sample the middle of a high and of a low half-period.
    s.advance(10.25);
    assert_eq!(read(), (100, 600_000));
    s.advance(0.5);
    assert_eq!(read(), (0, 100_000));
    assert_eq!(get_u32(nvmlDeviceGetEnforcedPowerLimit, h), 700_000);
}

#[test]
fn the_process_list_is_a_size_query_then_a_fill() {
    let s = Session::start(SQUARE);
    let h = s.handle(0);
    let mut count: c_uint = 0;
    // SAFETY: valid count pointer; NULL infos with a zero count is allowed.
    let r = unsafe { nvmlDeviceGetComputeRunningProcesses_v2(h, &mut count, std::ptr::null_mut()) };
    assert_eq!((r, count), (ERROR_INSUFFICIENT_SIZE, 2));
    let empty = NvmlProcessInfo {
        pid: 0,
        usedGpuMemory: 0,
        gpuInstanceId: 0,
        computeInstanceId: 0,
    };
    let mut infos = [empty; 4];
    count = 4;
    assert_eq!(
        // SAFETY: `infos` holds `count` elements.
        unsafe { nvmlDeviceGetComputeRunningProcesses_v2(h, &mut count, infos.as_mut_ptr()) },
        SUCCESS
    );
    assert_eq!(count, 2);
    assert_eq!((infos[0].pid, infos[0].usedGpuMemory), (11, 700 << 20));
    assert_eq!(infos[1].gpuInstanceId, NO_MIG_INSTANCE);
    assert_eq!(infos[2].pid, 0, "nothing written past the count");
    let mut v1 = [NvmlProcessInfoV1 {
        pid: 0,
        usedGpuMemory: 0,
    }; 2];
    count = 2;
    assert_eq!(
        // SAFETY: `v1` holds `count` 16-byte elements.
        unsafe { nvmlDeviceGetComputeRunningProcesses(h, &mut count, v1.as_mut_ptr()) },
        SUCCESS
    );
    assert_eq!((v1[1].pid, v1[1].usedGpuMemory), (12, 300 << 20));
    count = 1;
    // SAFETY: `v1` holds 2 >= `count` elements.
    let r = unsafe { nvmlDeviceGetComputeRunningProcesses(h, &mut count, v1.as_mut_ptr()) };
    assert_eq!((r, count), (ERROR_INSUFFICIENT_SIZE, 2));
}

#[test]
fn no_processes_succeeds_with_zero() {
    let s = Session::start(r#"{"devices": [{}]}"#);
    let mut count: c_uint = 0;
    // SAFETY: valid count pointer; NULL infos with zero count.
    let r = unsafe {
        nvmlDeviceGetComputeRunningProcesses_v2(s.handle(0), &mut count, std::ptr::null_mut())
    };
    assert_eq!((r, count), (SUCCESS, 0));
}

fn field_values(h: NvmlDevice, requests: &[(c_uint, c_uint)]) -> Vec<NvmlFieldValue> {
    let mut values: Vec<NvmlFieldValue> = requests
        .iter()
        .map(|&(field_id, scope_id)| NvmlFieldValue {
            fieldId: field_id,
            scopeId: scope_id,
            timestamp: 0,
            latencyUsec: 0,
            valueType: 99,
            nvmlReturn: 99,
            value: NvmlValue { ullVal: 0 },
        })
        .collect();
    let n = values.len() as i32;
    assert_eq!(
        // SAFETY: `values` holds `n` initialised elements.
        unsafe { nvmlDeviceGetFieldValues(h, n, values.as_mut_ptr()) },
        SUCCESS
    );
    values
}

#[test]
fn nvlink_fields_are_counters_integrated_from_the_rate() {
    let s = Session::start(SQUARE);
    let h = s.handle(0);
    let first = field_values(h, &[(91, 0), (138, u32::MAX), (139, u32::MAX), (83, 0)]);
    assert_eq!(first[0].nvmlReturn, SUCCESS);
    assert_eq!(
        // SAFETY: `valueType` 1 selects `uiVal`.
        (first[0].valueType, unsafe { first[0].value.uiVal }),
        (VALUE_TYPE_UNSIGNED_INT, 18)
    );
    assert_eq!(
        first[3].nvmlReturn, ERROR_NOT_SUPPORTED,
        "unmodelled ids fail per element"
    );
    assert_eq!(first[3].fieldId, 83, "ids are kept");
    s.advance(10.0);
    let later = field_values(h, &[(138, u32::MAX), (139, u32::MAX), (138, 0), (138, 18)]);
    // SAFETY: `valueType` 3 selects `ullVal` in every successful element below.
    let kib = |v: &NvmlFieldValue| unsafe { v.value.ullVal } as f64;
    let dt_s = (later[0].timestamp - first[1].timestamp) as f64 / 1e6;
    let tx_rate = (kib(&later[0]) - kib(&first[1])) / dt_s;
    assert!(
        (tx_rate - 1000.0).abs() < 5.0,
        "TX {tx_rate} KiB/s, expected 1000"
    );
    // RX is 0 until t = 5 then 2048 KiB/s: about 5 s at the rate by t ≈ 10.
    assert!(
        (kib(&later[1]) - 5.0 * 2048.0).abs() < 200.0,
        "RX {}",
        kib(&later[1])
    );
    assert!(
        (kib(&later[2]) - kib(&later[0]) / 18.0).abs() <= 1.0,
        "per-link share"
    );
    assert_eq!(
        later[3].nvmlReturn, ERROR_INVALID_ARGUMENT,
        "link 18 does not exist"
    );
}

#[test]
fn pcie_links_and_clocks_default_to_the_maximum() {
    let s = Session::start(SQUARE);
    let h = s.handle(0);
    assert_eq!(get_u32(nvmlDeviceGetCurrPcieLinkGeneration, h), 5);
    assert_eq!(get_u32(nvmlDeviceGetMaxPcieLinkGeneration, h), 5);
    assert_eq!(get_u32(nvmlDeviceGetCurrPcieLinkWidth, h), 16);
    assert_eq!(get_u32(nvmlDeviceGetMaxPcieLinkWidth, h), 16);
    assert_eq!(get_u32(nvmlDeviceGetPerformanceState, h), 0);
    let mut mhz = 0;
    // SAFETY: valid out pointer.
    assert_eq!(unsafe { nvmlDeviceGetClockInfo(h, 0, &mut mhz) }, SUCCESS);
    assert_eq!(mhz, 1980, "graphics follows SM");
    let mut reasons = u64::MAX;
    assert_eq!(
        // SAFETY: valid out pointer.
        unsafe { nvmlDeviceGetCurrentClocksThrottleReasons(h, &mut reasons) },
        SUCCESS
    );
    assert_eq!(reasons, 0);
}

#[test]
fn temperature_and_tlimit_fields_and_pcie_byte_counters() {
    let s = Session::start(SQUARE);
    let h = s.handle(0);
    s.advance(2.0);
    let v = field_values(
        h,
        &[
            (FI_GPU_TEMP, 0),
            (FI_TEMPERATURE_SLOWDOWN_TLIMIT, 0),
            (197, 0),
        ],
    );
    assert_eq!(
        (v[0].nvmlReturn, v[0].valueType),
        (SUCCESS, VALUE_TYPE_DOUBLE)
    );
    // SAFETY: `valueType` 0 selects `dVal`.
    let t = unsafe { v[0].value.dVal };
    assert!((32.0..=68.0).contains(&t), "{t}");
    assert_eq!(
        (v[1].nvmlReturn, v[1].valueType),
        (SUCCESS, VALUE_TYPE_SIGNED_INT)
    );
    // SAFETY: `valueType` 5 selects `siVal`.
    let slowdown = unsafe { v[1].value.siVal };
    assert_eq!(slowdown, 89, "the H100 preset's slowdown");
    assert_eq!(
        (v[2].nvmlReturn, v[2].valueType),
        (SUCCESS, VALUE_TYPE_UNSIGNED_LONG_LONG)
    );
    // An Ampere GPU has no T.Limit fields (the header: Ada and later).
    drop(s);
    let a = Session::start(r#"{"devices": [{"preset": "A100-SXM4-80GB"}]}"#);
    let v = field_values(a.handle(0), &[(FI_TEMPERATURE_SLOWDOWN_TLIMIT, 0)]);
    assert_eq!(v[0].nvmlReturn, ERROR_NOT_SUPPORTED);
}
