//! NVML's C side, written once: `#[repr(C)]` mirrors of the structs that cross the C
//! boundary, the constants and return codes that go with them, and compile-time checks of
//! every size and field offset on x86-64 Linux. gpuwhy's loader (`core/src/nvml/`) calls
//! through these layouts and the simulated NVML (`sim/`) exports them, so a layout fixed
//! here is fixed for both. The header test (`header.rs`) checks all of them against
//! NVIDIA's `nvml.h` at the version pinned in docs/nvml-loading.md.
//!
//! What it is not for: loading the library, calling it, or deciding what a value means.
//! This crate has no dependencies and no `unsafe` code.
//!
//! Names follow the C header so the mirrors can be checked against it line by line.
//! Enums are plain `u32`/`c_uint` here on purpose: a driver may return a value this
//! build does not know, and an out-of-range Rust enum would be undefined behaviour.

#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::{c_char, c_int, c_uint, c_ulong, c_ulonglong, c_ushort, c_void};
use std::mem::{align_of, offset_of, size_of};

/// `nvmlDevice_t`: an opaque pointer owned by NVML.
pub type nvmlDevice_t = *mut c_void;
/// `nvmlEventSet_t`: an opaque pointer owned by NVML.
pub type nvmlEventSet_t = *mut c_void;
/// `nvmlGpmSample_t`: an opaque pointer owned by NVML.
pub type nvmlGpmSample_t = *mut c_void;

/// `NVML_STRUCT_VERSION(Name, ver)`: the struct size in the low bits, the version in the
/// top byte. The `version` field of a versioned struct must hold this, not the bare number.
pub const fn struct_version(size: usize, version: u32) -> u32 {
    // The structs this is used for are a few dozen bytes; the cast cannot truncate.
    (size as u32) | (version << 24)
}

/// `nvmlMemory_v2` for `nvmlMemory_v2_t.version`.
pub const NVML_MEMORY_V2: u32 = struct_version(size_of::<nvmlMemory_v2_t>(), 2);
/// `nvmlTemperature_v1` for `nvmlTemperature_v1_t.version`.
pub const NVML_TEMPERATURE_V1: u32 = struct_version(size_of::<nvmlTemperature_v1_t>(), 1);
/// `NVML_GPM_SUPPORT_VERSION`: GPM structs use a plain integer, not `NVML_STRUCT_VERSION`.
pub const NVML_GPM_SUPPORT_VERSION: c_uint = 1;
/// `NVML_GPM_METRICS_GET_VERSION`: plain integer, like the other GPM version.
pub const NVML_GPM_METRICS_GET_VERSION: c_uint = 1;

const _: () = assert!(NVML_MEMORY_V2 == 0x0200_0028);
const _: () = assert!(NVML_TEMPERATURE_V1 == 0x0100_000C);

/// `NVML_VALUE_NOT_AVAILABLE` (-1) as it appears in unsigned 64-bit fields.
pub const NVML_VALUE_NOT_AVAILABLE_U64: u64 = u64::MAX;

/// `NVML_DEVICE_NAME_V2_BUFFER_SIZE`.
pub const NVML_DEVICE_NAME_V2_BUFFER_SIZE: usize = 96;
/// `NVML_DEVICE_UUID_V2_BUFFER_SIZE`.
pub const NVML_DEVICE_UUID_V2_BUFFER_SIZE: usize = 96;
/// `NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE`.
pub const NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE: usize = 80;
/// `NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE`.
pub const NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE: usize = 80;
/// `NVML_TEMPERATURE_GPU`, the only sensor every header has.
pub const NVML_TEMPERATURE_GPU: c_uint = 0;

/// `NVML_GPM_METRIC_MAX` of the 11.8–12.8 headers. gpuwhy never asks for more metrics than
/// this in one call, because older drivers know only this many slots.
pub const NVML_GPM_METRIC_MAX_V1: usize = 98;
/// `NVML_GPM_METRIC_MAX` of the newest header checked (477 in 13.5; docs/nvml-loading.md).
/// `nvmlGpmMetricsGet_t` kept its version 1 while this grew (98, 210, 333, 477), so a driver
/// cannot tell how long the caller's array is: the mirror is sized for the newest header.
pub const NVML_GPM_METRIC_MAX: usize = 477;

