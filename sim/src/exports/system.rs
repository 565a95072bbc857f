//! Library life cycle, error strings, system versions and device enumeration.

use std::ffi::{c_char, c_int, c_uint, CStr};

use super::{boundary, cost, put, put_str};
use crate::abi::*;
use crate::scenario::{self, Scenario};
use crate::state;

/// `nvmlInit_v2`: initialises the library (refcounted). The first successful call loads the
/// scenario and starts simulated time; a bad scenario makes it fail with UNKNOWN and one
/// line on stderr; a scenario's `init_error` makes it fail with that code.
#[cfg(not(feature = "old-driver"))]
#[no_mangle]
pub extern "C" fn nvmlInit_v2() -> NvmlReturn {
    cost::configure();
    boundary(|| code(state::init()))
}

/// `nvmlInit`: the pre-5.319 entry point; the same as `nvmlInit_v2` here.
#[no_mangle]
pub extern "C" fn nvmlInit() -> NvmlReturn {
    cost::configure();
    boundary(|| code(state::init()))
}

/// `nvmlInitWithFlags`: the same as `nvmlInit_v2`; the flags (NO_GPUS, NO_ATTACH,
/// FORCE_INIT) change nothing for simulated devices.
#[no_mangle]
pub extern "C" fn nvmlInitWithFlags(_flags: c_uint) -> NvmlReturn {
    cost::configure();
    boundary(|| code(state::init()))
}

/// `nvmlShutdown`: drops one init reference; the last one ends the run (handles, event sets
/// and samples become invalid). Extra calls return SUCCESS.
#[no_mangle]
pub extern "C" fn nvmlShutdown() -> NvmlReturn {
    boundary(|| code(state::shutdown()))
}

fn code(result: NvmlReturn) -> Result<(), NvmlReturn> {
    match result {
        SUCCESS => Ok(()),
        other => Err(other),
    }
}

/// `nvmlErrorString`: a static, NUL-terminated description of any return code; never NULL,
/// never to be freed. Works without init.
#[no_mangle]
pub extern "C" fn nvmlErrorString(result: NvmlReturn) -> *const c_char {
    error_text(result).as_ptr()
}

fn error_text(result: NvmlReturn) -> &'static CStr {
    match result {
        0 => c"Success",
        1 => c"Uninitialized",
        2 => c"Invalid Argument",
        3 => c"Not Supported",
        4 => c"Insufficient Permissions",
        5 => c"Already Initialized",
        6 => c"Not Found",
        7 => c"Insufficient Size",
        8 => c"Insufficient External Power",
        9 => c"Driver Not Loaded",
        10 => c"Timeout",
        11 => c"Interrupt request issue",
        12 => c"NVML Shared Library Not Found",
        13 => c"Function Not Found",
        14 => c"Corrupted infoROM",
        15 => c"GPU is lost",
        16 => c"GPU requires restart",
        17 => c"The operating system has blocked the request",
        18 => c"RM has detected an NVML/RM version mismatch",
        19 => c"In use by another client",
        20 => c"Insufficient Memory",
        21 => c"No data",
        22 => c"The requested vgpu operation is not available on target device, because ECC is enabled",
        23 => c"Ran out of critical resources, other than memory",
        24 => c"The requested frequency is not supported",
        25 => c"The provided version is invalid/unsupported",
        26 => c"The requested functionality has been deprecated",
        27 => c"The system is not ready for the request",
        28 => c"The GPU was not found",
        29 => c"The resource is in an invalid state",
        30 => c"The reset type is not supported",
        _ => c"Unknown Error",
    }
}

/// `nvmlSystemGetDriverVersion`: the scenario's `driver_version`.
///
/// # Safety
/// `version` must be NULL or valid for writing `length` bytes.
#[no_mangle]
pub unsafe extern "C" fn nvmlSystemGetDriverVersion(
    version: *mut c_char,
    length: c_uint,
) -> NvmlReturn {
    boundary(|| {
        let call = state::system("nvmlSystemGetDriverVersion")?;
        // SAFETY: forwarded from this function's contract.
        unsafe { put_str(version, length, &call.scenario.driver_version) }
    })
}

/// `nvmlSystemGetNVMLVersion`: the scenario's `nvml_version`. Like the real library it also
/// answers before init (it then reads the scenario without starting a run).
///
/// # Safety
/// `version` must be NULL or valid for writing `length` bytes.
#[no_mangle]
pub unsafe extern "C" fn nvmlSystemGetNVMLVersion(
    version: *mut c_char,
    length: c_uint,
) -> NvmlReturn {
    boundary(|| {
        let text = match state::system("nvmlSystemGetNVMLVersion") {
            Ok(call) => call.scenario.nvml_version.clone(),
            Err(ERROR_UNINITIALIZED) => {
                let (json, _) = scenario::read().map_err(|_| ERROR_UNKNOWN)?;
                Scenario::from_json(&json)
                    .map_err(|_| ERROR_UNKNOWN)?
                    .nvml_version
            }
            Err(other) => return Err(other),
        };
        // SAFETY: forwarded from this function's contract.
        unsafe { put_str(version, length, &text) }
    })
}

