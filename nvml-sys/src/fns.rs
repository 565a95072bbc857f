//! The shapes of NVML's function prototypes gpuwhy binds, shared by several entry points
//! (`DevUintFn` is every `nvmlReturn_t (nvmlDevice_t, unsigned int *)`). The loader binds each
//! symbol with one of these; the header tests check every binding's prototype against
//! `nvml.h`. Enum arguments and outputs are plain `c_uint`.

use std::ffi::{c_char, c_int, c_uint, c_ulonglong, c_void};

use crate::*;

/// `nvmlReturn_t (void)`.
pub type VoidFn = unsafe extern "C" fn() -> c_uint;
/// `const char* (nvmlReturn_t)`.
pub type ErrorStringFn = unsafe extern "C" fn(c_uint) -> *const c_char;
/// `nvmlReturn_t (char *buf, unsigned int length)`.
pub type SysStrFn = unsafe extern "C" fn(*mut c_char, c_uint) -> c_uint;
/// `nvmlReturn_t (int *out)`.
pub type SysIntFn = unsafe extern "C" fn(*mut c_int) -> c_uint;
/// `nvmlReturn_t (unsigned int *out)`.
pub type SysUintFn = unsafe extern "C" fn(*mut c_uint) -> c_uint;
/// `nvmlReturn_t (unsigned int index, nvmlDevice_t *device)`.
pub type HandleByIndexFn = unsafe extern "C" fn(c_uint, *mut nvmlDevice_t) -> c_uint;
/// `nvmlReturn_t (nvmlDevice_t, char *buf, unsigned int length)`.
pub type DevStrFn = unsafe extern "C" fn(nvmlDevice_t, *mut c_char, c_uint) -> c_uint;
/// `nvmlReturn_t (nvmlDevice_t, unsigned int *out)` (also enum outputs such as P-states).
pub type DevUintFn = unsafe extern "C" fn(nvmlDevice_t, *mut c_uint) -> c_uint;
/// `nvmlReturn_t (nvmlDevice_t, <enum> which, unsigned int *out)`.
pub type DevEnumUintFn = unsafe extern "C" fn(nvmlDevice_t, c_uint, *mut c_uint) -> c_uint;
/// `nvmlReturn_t (nvmlDevice_t, int *major, int *minor)`.
pub type DevIntIntFn = unsafe extern "C" fn(nvmlDevice_t, *mut c_int, *mut c_int) -> c_uint;
/// `nvmlReturn_t (nvmlDevice_t, unsigned long long *out)`.
pub type DevU64Fn = unsafe extern "C" fn(nvmlDevice_t, *mut c_ulonglong) -> c_uint;
/// `nvmlReturn_t (nvmlDevice_t, T *out)` for a struct `T`.
pub type DevStructFn<T> = unsafe extern "C" fn(nvmlDevice_t, *mut T) -> c_uint;
/// `nvmlReturn_t (nvmlDevice_t, int count, nvmlFieldValue_t *values)`.
pub type FieldValuesFn = unsafe extern "C" fn(nvmlDevice_t, c_int, *mut nvmlFieldValue_t) -> c_uint;
/// `nvmlReturn_t (nvmlDevice_t, unsigned int *count, nvmlProcessInfo*_t *infos)`; the
/// element type differs between versions, so it is bound as raw bytes.
pub type ProcessesFn = unsafe extern "C" fn(nvmlDevice_t, *mut c_uint, *mut c_void) -> c_uint;
/// `nvmlReturn_t (H *out)` for an opaque handle type `H` (set or sample allocation).
pub type AllocFn = unsafe extern "C" fn(*mut *mut c_void) -> c_uint;
/// `nvmlReturn_t (H handle)` (set or sample free).
pub type FreeFn = unsafe extern "C" fn(*mut c_void) -> c_uint;
/// `nvmlReturn_t (nvmlDevice_t, unsigned long long eventTypes, nvmlEventSet_t)`.
pub type RegisterEventsFn =
    unsafe extern "C" fn(nvmlDevice_t, c_ulonglong, nvmlEventSet_t) -> c_uint;
/// `nvmlReturn_t (nvmlEventSet_t, nvmlEventData_t *, unsigned int timeoutms)`.
pub type EventSetWaitFn =
    unsafe extern "C" fn(nvmlEventSet_t, *mut nvmlEventData_t, c_uint) -> c_uint;
/// `nvmlReturn_t (nvmlDevice_t, nvmlGpmSample_t)`.
pub type GpmSampleGetFn = unsafe extern "C" fn(nvmlDevice_t, nvmlGpmSample_t) -> c_uint;
/// `nvmlReturn_t (nvmlGpmMetricsGet_t *)`.
pub type GpmMetricsGetFn = unsafe extern "C" fn(*mut nvmlGpmMetricsGet_t) -> c_uint;
