//! The NVML types, return codes and enum values the simulator reads and writes.
//!
//! The struct layouts, return codes and struct versions are the binding crate's
//! (`gpuwhy-nvml-sys`, the same ones gpuwhy's loader calls through, checked there against
//! NVIDIA's `nvml.h`), named here as the simulator's code knows them. The constants still
//! written here are checked against the header by `tests/header.rs`, with every exported
//! prototype. C enums are plain `u32`, never Rust enums, because a caller may pass a value
//! this crate does not know.

use std::ffi::{c_uint, c_void};

use gpuwhy_nvml_sys::{codes, enums, field_ids, gpm_ids};

/// `nvmlReturn_t`: a C enum, 4 bytes.
pub type NvmlReturn = c_uint;
/// `nvmlDevice_t`: an opaque pointer; here a pointer into the simulator's device table.
pub type NvmlDevice = *mut c_void;
/// `nvmlEventSet_t`: an opaque token the simulator never dereferences.
pub type NvmlEventSet = *mut c_void;
/// `nvmlGpmSample_t`: an opaque token the simulator never dereferences.
pub type NvmlGpmSample = *mut c_void;

/// `NVML_SUCCESS`.
pub const SUCCESS: NvmlReturn = codes::SUCCESS;
/// `NVML_ERROR_UNINITIALIZED`.
pub const ERROR_UNINITIALIZED: NvmlReturn = codes::UNINITIALIZED;
/// `NVML_ERROR_INVALID_ARGUMENT`.
pub const ERROR_INVALID_ARGUMENT: NvmlReturn = codes::INVALID_ARGUMENT;
/// `NVML_ERROR_NOT_SUPPORTED`.
pub const ERROR_NOT_SUPPORTED: NvmlReturn = codes::NOT_SUPPORTED;
/// `NVML_ERROR_NO_PERMISSION`.
pub const ERROR_NO_PERMISSION: NvmlReturn = codes::NO_PERMISSION;
/// `NVML_ERROR_INSUFFICIENT_SIZE`.
pub const ERROR_INSUFFICIENT_SIZE: NvmlReturn = codes::INSUFFICIENT_SIZE;
/// `NVML_ERROR_TIMEOUT`.
pub const ERROR_TIMEOUT: NvmlReturn = codes::TIMEOUT;
/// `NVML_ERROR_FUNCTION_NOT_FOUND`.
pub const ERROR_FUNCTION_NOT_FOUND: NvmlReturn = codes::FUNCTION_NOT_FOUND;
/// `NVML_ERROR_GPU_IS_LOST`.
pub const ERROR_GPU_IS_LOST: NvmlReturn = codes::GPU_IS_LOST;
/// `NVML_ERROR_ARGUMENT_VERSION_MISMATCH`.
pub const ERROR_ARGUMENT_VERSION_MISMATCH: NvmlReturn = codes::ARGUMENT_VERSION_MISMATCH;
/// `NVML_ERROR_UNKNOWN`.
pub const ERROR_UNKNOWN: NvmlReturn = codes::UNKNOWN;

/// `NVML_STRUCT_VERSION(Memory, 2)`.
pub const MEMORY_V2_VERSION: c_uint = gpuwhy_nvml_sys::NVML_MEMORY_V2;
/// `NVML_STRUCT_VERSION(Temperature, 1)`.
pub const TEMPERATURE_V1_VERSION: c_uint = gpuwhy_nvml_sys::NVML_TEMPERATURE_V1;
/// `NVML_GPM_SUPPORT_VERSION` (a plain integer, unlike the other struct versions).
pub const GPM_SUPPORT_VERSION: c_uint = gpuwhy_nvml_sys::NVML_GPM_SUPPORT_VERSION;
/// `NVML_GPM_METRICS_GET_VERSION` (a plain integer).
pub const GPM_METRICS_GET_VERSION: c_uint = gpuwhy_nvml_sys::NVML_GPM_METRICS_GET_VERSION;
/// `NVML_GPM_METRIC_MAX` of the newest header checked (477 in 13.5). `nvmlGpmMetricsGet`
/// writes this many entries, as a driver that treats the struct as full length may.
pub const GPM_METRIC_MAX: usize = gpuwhy_nvml_sys::NVML_GPM_METRIC_MAX;

