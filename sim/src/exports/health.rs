//! Health: ECC mode and error counts, errors by memory location, remapped rows, retired
//! pages, NVLink error counters and the GPU-alone PCIe maximum, answered from the device's
//! scenario `health` (`scenario/device/health.rs`) so that every call agrees with the others:
//! a total is the sum of its locations, and what the board lacks is NOT_SUPPORTED everywhere.
//! A MIG device answers NOT_SUPPORTED (its GPU's counters are the ones to read).

use std::ffi::{c_uint, c_ulonglong};

use super::{boundary, device_scalar, non_null, put};
use crate::abi::*;
use crate::scenario::{Device, Health};
use crate::state::{self, Call};

/// `NVML_FEATURE_ENABLED` / `NVML_FEATURE_DISABLED`.
fn feature(on: bool) -> c_uint {
    c_uint::from(on)
}

/// The device's health, or NOT_SUPPORTED on a MIG device.
fn health(d: &Device) -> Result<&Health, NvmlReturn> {
    if d.instance.is_some() {
        Err(ERROR_NOT_SUPPORTED)
    } else {
        Ok(&d.health)
    }
}

/// ECC on, or NOT_SUPPORTED (no ECC, or ECC turned off), and the error type checked.
fn ecc_counts(d: &Device, error_type: c_uint, counter_type: c_uint) -> Result<&Health, NvmlReturn> {
    let h = health(d)?;
    if !h.ecc_on() {
        return Err(ERROR_NOT_SUPPORTED);
    }
    if error_type > 1 || counter_type > 1 {
        return Err(ERROR_INVALID_ARGUMENT);
    }
    Ok(h)
}

/// Corrected (type 0) or uncorrected (type 1) errors at location value `loc` at time `t`.
/// Volatile and aggregate counts are equal: the scenario starts with the driver load.
fn at_location(h: &Health, error_type: c_uint, loc: u32, t: f64) -> u64 {
    let by = if error_type == 0 {
        &h.corrected
    } else {
        &h.uncorrected
    };
    by.get(&loc).map_or(0, |c| c.at(t))
}

/// `nvmlDeviceGetEccMode`: the scenario's `ecc_enabled` and `ecc_pending_enabled`.
///
/// # Safety
/// `current` and `pending` must each be NULL or valid for writing one `unsigned int`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetEccMode(
    device: NvmlDevice,
    current: *mut c_uint,
    pending: *mut c_uint,
) -> NvmlReturn {
    boundary(|| {
        let (_, d) = state::device("nvmlDeviceGetEccMode", device)?;
        non_null(current)?;
        non_null(pending)?;
        let (now, next) = health(d)?.ecc.ok_or(ERROR_NOT_SUPPORTED)?;
        // SAFETY: forwarded from this function's contract.
        unsafe { put(current, feature(now)) }?;
        // SAFETY: as above.
        unsafe { put(pending, feature(next)) }
    })
}

/// `nvmlDeviceGetTotalEccErrors`: the sum over the board's memory locations.
///
/// # Safety
/// `ecc_counts` must be NULL or valid for writing one `unsigned long long`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetTotalEccErrors(
    device: NvmlDevice,
    error_type: c_uint,
    counter_type: c_uint,
    ecc_counts_out: *mut c_ulonglong,
) -> NvmlReturn {
    let read = |c: Call, d: &Device| {
        let h = ecc_counts(d, error_type, counter_type)?;
        Ok(h.locations
            .iter()
            .map(|(loc, _)| at_location(h, error_type, *loc, c.t))
            .sum())
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { device_scalar("nvmlDeviceGetTotalEccErrors", device, ecc_counts_out, read) }
}

/// `nvmlDeviceGetMemoryErrorCounter`: one location's count; a location this architecture
/// does not report is NOT_SUPPORTED, one past `NVML_MEMORY_LOCATION_COUNT` INVALID_ARGUMENT.
///
/// # Safety
/// `count` must be NULL or valid for writing one `unsigned long long`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetMemoryErrorCounter(
    device: NvmlDevice,
    error_type: c_uint,
    counter_type: c_uint,
    location_type: c_uint,
    count: *mut c_ulonglong,
) -> NvmlReturn {
    let read = |c: Call, d: &Device| {
        let h = ecc_counts(d, error_type, counter_type)?;
        if location_type >= MEMORY_LOCATION_COUNT {
            return Err(ERROR_INVALID_ARGUMENT);
        }
        if !h.locations.iter().any(|(loc, _)| *loc == location_type) {
            return Err(ERROR_NOT_SUPPORTED);
        }
        Ok(at_location(h, error_type, location_type, c.t))
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { device_scalar("nvmlDeviceGetMemoryErrorCounter", device, count, read) }
}

/// `nvmlDeviceGetRemappedRows`: the scenario's `remap_*` (Ampere and newer with ECC, or
/// wherever the scenario sets one).
///
/// # Safety
/// Each output must be NULL or valid for writing one `unsigned int`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetRemappedRows(
    device: NvmlDevice,
    corr_rows: *mut c_uint,
    unc_rows: *mut c_uint,
    is_pending: *mut c_uint,
    failure_occurred: *mut c_uint,
) -> NvmlReturn {
    boundary(|| {
        let (_, d) = state::device("nvmlDeviceGetRemappedRows", device)?;
        for out in [corr_rows, unc_rows, is_pending, failure_occurred] {
            non_null(out)?;
        }
        let (corr, unc, pending, failure) = health(d)?.remap.ok_or(ERROR_NOT_SUPPORTED)?;
        // SAFETY: each pointer is non-NULL and valid for one write (this function's contract).
        unsafe { put(corr_rows, corr) }?;
        // SAFETY: as above.
        unsafe { put(unc_rows, unc) }?;
        // SAFETY: as above.
        unsafe { put(is_pending, c_uint::from(pending)) }?;
        // SAFETY: as above.
        unsafe { put(failure_occurred, c_uint::from(failure)) }
    })
}

