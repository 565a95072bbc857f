//! MIG devices and per-process utilization: the GPU's MIG mode, its MIG device handles and
//! their instance ids, GPM per GPU instance, and `nvmlDeviceGetProcessUtilization`
//! (docs/job-gpus.md). A MIG device's handle is the address of its entry in its GPU's
//! `mig` list, so every other export answers for it as for a GPU, with what the slice
//! does not support refused (`scenario/device/mig.rs`).

use std::ffi::{c_uint, c_ulonglong};

use super::{boundary, device_scalar, non_null, put};
use crate::abi::*;
use crate::scenario::Device;
use crate::state::{self, Call};

/// `NVML_ERROR_NOT_FOUND`: an empty MIG slot, or no process sample newer than asked.
const ERROR_NOT_FOUND: NvmlReturn = 6;
/// `NVML_DEVICE_MIG_ENABLE`.
const MIG_ENABLE: c_uint = gpuwhy_nvml_sys::enums::NVML_DEVICE_MIG_ENABLE;
/// `NVML_DEVICE_MIG_DISABLE`.
const MIG_DISABLE: c_uint = gpuwhy_nvml_sys::enums::NVML_DEVICE_MIG_DISABLE;
/// Most MIG devices of a GPU (A100, H100).
const MAX_MIG_DEVICES: c_uint = 7;
/// The first architecture with MIG (`NVML_DEVICE_ARCH_AMPERE`).
const ARCH_AMPERE: u32 = 7;

pub use crate::abi::NvmlProcessUtilizationSample;

/// A GPU (not a MIG device) that can run MIG, or NOT_SUPPORTED.
fn mig_capable(d: &Device) -> Result<(), NvmlReturn> {
    if d.instance.is_some() || d.facts.architecture < ARCH_AMPERE {
        Err(ERROR_NOT_SUPPORTED)
    } else {
        Ok(())
    }
}

/// `nvmlDeviceGetMigMode`: enabled when the scenario gives the GPU MIG devices; the
/// pending mode is the current one.
///
/// # Safety
/// `current` and `pending` must each be NULL or valid for writing one `unsigned int`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetMigMode(
    device: NvmlDevice,
    current: *mut c_uint,
    pending: *mut c_uint,
) -> NvmlReturn {
    boundary(|| {
        let (_, d) = state::device("nvmlDeviceGetMigMode", device)?;
        non_null(pending)?;
        mig_capable(d)?;
        let mode = if d.mig.is_empty() {
            MIG_DISABLE
        } else {
            MIG_ENABLE
        };
        // SAFETY: forwarded from this function's contract.
        unsafe { put(current, mode) }?;
        // SAFETY: as above.
        unsafe { put(pending, mode) }
    })
}

/// `nvmlDeviceGetMaxMigDeviceCount`.
///
/// # Safety
/// `count` must be NULL or valid for writing one `unsigned int`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetMaxMigDeviceCount(
    device: NvmlDevice,
    count: *mut c_uint,
) -> NvmlReturn {
    let read = |_: Call, d: &Device| mig_capable(d).map(|()| MAX_MIG_DEVICES);
    // SAFETY: forwarded from this function's contract.
    unsafe { device_scalar("nvmlDeviceGetMaxMigDeviceCount", device, count, read) }
}

/// `nvmlDeviceGetMigDeviceHandleByIndex`: NOT_FOUND for an empty slot.
///
/// # Safety
/// `mig_device` must be NULL or valid for writing one handle.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetMigDeviceHandleByIndex(
    device: NvmlDevice,
    index: c_uint,
    mig_device: *mut NvmlDevice,
) -> NvmlReturn {
    let read = |_: Call, d: &'static Device| {
        mig_capable(d)?;
        if index >= MAX_MIG_DEVICES {
            return Err(ERROR_INVALID_ARGUMENT);
        }
        d.mig
            .get(index as usize)
            .map(state::handle_of)
            .ok_or(ERROR_NOT_FOUND)
    };
    // SAFETY: forwarded from this function's contract.
    unsafe {
        device_scalar(
            "nvmlDeviceGetMigDeviceHandleByIndex",
            device,
            mig_device,
            read,
        )
    }
}

/// `nvmlDeviceIsMigDeviceHandle`.
///
/// # Safety
/// `is_mig` must be NULL or valid for writing one `unsigned int`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceIsMigDeviceHandle(
    device: NvmlDevice,
    is_mig: *mut c_uint,
) -> NvmlReturn {
    let read = |_: Call, d: &Device| Ok(c_uint::from(d.instance.is_some()));
    // SAFETY: forwarded from this function's contract.
    unsafe { device_scalar("nvmlDeviceIsMigDeviceHandle", device, is_mig, read) }
}

