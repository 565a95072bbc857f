//! `#[repr(C)]` mirrors of the NVML types the simulator reads and writes, with the
//! return codes and enum values it needs.
//!
//! Layouts follow NVIDIA's `nvml.h` on x86-64 Linux, at the version pinned in
//! `docs/nvml-loading.md`; every struct carries a compile-time size assertion, and the test
//! in `tests/header.rs` checks every size, offset, constant and exported prototype here
//! against that header with the C compiler. C enums are plain `u32`, never Rust enums,
//! because a caller may pass a value this crate does not know.

use std::ffi::{c_char, c_uint, c_void};
use std::mem::{offset_of, size_of};

/// `nvmlReturn_t`: a C enum, 4 bytes.
pub type NvmlReturn = c_uint;
/// `nvmlDevice_t`: an opaque pointer; here a pointer into the simulator's device table.
pub type NvmlDevice = *mut c_void;
/// `nvmlEventSet_t`: an opaque token the simulator never dereferences.
pub type NvmlEventSet = *mut c_void;
/// `nvmlGpmSample_t`: an opaque token the simulator never dereferences.
pub type NvmlGpmSample = *mut c_void;

/// `NVML_SUCCESS`.
pub const SUCCESS: NvmlReturn = 0;
/// `NVML_ERROR_UNINITIALIZED`.
pub const ERROR_UNINITIALIZED: NvmlReturn = 1;
/// `NVML_ERROR_INVALID_ARGUMENT`.
pub const ERROR_INVALID_ARGUMENT: NvmlReturn = 2;
/// `NVML_ERROR_NOT_SUPPORTED`.
pub const ERROR_NOT_SUPPORTED: NvmlReturn = 3;
/// `NVML_ERROR_NO_PERMISSION`.
pub const ERROR_NO_PERMISSION: NvmlReturn = 4;
/// `NVML_ERROR_INSUFFICIENT_SIZE`.
pub const ERROR_INSUFFICIENT_SIZE: NvmlReturn = 7;
/// `NVML_ERROR_TIMEOUT`.
pub const ERROR_TIMEOUT: NvmlReturn = 10;
/// `NVML_ERROR_FUNCTION_NOT_FOUND`.
pub const ERROR_FUNCTION_NOT_FOUND: NvmlReturn = 13;
/// `NVML_ERROR_GPU_IS_LOST`.
pub const ERROR_GPU_IS_LOST: NvmlReturn = 15;
/// `NVML_ERROR_ARGUMENT_VERSION_MISMATCH`.
pub const ERROR_ARGUMENT_VERSION_MISMATCH: NvmlReturn = 25;
/// `NVML_ERROR_UNKNOWN`.
pub const ERROR_UNKNOWN: NvmlReturn = 999;

/// `NVML_STRUCT_VERSION(Memory, 2)`.
pub const MEMORY_V2_VERSION: c_uint = 0x0200_0028;
/// `NVML_STRUCT_VERSION(Temperature, 1)`.
pub const TEMPERATURE_V1_VERSION: c_uint = 0x0100_000C;
/// `NVML_GPM_SUPPORT_VERSION` (a plain integer, unlike the other struct versions).
pub const GPM_SUPPORT_VERSION: c_uint = 1;
/// `NVML_GPM_METRICS_GET_VERSION` (a plain integer).
pub const GPM_METRICS_GET_VERSION: c_uint = 1;
/// `NVML_GPM_METRIC_MAX` of the newest header checked (477 in 13.5). `nvmlGpmMetricsGet`
/// writes this many entries, as a driver that treats the struct as full length may.
pub const GPM_METRIC_MAX: usize = 477;

