//! [`Device`] and the identity queries on [`Nvml`] (system versions, enumeration, names).
//!
//! Every query returns `Result<T, NvmlError>`: a metric a GPU does not offer is an ordinary
//! outcome here, classified by [`NvmlError::is_unavailable`], not a failure of the caller.

use std::ffi::{c_char, c_int, c_uint};

use serde::Serialize;

use super::error::{wants_fallback, NvmlError};
use super::library::{check, Nvml};
use super::symbols::Chain;
use super::sys::fns::{DevEnumUintFn, DevStrFn, DevUintFn, SysStrFn};
use super::sys::{self, codes, nvmlDevice_t};

/// A GPU as NVML knows it: a copyable handle, valid only with the [`Nvml`] that returned it
/// from [`Nvml::device_by_index`] (other instances refuse it with INVALID_ARGUMENT).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Device {
    pub(super) handle: nvmlDevice_t,
    pub(super) owner: u64,
}

// SAFETY: the handle is an opaque value that Rust never dereferences; it is only passed back to
// NVML, which is thread-safe (docs/nvml-facts.md, "Conventions"), through the `Nvml` it belongs to.
unsafe impl Send for Device {}
// SAFETY: as for `Send`: shared references only allow copying the opaque value.
unsafe impl Sync for Device {}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Device({:p})", self.handle)
    }
}

/// PCI identity of a device (`nvmlPciInfo_t`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PciInfo {
    /// `"00000000:3B:00.0"` (8-digit domain; 4-digit on very old drivers).
    pub bus_id: String,
    /// PCI domain.
    pub domain: u32,
    /// PCI bus.
    pub bus: u32,
    /// PCI device.
    pub device: u32,
    /// `(device id << 16) | vendor id`, e.g. `0x233010DE` for an H100 SXM5.
    pub pci_device_id: u32,
    /// Subsystem id.
    pub pci_subsystem_id: u32,
}

/// Makes a checked error for a value NVML returned with SUCCESS but that cannot be true.
pub(super) const fn implausible(function: &'static str) -> NvmlError {
    NvmlError::new(function, codes::UNKNOWN)
}