/// `NVML_TEMPERATURE_GPU`: the GPU die sensor.
pub const TEMPERATURE_GPU: c_uint = gpuwhy_nvml_sys::NVML_TEMPERATURE_GPU;
/// `NVML_TEMPERATURE_GPU_MAX`: the hottest part of the die; the simulated GPUs lack it.
pub const TEMPERATURE_GPU_MAX: c_uint = 1;
/// `NVML_TEMPERATURE_COUNT`: sensors at or above it are invalid.
pub const TEMPERATURE_COUNT: c_uint = 2;
/// `NVML_TEMPERATURE_THRESHOLD_SHUTDOWN`.
pub const TEMPERATURE_THRESHOLD_SHUTDOWN: c_uint = enums::NVML_TEMPERATURE_THRESHOLD_SHUTDOWN;
/// `NVML_TEMPERATURE_THRESHOLD_SLOWDOWN`.
pub const TEMPERATURE_THRESHOLD_SLOWDOWN: c_uint = enums::NVML_TEMPERATURE_THRESHOLD_SLOWDOWN;
/// `NVML_TEMPERATURE_THRESHOLD_MEM_MAX`.
pub const TEMPERATURE_THRESHOLD_MEM_MAX: c_uint = enums::NVML_TEMPERATURE_THRESHOLD_MEM_MAX;
/// `NVML_TEMPERATURE_THRESHOLD_GPU_MAX`.
pub const TEMPERATURE_THRESHOLD_GPU_MAX: c_uint = enums::NVML_TEMPERATURE_THRESHOLD_GPU_MAX;
/// `NVML_TEMPERATURE_THRESHOLD_COUNT`: thresholds at or above it are invalid.
pub const TEMPERATURE_THRESHOLD_COUNT: c_uint = 8;
/// `NVML_CLOCK_GRAPHICS`.
pub const CLOCK_GRAPHICS: c_uint = enums::NVML_CLOCK_GRAPHICS;
/// `NVML_CLOCK_SM`.
pub const CLOCK_SM: c_uint = enums::NVML_CLOCK_SM;
/// `NVML_CLOCK_MEM`.
pub const CLOCK_MEM: c_uint = enums::NVML_CLOCK_MEM;
/// `NVML_CLOCK_VIDEO`.
pub const CLOCK_VIDEO: c_uint = enums::NVML_CLOCK_VIDEO;
/// `NVML_PCIE_UTIL_TX_BYTES`.
pub const PCIE_UTIL_TX_BYTES: c_uint = enums::NVML_PCIE_UTIL_TX_BYTES;
/// `NVML_PCIE_UTIL_RX_BYTES`.
pub const PCIE_UTIL_RX_BYTES: c_uint = enums::NVML_PCIE_UTIL_RX_BYTES;

/// `NVML_MEMORY_LOCATION_COUNT`: locations at or above it are invalid.
pub const MEMORY_LOCATION_COUNT: c_uint =
    gpuwhy_nvml_sys::health::NVML_MEMORY_LOCATIONS.len() as c_uint;
/// `NVML_NVLINK_ERROR_DL_ECC_DATA`, the last NVLink error counter.
pub const NVLINK_ERROR_DL_ECC_DATA: c_uint = gpuwhy_nvml_sys::health::NVML_NVLINK_ERROR_DL_ECC_DATA;

/// `NVML_PSTATE_UNKNOWN`: a scenario's `pstate` of 32 reads as this.
pub const PSTATE_UNKNOWN: c_uint = 32;

