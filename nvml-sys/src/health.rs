//! The constants and prototypes of NVML's health calls: ECC mode and error counts, errors by
//! memory location, remapped rows, retired pages, NVLink error counters, and the GPU-alone
//! PCIe generation (nvml.h; docs/health.md says what each means and when gpuwhy reads it).
//!
//! Enum arguments are plain `c_uint`, as everywhere in this crate.

use std::ffi::{c_uint, c_ulonglong};

use crate::nvmlDevice_t;

/// `nvmlEnableState_t`: `NVML_FEATURE_DISABLED`.
pub const NVML_FEATURE_DISABLED: c_uint = 0;
/// `nvmlEnableState_t`: `NVML_FEATURE_ENABLED`.
pub const NVML_FEATURE_ENABLED: c_uint = 1;

/// `nvmlMemoryErrorType_t`: `NVML_MEMORY_ERROR_TYPE_CORRECTED` (single-bit).
pub const NVML_MEMORY_ERROR_TYPE_CORRECTED: c_uint = 0;
/// `nvmlMemoryErrorType_t`: `NVML_MEMORY_ERROR_TYPE_UNCORRECTED` (double-bit).
pub const NVML_MEMORY_ERROR_TYPE_UNCORRECTED: c_uint = 1;

/// `nvmlEccCounterType_t`: `NVML_VOLATILE_ECC`, reset each time the driver loads.
pub const NVML_VOLATILE_ECC: c_uint = 0;
/// `nvmlEccCounterType_t`: `NVML_AGGREGATE_ECC`, over the GPU's life.
pub const NVML_AGGREGATE_ECC: c_uint = 1;

/// `nvmlMemoryLocation_t` values with the names gpuwhy's report gives them, in the order
/// of the header. `NVML_MEMORY_LOCATION_DRAM` and `NVML_MEMORY_LOCATION_DEVICE_MEMORY` are
/// both 2: Turing and newer call it DRAM, older parts device memory; the report says `dram`.
pub const NVML_MEMORY_LOCATIONS: [(&str, c_uint, &str); 8] = [
    ("NVML_MEMORY_LOCATION_L1_CACHE", 0, "l1_cache"),
    ("NVML_MEMORY_LOCATION_L2_CACHE", 1, "l2_cache"),
    ("NVML_MEMORY_LOCATION_DRAM", 2, "dram"),
    ("NVML_MEMORY_LOCATION_REGISTER_FILE", 3, "register_file"),
    ("NVML_MEMORY_LOCATION_TEXTURE_MEMORY", 4, "texture_memory"),
    ("NVML_MEMORY_LOCATION_TEXTURE_SHM", 5, "texture_shm"),
    ("NVML_MEMORY_LOCATION_CBU", 6, "cbu"),
    ("NVML_MEMORY_LOCATION_SRAM", 7, "sram"),
];
/// `NVML_MEMORY_LOCATION_DEVICE_MEMORY`, the pre-Turing name of location 2.
pub const NVML_MEMORY_LOCATION_DEVICE_MEMORY: c_uint = 2;

/// `nvmlPageRetirementCause_t`: retired after multiple single-bit errors.
pub const NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS: c_uint = 0;
/// `nvmlPageRetirementCause_t`: retired after a double-bit error.
pub const NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR: c_uint = 1;

/// `nvmlNvLinkErrorCounter_t`: data-link transmit replays.
pub const NVML_NVLINK_ERROR_DL_REPLAY: c_uint = 0;
/// `nvmlNvLinkErrorCounter_t`: data-link transmit recoveries.
pub const NVML_NVLINK_ERROR_DL_RECOVERY: c_uint = 1;
/// `nvmlNvLinkErrorCounter_t`: flow-control digit (flit) CRC errors received.
pub const NVML_NVLINK_ERROR_DL_CRC_FLIT: c_uint = 2;
/// `nvmlNvLinkErrorCounter_t`: data CRC errors received.
pub const NVML_NVLINK_ERROR_DL_CRC_DATA: c_uint = 3;
/// `nvmlNvLinkErrorCounter_t`: data ECC errors received.
pub const NVML_NVLINK_ERROR_DL_ECC_DATA: c_uint = 4;
/// `NVML_NVLINK_MAX_LINKS` of the newest header checked (36 in 13.5; 18 before Blackwell).
pub const NVML_NVLINK_MAX_LINKS: c_uint = 36;

