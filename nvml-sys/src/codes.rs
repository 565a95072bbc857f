//! `nvmlReturn_t` values (nvml.h; checked by the header test). Bound as `u32` because drivers keep appending codes.

/// `NVML_SUCCESS`.
pub const SUCCESS: u32 = 0;
/// `NVML_ERROR_UNINITIALIZED`: `nvmlInit*` not called.
pub const UNINITIALIZED: u32 = 1;
/// `NVML_ERROR_INVALID_ARGUMENT`.
pub const INVALID_ARGUMENT: u32 = 2;
/// `NVML_ERROR_NOT_SUPPORTED`: the device lacks the feature.
pub const NOT_SUPPORTED: u32 = 3;
/// `NVML_ERROR_NO_PERMISSION`.
pub const NO_PERMISSION: u32 = 4;
/// `NVML_ERROR_ALREADY_INITIALIZED` (deprecated).
pub const ALREADY_INITIALIZED: u32 = 5;
/// `NVML_ERROR_NOT_FOUND`.
pub const NOT_FOUND: u32 = 6;
/// `NVML_ERROR_INSUFFICIENT_SIZE`: buffer or array too small.
pub const INSUFFICIENT_SIZE: u32 = 7;
/// `NVML_ERROR_INSUFFICIENT_POWER`: external power cables.
pub const INSUFFICIENT_POWER: u32 = 8;
/// `NVML_ERROR_DRIVER_NOT_LOADED`.
pub const DRIVER_NOT_LOADED: u32 = 9;
/// `NVML_ERROR_TIMEOUT`.
pub const TIMEOUT: u32 = 10;
/// `NVML_ERROR_IRQ_ISSUE`.
pub const IRQ_ISSUE: u32 = 11;
/// `NVML_ERROR_LIBRARY_NOT_FOUND`.
pub const LIBRARY_NOT_FOUND: u32 = 12;
/// `NVML_ERROR_FUNCTION_NOT_FOUND`.
pub const FUNCTION_NOT_FOUND: u32 = 13;
/// `NVML_ERROR_CORRUPTED_INFOROM`.
pub const CORRUPTED_INFOROM: u32 = 14;
/// `NVML_ERROR_GPU_IS_LOST`: the GPU fell off the bus.
pub const GPU_IS_LOST: u32 = 15;
/// `NVML_ERROR_RESET_REQUIRED`.
pub const RESET_REQUIRED: u32 = 16;
/// `NVML_ERROR_OPERATING_SYSTEM`: blocked by the OS or cgroups.
pub const OPERATING_SYSTEM: u32 = 17;
/// `NVML_ERROR_LIB_RM_VERSION_MISMATCH`: user library and kernel module differ.
pub const LIB_RM_VERSION_MISMATCH: u32 = 18;
/// `NVML_ERROR_IN_USE`.
pub const IN_USE: u32 = 19;
/// `NVML_ERROR_MEMORY`.
pub const MEMORY: u32 = 20;
/// `NVML_ERROR_NO_DATA`.
pub const NO_DATA: u32 = 21;
/// `NVML_ERROR_VGPU_ECC_NOT_SUPPORTED`.
pub const VGPU_ECC_NOT_SUPPORTED: u32 = 22;
/// `NVML_ERROR_INSUFFICIENT_RESOURCES`.
pub const INSUFFICIENT_RESOURCES: u32 = 23;
/// `NVML_ERROR_FREQ_NOT_SUPPORTED` (11.4).
pub const FREQ_NOT_SUPPORTED: u32 = 24;
/// `NVML_ERROR_ARGUMENT_VERSION_MISMATCH`: bad `version` field (11.8).
pub const ARGUMENT_VERSION_MISMATCH: u32 = 25;
/// `NVML_ERROR_DEPRECATED`: what removed functions return (12.0).
pub const DEPRECATED: u32 = 26;
/// `NVML_ERROR_NOT_READY` (12.2).
pub const NOT_READY: u32 = 27;
/// `NVML_ERROR_GPU_NOT_FOUND` (12.3).
pub const GPU_NOT_FOUND: u32 = 28;
/// `NVML_ERROR_INVALID_STATE` (12.4).
pub const INVALID_STATE: u32 = 29;
/// `NVML_ERROR_RESET_TYPE_NOT_SUPPORTED` (13.0).
pub const RESET_TYPE_NOT_SUPPORTED: u32 = 30;
/// `NVML_ERROR_UNKNOWN`.
pub const UNKNOWN: u32 = 999;