/// `nvmlValueType_t` values selecting the member of [`nvmlValue_t`].
pub mod value_type {
    /// `NVML_VALUE_TYPE_DOUBLE` (`dVal`).
    pub const DOUBLE: u32 = 0;
    /// `NVML_VALUE_TYPE_UNSIGNED_INT` (`uiVal`).
    pub const UNSIGNED_INT: u32 = 1;
    /// `NVML_VALUE_TYPE_UNSIGNED_LONG` (`ulVal`; 8 bytes on Linux, 4 on Windows).
    pub const UNSIGNED_LONG: u32 = 2;
    /// `NVML_VALUE_TYPE_UNSIGNED_LONG_LONG` (`ullVal`).
    pub const UNSIGNED_LONG_LONG: u32 = 3;
    /// `NVML_VALUE_TYPE_SIGNED_LONG_LONG` (`sllVal`).
    pub const SIGNED_LONG_LONG: u32 = 4;
    /// `NVML_VALUE_TYPE_SIGNED_INT` (`siVal`, 12.2+).
    pub const SIGNED_INT: u32 = 5;
    /// `NVML_VALUE_TYPE_UNSIGNED_SHORT` (`usVal`, 12.6+).
    pub const UNSIGNED_SHORT: u32 = 6;
}

/// `nvmlPciInfo_t` (68 bytes, align 4).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct nvmlPciInfo_t {
    /// `"%04X:%02X:%02X.0"`; the whole bus id in the pre-v2 layout.
    pub busIdLegacy: [c_char; 16],
    /// PCI domain.
    pub domain: c_uint,
    /// PCI bus, 0..0xff.
    pub bus: c_uint,
    /// PCI device, 0..31.
    pub device: c_uint,
    /// `(device id << 16) | vendor id`.
    pub pciDeviceId: c_uint,
    /// Subsystem id.
    pub pciSubSystemId: c_uint,
    /// `"%08X:%02X:%02X.0"`.
    pub busId: [c_char; 32],
}

/// `nvmlUtilization_t` (8 bytes).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct nvmlUtilization_t {
    /// Percent of the sample period during which a kernel ran.
    pub gpu: c_uint,
    /// Percent of the sample period during which device memory was read or written.
    pub memory: c_uint,
}

/// `nvmlMemory_t` (v1, 24 bytes).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct nvmlMemory_t {
    /// Total bytes.
    pub total: c_ulonglong,
    /// Free bytes.
    pub free: c_ulonglong,
    /// Used bytes (reserved + allocated).
    pub used: c_ulonglong,
}

/// `nvmlMemory_v2_t` (40 bytes).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct nvmlMemory_v2_t {
    /// Must be [`NVML_MEMORY_V2`].
    pub version: c_uint,
    /// Total bytes.
    pub total: c_ulonglong,
    /// Bytes reserved by the system.
    pub reserved: c_ulonglong,
    /// Free bytes.
    pub free: c_ulonglong,
    /// Used bytes.
    pub used: c_ulonglong,
}

/// `nvmlTemperature_v1_t` (12 bytes).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct nvmlTemperature_v1_t {
    /// Must be [`NVML_TEMPERATURE_V1`].
    pub version: c_uint,
    /// `nvmlTemperatureSensors_t` (input).
    pub sensorType: c_uint,
    /// Degrees C (output, signed).
    pub temperature: c_int,
}

/// `nvmlValue_t`: an 8-byte union whose live member is given by `nvmlValueType_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union nvmlValue_t {
    /// `NVML_VALUE_TYPE_DOUBLE`.
    pub dVal: f64,
    /// `NVML_VALUE_TYPE_SIGNED_INT`.
    pub siVal: c_int,
    /// `NVML_VALUE_TYPE_UNSIGNED_INT`.
    pub uiVal: c_uint,
    /// `NVML_VALUE_TYPE_UNSIGNED_LONG`.
    pub ulVal: c_ulong,
    /// `NVML_VALUE_TYPE_UNSIGNED_LONG_LONG`.
    pub ullVal: c_ulonglong,
    /// `NVML_VALUE_TYPE_SIGNED_LONG_LONG`.
    pub sllVal: i64,
    /// `NVML_VALUE_TYPE_UNSIGNED_SHORT`.
    pub usVal: c_ushort,
}

