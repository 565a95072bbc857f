//! [`Device`] and the per-device and system queries on [`Nvml`].
//!
//! Every query returns `Result<T, NvmlError>`: a metric a GPU does not offer is an ordinary
//! outcome here, classified by [`NvmlError::is_unavailable`], not a failure of the caller.

use std::ffi::{c_char, c_int, c_uint};

use serde::Serialize;

use super::error::NvmlError;
use super::library::{check, Nvml};
use super::symbols::{
    Chain, DevEnumUintFn, DevStrFn, DevUintFn, MemoryInfoFn, SysStrFn, TemperatureFn,
};
use super::sys::{self, codes, nvmlDevice_t};

/// Highest believable board power: 10 kW (10 million mW). Boards draw at most a few kW; a
/// 32-bit 580.xx `libnvidia-ml` returned values in the millions with SUCCESS (nvml.md §7.6,
/// flightlessmango/MangoHud#2144), so anything above this is a garbage read.
pub const POWER_MAX_PLAUSIBLE_MW: u32 = 10_000_000;

/// A GPU as NVML knows it: a copyable handle, valid only with the [`Nvml`] that returned it
/// from [`Nvml::device_by_index`] (other instances refuse it with INVALID_ARGUMENT).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Device {
    pub(super) handle: nvmlDevice_t,
    pub(super) owner: u64,
}

// SAFETY: the handle is an opaque value that Rust never dereferences; it is only passed back
// to NVML, which is thread-safe (nvml.md §9.1), through the `Nvml` it belongs to.
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

/// `nvmlUtilization_t`: percent of the last sample period (1/6 s to 1 s, per product).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Utilization {
    /// Time during which at least one kernel ran, not how much of the chip it used.
    pub gpu: u32,
    /// Time during which device memory was read or written (not capacity used).
    pub memory: u32,
}

/// Memory capacity in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MemoryInfo {
    /// Total.
    pub total: u64,
    /// Free.
    pub free: u64,
    /// Used. With `nvmlDeviceGetMemoryInfo_v2` the header is self-contradictory about whether
    /// `reserved` is included, so keep both.
    pub used: u64,
    /// Reserved by the system; `None` when only the v1 function was available.
    pub reserved: Option<u64>,
}

/// `nvmlTemperatureThresholds_t` values gpuwhy reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum TemperatureThreshold {
    /// The GPU shuts down.
    Shutdown = 0,
    /// Hardware slowdown starts.
    Slowdown = 1,
    /// Maximum memory temperature.
    MemMax = 2,
    /// Maximum GPU temperature for normal operation.
    GpuMax = 3,
}

/// `nvmlClockType_t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum ClockType {
    /// Graphics clock (nvidia-smi's `pclk`).
    Graphics = 0,
    /// SM clock.
    Sm = 1,
    /// Memory clock.
    Mem = 2,
    /// Video encoder/decoder clock.
    Video = 3,
}

/// `nvmlPcieUtilCounter_t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum PcieCounter {
    /// Bytes sent by the GPU.
    Tx = 0,
    /// Bytes received by the GPU.
    Rx = 1,
}