/// `NVML_TEMPERATURE_GPU`: the GPU die sensor.
pub const TEMPERATURE_GPU: c_uint = 0;
/// `NVML_TEMPERATURE_GPU_MAX`: the hottest part of the die; the simulated GPUs lack it.
pub const TEMPERATURE_GPU_MAX: c_uint = 1;
/// `NVML_TEMPERATURE_COUNT`: sensors at or above it are invalid.
pub const TEMPERATURE_COUNT: c_uint = 2;
/// `NVML_TEMPERATURE_THRESHOLD_SHUTDOWN`.
pub const TEMPERATURE_THRESHOLD_SHUTDOWN: c_uint = 0;
/// `NVML_TEMPERATURE_THRESHOLD_SLOWDOWN`.
pub const TEMPERATURE_THRESHOLD_SLOWDOWN: c_uint = 1;
/// `NVML_TEMPERATURE_THRESHOLD_MEM_MAX`.
pub const TEMPERATURE_THRESHOLD_MEM_MAX: c_uint = 2;
/// `NVML_TEMPERATURE_THRESHOLD_GPU_MAX`.
pub const TEMPERATURE_THRESHOLD_GPU_MAX: c_uint = 3;
/// `NVML_TEMPERATURE_THRESHOLD_COUNT`: thresholds at or above it are invalid.
pub const TEMPERATURE_THRESHOLD_COUNT: c_uint = 8;
/// `NVML_CLOCK_GRAPHICS`.
pub const CLOCK_GRAPHICS: c_uint = 0;
/// `NVML_CLOCK_SM`.
pub const CLOCK_SM: c_uint = 1;
/// `NVML_CLOCK_MEM`.
pub const CLOCK_MEM: c_uint = 2;
/// `NVML_CLOCK_VIDEO`.
pub const CLOCK_VIDEO: c_uint = 3;
/// `NVML_PCIE_UTIL_TX_BYTES`.
pub const PCIE_UTIL_TX_BYTES: c_uint = 0;
/// `NVML_PCIE_UTIL_RX_BYTES`.
pub const PCIE_UTIL_RX_BYTES: c_uint = 1;

/// `NVML_PSTATE_UNKNOWN`: a scenario's `pstate` of 32 reads as this.
pub const PSTATE_UNKNOWN: c_uint = 32;

/// `NVML_GPM_METRIC_GRAPHICS_UTIL`.
pub const GPM_METRIC_GRAPHICS_UTIL: c_uint = 1;
/// `NVML_GPM_METRIC_SM_UTIL`.
pub const GPM_METRIC_SM_UTIL: c_uint = 2;
/// `NVML_GPM_METRIC_SM_OCCUPANCY`.
pub const GPM_METRIC_SM_OCCUPANCY: c_uint = 3;
/// `NVML_GPM_METRIC_ANY_TENSOR_UTIL`.
pub const GPM_METRIC_ANY_TENSOR_UTIL: c_uint = 5;
/// `NVML_GPM_METRIC_DRAM_BW_UTIL`.
pub const GPM_METRIC_DRAM_BW_UTIL: c_uint = 10;
/// `NVML_GPM_METRIC_PCIE_TX_PER_SEC` (MiB/s).
pub const GPM_METRIC_PCIE_TX_PER_SEC: c_uint = 20;
/// `NVML_GPM_METRIC_PCIE_RX_PER_SEC` (MiB/s).
pub const GPM_METRIC_PCIE_RX_PER_SEC: c_uint = 21;
/// `NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC` (MiB/s).
pub const GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC: c_uint = 60;
/// `NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC` (MiB/s).
pub const GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC: c_uint = 61;

