//! NVML, loaded at run time with `libloading`: hand-written bindings for the ~45 entry points
//! gpuwhy samples.
//!
//! What it is for: finding the driver's `libnvidia-ml.so.1` (or a simulator) without any link-time
//! dependency, binding each entry point with its per-version fallbacks (docs/nvml-facts.md,
//! "Versioned symbols"), and exposing safe, typed queries whose failures are classified per metric
//! ([`NvmlError`]). What it is not for: sampling policy, units conversion or deciding what a number
//! means; the sampler and the rules do that.
//!
//! Every symbol is optional. A binding the library does not export answers FUNCTION_NOT_FOUND with
//! [`NvmlError::missing_symbol`] set; a newer symbol that answers FUNCTION_NOT_FOUND, DEPRECATED or
//! ARGUMENT_VERSION_MISMATCH is replaced by its older fallback for the rest of the session
//! ([`Nvml::resolved_symbols`] shows which is in use).
//!
//! All `unsafe` code of the crate's NVML side lives in this module.

mod arch;
mod device;
mod error;
mod events;
mod fields;
mod gpm;
#[cfg(all(test, target_os = "linux", target_pointer_width = "64"))]
mod header_check;
mod health;
mod library;
mod mig;
mod processes;
mod readings;
mod samples;
mod search;
mod symbols;
/// NVML's C layouts and constants: the shared binding crate (`nvml-sys/`), which the
/// simulator's exports use too.
use gpuwhy_nvml_sys as sys;

pub use arch::{architecture_name, ARCHITECTURES};
pub use device::{Device, PciInfo};
pub use error::NvmlError;
pub use events::{EventData, EventSet, EVENT_XID_CRITICAL};
pub use fields::{ids as field_ids, FieldValue};
pub use gpm::{
    GpmSample, GPM_ANY_TENSOR_UTIL, GPM_DRAM_BW_UTIL, GPM_GRAPHICS_UTIL, GPM_METRICS_PER_CALL,
    GPM_NVLINK_TOTAL_RX_PER_SEC, GPM_NVLINK_TOTAL_TX_PER_SEC, GPM_PCIE_RX_PER_SEC,
    GPM_PCIE_TX_PER_SEC, GPM_SM_OCCUPANCY, GPM_SM_UTIL,
};
pub use health::{EccCounter, EccErrorType, NvlinkCounter, RetirementCause, RowRemap};
pub use library::Nvml;
pub use mig::{ProcessUtilization, NVML_DEVICE_MIG_DISABLE, NVML_DEVICE_MIG_ENABLE};
pub use processes::ProcessInfo;
pub use readings::{
    ClockType, MemoryInfo, PcieCounter, TemperatureThreshold, Utilization, POWER_MAX_PLAUSIBLE_MW,
};
pub use samples::{Sample, SamplingType, SAMPLES_PER_CALL};
pub use search::ENV_NVML_PATH;
pub use sys::codes;
pub use sys::health::{NVML_MEMORY_LOCATIONS, NVML_NVLINK_MAX_LINKS};

#[cfg(all(test, target_os = "linux"))]
mod c_fake_tests;
