//! Values of the C enums and event bits gpuwhy passes or reads: clock types, temperature
//! thresholds, PCIe counters, sampling types, MIG modes and the XID event bit. Plain
//! integers, as everywhere in this crate; the loader wraps some in Rust enums whose
//! discriminants are these.

use std::ffi::c_uint;

/// `NVML_CLOCK_GRAPHICS`.
pub const NVML_CLOCK_GRAPHICS: c_uint = 0;
/// `NVML_CLOCK_SM`.
pub const NVML_CLOCK_SM: c_uint = 1;
/// `NVML_CLOCK_MEM`.
pub const NVML_CLOCK_MEM: c_uint = 2;
/// `NVML_CLOCK_VIDEO`.
pub const NVML_CLOCK_VIDEO: c_uint = 3;

/// `NVML_TEMPERATURE_THRESHOLD_SHUTDOWN`.
pub const NVML_TEMPERATURE_THRESHOLD_SHUTDOWN: c_uint = 0;
/// `NVML_TEMPERATURE_THRESHOLD_SLOWDOWN`.
pub const NVML_TEMPERATURE_THRESHOLD_SLOWDOWN: c_uint = 1;
/// `NVML_TEMPERATURE_THRESHOLD_MEM_MAX`.
pub const NVML_TEMPERATURE_THRESHOLD_MEM_MAX: c_uint = 2;
/// `NVML_TEMPERATURE_THRESHOLD_GPU_MAX`.
pub const NVML_TEMPERATURE_THRESHOLD_GPU_MAX: c_uint = 3;

/// `NVML_PCIE_UTIL_TX_BYTES`.
pub const NVML_PCIE_UTIL_TX_BYTES: c_uint = 0;
/// `NVML_PCIE_UTIL_RX_BYTES`.
pub const NVML_PCIE_UTIL_RX_BYTES: c_uint = 1;

/// `NVML_TOTAL_POWER_SAMPLES`.
pub const NVML_TOTAL_POWER_SAMPLES: c_uint = 0;
/// `NVML_GPU_UTILIZATION_SAMPLES`.
pub const NVML_GPU_UTILIZATION_SAMPLES: c_uint = 1;
/// `NVML_MEMORY_UTILIZATION_SAMPLES`.
pub const NVML_MEMORY_UTILIZATION_SAMPLES: c_uint = 2;
/// `NVML_PROCESSOR_CLK_SAMPLES`.
pub const NVML_PROCESSOR_CLK_SAMPLES: c_uint = 5;
/// `NVML_MEMORY_CLK_SAMPLES`.
pub const NVML_MEMORY_CLK_SAMPLES: c_uint = 6;

/// `NVML_SAMPLINGTYPE_COUNT`: sampling types at or above it are invalid.
pub const NVML_SAMPLINGTYPE_COUNT: c_uint = 10;

/// `NVML_DEVICE_MIG_DISABLE`.
pub const NVML_DEVICE_MIG_DISABLE: c_uint = 0;
/// `NVML_DEVICE_MIG_ENABLE`.
pub const NVML_DEVICE_MIG_ENABLE: c_uint = 1;

/// `nvmlEventTypeXidCriticalError`.
pub const NVML_EVENT_TYPE_XID_CRITICAL_ERROR: u64 = 0x8;

/// Every value above with its name in `nvml.h`, for the header test.
pub const ALL: [(&str, u64); 19] = [
    ("NVML_CLOCK_GRAPHICS", NVML_CLOCK_GRAPHICS as u64),
    ("NVML_CLOCK_SM", NVML_CLOCK_SM as u64),
    ("NVML_CLOCK_MEM", NVML_CLOCK_MEM as u64),
    ("NVML_CLOCK_VIDEO", NVML_CLOCK_VIDEO as u64),
    (
        "NVML_TEMPERATURE_THRESHOLD_SHUTDOWN",
        NVML_TEMPERATURE_THRESHOLD_SHUTDOWN as u64,
    ),
    (
        "NVML_TEMPERATURE_THRESHOLD_SLOWDOWN",
        NVML_TEMPERATURE_THRESHOLD_SLOWDOWN as u64,
    ),
    (
        "NVML_TEMPERATURE_THRESHOLD_MEM_MAX",
        NVML_TEMPERATURE_THRESHOLD_MEM_MAX as u64,
    ),
    (
        "NVML_TEMPERATURE_THRESHOLD_GPU_MAX",
        NVML_TEMPERATURE_THRESHOLD_GPU_MAX as u64,
    ),
    ("NVML_PCIE_UTIL_TX_BYTES", NVML_PCIE_UTIL_TX_BYTES as u64),
    ("NVML_PCIE_UTIL_RX_BYTES", NVML_PCIE_UTIL_RX_BYTES as u64),
    ("NVML_TOTAL_POWER_SAMPLES", NVML_TOTAL_POWER_SAMPLES as u64),
    (
        "NVML_GPU_UTILIZATION_SAMPLES",
        NVML_GPU_UTILIZATION_SAMPLES as u64,
    ),
    (
        "NVML_MEMORY_UTILIZATION_SAMPLES",
        NVML_MEMORY_UTILIZATION_SAMPLES as u64,
    ),
    (
        "NVML_PROCESSOR_CLK_SAMPLES",
        NVML_PROCESSOR_CLK_SAMPLES as u64,
    ),
    ("NVML_MEMORY_CLK_SAMPLES", NVML_MEMORY_CLK_SAMPLES as u64),
    ("NVML_DEVICE_MIG_DISABLE", NVML_DEVICE_MIG_DISABLE as u64),
    ("NVML_DEVICE_MIG_ENABLE", NVML_DEVICE_MIG_ENABLE as u64),
    (
        "nvmlEventTypeXidCriticalError",
        NVML_EVENT_TYPE_XID_CRITICAL_ERROR,
    ),
    ("NVML_SAMPLINGTYPE_COUNT", NVML_SAMPLINGTYPE_COUNT as u64),
];