/// `NVML_FI_DEV_PERF_POLICY_POWER` (alias `NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP`):
/// cumulative ns the power cap held the clocks down.
pub const FI_PERF_POLICY_POWER: c_uint = 74;
/// `NVML_FI_DEV_PERF_POLICY_THERMAL`: cumulative ns a thermal policy held the clocks down.
pub const FI_PERF_POLICY_THERMAL: c_uint = 75;
/// `NVML_FI_DEV_PERF_POLICY_SYNC_BOOST` (alias `NVML_FI_DEV_CLOCKS_EVENT_REASON_SYNC_BOOST`).
pub const FI_PERF_POLICY_SYNC_BOOST: c_uint = 76;
/// `NVML_FI_DEV_PERF_POLICY_BOARD_LIMIT`.
pub const FI_PERF_POLICY_BOARD_LIMIT: c_uint = 77;
/// `NVML_FI_DEV_PERF_POLICY_RELIABILITY`.
pub const FI_PERF_POLICY_RELIABILITY: c_uint = 79;
/// `NVML_FI_DEV_NVLINK_LINK_COUNT`.
pub const FI_NVLINK_LINK_COUNT: c_uint = 91;
/// `NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX`: cumulative KiB sent.
pub const FI_NVLINK_THROUGHPUT_DATA_TX: c_uint = 138;
/// `NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX`: cumulative KiB received.
pub const FI_NVLINK_THROUGHPUT_DATA_RX: c_uint = 139;
/// `NVML_FI_DEV_POWER_INSTANT`: current power, mW.
pub const FI_POWER_INSTANT: c_uint = 186;
/// `NVML_FI_DEV_PCIE_COUNT_TX_BYTES`: cumulative PCIe bytes sent (may wrap).
pub const FI_PCIE_COUNT_TX_BYTES: c_uint = 197;
/// `NVML_FI_DEV_PCIE_COUNT_RX_BYTES`: cumulative PCIe bytes received (may wrap).
pub const FI_PCIE_COUNT_RX_BYTES: c_uint = 198;
/// `NVML_FI_DEV_GPU_TEMP`: GPU temperature, °C with sub-degree precision (13.5 header).
pub const FI_GPU_TEMP: c_uint = 308;
/// `NVML_FI_DEV_TEMPERATURE_SHUTDOWN_TLIMIT`.
pub const FI_TEMPERATURE_SHUTDOWN_TLIMIT: c_uint = 193;
/// `NVML_FI_DEV_TEMPERATURE_SLOWDOWN_TLIMIT`.
pub const FI_TEMPERATURE_SLOWDOWN_TLIMIT: c_uint = 194;
/// `NVML_FI_DEV_TEMPERATURE_MEM_MAX_TLIMIT`.
pub const FI_TEMPERATURE_MEM_MAX_TLIMIT: c_uint = 195;
/// `NVML_FI_DEV_TEMPERATURE_GPU_MAX_TLIMIT`.
pub const FI_TEMPERATURE_GPU_MAX_TLIMIT: c_uint = 196;

/// `NVML_VALUE_TYPE_DOUBLE`.
pub const VALUE_TYPE_DOUBLE: c_uint = 0;
/// `NVML_VALUE_TYPE_UNSIGNED_INT`.
pub const VALUE_TYPE_UNSIGNED_INT: c_uint = 1;
/// `NVML_VALUE_TYPE_UNSIGNED_LONG_LONG`.
pub const VALUE_TYPE_UNSIGNED_LONG_LONG: c_uint = 3;
/// `NVML_VALUE_TYPE_SIGNED_INT`.
pub const VALUE_TYPE_SIGNED_INT: c_uint = 5;

/// `nvmlEventTypeXidCriticalError`.
pub const EVENT_TYPE_XID_CRITICAL_ERROR: u64 = 0x8;
/// Event types the simulated devices accept in `nvmlDeviceRegisterEvents`: single- and
/// double-bit ECC, P-state and XID (only XID events are ever delivered).
pub const SUPPORTED_EVENT_TYPES: u64 = 0x1 | 0x2 | 0x4 | EVENT_TYPE_XID_CRITICAL_ERROR;
/// `gpuInstanceId`/`computeInstanceId` of anything not attributable to a MIG instance.
pub const NO_MIG_INSTANCE: c_uint = 0xFFFF_FFFF;

/// `nvmlPciInfo_t` (68 bytes, align 4).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NvmlPciInfo {
    /// `"%04X:%02X:%02X.0"`.
    pub bus_id_legacy: [c_char; 16],
    /// PCI domain.
    pub domain: c_uint,
    /// PCI bus.
    pub bus: c_uint,
    /// PCI device.
    pub device: c_uint,
    /// `(device id << 16) | vendor id`.
    pub pci_device_id: c_uint,
    /// Sub-system id.
    pub pci_sub_system_id: c_uint,
    /// `"%08X:%02X:%02X.0"`.
    pub bus_id: [c_char; 32],
}
const _: () = assert!(size_of::<NvmlPciInfo>() == 68);
const _: () = assert!(offset_of!(NvmlPciInfo, domain) == 16);
const _: () = assert!(offset_of!(NvmlPciInfo, pci_device_id) == 28);
const _: () = assert!(offset_of!(NvmlPciInfo, bus_id) == 36);