/// `nvmlDeviceGetRetiredPages`: with `*page_count` 0 the count alone (SUCCESS when there
/// are none, INSUFFICIENT_SIZE with the count otherwise, as drivers answer a short buffer);
/// with room, made-up page addresses.
///
/// # Safety
/// `page_count` must be NULL or valid for reading and writing one `unsigned int`;
/// `addresses` must be NULL or valid for writing `*page_count` `unsigned long long`s.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetRetiredPages(
    device: NvmlDevice,
    cause: c_uint,
    page_count: *mut c_uint,
    addresses: *mut c_ulonglong,
) -> NvmlReturn {
    boundary(|| {
        let (_, d) = state::device("nvmlDeviceGetRetiredPages", device)?;
        non_null(page_count)?;
        let (single, double, _) = health(d)?.retired.ok_or(ERROR_NOT_SUPPORTED)?;
        let n = match cause {
            0 => single,
            1 => double,
            _ => return Err(ERROR_INVALID_ARGUMENT),
        };
        // SAFETY: non-NULL and valid for reading (this function's contract).
        let room = unsafe { page_count.read() };
        if n > room || (n > 0 && addresses.is_null()) {
            // SAFETY: as above, for writing.
            unsafe { page_count.write(n) };
            return Err(ERROR_INSUFFICIENT_SIZE);
        }
        for i in 0..n {
            // SAFETY: `i < n <= room`, and `addresses` holds `room` entries.
            unsafe { addresses.add(i as usize).write(0x1000 * u64::from(i + 1)) };
        }
        // SAFETY: as above.
        unsafe { put(page_count, n) }
    })
}

/// `nvmlDeviceGetRetiredPagesPendingStatus`: the scenario's `retired_pending`.
///
/// # Safety
/// `is_pending` must be NULL or valid for writing one `unsigned int`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetRetiredPagesPendingStatus(
    device: NvmlDevice,
    is_pending: *mut c_uint,
) -> NvmlReturn {
    let read = |_: Call, d: &Device| {
        let (_, _, pending) = health(d)?.retired.ok_or(ERROR_NOT_SUPPORTED)?;
        Ok(feature(pending))
    };
    // SAFETY: forwarded from this function's contract.
    unsafe {
        device_scalar(
            "nvmlDeviceGetRetiredPagesPendingStatus",
            device,
            is_pending,
            read,
        )
    }
}

/// `nvmlDeviceGetNvLinkErrorCounter`: the scenario's `nvlink` counts on link 0, zero on
/// the other links; NOT_SUPPORTED without NVLink, INVALID_ARGUMENT past the last link or
/// counter.
///
/// # Safety
/// `counter_value` must be NULL or valid for writing one `unsigned long long`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetNvLinkErrorCounter(
    device: NvmlDevice,
    link: c_uint,
    counter: c_uint,
    counter_value: *mut c_ulonglong,
) -> NvmlReturn {
    let read = |c: Call, d: &Device| {
        let h = health(d)?;
        if d.facts.nvlink_links == 0 {
            return Err(ERROR_NOT_SUPPORTED);
        }
        if link >= d.facts.nvlink_links || counter > NVLINK_ERROR_DL_ECC_DATA {
            return Err(ERROR_INVALID_ARGUMENT);
        }
        Ok(match link {
            0 => h.nvlink.get(&counter).map_or(0, |v| v.at(c.t)),
            _ => 0,
        })
    };
    // SAFETY: forwarded from this function's contract.
    unsafe {
        device_scalar(
            "nvmlDeviceGetNvLinkErrorCounter",
            device,
            counter_value,
            read,
        )
    }
}

/// `nvmlDeviceGetGpuMaxPcieLinkGeneration`: the device fact `pcie_device_max_gen` (R510+;
/// the `old-driver` build leaves it out).
///
/// # Safety
/// `max_link_gen_device` must be NULL or valid for writing one `unsigned int`.
#[cfg(not(feature = "old-driver"))]
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetGpuMaxPcieLinkGeneration(
    device: NvmlDevice,
    max_link_gen_device: *mut c_uint,
) -> NvmlReturn {
    let read = |_: Call, d: &Device| Ok(d.pcie_device_max_gen);
    // SAFETY: forwarded from this function's contract.
    unsafe {
        device_scalar(
            "nvmlDeviceGetGpuMaxPcieLinkGeneration",
            device,
            max_link_gen_device,
            read,
        )
    }
}
