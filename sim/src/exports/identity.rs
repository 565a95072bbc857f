//! Static device identity: name, UUID, PCI address, architecture, compute capability.

use std::ffi::{c_char, c_int, c_uint};

use super::{boundary, non_null, put, put_str};
use crate::abi::*;
use crate::scenario::Device;
use crate::state;

/// `nvmlDeviceGetName`: the product name; INSUFFICIENT_SIZE when `length` is too small.
///
/// # Safety
/// `name` must be NULL or valid for writing `length` bytes.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetName(
    device: NvmlDevice,
    name: *mut c_char,
    length: c_uint,
) -> NvmlReturn {
    boundary(|| {
        let (_, d) = state::device("nvmlDeviceGetName", device)?;
        // SAFETY: forwarded from this function's contract.
        unsafe { put_str(name, length, &d.name) }
    })
}

/// `nvmlDeviceGetUUID`: `GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`.
///
/// # Safety
/// `uuid` must be NULL or valid for writing `length` bytes.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetUUID(
    device: NvmlDevice,
    uuid: *mut c_char,
    length: c_uint,
) -> NvmlReturn {
    boundary(|| {
        let (_, d) = state::device("nvmlDeviceGetUUID", device)?;
        // SAFETY: forwarded from this function's contract.
        unsafe { put_str(uuid, length, &d.uuid) }
    })
}

/// `nvmlDeviceGetPciInfo_v3`: the PCI address and ids.
///
/// # Safety
/// `pci` must be NULL or valid for writing one `nvmlPciInfo_t`.
#[cfg(not(feature = "old-driver"))]
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetPciInfo_v3(
    device: NvmlDevice,
    pci: *mut NvmlPciInfo,
) -> NvmlReturn {
    // SAFETY: forwarded from this function's contract.
    unsafe { pci_info("nvmlDeviceGetPciInfo_v3", device, pci) }
}

/// `nvmlDeviceGetPciInfo_v2`: the same struct and values as `_v3`.
///
/// # Safety
/// `pci` must be NULL or valid for writing one `nvmlPciInfo_t`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetPciInfo_v2(
    device: NvmlDevice,
    pci: *mut NvmlPciInfo,
) -> NvmlReturn {
    // SAFETY: forwarded from this function's contract.
    unsafe { pci_info("nvmlDeviceGetPciInfo_v2", device, pci) }
}

/// `nvmlDeviceGetPciInfo`: the same struct and values as `_v3` (the current header
/// declares all three with `nvmlPciInfo_t`).
///
/// # Safety
/// `pci` must be NULL or valid for writing one `nvmlPciInfo_t`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetPciInfo(
    device: NvmlDevice,
    pci: *mut NvmlPciInfo,
) -> NvmlReturn {
    // SAFETY: forwarded from this function's contract.
    unsafe { pci_info("nvmlDeviceGetPciInfo", device, pci) }
}

/// # Safety
/// `out` must be NULL or valid for writing one `nvmlPciInfo_t`.
unsafe fn pci_info(function: &str, device: NvmlDevice, out: *mut NvmlPciInfo) -> NvmlReturn {
    boundary(|| {
        let (_, d) = state::device(function, device)?;
        non_null(out)?;
        // SAFETY: forwarded from this function's contract.
        unsafe { put(out, pci_struct(d)) }
    })
}

fn pci_struct(d: &Device) -> NvmlPciInfo {
    let a = d.pci;
    NvmlPciInfo {
        busIdLegacy: c_chars(&format!(
            "{:04X}:{:02X}:{:02X}.0",
            a.domain, a.bus, a.device
        )),
        domain: a.domain,
        bus: a.bus,
        device: a.device,
        pciDeviceId: d.facts.pci_device_id,
        pciSubSystemId: d.facts.pci_subsystem_id,
        busId: c_chars(&format!(
            "{:08X}:{:02X}:{:02X}.0",
            a.domain, a.bus, a.device
        )),
    }
}

/// A NUL-padded fixed-size C string (truncated to leave room for the NUL).
fn c_chars<const N: usize>(text: &str) -> [c_char; N] {
    let mut out = [0 as c_char; N];
    for (slot, byte) in out.iter_mut().zip(text.bytes().take(N - 1)) {
        *slot = byte as c_char;
    }
    out
}

/// `nvmlDeviceGetArchitecture`: `nvmlDeviceArchitecture_t` (7 Ampere, 8 Ada, 9 Hopper).
///
/// # Safety
/// `arch` must be NULL or valid for writing one `unsigned int`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetArchitecture(
    device: NvmlDevice,
    arch: *mut c_uint,
) -> NvmlReturn {
    boundary(|| {
        let (_, d) = state::device("nvmlDeviceGetArchitecture", device)?;
        // SAFETY: forwarded from this function's contract.
        unsafe { put(arch, d.facts.architecture) }
    })
}

/// `nvmlDeviceGetCudaComputeCapability`: major and minor, e.g. 9 and 0 for an H100.
///
/// # Safety
/// `major` and `minor` must each be NULL or valid for writing one `int`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetCudaComputeCapability(
    device: NvmlDevice,
    major: *mut c_int,
    minor: *mut c_int,
) -> NvmlReturn {
    boundary(|| {
        let (_, d) = state::device("nvmlDeviceGetCudaComputeCapability", device)?;
        non_null(major)?;
        non_null(minor)?;
        let (ma, mi) = d.facts.compute_capability;
        // SAFETY: forwarded from this function's contract.
        unsafe { put(major, ma) }?;
        // SAFETY: forwarded from this function's contract.
        unsafe { put(minor, mi) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_chars_truncates_and_terminates() {
        let s: [c_char; 4] = c_chars("abcdef");
        assert_eq!(s, [b'a' as c_char, b'b' as c_char, b'c' as c_char, 0]);
    }
}