/// `nvmlUtilization_t` (8 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NvmlUtilization {
    /// Percent of time a kernel was running.
    pub gpu: c_uint,
    /// Percent of time device memory was read or written.
    pub memory: c_uint,
}
const _: () = assert!(size_of::<NvmlUtilization>() == 8);

/// `nvmlMemory_t` (24 bytes); `used` counts reserved memory too.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NvmlMemory {
    /// Total bytes.
    pub total: u64,
    /// Free bytes.
    pub free: u64,
    /// Used bytes (reserved + allocated).
    pub used: u64,
}
const _: () = assert!(size_of::<NvmlMemory>() == 24);

/// `nvmlMemory_v2_t` (40 bytes); `used` counts allocated memory only.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NvmlMemoryV2 {
    /// Must be [`MEMORY_V2_VERSION`].
    pub version: c_uint,
    /// Total bytes.
    pub total: u64,
    /// Bytes reserved by the system.
    pub reserved: u64,
    /// Free bytes.
    pub free: u64,
    /// Allocated bytes.
    pub used: u64,
}
const _: () = assert!(size_of::<NvmlMemoryV2>() == 40);
const _: () = assert!(offset_of!(NvmlMemoryV2, total) == 8);
const _: () = assert!(offset_of!(NvmlMemoryV2, used) == 32);

/// `nvmlTemperature_v1_t` (12 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NvmlTemperature {
    /// Must be [`TEMPERATURE_V1_VERSION`].
    pub version: c_uint,
    /// IN: `nvmlTemperatureSensors_t` (only `NVML_TEMPERATURE_GPU` = 0 exists).
    pub sensor_type: c_uint,
    /// OUT: degrees Celsius, signed.
    pub temperature: i32,
}
const _: () = assert!(size_of::<NvmlTemperature>() == 12);

/// `nvmlValue_t` (8-byte union, decoded by `nvmlValueType_t`).
#[repr(C)]
#[derive(Clone, Copy)]
pub union NvmlValue {
    /// `dVal`.
    pub d_val: f64,
    /// `siVal`.
    pub si_val: i32,
    /// `uiVal`.
    pub ui_val: c_uint,
    /// `ulVal` (8 bytes on Linux).
    pub ul_val: u64,
    /// `ullVal`.
    pub ull_val: u64,
    /// `sllVal`.
    pub sll_val: i64,
    /// `usVal`.
    pub us_val: u16,
}
const _: () = assert!(size_of::<NvmlValue>() == 8);

/// `nvmlFieldValue_t` (40 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct NvmlFieldValue {
    /// IN: `NVML_FI_*` id.
    pub field_id: c_uint,
    /// IN: link id for NVLink fields (`u32::MAX` = sum over links).
    pub scope_id: c_uint,
    /// Microseconds since 1970.
    pub timestamp: i64,
    /// How long the refresh took.
    pub latency_usec: i64,
    /// Selects the member of `value`.
    pub value_type: c_uint,
    /// Per-field status.
    pub nvml_return: NvmlReturn,
    /// The value; undefined unless `nvml_return` is 0.
    pub value: NvmlValue,
}
const _: () = assert!(size_of::<NvmlFieldValue>() == 40);
const _: () = assert!(offset_of!(NvmlFieldValue, timestamp) == 8);
const _: () = assert!(offset_of!(NvmlFieldValue, value_type) == 24);
const _: () = assert!(offset_of!(NvmlFieldValue, nvml_return) == 28);
const _: () = assert!(offset_of!(NvmlFieldValue, value) == 32);

/// `nvmlSample_t` (16 bytes): one sample of a driver buffer (`nvmlDeviceGetSamples`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct NvmlSample {
    /// CPU timestamp, µs since 1970.
    pub time_stamp: u64,
    /// The value; power, utilization and clocks use `ui_val`.
    pub sample_value: NvmlValue,
}
const _: () = assert!(size_of::<NvmlSample>() == 16);
const _: () = assert!(offset_of!(NvmlSample, sample_value) == 8);