/// `nvmlDeviceGetDeviceHandleFromMigDeviceHandle`: the GPU of a MIG device.
///
/// # Safety
/// `gpu` must be NULL or valid for writing one handle.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetDeviceHandleFromMigDeviceHandle(
    mig_device: NvmlDevice,
    gpu: *mut NvmlDevice,
) -> NvmlReturn {
    let read = |call: Call, d: &Device| {
        if d.instance.is_none() {
            return Err(ERROR_INVALID_ARGUMENT);
        }
        call.scenario
            .devices
            .get(d.index as usize)
            .map(state::handle_of)
            .ok_or(ERROR_INVALID_ARGUMENT)
    };
    // SAFETY: forwarded from this function's contract.
    unsafe {
        device_scalar(
            "nvmlDeviceGetDeviceHandleFromMigDeviceHandle",
            mig_device,
            gpu,
            read,
        )
    }
}

/// `nvmlDeviceGetGpuInstanceId`: NOT_SUPPORTED on a GPU.
///
/// # Safety
/// `id` must be NULL or valid for writing one `unsigned int`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetGpuInstanceId(
    device: NvmlDevice,
    id: *mut c_uint,
) -> NvmlReturn {
    let read = |_: Call, d: &Device| d.instance.map(|i| i.0).ok_or(ERROR_NOT_SUPPORTED);
    // SAFETY: forwarded from this function's contract.
    unsafe { device_scalar("nvmlDeviceGetGpuInstanceId", device, id, read) }
}

/// `nvmlDeviceGetComputeInstanceId`: NOT_SUPPORTED on a GPU.
///
/// # Safety
/// `id` must be NULL or valid for writing one `unsigned int`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetComputeInstanceId(
    device: NvmlDevice,
    id: *mut c_uint,
) -> NvmlReturn {
    let read = |_: Call, d: &Device| d.instance.map(|i| i.1).ok_or(ERROR_NOT_SUPPORTED);
    // SAFETY: forwarded from this function's contract.
    unsafe { device_scalar("nvmlDeviceGetComputeInstanceId", device, id, read) }
}

/// `nvmlGpmMigSampleGet`: a GPM snapshot of GPU instance `gpu_instance_id` of a GPU.
#[cfg(not(feature = "old-driver"))]
#[no_mangle]
pub extern "C" fn nvmlGpmMigSampleGet(
    device: NvmlDevice,
    gpu_instance_id: c_uint,
    gpm_sample: NvmlGpmSample,
) -> NvmlReturn {
    boundary(|| {
        let (call, d) = state::device("nvmlGpmMigSampleGet", device)?;
        if d.instance.is_some() {
            return Err(ERROR_INVALID_ARGUMENT);
        }
        let (slot, m) = d
            .mig
            .iter()
            .enumerate()
            .find(|(_, m)| m.instance.is_some_and(|i| i.0 == gpu_instance_id))
            .ok_or(ERROR_NOT_FOUND)?;
        if !m.gpm {
            return Err(ERROR_NOT_SUPPORTED);
        }
        state::gpm_record(gpm_sample, state::mig_gpm_id(d.index, slot), call.t)
    })
}

/// `nvmlDeviceGetProcessUtilization`: one sample per process alive now that the scenario
/// gives an `sm_util`, stamped now. With `utilization` NULL it is the size query
/// (INSUFFICIENT_SIZE and the count); nothing newer than `last_seen_us` is NOT_FOUND.
///
/// # Safety
/// `count` must be NULL or valid for reading and writing one `unsigned int`;
/// `utilization` must be NULL or valid for writing `*count` elements.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetProcessUtilization(
    device: NvmlDevice,
    utilization: *mut NvmlProcessUtilizationSample,
    count: *mut c_uint,
    last_seen_us: c_ulonglong,
) -> NvmlReturn {
    boundary(|| {
        let (call, d) = state::device("nvmlDeviceGetProcessUtilization", device)?;
        non_null(count)?;
        let now = u64::try_from(call.unix_us()).unwrap_or(0);
        let samples: Vec<NvmlProcessUtilizationSample> = d
            .processes_at(call.t)
            .filter_map(|p| {
                p.sm_util.map(|sm| NvmlProcessUtilizationSample {
                    pid: p.reported_pid(),
                    timeStamp: now,
                    smUtil: sm,
                    memUtil: 0,
                    encUtil: 0,
                    decUtil: 0,
                })
            })
            .collect();
        if samples.is_empty() || now <= last_seen_us {
            return Err(ERROR_NOT_FOUND);
        }
        let needed = c_uint::try_from(samples.len()).unwrap_or(c_uint::MAX);
        // SAFETY: non-NULL and, per the contract, valid for reading one `unsigned int`.
        let capacity = unsafe { count.read() };
        if utilization.is_null() || capacity < needed {
            // SAFETY: as above, valid for writing.
            unsafe { count.write(needed) };
            return Err(ERROR_INSUFFICIENT_SIZE);
        }
        for (i, s) in samples.iter().enumerate() {
            // SAFETY: `utilization` is valid for `capacity >= needed > i` elements.
            unsafe { utilization.add(i).write(*s) };
        }
        // SAFETY: as for the read above.
        unsafe { count.write(needed) };
        Ok(())
    })
}
