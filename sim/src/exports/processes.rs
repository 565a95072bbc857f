//! Running compute processes, in the three element layouts NVML has used.

use std::ffi::c_uint;

use super::{boundary, non_null};
use crate::abi::*;
use crate::scenario::Process;
use crate::state;

const MIB: u64 = 1 << 20;

fn info_v2(p: &Process) -> NvmlProcessInfo {
    NvmlProcessInfo {
        pid: p.reported_pid(),
        usedGpuMemory: p.used_mib * MIB,
        gpuInstanceId: NO_MIG_INSTANCE,
        computeInstanceId: NO_MIG_INSTANCE,
    }
}

fn info_v1(p: &Process) -> NvmlProcessInfoV1 {
    NvmlProcessInfoV1 {
        pid: p.reported_pid(),
        usedGpuMemory: p.used_mib * MIB,
    }
}

/// `nvmlDeviceGetComputeRunningProcesses_v3`: the processes alive now, 24-byte elements.
/// Size query then fill: with `*infoCount` smaller than the number of processes (e.g. 0 and
/// `infos` NULL) it writes the number needed and returns INSUFFICIENT_SIZE; with no
/// processes it writes 0 and succeeds.
///
/// # Safety
/// `info_count` must be NULL or valid for reading and writing one `unsigned int`; `infos`
/// must be NULL or valid for writing `*info_count` elements.
#[cfg(not(feature = "old-driver"))]
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetComputeRunningProcesses_v3(
    device: NvmlDevice,
    info_count: *mut c_uint,
    infos: *mut NvmlProcessInfo,
) -> NvmlReturn {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        list(
            "nvmlDeviceGetComputeRunningProcesses_v3",
            device,
            info_count,
            infos,
            info_v2,
        )
    }
}

/// `nvmlDeviceGetComputeRunningProcesses_v2`: as `_v3`, same 24-byte element.
///
/// # Safety
/// As for `nvmlDeviceGetComputeRunningProcesses_v3`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetComputeRunningProcesses_v2(
    device: NvmlDevice,
    info_count: *mut c_uint,
    infos: *mut NvmlProcessInfo,
) -> NvmlReturn {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        list(
            "nvmlDeviceGetComputeRunningProcesses_v2",
            device,
            info_count,
            infos,
            info_v2,
        )
    }
}

/// `nvmlDeviceGetComputeRunningProcesses`: as `_v3` with the 16-byte v1 element
/// (`pid`, `usedGpuMemory`).
///
/// # Safety
/// As for `nvmlDeviceGetComputeRunningProcesses_v3`, with 16-byte elements.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetComputeRunningProcesses(
    device: NvmlDevice,
    info_count: *mut c_uint,
    infos: *mut NvmlProcessInfoV1,
) -> NvmlReturn {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        list(
            "nvmlDeviceGetComputeRunningProcesses",
            device,
            info_count,
            infos,
            info_v1,
        )
    }
}

/// # Safety
/// `count` must be NULL or valid for reading and writing one `unsigned int`; `infos` must
/// be NULL or valid for writing `*count` elements of `T`.
unsafe fn list<T>(
    function: &str,
    device: NvmlDevice,
    count: *mut c_uint,
    infos: *mut T,
    make: fn(&Process) -> T,
) -> NvmlReturn {
    boundary(|| {
        let (call, d) = state::device(function, device)?;
        non_null(count)?;
        let alive: Vec<&Process> = d.processes_at(call.t).collect();
        let needed = c_uint::try_from(alive.len()).unwrap_or(c_uint::MAX);
        // SAFETY: non-NULL and, per the contract, valid for reading one `unsigned int`.
        let capacity = unsafe { count.read() };
        if capacity < needed {
            // SAFETY: as above, valid for writing.
            unsafe { count.write(needed) };
            return Err(ERROR_INSUFFICIENT_SIZE);
        }
        if needed > 0 {
            non_null(infos)?;
        }
        for (i, p) in alive.iter().enumerate() {
            // SAFETY: `infos` is valid for `capacity >= needed > i` elements.
            unsafe { infos.add(i).write(make(p)) };
        }
        // SAFETY: as for the read above.
        unsafe { count.write(needed) };
        Ok(())
    })
}