/// `nvmlProcessInfo_v1_t` (16 bytes; the unversioned process-list function).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NvmlProcessInfoV1 {
    /// Process id.
    pub pid: c_uint,
    /// Bytes of device memory.
    pub used_gpu_memory: u64,
}
const _: () = assert!(size_of::<NvmlProcessInfoV1>() == 16);

/// `nvmlProcessInfo_t` = `nvmlProcessInfo_v2_t` (24 bytes; `_v2` and `_v3` functions).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NvmlProcessInfo {
    /// Process id.
    pub pid: c_uint,
    /// Bytes of device memory.
    pub used_gpu_memory: u64,
    /// MIG GPU instance, or [`NO_MIG_INSTANCE`].
    pub gpu_instance_id: c_uint,
    /// MIG compute instance, or [`NO_MIG_INSTANCE`].
    pub compute_instance_id: c_uint,
}
const _: () = assert!(size_of::<NvmlProcessInfo>() == 24);
const _: () = assert!(offset_of!(NvmlProcessInfo, used_gpu_memory) == 8);
const _: () = assert!(offset_of!(NvmlProcessInfo, gpu_instance_id) == 16);

/// `nvmlEventData_t` (32 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NvmlEventData {
    /// The device the event is about.
    pub device: NvmlDevice,
    /// One event-type bit.
    pub event_type: u64,
    /// The XID number for XID events, 0 otherwise.
    pub event_data: u64,
    /// MIG GPU instance, or [`NO_MIG_INSTANCE`].
    pub gpu_instance_id: c_uint,
    /// MIG compute instance, or [`NO_MIG_INSTANCE`].
    pub compute_instance_id: c_uint,
}
const _: () = assert!(size_of::<NvmlEventData>() == 32);
const _: () = assert!(offset_of!(NvmlEventData, event_data) == 16);

/// `nvmlGpmSupport_t` (8 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NvmlGpmSupport {
    /// Must be [`GPM_SUPPORT_VERSION`].
    pub version: c_uint,
    /// OUT: 1 when the device supports GPM.
    pub is_supported_device: c_uint,
}
const _: () = assert!(size_of::<NvmlGpmSupport>() == 8);

/// `nvmlGpmMetric_t` (40 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NvmlGpmMetric {
    /// IN: `nvmlGpmMetricId_t`.
    pub metric_id: c_uint,
    /// OUT: per-metric status.
    pub nvml_return: NvmlReturn,
    /// OUT: the value, valid only when `nvml_return` is 0.
    pub value: f64,
    /// OUT: `metricInfo.shortName` (static, owned by the library).
    pub short_name: *const c_char,
    /// OUT: `metricInfo.longName`.
    pub long_name: *const c_char,
    /// OUT: `metricInfo.unit`.
    pub unit: *const c_char,
}
const _: () = assert!(size_of::<NvmlGpmMetric>() == 40);
const _: () = assert!(offset_of!(NvmlGpmMetric, value) == 8);
const _: () = assert!(offset_of!(NvmlGpmMetric, unit) == 32);

/// `nvmlGpmMetricsGet_t` of the newest header checked ([`GPM_METRIC_MAX`] entries).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NvmlGpmMetricsGet {
    /// Must be [`GPM_METRICS_GET_VERSION`].
    pub version: c_uint,
    /// IN: how many entries of `metrics` are filled in.
    pub num_metrics: c_uint,
    /// IN: the earlier sample.
    pub sample1: NvmlGpmSample,
    /// IN: the later sample.
    pub sample2: NvmlGpmSample,
    /// IN/OUT: the metrics.
    pub metrics: [NvmlGpmMetric; GPM_METRIC_MAX],
}
const _: () = assert!(size_of::<NvmlGpmMetricsGet>() == 24 + 40 * GPM_METRIC_MAX);
const _: () = assert!(size_of::<NvmlGpmMetricsGet>() == 19_104);
const _: () = assert!(offset_of!(NvmlGpmMetricsGet, sample1) == 8);
const _: () = assert!(offset_of!(NvmlGpmMetricsGet, metrics) == 24);