/// `nvmlFieldValue_t` (40 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct nvmlFieldValue_t {
    /// Field id (input).
    pub fieldId: c_uint,
    /// Scope: NVLink id or power scope (input).
    pub scopeId: c_uint,
    /// CPU time of the reading, microseconds since 1970.
    pub timestamp: i64,
    /// How long NVML took to refresh the value, microseconds.
    pub latencyUsec: i64,
    /// `nvmlValueType_t`.
    pub valueType: c_uint,
    /// Per-field `nvmlReturn_t`.
    pub nvmlReturn: c_uint,
    /// The value, valid only when `nvmlReturn` is 0.
    pub value: nvmlValue_t,
}

impl nvmlFieldValue_t {
    /// An element asking for `field_id` in `scope_id`, every output zeroed.
    pub const fn request(field_id: u32, scope_id: u32) -> Self {
        Self {
            fieldId: field_id,
            scopeId: scope_id,
            timestamp: 0,
            latencyUsec: 0,
            valueType: 0,
            nvmlReturn: 0,
            value: nvmlValue_t { ullVal: 0 },
        }
    }
}

/// `nvmlProcessInfo_v1_t` (16 bytes): element of the unversioned process list.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct nvmlProcessInfo_v1_t {
    /// Process id.
    pub pid: c_uint,
    /// Bytes, or `NVML_VALUE_NOT_AVAILABLE`.
    pub usedGpuMemory: c_ulonglong,
}

/// `nvmlProcessInfo_t` = `nvmlProcessInfo_v2_t` (24 bytes): element of the `_v2`/`_v3` lists.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct nvmlProcessInfo_t {
    /// Process id.
    pub pid: c_uint,
    /// Bytes, or `NVML_VALUE_NOT_AVAILABLE`.
    pub usedGpuMemory: c_ulonglong,
    /// MIG GPU instance, 0xFFFFFFFF when not MIG.
    pub gpuInstanceId: c_uint,
    /// MIG compute instance, 0xFFFFFFFF when not MIG.
    pub computeInstanceId: c_uint,
}

/// `nvmlEventData_t` (32 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct nvmlEventData_t {
    /// The device the event came from.
    pub device: nvmlDevice_t,
    /// The event bit.
    pub eventType: c_ulonglong,
    /// The Xid for Xid events (999 = unknown Xid), 0 otherwise.
    pub eventData: c_ulonglong,
    /// MIG GPU instance or 0xFFFFFFFF.
    pub gpuInstanceId: c_uint,
    /// MIG compute instance or 0xFFFFFFFF.
    pub computeInstanceId: c_uint,
}

/// `nvmlGpmSupport_t` (8 bytes).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct nvmlGpmSupport_t {
    /// Must be [`NVML_GPM_SUPPORT_VERSION`].
    pub version: c_uint,
    /// Non-zero when the device supports GPM (output).
    pub isSupportedDevice: c_uint,
}

/// `nvmlGpmMetric_t` (40 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct nvmlGpmMetric_t {
    /// `nvmlGpmMetricId_t` (input).
    pub metricId: c_uint,
    /// Per-metric `nvmlReturn_t` (output).
    pub nvmlReturn: c_uint,
    /// The value, valid only when `nvmlReturn` is 0.
    pub value: f64,
    /// Short name, owned by NVML, may be NULL.
    pub shortName: *mut c_char,
    /// Long name, owned by NVML, may be NULL.
    pub longName: *mut c_char,
    /// Unit, owned by NVML, may be NULL.
    pub unit: *mut c_char,
}

impl nvmlGpmMetric_t {
    /// An unused slot.
    pub const EMPTY: Self = Self {
        metricId: 0,
        nvmlReturn: 0,
        value: 0.0,
        shortName: std::ptr::null_mut(),
        longName: std::ptr::null_mut(),
        unit: std::ptr::null_mut(),
    };
}

/// `nvmlGpmMetricsGet_t` with the array of the newest header checked ([`NVML_GPM_METRIC_MAX`]).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct nvmlGpmMetricsGet_t {
    /// Must be [`NVML_GPM_METRICS_GET_VERSION`].
    pub version: c_uint,
    /// How many entries of `metrics` are in use.
    pub numMetrics: c_uint,
    /// The earlier sample.
    pub sample1: nvmlGpmSample_t,
    /// The later sample.
    pub sample2: nvmlGpmSample_t,
    /// Requests and results.
    pub metrics: [nvmlGpmMetric_t; NVML_GPM_METRIC_MAX],
}