/// `nvmlDeviceGetEccMode(nvmlDevice_t, nvmlEnableState_t *current, nvmlEnableState_t *pending)`.
pub type EccModeFn = unsafe extern "C" fn(nvmlDevice_t, *mut c_uint, *mut c_uint) -> c_uint;
/// `nvmlDeviceGetTotalEccErrors(nvmlDevice_t, nvmlMemoryErrorType_t, nvmlEccCounterType_t,
/// unsigned long long *eccCounts)`.
pub type TotalEccErrorsFn =
    unsafe extern "C" fn(nvmlDevice_t, c_uint, c_uint, *mut c_ulonglong) -> c_uint;
/// `nvmlDeviceGetMemoryErrorCounter(nvmlDevice_t, nvmlMemoryErrorType_t, nvmlEccCounterType_t,
/// nvmlMemoryLocation_t, unsigned long long *count)`.
pub type MemoryErrorCounterFn =
    unsafe extern "C" fn(nvmlDevice_t, c_uint, c_uint, c_uint, *mut c_ulonglong) -> c_uint;
/// `nvmlDeviceGetRemappedRows(nvmlDevice_t, unsigned int *corrRows, unsigned int *uncRows,
/// unsigned int *isPending, unsigned int *failureOccurred)`.
pub type RemappedRowsFn = unsafe extern "C" fn(
    nvmlDevice_t,
    *mut c_uint,
    *mut c_uint,
    *mut c_uint,
    *mut c_uint,
) -> c_uint;
/// `nvmlDeviceGetRetiredPages(nvmlDevice_t, nvmlPageRetirementCause_t, unsigned int
/// *pageCount, unsigned long long *addresses)`: a `pageCount` of 0 and NULL `addresses` ask
/// for the count only.
pub type RetiredPagesFn =
    unsafe extern "C" fn(nvmlDevice_t, c_uint, *mut c_uint, *mut c_ulonglong) -> c_uint;
/// `nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t, nvmlEnableState_t *isPending)`.
pub type RetiredPagesPendingFn = unsafe extern "C" fn(nvmlDevice_t, *mut c_uint) -> c_uint;
/// `nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t, unsigned int link, nvmlNvLinkErrorCounter_t,
/// unsigned long long *counterValue)`.
pub type NvLinkErrorCounterFn =
    unsafe extern "C" fn(nvmlDevice_t, c_uint, c_uint, *mut c_ulonglong) -> c_uint;
/// `nvmlDeviceGetGpuMaxPcieLinkGeneration(nvmlDevice_t, unsigned int *maxLinkGenDevice)`.
pub type GpuMaxPcieLinkGenerationFn = unsafe extern "C" fn(nvmlDevice_t, *mut c_uint) -> c_uint;

/// Every health function with its prototype type, for the header test and the simulator's
/// check that its exports have these types.
pub const FUNCTIONS: [&str; 8] = [
    "nvmlDeviceGetEccMode",
    "nvmlDeviceGetTotalEccErrors",
    "nvmlDeviceGetMemoryErrorCounter",
    "nvmlDeviceGetRemappedRows",
    "nvmlDeviceGetRetiredPages",
    "nvmlDeviceGetRetiredPagesPendingStatus",
    "nvmlDeviceGetNvLinkErrorCounter",
    "nvmlDeviceGetGpuMaxPcieLinkGeneration",
];