/// Text NVML wrote into `buf`: up to the first NUL (or the whole buffer if there is none).
fn c_text(buf: &[u8]) -> String {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// `c_text` for a `char` array inside a mirror struct.
fn c_array_text(chars: &[c_char]) -> String {
    let bytes: Vec<u8> = chars.iter().map(|&c| c as u8).collect();
    c_text(&bytes)
}

impl Nvml {
    fn sys_string(&self, chain: &Chain<SysStrFn>, capacity: usize) -> Result<String, NvmlError> {
        chain.call(|symbol, f| {
            let mut buf = vec![0u8; capacity];
            // SAFETY: `f` is `nvmlReturn_t (char*, unsigned int)`; `buf` is writable for
            // `capacity` bytes, which is the length passed (a small constant).
            let rc = unsafe { f(buf.as_mut_ptr().cast(), capacity as c_uint) };
            check(symbol, rc).map(|()| c_text(&buf))
        })
    }

    fn dev_string(
        &self,
        chain: &Chain<DevStrFn>,
        d: Device,
        capacity: usize,
    ) -> Result<String, NvmlError> {
        let h = self.raw(d)?;
        chain.call(|symbol, f| {
            let mut buf = vec![0u8; capacity];
            // SAFETY: `f` is `nvmlReturn_t (nvmlDevice_t, char*, unsigned int)`; `h` is a handle
            // from this library; `buf` is writable for the `capacity` bytes passed.
            let rc = unsafe { f(h, buf.as_mut_ptr().cast(), capacity as c_uint) };
            check(symbol, rc).map(|()| c_text(&buf))
        })
    }

    pub(super) fn dev_uint(&self, chain: &Chain<DevUintFn>, d: Device) -> Result<u32, NvmlError> {
        let h = self.raw(d)?;
        chain.call(|symbol, f| {
            let mut out: c_uint = 0;
            // SAFETY: `f` is `nvmlReturn_t (nvmlDevice_t, unsigned int*)` (or an enum out, also
            // 4 bytes); `h` is a handle from this library; `out` is a valid `unsigned int`.
            let rc = unsafe { f(h, &mut out) };
            check(symbol, rc).map(|()| out)
        })
    }

    pub(super) fn dev_enum_uint(
        &self,
        chain: &Chain<DevEnumUintFn>,
        d: Device,
        which: u32,
    ) -> Result<u32, NvmlError> {
        let h = self.raw(d)?;
        chain.call(|symbol, f| {
            let mut out: c_uint = 0;
            // SAFETY: `f` is `nvmlReturn_t (nvmlDevice_t, <4-byte enum>, unsigned int*)`; `which`
            // is one of the enum's documented values; `out` is a valid `unsigned int`.
            let rc = unsafe { f(h, which, &mut out) };
            check(symbol, rc).map(|()| out)
        })
    }

    /// Driver version, e.g. `"550.54.15"`.
    pub fn driver_version(&self) -> Result<String, NvmlError> {
        self.sys_string(
            &self.syms.driver_version,
            sys::NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE,
        )
    }

    /// NVML version, e.g. `"12.550.54.15"`.
    pub fn nvml_version(&self) -> Result<String, NvmlError> {
        self.sys_string(
            &self.syms.nvml_version,
            sys::NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE,
        )
    }

    /// CUDA driver API version, `1000 * major + 10 * minor` (12040 = 12.4).
    /// `nvmlSystemGetCudaDriverVersion_v2` asks libcuda and answers LIBRARY_NOT_FOUND where
    /// `libcuda.so.1` is absent (a container without the compute capability); the
    /// unversioned function still answers there, so that code falls back to it for good.
    pub fn cuda_driver_version(&self) -> Result<i32, NvmlError> {
        let fallback = |code| wants_fallback(code) || code == codes::LIBRARY_NOT_FOUND;
        self.syms
            .cuda_driver_version
            .call_falling_back(fallback, |symbol, f| {
                let mut out: c_int = 0;
                // SAFETY: `f` is `nvmlReturn_t (int*)`; `out` is a valid `int`.
                let rc = unsafe { f(&mut out) };
                check(symbol, rc).map(|()| out)
            })
    }

    /// Number of GPUs, including ones this process may not be allowed to open.
    pub fn device_count(&self) -> Result<u32, NvmlError> {
        self.syms.device_count.call(|symbol, f| {
            let mut out: c_uint = 0;
            // SAFETY: `f` is `nvmlReturn_t (unsigned int*)`; `out` is a valid `unsigned int`.
            let rc = unsafe { f(&mut out) };
            check(symbol, rc).map(|()| out)
        })
    }

    /// The device at NVML index `index`. NVML's order need not match CUDA's; match devices
    /// to a training process by [`Nvml::uuid`] or [`Nvml::pci_info`].
    pub fn device_by_index(&self, index: u32) -> Result<Device, NvmlError> {
        self.syms.handle_by_index.call(|symbol, f| {
            let mut handle: nvmlDevice_t = std::ptr::null_mut();
            // SAFETY: `f` is `nvmlReturn_t (unsigned int, nvmlDevice_t*)`; `handle` is a valid
            // out-pointer for one handle.
            let rc = unsafe { f(index, &mut handle) };
            check(symbol, rc)?;
            if handle.is_null() {
                return Err(implausible(
                    "nvmlDeviceGetHandleByIndex (returned a NULL handle)",
                ));
            }
            Ok(Device {
                handle,
                owner: self.id,
            })
        })
    }

    /// Product name, e.g. `"NVIDIA H100 80GB HBM3"`.
    pub fn name(&self, d: Device) -> Result<String, NvmlError> {
        self.dev_string(&self.syms.name, d, sys::NVML_DEVICE_NAME_V2_BUFFER_SIZE)
    }

    /// UUID, `"GPU-…"` (or `"MIG-…"` for MIG handles).
    pub fn uuid(&self, d: Device) -> Result<String, NvmlError> {
        self.dev_string(&self.syms.uuid, d, sys::NVML_DEVICE_UUID_V2_BUFFER_SIZE)
    }

    /// PCI identity.
    pub fn pci_info(&self, d: Device) -> Result<PciInfo, NvmlError> {
        let h = self.raw(d)?;
        self.syms.pci_info.call(|symbol, f| {
            // SAFETY: all-zero bytes are a valid `nvmlPciInfo_t` (integers and char arrays).
            let mut p: sys::nvmlPciInfo_t = unsafe { std::mem::zeroed() };
            // SAFETY: `f` is `nvmlReturn_t (nvmlDevice_t, nvmlPciInfo_t*)`; `p` is the 68-byte
            // struct the v2/v3 functions fill, larger than the 52-byte one the unversioned
            // function fills, so every version writes inside it.
            let rc = unsafe { f(h, &mut p) };
            check(symbol, rc)?;
            // The unversioned function's struct has the bus id where v2 has `busIdLegacy`
            // and reserved words where v2 has `busId`.
            let long = c_array_text(&p.busId);
            let bus_id = if symbol == "nvmlDeviceGetPciInfo" || long.is_empty() {
                c_array_text(&p.busIdLegacy)
            } else {
                long
            };
            Ok(PciInfo {
                bus_id,
                domain: p.domain,
                bus: p.bus,
                device: p.device,
                pci_device_id: p.pciDeviceId,
                pci_subsystem_id: p.pciSubSystemId,
            })
        })
    }

    /// `nvmlDeviceArchitecture_t`: 7 Ampere, 8 Ada, 9 Hopper, 10 Blackwell, ...
    pub fn architecture(&self, d: Device) -> Result<u32, NvmlError> {
        self.dev_uint(&self.syms.architecture, d)
    }

    /// CUDA compute capability `(major, minor)`.
    pub fn cuda_compute_capability(&self, d: Device) -> Result<(i32, i32), NvmlError> {
        let h = self.raw(d)?;
        self.syms.compute_capability.call(|symbol, f| {
            let (mut major, mut minor): (c_int, c_int) = (0, 0);
            // SAFETY: `f` is `nvmlReturn_t (nvmlDevice_t, int*, int*)`; both are valid `int`s.
            let rc = unsafe { f(h, &mut major, &mut minor) };
            check(symbol, rc).map(|()| (major, minor))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_text_stops_at_nul_and_tolerates_unterminated_buffers() {
        assert_eq!(c_text(b"NVIDIA H100\0garbage"), "NVIDIA H100");
        assert_eq!(c_text(b"abc"), "abc");
        assert_eq!(c_text(b"\0"), "");
    }
}