/// `nvmlSample_t` (16 bytes): one sample of a driver buffer (`nvmlDeviceGetSamples`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct nvmlSample_t {
    /// CPU timestamp, microseconds since 1970.
    pub timeStamp: c_ulonglong,
    /// The value, of the type the call reports.
    pub sampleValue: nvmlValue_t,
}

impl nvmlSample_t {
    /// An unused slot.
    pub const EMPTY: Self = Self {
        timeStamp: 0,
        sampleValue: nvmlValue_t { ullVal: 0 },
    };
}

/// `nvmlProcessUtilizationSample_t` (32 bytes): one process's utilization sample.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct nvmlProcessUtilizationSample_t {
    /// Process id.
    pub pid: c_uint,
    /// CPU timestamp, microseconds since 1970.
    pub timeStamp: c_ulonglong,
    /// SM utilization, percent.
    pub smUtil: c_uint,
    /// Frame-buffer memory utilization, percent.
    pub memUtil: c_uint,
    /// Encoder utilization, percent.
    pub encUtil: c_uint,
    /// Decoder utilization, percent.
    pub decUtil: c_uint,
}

/// Makes the item it precedes fail to compile unless `$t` has size `$size` and alignment
/// `$align`, and each listed field sits at the listed offset.
macro_rules! assert_layout {
    ($t:ty, size $size:expr, align $align:expr $(, $field:ident @ $off:expr)* $(,)?) => {
        const _: () = assert!(size_of::<$t>() == $size);
        const _: () = assert!(align_of::<$t>() == $align);
        $(const _: () = assert!(offset_of!($t, $field) == $off);)*
    };
}

// Only LP64 layouts were measured; 32-bit targets would need their own numbers.
#[cfg(target_pointer_width = "64")]
mod layout {
    use super::*;

    assert_layout!(nvmlPciInfo_t, size 68, align 4,
        busIdLegacy @ 0, domain @ 16, bus @ 20, device @ 24, pciDeviceId @ 28,
        pciSubSystemId @ 32, busId @ 36);
    assert_layout!(nvmlUtilization_t, size 8, align 4, gpu @ 0, memory @ 4);
    assert_layout!(nvmlMemory_t, size 24, align 8, total @ 0, free @ 8, used @ 16);
    assert_layout!(nvmlMemory_v2_t, size 40, align 8,
        version @ 0, total @ 8, reserved @ 16, free @ 24, used @ 32);
    assert_layout!(nvmlTemperature_v1_t, size 12, align 4,
        version @ 0, sensorType @ 4, temperature @ 8);
    assert_layout!(nvmlValue_t, size 8, align 8);
    assert_layout!(nvmlFieldValue_t, size 40, align 8,
        fieldId @ 0, scopeId @ 4, timestamp @ 8, latencyUsec @ 16, valueType @ 24,
        nvmlReturn @ 28, value @ 32);
    assert_layout!(nvmlProcessInfo_v1_t, size 16, align 8, pid @ 0, usedGpuMemory @ 8);
    assert_layout!(nvmlProcessInfo_t, size 24, align 8,
        pid @ 0, usedGpuMemory @ 8, gpuInstanceId @ 16, computeInstanceId @ 20);
    assert_layout!(nvmlEventData_t, size 32, align 8,
        device @ 0, eventType @ 8, eventData @ 16, gpuInstanceId @ 24, computeInstanceId @ 28);
    assert_layout!(nvmlGpmSupport_t, size 8, align 4, version @ 0, isSupportedDevice @ 4);
    assert_layout!(nvmlGpmMetric_t, size 40, align 8,
        metricId @ 0, nvmlReturn @ 4, value @ 8, shortName @ 16, longName @ 24, unit @ 32);
    assert_layout!(nvmlGpmMetricsGet_t, size 19_104, align 8,
        version @ 0, numMetrics @ 4, sample1 @ 8, sample2 @ 16, metrics @ 24);
    assert_layout!(nvmlSample_t, size 16, align 8, timeStamp @ 0, sampleValue @ 8);
    assert_layout!(nvmlProcessUtilizationSample_t, size 32, align 8,
        pid @ 0, timeStamp @ 8, smUtil @ 16, memUtil @ 20, encUtil @ 24, decUtil @ 28);
}

#[cfg(any(test, feature = "header-check"))]
mod c_names;
pub mod codes;
pub mod enums;
pub mod field_ids;
pub mod fns;
pub mod gpm_ids;
#[cfg(all(test, target_os = "linux", target_pointer_width = "64"))]
mod header;
pub mod health;