/// Makes a checked error for a value NVML returned with SUCCESS but that cannot be true.
const fn implausible(function: &'static str) -> NvmlError {
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

    fn dev_uint(&self, chain: &Chain<DevUintFn>, d: Device) -> Result<u32, NvmlError> {
        let h = self.raw(d)?;
        chain.call(|symbol, f| {
            let mut out: c_uint = 0;
            // SAFETY: `f` is `nvmlReturn_t (nvmlDevice_t, unsigned int*)` (or an enum out, also
            // 4 bytes); `h` is a handle from this library; `out` is a valid `unsigned int`.
            let rc = unsafe { f(h, &mut out) };
            check(symbol, rc).map(|()| out)
        })
    }

    fn dev_enum_uint(
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
    pub fn cuda_driver_version(&self) -> Result<i32, NvmlError> {
        self.syms.cuda_driver_version.call(|symbol, f| {
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

    /// GPU and memory-controller busy percentages. A reading above 100 is rejected as an
    /// error (code UNKNOWN) rather than passed on.
    pub fn utilization(&self, d: Device) -> Result<Utilization, NvmlError> {
        let h = self.raw(d)?;
        self.syms.utilization.call(|symbol, f| {
            let mut u = sys::nvmlUtilization_t::default();
            // SAFETY: `f` is `nvmlReturn_t (nvmlDevice_t, nvmlUtilization_t*)`; `u` is one.
            let rc = unsafe { f(h, &mut u) };
            check(symbol, rc)?;
            if u.gpu > 100 || u.memory > 100 {
                return Err(implausible(
                    "nvmlDeviceGetUtilizationRates (reading above 100 % rejected)",
                ));
            }
            Ok(Utilization {
                gpu: u.gpu,
                memory: u.memory,
            })
        })
    }

    /// Memory capacity: `nvmlDeviceGetMemoryInfo_v2` (with `reserved`), falling back to the v1
    /// function on drivers older than R510 or that retired v2.
    pub fn memory_info(&self, d: Device) -> Result<MemoryInfo, NvmlError> {
        let h = self.raw(d)?;
        self.syms.memory_info.call(|symbol, f| match f {
            MemoryInfoFn::V2(f) => {
                let mut m = sys::nvmlMemory_v2_t {
                    version: sys::NVML_MEMORY_V2,
                    ..Default::default()
                };
                // SAFETY: `f` is `nvmlReturn_t (nvmlDevice_t, nvmlMemory_v2_t*)`; `m` is one
                // with its version set as the function requires.
                let rc = unsafe { f(h, &mut m) };
                check(symbol, rc)?;
                Ok(MemoryInfo {
                    total: m.total,
                    free: m.free,
                    used: m.used,
                    reserved: Some(m.reserved),
                })
            }
            MemoryInfoFn::V1(f) => {
                let mut m = sys::nvmlMemory_t::default();
                // SAFETY: `f` is `nvmlReturn_t (nvmlDevice_t, nvmlMemory_t*)`; `m` is one.
                let rc = unsafe { f(h, &mut m) };
                check(symbol, rc)?;
                Ok(MemoryInfo {
                    total: m.total,
                    free: m.free,
                    used: m.used,
                    reserved: None,
                })
            }
        })
    }

    /// Board power in mW (a 1 s average on Ampere and newer except GA100). Readings above
    /// [`POWER_MAX_PLAUSIBLE_MW`] are rejected as an error (code UNKNOWN).
    pub fn power_usage_mw(&self, d: Device) -> Result<u32, NvmlError> {
        let mw = self.dev_uint(&self.syms.power_usage, d)?;
        if mw > POWER_MAX_PLAUSIBLE_MW {
            return Err(implausible(
                "nvmlDeviceGetPowerUsage (reading above 10 kW rejected)",
            ));
        }
        Ok(mw)
    }

    /// The power limit in force after all limiters, mW; implausible values are rejected
    /// like [`Nvml::power_usage_mw`]'s.
    pub fn enforced_power_limit_mw(&self, d: Device) -> Result<u32, NvmlError> {
        let mw = self.dev_uint(&self.syms.enforced_power_limit, d)?;
        if mw > POWER_MAX_PLAUSIBLE_MW {
            return Err(implausible(
                "nvmlDeviceGetEnforcedPowerLimit (limit above 10 kW rejected)",
            ));
        }
        Ok(mw)
    }

    /// GPU temperature in °C: `nvmlDeviceGetTemperatureV`, falling back to the deprecated
    /// `nvmlDeviceGetTemperature` (sensor 0) on drivers before R570 or that reject the struct.
    pub fn temperature_gpu_c(&self, d: Device) -> Result<i32, NvmlError> {
        let h = self.raw(d)?;
        self.syms.temperature.call(|symbol, f| match f {
            TemperatureFn::Versioned(f) => {
                let mut t = sys::nvmlTemperature_v1_t {
                    version: sys::NVML_TEMPERATURE_V1,
                    sensorType: sys::NVML_TEMPERATURE_GPU,
                    temperature: 0,
                };
                // SAFETY: `f` is `nvmlReturn_t (nvmlDevice_t, nvmlTemperature_t*)`; `t` is a
                // v1 struct with version and sensor set.
                let rc = unsafe { f(h, &mut t) };
                check(symbol, rc).map(|()| t.temperature)
            }
            TemperatureFn::Legacy(f) => {
                let mut out: c_uint = 0;
                // SAFETY: `f` is `nvmlReturn_t (nvmlDevice_t, nvmlTemperatureSensors_t,
                // unsigned int*)`; sensor 0 is NVML_TEMPERATURE_GPU; `out` is valid.
                let rc = unsafe { f(h, sys::NVML_TEMPERATURE_GPU, &mut out) };
                check(symbol, rc)?;
                i32::try_from(out)
                    .map_err(|_| implausible("nvmlDeviceGetTemperature (reading out of range)"))
            }
        })
    }

    /// A temperature threshold in °C.
    pub fn temperature_threshold_c(
        &self,
        d: Device,
        which: TemperatureThreshold,
    ) -> Result<u32, NvmlError> {
        self.dev_enum_uint(&self.syms.temperature_threshold, d, which as u32)
    }

    /// Current clock in MHz.
    pub fn clock_mhz(&self, d: Device, clock: ClockType) -> Result<u32, NvmlError> {
        self.dev_enum_uint(&self.syms.clock_info, d, clock as u32)
    }

    /// Maximum clock in MHz.
    pub fn max_clock_mhz(&self, d: Device, clock: ClockType) -> Result<u32, NvmlError> {
        self.dev_enum_uint(&self.syms.max_clock_info, d, clock as u32)
    }

    /// Performance state: 0 (P0, fastest) to 15, 32 = unknown.
    pub fn performance_state(&self, d: Device) -> Result<u32, NvmlError> {
        self.dev_uint(&self.syms.performance_state, d)
    }

    /// Clock-event reason bits (nvml.md §5.6): `nvmlDeviceGetCurrentClocksEventReasons`,
    /// falling back to the deprecated `...ThrottleReasons`, which has the same bits.
    pub fn clock_event_reasons(&self, d: Device) -> Result<u64, NvmlError> {
        let h = self.raw(d)?;
        self.syms.clock_event_reasons.call(|symbol, f| {
            let mut out: u64 = 0;
            // SAFETY: `f` is `nvmlReturn_t (nvmlDevice_t, unsigned long long*)`; `out` is valid.
            let rc = unsafe { f(h, &mut out) };
            check(symbol, rc).map(|()| out)
        })
    }

    /// PCIe throughput in KB/s over a 20 ms window (each call takes about that long).
    pub fn pcie_throughput_kbs(&self, d: Device, counter: PcieCounter) -> Result<u32, NvmlError> {
        self.dev_enum_uint(&self.syms.pcie_throughput, d, counter as u32)
    }

    /// Current PCIe generation.
    pub fn pcie_link_gen(&self, d: Device) -> Result<u32, NvmlError> {
        self.dev_uint(&self.syms.pcie_link_gen, d)
    }

    /// Current PCIe lane count.
    pub fn pcie_link_width(&self, d: Device) -> Result<u32, NvmlError> {
        self.dev_uint(&self.syms.pcie_link_width, d)
    }

    /// Highest PCIe generation both the device and its slot support.
    pub fn max_pcie_link_gen(&self, d: Device) -> Result<u32, NvmlError> {
        self.dev_uint(&self.syms.max_pcie_link_gen, d)
    }

    /// Widest PCIe link both the device and its slot support.
    pub fn max_pcie_link_width(&self, d: Device) -> Result<u32, NvmlError> {
        self.dev_uint(&self.syms.max_pcie_link_width, d)
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

    #[test]
    fn enums_carry_the_header_values() {
        assert_eq!(ClockType::Mem as u32, 2);
        assert_eq!(TemperatureThreshold::GpuMax as u32, 3);
        assert_eq!(PcieCounter::Rx as u32, 1);
    }
}
