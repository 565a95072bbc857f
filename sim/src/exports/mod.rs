//! The exported NVML functions, with the real C names and signatures.
//!
//! Every function runs its body inside [`boundary`], so a panic becomes
//! `NVML_ERROR_UNKNOWN` instead of unwinding into C. Output pointers are checked for NULL
//! (`NVML_ERROR_INVALID_ARGUMENT`) and written only on success (except the needed count
//! that the process lists report with `NVML_ERROR_INSUFFICIENT_SIZE`). The `old-driver` feature
//! leaves out the symbols an R450 driver lacked, so callers' fallbacks run for real.

use std::ffi::{c_char, c_uint};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::abi::*;
use crate::scenario::Device;
use crate::state::{self, Call};

pub mod clocks;
pub mod cost;
pub mod events;
pub mod fields;
#[cfg(not(feature = "old-driver"))]
pub mod gpm;
pub mod health;
pub mod identity;
pub mod mig;
pub mod pcie;
pub mod processes;
pub mod samples;
pub mod system;
pub mod usage;

/// Every function name the simulator can export (the `old-driver` build omits some);
/// scenario `unsupported`, `no_permission` and fault entries must use one of these.
pub const FUNCTIONS: &[&str] = &[
    "nvmlInit_v2",
    "nvmlInit",
    "nvmlInitWithFlags",
    "nvmlShutdown",
    "nvmlErrorString",
    "nvmlSystemGetDriverVersion",
    "nvmlSystemGetNVMLVersion",
    "nvmlSystemGetCudaDriverVersion_v2",
    "nvmlSystemGetCudaDriverVersion",
    "nvmlDeviceGetCount_v2",
    "nvmlDeviceGetCount",
    "nvmlDeviceGetHandleByIndex_v2",
    "nvmlDeviceGetHandleByIndex",
    "nvmlDeviceGetName",
    "nvmlDeviceGetUUID",
    "nvmlDeviceGetPciInfo_v3",
    "nvmlDeviceGetPciInfo_v2",
    "nvmlDeviceGetPciInfo",
    "nvmlDeviceGetArchitecture",
    "nvmlDeviceGetCudaComputeCapability",
    "nvmlDeviceGetUtilizationRates",
    "nvmlDeviceGetMemoryInfo_v2",
    "nvmlDeviceGetMemoryInfo",
    "nvmlDeviceGetPowerUsage",
    "nvmlDeviceGetEnforcedPowerLimit",
    "nvmlDeviceGetTemperatureV",
    "nvmlDeviceGetTemperature",
    "nvmlDeviceGetTemperatureThreshold",
    "nvmlDeviceGetClockInfo",
    "nvmlDeviceGetMaxClockInfo",
    "nvmlDeviceGetPerformanceState",
    "nvmlDeviceGetCurrentClocksEventReasons",
    "nvmlDeviceGetCurrentClocksThrottleReasons",
    "nvmlDeviceGetPcieThroughput",
    "nvmlDeviceGetCurrPcieLinkGeneration",
    "nvmlDeviceGetCurrPcieLinkWidth",
    "nvmlDeviceGetMaxPcieLinkGeneration",
    "nvmlDeviceGetMaxPcieLinkWidth",
    "nvmlDeviceGetFieldValues",
    "nvmlDeviceGetSamples",
    "nvmlDeviceGetComputeRunningProcesses_v3",
    "nvmlDeviceGetComputeRunningProcesses_v2",
    "nvmlDeviceGetComputeRunningProcesses",
    "nvmlEventSetCreate",
    "nvmlDeviceRegisterEvents",
    "nvmlDeviceGetSupportedEventTypes",
    "nvmlEventSetWait_v2",
    "nvmlEventSetWait",
    "nvmlEventSetFree",
    "nvmlGpmQueryDeviceSupport",
    "nvmlGpmSampleAlloc",
    "nvmlGpmSampleFree",
    "nvmlGpmSampleGet",
    "nvmlGpmMetricsGet",
    // MIG and per-process utilization (`mig.rs`).
    "nvmlDeviceGetMigMode",
    "nvmlDeviceGetMaxMigDeviceCount",
    "nvmlDeviceGetMigDeviceHandleByIndex",
    "nvmlDeviceIsMigDeviceHandle",
    "nvmlDeviceGetDeviceHandleFromMigDeviceHandle",
    "nvmlDeviceGetGpuInstanceId",
    "nvmlDeviceGetComputeInstanceId",
    "nvmlGpmMigSampleGet",
    "nvmlDeviceGetProcessUtilization",
    // Health (`health.rs`).
    "nvmlDeviceGetEccMode",
    "nvmlDeviceGetTotalEccErrors",
    "nvmlDeviceGetMemoryErrorCounter",
    "nvmlDeviceGetRemappedRows",
    "nvmlDeviceGetRetiredPages",
    "nvmlDeviceGetRetiredPagesPendingStatus",
    "nvmlDeviceGetNvLinkErrorCounter",
    "nvmlDeviceGetGpuMaxPcieLinkGeneration",
];

/// The functions the `old-driver` build leaves out (an R450-era symbol set).
pub const OLD_DRIVER_OMITS: &[&str] = &[
    "nvmlInit_v2",
    "nvmlDeviceGetCount_v2",
    "nvmlDeviceGetHandleByIndex_v2",
    "nvmlDeviceGetPciInfo_v3",
    "nvmlDeviceGetMemoryInfo_v2",
    "nvmlDeviceGetTemperatureV",
    "nvmlDeviceGetCurrentClocksEventReasons",
    "nvmlDeviceGetComputeRunningProcesses_v3",
    "nvmlEventSetWait_v2",
    "nvmlSystemGetCudaDriverVersion_v2",
    "nvmlGpmQueryDeviceSupport",
    "nvmlGpmSampleAlloc",
    "nvmlGpmSampleFree",
    "nvmlGpmSampleGet",
    "nvmlGpmMetricsGet",
    "nvmlGpmMigSampleGet",
    "nvmlDeviceGetGpuMaxPcieLinkGeneration",
];

