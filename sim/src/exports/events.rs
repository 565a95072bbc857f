//! Event sets: scripted XID errors (and the XID 79 of a lost GPU) are delivered here.

use std::ffi::c_uint;

use super::{boundary, device_scalar, non_null, put};
use crate::abi::*;
use crate::state;

/// Longest a wait sleeps, wall milliseconds, so a polling caller stays responsive.
const MAX_WAIT_MS: c_uint = 50;

/// `nvmlEventSetCreate`: a new, empty event set.
///
/// # Safety
/// `set` must be NULL or valid for writing one `nvmlEventSet_t`.
#[no_mangle]
pub unsafe extern "C" fn nvmlEventSetCreate(set: *mut NvmlEventSet) -> NvmlReturn {
    boundary(|| {
        state::system("nvmlEventSetCreate")?;
        non_null(set)?;
        let created = state::event_set_create()?;
        // SAFETY: forwarded from this function's contract.
        unsafe { put(set, created) }
    })
}

/// `nvmlDeviceRegisterEvents`: records interest in `event_types` of `device` on `set`.
/// Types outside ECC (0x1, 0x2), P-state (0x4) and XID (0x8) are NOT_SUPPORTED; only XID
/// events are ever delivered. An unknown set is INVALID_ARGUMENT.
#[no_mangle]
pub extern "C" fn nvmlDeviceRegisterEvents(
    device: NvmlDevice,
    event_types: u64,
    set: NvmlEventSet,
) -> NvmlReturn {
    boundary(|| {
        let (_, d) = state::device("nvmlDeviceRegisterEvents", device)?;
        if event_types & !SUPPORTED_EVENT_TYPES != 0 {
            return Err(ERROR_NOT_SUPPORTED);
        }
        state::event_register(set, d.index, event_types)
    })
}

/// `nvmlDeviceGetSupportedEventTypes`: ECC, P-state and XID bits (0xF).
///
/// # Safety
/// `event_types` must be NULL or valid for writing one `unsigned long long`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetSupportedEventTypes(
    device: NvmlDevice,
    event_types: *mut u64,
) -> NvmlReturn {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        device_scalar(
            "nvmlDeviceGetSupportedEventTypes",
            device,
            event_types,
            |_, _| Ok(SUPPORTED_EVENT_TYPES),
        )
    }
}

/// `nvmlEventSetWait_v2`: a due, undelivered XID event at once; otherwise sleeps
/// min(`timeoutms`, 50) wall milliseconds, looks once more, and returns TIMEOUT. Each
/// scripted event is delivered once per set.
///
/// # Safety
/// `data` must be NULL or valid for writing one `nvmlEventData_t`.
#[cfg(not(feature = "old-driver"))]
#[no_mangle]
pub unsafe extern "C" fn nvmlEventSetWait_v2(
    set: NvmlEventSet,
    data: *mut NvmlEventData,
    timeoutms: c_uint,
) -> NvmlReturn {
    // SAFETY: forwarded from this function's contract.
    unsafe { wait("nvmlEventSetWait_v2", set, data, timeoutms) }
}

/// `nvmlEventSetWait`: the same as `_v2`.
///
/// # Safety
/// `data` must be NULL or valid for writing one `nvmlEventData_t`.
#[no_mangle]
pub unsafe extern "C" fn nvmlEventSetWait(
    set: NvmlEventSet,
    data: *mut NvmlEventData,
    timeoutms: c_uint,
) -> NvmlReturn {
    // SAFETY: forwarded from this function's contract.
    unsafe { wait("nvmlEventSetWait", set, data, timeoutms) }
}

/// # Safety
/// `data` must be NULL or valid for writing one `nvmlEventData_t`.
unsafe fn wait(
    function: &str,
    set: NvmlEventSet,
    data: *mut NvmlEventData,
    timeout_ms: c_uint,
) -> NvmlReturn {
    boundary(|| {
        state::system(function)?;
        non_null(data)?;
        let event = match state::event_take(set)? {
            Some(event) => event,
            None => {
                let ms = timeout_ms.min(MAX_WAIT_MS);
                state::pause(u64::from(ms));
                state::event_take(set)?.ok_or(ERROR_TIMEOUT)?
            }
        };
        let (device, xid) = event;
        let filled = NvmlEventData {
            device: state::handle_of(device),
            eventType: EVENT_TYPE_XID_CRITICAL_ERROR,
            eventData: xid,
            gpuInstanceId: NO_MIG_INSTANCE,
            computeInstanceId: NO_MIG_INSTANCE,
        };
        // SAFETY: forwarded from this function's contract.
        unsafe { put(data, filled) }
    })
}

/// `nvmlEventSetFree`: releases a set; an unknown set (or NULL) is INVALID_ARGUMENT.
#[no_mangle]
pub extern "C" fn nvmlEventSetFree(set: NvmlEventSet) -> NvmlReturn {
    boundary(|| {
        state::system("nvmlEventSetFree")?;
        state::event_set_free(set)
    })
}
