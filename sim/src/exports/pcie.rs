//! PCIe throughput and link state.

use std::ffi::c_uint;

use super::device_scalar;
use crate::abi::*;
use crate::metric::Metric;

/// `nvmlDeviceGetPcieThroughput`: `pcie_tx_kbs` (counter 0) or `pcie_rx_kbs` (counter 1),
/// KB/s; other counters are INVALID_ARGUMENT.
///
/// # Safety
/// `value` must be NULL or valid for writing one `unsigned int`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetPcieThroughput(
    device: NvmlDevice,
    counter: c_uint,
    value: *mut c_uint,
) -> NvmlReturn {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        device_scalar("nvmlDeviceGetPcieThroughput", device, value, |c, d| {
            let metric = match counter {
                PCIE_UTIL_TX_BYTES => Metric::PcieTxKbs,
                PCIE_UTIL_RX_BYTES => Metric::PcieRxKbs,
                _ => return Err(ERROR_INVALID_ARGUMENT),
            };
            Ok(d.value_u32(metric, c.t))
        })
    }
}

/// `nvmlDeviceGetCurrPcieLinkGeneration`: `pcie_gen`, never above the max.
///
/// # Safety
/// `curr_link_gen` must be NULL or valid for writing one `unsigned int`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetCurrPcieLinkGeneration(
    device: NvmlDevice,
    curr_link_gen: *mut c_uint,
) -> NvmlReturn {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        device_scalar(
            "nvmlDeviceGetCurrPcieLinkGeneration",
            device,
            curr_link_gen,
            |c, d| Ok(d.value_u32(Metric::PcieGen, c.t).min(d.facts.pcie_max_gen)),
        )
    }
}

/// `nvmlDeviceGetCurrPcieLinkWidth`: `pcie_width`, never above the max.
///
/// # Safety
/// `curr_link_width` must be NULL or valid for writing one `unsigned int`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetCurrPcieLinkWidth(
    device: NvmlDevice,
    curr_link_width: *mut c_uint,
) -> NvmlReturn {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        device_scalar(
            "nvmlDeviceGetCurrPcieLinkWidth",
            device,
            curr_link_width,
            |c, d| {
                Ok(d.value_u32(Metric::PcieWidth, c.t)
                    .min(d.facts.pcie_max_width))
            },
        )
    }
}

/// `nvmlDeviceGetMaxPcieLinkGeneration`: the device fact `pcie_max_gen`.
///
/// # Safety
/// `max_link_gen` must be NULL or valid for writing one `unsigned int`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetMaxPcieLinkGeneration(
    device: NvmlDevice,
    max_link_gen: *mut c_uint,
) -> NvmlReturn {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        device_scalar(
            "nvmlDeviceGetMaxPcieLinkGeneration",
            device,
            max_link_gen,
            |_, d| Ok(d.facts.pcie_max_gen),
        )
    }
}

/// `nvmlDeviceGetMaxPcieLinkWidth`: the device fact `pcie_max_width`.
///
/// # Safety
/// `max_link_width` must be NULL or valid for writing one `unsigned int`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetMaxPcieLinkWidth(
    device: NvmlDevice,
    max_link_width: *mut c_uint,
) -> NvmlReturn {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        device_scalar(
            "nvmlDeviceGetMaxPcieLinkWidth",
            device,
            max_link_width,
            |_, d| Ok(d.facts.pcie_max_width),
        )
    }
}