/// Runs an export's body, turning `Err(code)` into `code` and a panic into
/// `NVML_ERROR_UNKNOWN`, so no unwind ever reaches the C caller.
///
/// Every call also spends the simulated driver cost ([`cost::spend`]).
fn boundary(body: impl FnOnce() -> Result<(), NvmlReturn>) -> NvmlReturn {
    cost::spend();
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => SUCCESS,
        Ok(Err(code)) => code,
        Err(_) => ERROR_UNKNOWN,
    }
}

/// Writes `value` through an output pointer, refusing NULL.
///
/// # Safety
/// `out` must be NULL or valid for writing one properly aligned `T`.
unsafe fn put<T>(out: *mut T, value: T) -> Result<(), NvmlReturn> {
    if out.is_null() {
        return Err(ERROR_INVALID_ARGUMENT);
    }
    // SAFETY: non-NULL, and the caller guarantees it is valid for one aligned write.
    unsafe { out.write(value) };
    Ok(())
}

/// The body of a device getter with one output: common checks, `read`, then the write.
///
/// # Safety
/// `out` must be NULL or valid for writing one properly aligned `T`.
unsafe fn device_scalar<T>(
    function: &str,
    device: NvmlDevice,
    out: *mut T,
    read: impl FnOnce(Call, &'static Device) -> Result<T, NvmlReturn>,
) -> NvmlReturn {
    boundary(|| {
        let (call, d) = state::device(function, device)?;
        non_null(out)?;
        let value = read(call, d)?;
        // SAFETY: forwarded from this function's contract.
        unsafe { put(out, value) }
    })
}

/// Fails with INVALID_ARGUMENT when an output pointer is NULL; for checks made before any
/// work is done.
fn non_null<T>(ptr: *const T) -> Result<(), NvmlReturn> {
    if ptr.is_null() {
        Err(ERROR_INVALID_ARGUMENT)
    } else {
        Ok(())
    }
}

/// Copies `text` and a NUL into a caller buffer of `length` bytes, NVML-style:
/// INSUFFICIENT_SIZE when it does not fit.
///
/// # Safety
/// `buf` must be NULL or valid for writing `length` bytes.
unsafe fn put_str(buf: *mut c_char, length: c_uint, text: &str) -> Result<(), NvmlReturn> {
    non_null(buf)?;
    let bytes = text.as_bytes();
    if bytes.len() >= length as usize {
        return Err(ERROR_INSUFFICIENT_SIZE);
    }
    // SAFETY: `buf` is valid for `length` bytes and `bytes.len() + 1 <= length`; the source
    // is a Rust string, which cannot overlap caller memory.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr().cast::<c_char>(), buf, bytes.len()) };
    // SAFETY: index `bytes.len()` is within the `length` bytes checked above.
    unsafe { buf.add(bytes.len()).write(0) };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_list_matches_the_exports_in_the_source() {
        let sources = [
            include_str!("system.rs"),
            include_str!("identity.rs"),
            include_str!("usage.rs"),
            include_str!("clocks.rs"),
            include_str!("pcie.rs"),
            include_str!("fields.rs"),
            include_str!("samples.rs"),
            include_str!("processes.rs"),
            include_str!("events.rs"),
            include_str!("gpm.rs"),
            include_str!("mig.rs"),
            include_str!("health.rs"),
        ];
        let mut exported: Vec<&str> = sources
            .iter()
            .flat_map(|s| s.split("extern \"C\" fn ").skip(1))
            .filter_map(|rest| rest.split('(').next())
            .collect();
        let mut listed = FUNCTIONS.to_vec();
        exported.sort_unstable();
        listed.sort_unstable();
        assert_eq!(exported, listed);
        assert!(OLD_DRIVER_OMITS.iter().all(|f| FUNCTIONS.contains(f)));
        // Each export reports itself under its own name (for `unsupported` and faults).
        for source in sources {
            for rest in source.split("extern \"C\" fn ").skip(1) {
                let name = rest.split('(').next().unwrap_or_default();
                let body = rest.split("\n}\n").next().unwrap_or_default();
                let uses_name = body.contains(&format!("\"{name}\""));
                let plain = [
                    "nvmlInit",
                    "nvmlInit_v2",
                    "nvmlInitWithFlags",
                    "nvmlShutdown",
                    "nvmlErrorString",
                ];
                assert!(
                    uses_name || plain.contains(&name),
                    "{name} does not pass \"{name}\""
                );
            }
        }
    }

    #[test]
    fn panics_become_unknown() {
        let code = boundary(|| panic!("boom"));
        assert_eq!(code, ERROR_UNKNOWN);
    }

    #[test]
    fn strings_honour_the_buffer_length() {
        let mut buf = [0x7f as c_char; 8];
        // SAFETY: `buf` is valid for its 8 bytes.
        assert_eq!(unsafe { put_str(buf.as_mut_ptr(), 8, "1234567") }, Ok(()));
        assert_eq!(buf[7], 0);
        assert_eq!(
            // SAFETY: as above.
            unsafe { put_str(buf.as_mut_ptr(), 8, "12345678") },
            Err(ERROR_INSUFFICIENT_SIZE)
        );
        assert_eq!(
            // SAFETY: NULL is allowed and refused.
            unsafe { put_str(std::ptr::null_mut(), 8, "x") },
            Err(ERROR_INVALID_ARGUMENT)
        );
    }
}
