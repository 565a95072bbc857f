//! Utilization, memory and power.

use std::ffi::c_uint;

use super::device_scalar;
use crate::abi::*;
use crate::metric::Metric;
use crate::scenario::Device;
use crate::state::Call;

const MIB: u64 = 1 << 20;

/// `nvmlDeviceGetUtilizationRates`: `util_gpu` and `util_mem`, percent, as of the last
/// completed sample period: the value of the newest utilization sample
/// (`samples::last_sample_at`), as a driver's figure describes the period just past, so a
/// row read by this call lags the model as much as a row filled from the sample buffers.
///
/// # Safety
/// `utilization` must be NULL or valid for writing one `nvmlUtilization_t`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetUtilizationRates(
    device: NvmlDevice,
    utilization: *mut NvmlUtilization,
) -> NvmlReturn {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        device_scalar(
            "nvmlDeviceGetUtilizationRates",
            device,
            utilization,
            |c, d| {
                let t =
                    super::samples::last_sample_at(super::samples::GPU_UTILIZATION_SAMPLES, c.t);
                Ok(NvmlUtilization {
                    gpu: d.value_u32(Metric::UtilGpu, t),
                    memory: d.value_u32(Metric::UtilMem, t),
                })
            },
        )
    }
}

/// Memory in bytes: (total, reserved, allocated).
fn memory(call: Call, d: &Device) -> (u64, u64, u64) {
    let total = d.facts.memory_total_mib * MIB;
    let reserved = d.facts.memory_reserved_mib.min(d.facts.memory_total_mib) * MIB;
    let used = (d.value(Metric::MemUsedMib, call.t) * MIB as f64).round() as u64;
    (total, reserved, used.min(total - reserved))
}

/// `nvmlDeviceGetMemoryInfo_v2`: `used` is allocated memory only; `reserved` is separate.
/// The caller must set `version` to `nvmlMemory_v2` (0x02000028), else
/// ARGUMENT_VERSION_MISMATCH.
///
/// # Safety
/// `memory` must be NULL or valid for reading and writing one `nvmlMemory_v2_t` whose
/// `version` field is initialised.
#[cfg(not(feature = "old-driver"))]
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetMemoryInfo_v2(
    device: NvmlDevice,
    memory: *mut NvmlMemoryV2,
) -> NvmlReturn {
    let read = |c: Call, d: &Device| {
        // SAFETY: `device_scalar` calls this only after checking `memory` is non-NULL, and
        // the caller guarantees an nvmlMemory_v2_t whose `version` is initialised.
        let version = unsafe { (&raw const (*memory).version).read() };
        if version != MEMORY_V2_VERSION {
            return Err(ERROR_ARGUMENT_VERSION_MISMATCH);
        }
        let (total, reserved, used) = self::memory(c, d);
        Ok(NvmlMemoryV2 {
            version,
            total,
            reserved,
            free: total - reserved - used,
            used,
        })
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { device_scalar("nvmlDeviceGetMemoryInfo_v2", device, memory, read) }
}

/// `nvmlDeviceGetMemoryInfo`: `used` includes the reserved memory (v1 semantics).
///
/// # Safety
/// `memory` must be NULL or valid for writing one `nvmlMemory_t`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetMemoryInfo(
    device: NvmlDevice,
    memory: *mut NvmlMemory,
) -> NvmlReturn {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        device_scalar("nvmlDeviceGetMemoryInfo", device, memory, |c, d| {
            let (total, reserved, used) = self::memory(c, d);
            Ok(NvmlMemory {
                total,
                free: total - reserved - used,
                used: reserved + used,
            })
        })
    }
}

/// `nvmlDeviceGetPowerUsage`: `power_w` in milliwatts.
///
/// # Safety
/// `power` must be NULL or valid for writing one `unsigned int`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetPowerUsage(
    device: NvmlDevice,
    power: *mut c_uint,
) -> NvmlReturn {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        device_scalar("nvmlDeviceGetPowerUsage", device, power, |c, d| {
            Ok(milliwatts(d.value(Metric::PowerW, c.t)))
        })
    }
}

/// `nvmlDeviceGetEnforcedPowerLimit`: `power_limit_w` in milliwatts.
///
/// # Safety
/// `limit` must be NULL or valid for writing one `unsigned int`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetEnforcedPowerLimit(
    device: NvmlDevice,
    limit: *mut c_uint,
) -> NvmlReturn {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        device_scalar("nvmlDeviceGetEnforcedPowerLimit", device, limit, |_, d| {
            Ok(milliwatts(d.facts.power_limit_w))
        })
    }
}

pub(super) fn milliwatts(watts: f64) -> c_uint {
    (watts * 1000.0).round().clamp(0.0, f64::from(c_uint::MAX)) as c_uint
}