/// `nvmlSystemGetCudaDriverVersion_v2`: the scenario's `cuda_driver_version` (e.g. 12040).
///
/// # Safety
/// `cuda_driver_version` must be NULL or valid for writing one `int`.
#[cfg(not(feature = "old-driver"))]
#[no_mangle]
pub unsafe extern "C" fn nvmlSystemGetCudaDriverVersion_v2(
    cuda_driver_version: *mut c_int,
) -> NvmlReturn {
    boundary(|| {
        let call = state::system("nvmlSystemGetCudaDriverVersion_v2")?;
        // SAFETY: forwarded from this function's contract.
        unsafe { put(cuda_driver_version, call.scenario.cuda_driver_version) }
    })
}

/// `nvmlSystemGetCudaDriverVersion`: the same value as `_v2`.
///
/// # Safety
/// `cuda_driver_version` must be NULL or valid for writing one `int`.
#[no_mangle]
pub unsafe extern "C" fn nvmlSystemGetCudaDriverVersion(
    cuda_driver_version: *mut c_int,
) -> NvmlReturn {
    boundary(|| {
        let call = state::system("nvmlSystemGetCudaDriverVersion")?;
        // SAFETY: forwarded from this function's contract.
        unsafe { put(cuda_driver_version, call.scenario.cuda_driver_version) }
    })
}

/// `nvmlDeviceGetCount_v2`: the number of devices, lost ones included, removed ones not.
///
/// # Safety
/// `device_count` must be NULL or valid for writing one `unsigned int`.
#[cfg(not(feature = "old-driver"))]
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetCount_v2(device_count: *mut c_uint) -> NvmlReturn {
    // SAFETY: forwarded from this function's contract.
    unsafe { count("nvmlDeviceGetCount_v2", device_count) }
}

/// `nvmlDeviceGetCount`: the same as `_v2`.
///
/// # Safety
/// `device_count` must be NULL or valid for writing one `unsigned int`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetCount(device_count: *mut c_uint) -> NvmlReturn {
    // SAFETY: forwarded from this function's contract.
    unsafe { count("nvmlDeviceGetCount", device_count) }
}

/// # Safety
/// `out` must be NULL or valid for writing one `unsigned int`.
unsafe fn count(function: &str, out: *mut c_uint) -> NvmlReturn {
    boundary(|| {
        let call = state::system(function)?;
        let n = state::listed(call.scenario, call.t).count();
        let n = c_uint::try_from(n).unwrap_or(c_uint::MAX);
        // SAFETY: forwarded from this function's contract.
        unsafe { put(out, n) }
    })
}

/// `nvmlDeviceGetHandleByIndex_v2`: the handle of device `index` among those still listed;
/// INVALID_ARGUMENT past the end, GPU_IS_LOST once the device is lost.
///
/// # Safety
/// `device` must be NULL or valid for writing one `nvmlDevice_t`.
#[cfg(not(feature = "old-driver"))]
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetHandleByIndex_v2(
    index: c_uint,
    device: *mut NvmlDevice,
) -> NvmlReturn {
    // SAFETY: forwarded from this function's contract.
    unsafe { handle("nvmlDeviceGetHandleByIndex_v2", index, device) }
}

/// `nvmlDeviceGetHandleByIndex`: the same as `_v2`.
///
/// # Safety
/// `device` must be NULL or valid for writing one `nvmlDevice_t`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetHandleByIndex(
    index: c_uint,
    device: *mut NvmlDevice,
) -> NvmlReturn {
    // SAFETY: forwarded from this function's contract.
    unsafe { handle("nvmlDeviceGetHandleByIndex", index, device) }
}

/// # Safety
/// `out` must be NULL or valid for writing one `nvmlDevice_t`.
unsafe fn handle(function: &str, index: c_uint, out: *mut NvmlDevice) -> NvmlReturn {
    boundary(|| {
        let (_, d) = state::device_listed(function, index)?;
        // SAFETY: forwarded from this function's contract.
        unsafe { put(out, state::handle_of(d)) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_documented_code_has_its_own_text() {
        let unknown = error_text(999);
        for code in 0..=30 {
            assert_ne!(error_text(code), unknown, "code {code}");
        }
        assert_eq!(error_text(31), unknown, "new codes read as unknown");
        // SAFETY: nvmlErrorString returns a static NUL-terminated string.
        let text = unsafe { CStr::from_ptr(nvmlErrorString(15)) };
        assert_eq!(text.to_str(), Ok("GPU is lost"));
    }
}
