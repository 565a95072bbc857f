//! Health counters on [`Nvml`]: ECC mode and error counts (in total and by memory location),
//! remapped rows, retired pages, NVLink error counters and the GPU-alone maximum PCIe
//! generation (docs/health.md).
//!
//! What it is for: one safe call per NVML function, each failing on its own; a GPU or driver
//! without the feature answers NOT_SUPPORTED (or the symbol is absent), which the caller
//! records as "not supported" for that counter. What it is not for: when to read them, or
//! what a count means; `collect::health` and the rules decide that.

use std::ffi::{c_uint, c_ulonglong};

use super::device::Device;
use super::error::NvmlError;
use super::library::{check, Nvml};
use super::sys::codes;
use super::sys::health::*;

/// `nvmlMemoryErrorType_t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EccErrorType {
    /// Corrected (single-bit) errors.
    Corrected,
    /// Uncorrected (double-bit) errors.
    Uncorrected,
}

impl EccErrorType {
    fn raw(self) -> c_uint {
        match self {
            Self::Corrected => NVML_MEMORY_ERROR_TYPE_CORRECTED,
            Self::Uncorrected => NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
        }
    }
}

/// `nvmlEccCounterType_t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EccCounter {
    /// Since the driver loaded.
    Volatile,
    /// Over the GPU's life.
    Aggregate,
}

impl EccCounter {
    fn raw(self) -> c_uint {
        match self {
            Self::Volatile => NVML_VOLATILE_ECC,
            Self::Aggregate => NVML_AGGREGATE_ECC,
        }
    }
}

/// `nvmlPageRetirementCause_t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetirementCause {
    /// Multiple single-bit errors on the page.
    MultipleSingleBit,
    /// A double-bit error on the page.
    DoubleBit,
}

/// `nvmlNvLinkErrorCounter_t` values gpuwhy sums over links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NvlinkCounter {
    /// Data-link transmit replays.
    Replay,
    /// Data-link transmit recoveries.
    Recovery,
    /// Flit CRC errors received.
    CrcFlit,
    /// Data CRC errors received.
    CrcData,
}

impl NvlinkCounter {
    fn raw(self) -> c_uint {
        match self {
            Self::Replay => NVML_NVLINK_ERROR_DL_REPLAY,
            Self::Recovery => NVML_NVLINK_ERROR_DL_RECOVERY,
            Self::CrcFlit => NVML_NVLINK_ERROR_DL_CRC_FLIT,
            Self::CrcData => NVML_NVLINK_ERROR_DL_CRC_DATA,
        }
    }
}

/// `nvmlDeviceGetRemappedRows`'s four outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowRemap {
    /// Rows remapped after correctable errors.
    pub correctable: u32,
    /// Rows remapped after uncorrectable errors.
    pub uncorrectable: u32,
    /// A remap waits for the next GPU reset.
    pub pending: bool,
    /// A remap failed.
    pub failure: bool,
}

impl Nvml {
    /// ECC mode: `(current, pending)`, true when enabled.
    pub fn ecc_mode(&self, d: Device) -> Result<(bool, bool), NvmlError> {
        let h = self.raw(d)?;
        self.syms.ecc_mode.call(|symbol, f| {
            let (mut current, mut pending): (c_uint, c_uint) = (0, 0);
            // SAFETY: `f` is `nvmlReturn_t (nvmlDevice_t, nvmlEnableState_t*,
            // nvmlEnableState_t*)` (4-byte enums); `h` is a handle from this library; both
            // outputs are valid `unsigned int`s.
            let rc = unsafe { f(h, &mut current, &mut pending) };
            check(symbol, rc).map(|()| {
                (
                    current == NVML_FEATURE_ENABLED,
                    pending == NVML_FEATURE_ENABLED,
                )
            })
        })
    }

    /// Total ECC errors of one type and counter, over the whole GPU.
    pub fn total_ecc_errors(
        &self,
        d: Device,
        kind: EccErrorType,
        counter: EccCounter,
    ) -> Result<u64, NvmlError> {
        let h = self.raw(d)?;
        self.syms.total_ecc_errors.call(|symbol, f| {
            let mut out: c_ulonglong = 0;
            // SAFETY: `f` is `nvmlReturn_t (nvmlDevice_t, nvmlMemoryErrorType_t,
            // nvmlEccCounterType_t, unsigned long long*)`; both enums are documented values;
            // `out` is a valid `unsigned long long`.
            let rc = unsafe { f(h, kind.raw(), counter.raw(), &mut out) };
            check(symbol, rc).map(|()| out)
        })
    }