/// `NVML_GPM_METRIC_GRAPHICS_UTIL`.
pub const GPM_METRIC_GRAPHICS_UTIL: c_uint = gpm_ids::GPM_GRAPHICS_UTIL;
/// `NVML_GPM_METRIC_SM_UTIL`.
pub const GPM_METRIC_SM_UTIL: c_uint = gpm_ids::GPM_SM_UTIL;
/// `NVML_GPM_METRIC_SM_OCCUPANCY`.
pub const GPM_METRIC_SM_OCCUPANCY: c_uint = gpm_ids::GPM_SM_OCCUPANCY;
/// `NVML_GPM_METRIC_ANY_TENSOR_UTIL`.
pub const GPM_METRIC_ANY_TENSOR_UTIL: c_uint = gpm_ids::GPM_ANY_TENSOR_UTIL;
/// `NVML_GPM_METRIC_DRAM_BW_UTIL`.
pub const GPM_METRIC_DRAM_BW_UTIL: c_uint = gpm_ids::GPM_DRAM_BW_UTIL;
/// `NVML_GPM_METRIC_PCIE_TX_PER_SEC` (MiB/s).
pub const GPM_METRIC_PCIE_TX_PER_SEC: c_uint = gpm_ids::GPM_PCIE_TX_PER_SEC;
/// `NVML_GPM_METRIC_PCIE_RX_PER_SEC` (MiB/s).
pub const GPM_METRIC_PCIE_RX_PER_SEC: c_uint = gpm_ids::GPM_PCIE_RX_PER_SEC;
/// `NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC` (MiB/s).
pub const GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC: c_uint = gpm_ids::GPM_NVLINK_TOTAL_RX_PER_SEC;
/// `NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC` (MiB/s).
pub const GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC: c_uint = gpm_ids::GPM_NVLINK_TOTAL_TX_PER_SEC;

/// `NVML_FI_DEV_PERF_POLICY_POWER` (alias `NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP`):
/// cumulative ns the power cap held the clocks down.
pub const FI_PERF_POLICY_POWER: c_uint = field_ids::PERF_POLICY_POWER;
/// `NVML_FI_DEV_PERF_POLICY_THERMAL`: cumulative ns a thermal policy held the clocks down.
pub const FI_PERF_POLICY_THERMAL: c_uint = 75;
/// `NVML_FI_DEV_PERF_POLICY_SYNC_BOOST` (alias `NVML_FI_DEV_CLOCKS_EVENT_REASON_SYNC_BOOST`).
pub const FI_PERF_POLICY_SYNC_BOOST: c_uint = field_ids::PERF_POLICY_SYNC_BOOST;
/// `NVML_FI_DEV_PERF_POLICY_BOARD_LIMIT`.
pub const FI_PERF_POLICY_BOARD_LIMIT: c_uint = field_ids::PERF_POLICY_BOARD_LIMIT;
/// `NVML_FI_DEV_PERF_POLICY_RELIABILITY`.
pub const FI_PERF_POLICY_RELIABILITY: c_uint = field_ids::PERF_POLICY_RELIABILITY;
/// `NVML_FI_DEV_NVLINK_LINK_COUNT`.
pub const FI_NVLINK_LINK_COUNT: c_uint = field_ids::NVLINK_LINK_COUNT;
/// `NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX`: cumulative KiB sent.
pub const FI_NVLINK_THROUGHPUT_DATA_TX: c_uint = field_ids::NVLINK_DATA_TX;
/// `NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX`: cumulative KiB received.
pub const FI_NVLINK_THROUGHPUT_DATA_RX: c_uint = field_ids::NVLINK_DATA_RX;
/// `NVML_FI_DEV_POWER_INSTANT`: current power, mW.
pub const FI_POWER_INSTANT: c_uint = field_ids::POWER_INSTANT;
/// `NVML_FI_DEV_PCIE_COUNT_TX_BYTES`: cumulative PCIe bytes sent (may wrap).
pub const FI_PCIE_COUNT_TX_BYTES: c_uint = field_ids::PCIE_COUNT_TX_BYTES;
/// `NVML_FI_DEV_PCIE_COUNT_RX_BYTES`: cumulative PCIe bytes received (may wrap).
pub const FI_PCIE_COUNT_RX_BYTES: c_uint = field_ids::PCIE_COUNT_RX_BYTES;
/// `NVML_FI_DEV_GPU_TEMP`: GPU temperature, °C with sub-degree precision (13.5 header).
pub const FI_GPU_TEMP: c_uint = field_ids::GPU_TEMP;
/// `NVML_FI_DEV_TEMPERATURE_SHUTDOWN_TLIMIT`.
pub const FI_TEMPERATURE_SHUTDOWN_TLIMIT: c_uint = field_ids::TEMPERATURE_SHUTDOWN_TLIMIT;
/// `NVML_FI_DEV_TEMPERATURE_SLOWDOWN_TLIMIT`.
pub const FI_TEMPERATURE_SLOWDOWN_TLIMIT: c_uint = field_ids::TEMPERATURE_SLOWDOWN_TLIMIT;
/// `NVML_FI_DEV_TEMPERATURE_MEM_MAX_TLIMIT`.
pub const FI_TEMPERATURE_MEM_MAX_TLIMIT: c_uint = field_ids::TEMPERATURE_MEM_MAX_TLIMIT;
/// `NVML_FI_DEV_TEMPERATURE_GPU_MAX_TLIMIT`.
pub const FI_TEMPERATURE_GPU_MAX_TLIMIT: c_uint = field_ids::TEMPERATURE_GPU_MAX_TLIMIT;

