//! Per-device readings on [`Nvml`]: utilization, memory, power, temperature, clocks, PCIe.
//!
//! Values NVML returns with SUCCESS but that cannot be true are rejected as errors with code
//! UNKNOWN and a function name saying what was rejected (docs/nvml-facts.md, "Hazards"), never
//! passed on.

use std::ffi::c_uint;

use serde::Serialize;

use super::device::{implausible, Device};
use super::error::NvmlError;
use super::fields::{ids as field_ids, FieldValue};
use super::library::{check, Nvml};
use super::symbols::{MemoryInfoFn, TemperatureFn};
use super::sys;

/// Highest believable board power: 10 kW (10 million mW). Boards draw at most a few kW; a 32-bit
/// 580.xx `libnvidia-ml` returned values in the millions with SUCCESS (docs/nvml-facts.md,
/// "Hazards", flightlessmango/MangoHud#2144), so anything above this is a garbage read.
pub const POWER_MAX_PLAUSIBLE_MW: u32 = 10_000_000;

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
    /// Used, as the call that answered defines it: v1's includes reserved memory; for v2 the
    /// header says both (the struct: allocated only; the function: reserved included), so
    /// gpuwhy does not rely on it; see [`MemoryInfo::in_use`].
    pub used: u64,
    /// Reserved by the system; `None` when only the v1 function was available.
    pub reserved: Option<u64>,
}

impl MemoryInfo {
    /// Memory that is not free: what processes allocated plus what the driver and firmware
    /// reserve, `total − free`. Both memory calls define `free` the same way ("unallocated
    /// device memory"), so this has one meaning whichever of them answered — unlike `used`.
    pub fn in_use(&self) -> u64 {
        self.total.saturating_sub(self.free)
    }
}

/// `nvmlTemperatureThresholds_t` values gpuwhy reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum TemperatureThreshold {
    /// The GPU shuts down.
    Shutdown = sys::enums::NVML_TEMPERATURE_THRESHOLD_SHUTDOWN,
    /// Hardware slowdown starts.
    Slowdown = sys::enums::NVML_TEMPERATURE_THRESHOLD_SLOWDOWN,
    /// Maximum memory temperature.
    MemMax = sys::enums::NVML_TEMPERATURE_THRESHOLD_MEM_MAX,
    /// Maximum GPU temperature for normal operation.
    GpuMax = sys::enums::NVML_TEMPERATURE_THRESHOLD_GPU_MAX,
}

/// `nvmlClockType_t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum ClockType {
    /// Graphics clock (nvidia-smi's `pclk`).
    Graphics = sys::enums::NVML_CLOCK_GRAPHICS,
    /// SM clock.
    Sm = sys::enums::NVML_CLOCK_SM,
    /// Memory clock.
    Mem = sys::enums::NVML_CLOCK_MEM,
    /// Video encoder/decoder clock.
    Video = sys::enums::NVML_CLOCK_VIDEO,
}

/// `nvmlPcieUtilCounter_t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum PcieCounter {
    /// Bytes sent by the GPU.
    Tx = sys::enums::NVML_PCIE_UTIL_TX_BYTES,
    /// Bytes received by the GPU.
    Rx = sys::enums::NVML_PCIE_UTIL_RX_BYTES,
}

impl Nvml {
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

    /// A temperature threshold in °C: the T.Limit field (`NVML_FI_DEV_TEMPERATURE_*_TLIMIT`,
    /// 193–196), which the header prefers on Ada and later and which replaces
    /// `nvmlDeviceGetTemperatureThreshold` for these four thresholds; when the field is not
    /// answered (older GPUs, older drivers) the threshold function. The error is the
    /// function's when both fail.
    pub fn temperature_threshold_c(
        &self,
        d: Device,
        which: TemperatureThreshold,
    ) -> Result<u32, NvmlError> {
        let id = match which {
            TemperatureThreshold::Shutdown => field_ids::TEMPERATURE_SHUTDOWN_TLIMIT,
            TemperatureThreshold::Slowdown => field_ids::TEMPERATURE_SLOWDOWN_TLIMIT,
            TemperatureThreshold::MemMax => field_ids::TEMPERATURE_MEM_MAX_TLIMIT,
            TemperatureThreshold::GpuMax => field_ids::TEMPERATURE_GPU_MAX_TLIMIT,
        };
        let mut field = [FieldValue::new(id)];
        if self.field_values(d, &mut field).is_ok() {
            // A believable temperature: above 0 °C and below 200 °C.
            if let Ok(c) = field[0].result {
                if c > 0.0 && c < 200.0 {
                    return Ok(c.round() as u32);
                }
            }
        }
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

    /// Clock-event reason bits (docs/nvml-facts.md, "Clock-event reasons"):
    /// `nvmlDeviceGetCurrentClocksEventReasons`, falling back to the deprecated
    /// `...ThrottleReasons`, which has the same bits.
    pub fn clock_event_reasons(&self, d: Device) -> Result<u64, NvmlError> {
        let h = self.raw(d)?;
        self.syms.clock_event_reasons.call(|symbol, f| {
            let mut out: u64 = 0;
            // SAFETY: `f` is `nvmlReturn_t (nvmlDevice_t, unsigned long long*)`; `out` is valid.
            let rc = unsafe { f(h, &mut out) };
            check(symbol, rc).map(|()| out)
        })
    }

    /// PCIe throughput in NVML's "KB"/s (1 KB = 1024 bytes, docs/nvml-loading.md) over a
    /// 20 ms window (each call takes about that long).
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
    fn memory_in_use_is_total_minus_free_whichever_call_answered() {
        // The same device through v2 (used = allocated, reserved apart) and v1 (used =
        // reserved + allocated): one figure, 1.5 GiB, either way.
        let v2 = MemoryInfo {
            total: 8 << 30,
            free: (13 << 30) / 2,
            used: 1 << 30,
            reserved: Some(512 << 20),
        };
        let v1 = MemoryInfo {
            used: (3 << 30) / 2,
            reserved: None,
            ..v2
        };
        assert_eq!(v2.in_use(), 3 << 29);
        assert_eq!(v1.in_use(), v2.in_use());
    }

    #[test]
    fn enums_carry_the_header_values() {
        assert_eq!(ClockType::Mem as u32, 2);
        assert_eq!(TemperatureThreshold::GpuMax as u32, 3);
        assert_eq!(PcieCounter::Rx as u32, 1);
    }
}