    /// ECC errors of one type and counter at one memory location (`NVML_MEMORY_LOCATION_*`,
    /// from [`NVML_MEMORY_LOCATIONS`]).
    pub fn memory_error_counter(
        &self,
        d: Device,
        kind: EccErrorType,
        counter: EccCounter,
        location: u32,
    ) -> Result<u64, NvmlError> {
        let h = self.raw(d)?;
        self.syms.memory_error_counter.call(|symbol, f| {
            let mut out: c_ulonglong = 0;
            // SAFETY: `f` is `nvmlReturn_t (nvmlDevice_t, nvmlMemoryErrorType_t,
            // nvmlEccCounterType_t, nvmlMemoryLocation_t, unsigned long long*)`; the enums
            // are 4 bytes and the driver rejects a location it does not know; `out` is valid.
            let rc = unsafe { f(h, kind.raw(), counter.raw(), location, &mut out) };
            check(symbol, rc).map(|()| out)
        })
    }

    /// Remapped rows and the pending and failure flags.
    pub fn remapped_rows(&self, d: Device) -> Result<RowRemap, NvmlError> {
        let h = self.raw(d)?;
        self.syms.remapped_rows.call(|symbol, f| {
            let mut out: [c_uint; 4] = [0; 4];
            let [c, u, p, x] = &mut out;
            // SAFETY: `f` is `nvmlReturn_t (nvmlDevice_t, unsigned int*, unsigned int*,
            // unsigned int*, unsigned int*)`; `h` is a handle from this library; the four
            // outputs are distinct valid `unsigned int`s.
            let rc = unsafe { f(h, c, u, p, x) };
            check(symbol, rc).map(|()| RowRemap {
                correctable: out[0],
                uncorrectable: out[1],
                pending: out[2] != 0,
                failure: out[3] != 0,
            })
        })
    }

    /// How many pages were retired for `cause` (the count only: no address buffer).
    pub fn retired_pages(&self, d: Device, cause: RetirementCause) -> Result<u32, NvmlError> {
        let h = self.raw(d)?;
        let cause = match cause {
            RetirementCause::MultipleSingleBit => {
                NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS
            }
            RetirementCause::DoubleBit => NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR,
        };
        self.syms.retired_pages.call(|symbol, f| {
            let mut count: c_uint = 0;
            // SAFETY: `f` is `nvmlReturn_t (nvmlDevice_t, nvmlPageRetirementCause_t,
            // unsigned int *pageCount, unsigned long long *addresses)`; a count of 0 with a
            // NULL buffer asks for the count only (nvml.h), so nothing is written through it.
            let rc = unsafe { f(h, cause, &mut count, std::ptr::null_mut()) };
            // Drivers answer the size query with SUCCESS or INSUFFICIENT_SIZE, both with the
            // count filled in (pynvml accepts both the same way).
            if rc == codes::INSUFFICIENT_SIZE {
                return Ok(count);
            }
            check(symbol, rc).map(|()| count)
        })
    }

    /// Whether pages are pending retirement (at the next driver reload or GPU reset).
    pub fn retired_pages_pending(&self, d: Device) -> Result<bool, NvmlError> {
        let h = self.raw(d)?;
        self.syms.retired_pages_pending.call(|symbol, f| {
            let mut out: c_uint = 0;
            // SAFETY: `f` is `nvmlReturn_t (nvmlDevice_t, nvmlEnableState_t*)`; `h` is a
            // handle from this library; `out` is a valid 4-byte enum slot.
            let rc = unsafe { f(h, &mut out) };
            check(symbol, rc).map(|()| out == NVML_FEATURE_ENABLED)
        })
    }

    /// One NVLink error counter of one link.
    pub fn nvlink_error_counter(
        &self,
        d: Device,
        link: u32,
        counter: NvlinkCounter,
    ) -> Result<u64, NvmlError> {
        let h = self.raw(d)?;
        self.syms.nvlink_error_counter.call(|symbol, f| {
            let mut out: c_ulonglong = 0;
            // SAFETY: `f` is `nvmlReturn_t (nvmlDevice_t, unsigned int link,
            // nvmlNvLinkErrorCounter_t, unsigned long long*)`; the driver rejects a link it
            // does not have; `out` is a valid `unsigned long long`.
            let rc = unsafe { f(h, link, counter.raw(), &mut out) };
            check(symbol, rc).map(|()| out)
        })
    }

    /// The highest PCIe generation the GPU itself supports, whatever its slot.
    pub fn gpu_max_pcie_link_gen(&self, d: Device) -> Result<u32, NvmlError> {
        self.dev_uint(&self.syms.gpu_max_pcie_link_gen, d)
    }
}