/// `NVML_VALUE_TYPE_DOUBLE`.
pub const VALUE_TYPE_DOUBLE: c_uint = 0;
/// `NVML_VALUE_TYPE_UNSIGNED_INT`.
pub const VALUE_TYPE_UNSIGNED_INT: c_uint = 1;
/// `NVML_VALUE_TYPE_UNSIGNED_LONG_LONG`.
pub const VALUE_TYPE_UNSIGNED_LONG_LONG: c_uint = 3;
/// `NVML_VALUE_TYPE_SIGNED_INT`.
pub const VALUE_TYPE_SIGNED_INT: c_uint = 5;

/// `nvmlEventTypeXidCriticalError`.
pub const EVENT_TYPE_XID_CRITICAL_ERROR: u64 = enums::NVML_EVENT_TYPE_XID_CRITICAL_ERROR;
/// Event types the simulated devices accept in `nvmlDeviceRegisterEvents`: single- and
/// double-bit ECC, P-state and XID (only XID events are ever delivered).
pub const SUPPORTED_EVENT_TYPES: u64 = 0x1 | 0x2 | 0x4 | EVENT_TYPE_XID_CRITICAL_ERROR;
/// `gpuInstanceId`/`computeInstanceId` of anything not attributable to a MIG instance.
pub const NO_MIG_INSTANCE: c_uint = 0xFFFF_FFFF;

pub use gpuwhy_nvml_sys::{
    nvmlEventData_t as NvmlEventData, nvmlFieldValue_t as NvmlFieldValue,
    nvmlGpmMetric_t as NvmlGpmMetric, nvmlGpmMetricsGet_t as NvmlGpmMetricsGet,
    nvmlGpmSupport_t as NvmlGpmSupport, nvmlMemory_t as NvmlMemory,
    nvmlMemory_v2_t as NvmlMemoryV2, nvmlPciInfo_t as NvmlPciInfo,
    nvmlProcessInfo_t as NvmlProcessInfo, nvmlProcessInfo_v1_t as NvmlProcessInfoV1,
    nvmlProcessUtilizationSample_t as NvmlProcessUtilizationSample, nvmlSample_t as NvmlSample,
    nvmlTemperature_v1_t as NvmlTemperature, nvmlUtilization_t as NvmlUtilization,
    nvmlValue_t as NvmlValue,
};
