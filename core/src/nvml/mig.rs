//! MIG devices and per-process utilization: the NVML queries behind "which GPU is the job's"
//! on MIG-partitioned GPUs and shared ones (`docs/job-gpus.md`).
//!
//! A MIG-enabled A100/H100 is split into GPU instances; CUDA sees each (with a compute
//! instance) as a device with a `MIG-…` UUID. NVML hands out a handle per MIG device
//! ([`Nvml::mig_device_by_index`]) that answers the memory and identity queries for its
//! slice but not whole-GPU utilization; Hopper's GPM samples a GPU instance through its
//! parent GPU ([`Nvml::gpm_mig_sample_get`]). [`Nvml::process_utilization`] is the
//! driver's per-process SM share (not supported on MIG-enabled GPUs).
//!
//! What it is not for: deciding what a MIG device or a process's share means; the
//! collector and the rules do that.

#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::{c_uint, c_ulonglong};

use super::device::Device;
use super::error::NvmlError;
use super::gpm::GpmSample;
use super::library::{check, Nvml};
use super::sys::{codes, nvmlDevice_t, nvmlGpmSample_t, nvmlProcessUtilizationSample_t};

/// `NVML_DEVICE_MIG_ENABLE`: the MIG mode value of an enabled GPU.
pub const NVML_DEVICE_MIG_ENABLE: u32 = super::sys::enums::NVML_DEVICE_MIG_ENABLE;
/// `NVML_DEVICE_MIG_DISABLE`.
pub const NVML_DEVICE_MIG_DISABLE: u32 = super::sys::enums::NVML_DEVICE_MIG_DISABLE;

/// `nvmlReturn_t (nvmlDevice_t, unsigned int *current, unsigned int *pending)`.
pub(super) type DevUintUintFn =
    unsafe extern "C" fn(nvmlDevice_t, *mut c_uint, *mut c_uint) -> c_uint;
/// `nvmlReturn_t (nvmlDevice_t, unsigned int index, nvmlDevice_t *mig)`.
pub(super) type MigByIndexFn =
    unsafe extern "C" fn(nvmlDevice_t, c_uint, *mut nvmlDevice_t) -> c_uint;
/// `nvmlReturn_t (nvmlDevice_t mig, nvmlDevice_t *parent)`.
pub(super) type DevHandleFn = unsafe extern "C" fn(nvmlDevice_t, *mut nvmlDevice_t) -> c_uint;
/// `nvmlReturn_t (nvmlDevice_t, unsigned int gpuInstanceId, nvmlGpmSample_t)`.
pub(super) type GpmMigSampleGetFn =
    unsafe extern "C" fn(nvmlDevice_t, c_uint, nvmlGpmSample_t) -> c_uint;
/// `nvmlReturn_t (nvmlDevice_t, nvmlProcessUtilizationSample_t *, unsigned int *count,
/// unsigned long long lastSeenTimeStamp)`.
pub(super) type ProcessUtilFn = unsafe extern "C" fn(
    nvmlDevice_t,
    *mut nvmlProcessUtilizationSample_t,
    *mut c_uint,
    c_ulonglong,
) -> c_uint;

/// Most process samples read in one call; the driver keeps a short ring of samples per GPU.
const MAX_PROCESS_SAMPLES: u32 = 1024;

/// Samples the first fill has room for: about a second of samples of ten processes (the
/// driver samples each every 1/6 s to 1 s).
const FIRST_PROCESS_SAMPLES: u32 = 64;

/// One per-process utilization sample (`nvmlProcessUtilizationSample_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessUtilization {
    /// Process id, in the driver's PID namespace.
    pub pid: u32,
    /// CPU timestamp of the sample, microseconds.
    pub timestamp_us: u64,
    /// Share of the sample period the process's kernels ran on the SMs, %.
    pub sm_util: u32,
    /// Share of the sample period the process read or wrote device memory, %.
    pub mem_util: u32,
}

impl Nvml {
    fn device_of(&self, handle: nvmlDevice_t) -> Device {
        Device {
            handle,
            owner: self.id,
        }
    }

    /// `(current, pending)` MIG mode: whether MIG is enabled now and after the next reset.
    pub fn mig_mode(&self, d: Device) -> Result<(bool, bool), NvmlError> {
        let h = self.raw(d)?;
        self.syms.mig_mode.call(|symbol, f| {
            let (mut current, mut pending): (c_uint, c_uint) = (0, 0);
            // SAFETY: `f` is `nvmlReturn_t (nvmlDevice_t, unsigned int*, unsigned int*)`; `h`
            // is a handle from this library; both outputs are valid `unsigned int`s.
            let rc = unsafe { f(h, &mut current, &mut pending) };
            check(symbol, rc).map(|()| {
                (
                    current == NVML_DEVICE_MIG_ENABLE,
                    pending == NVML_DEVICE_MIG_ENABLE,
                )
            })
        })
    }

    /// How many MIG devices `d` can hold (slots for [`Nvml::mig_device_by_index`]).
    pub fn max_mig_device_count(&self, d: Device) -> Result<u32, NvmlError> {
        self.dev_uint(&self.syms.max_mig_device_count, d)
    }

    /// The MIG device in slot `index` of `d`; NOT_FOUND for an empty slot.
    pub fn mig_device_by_index(&self, d: Device, index: u32) -> Result<Device, NvmlError> {
        let h = self.raw(d)?;
        self.syms.mig_device_by_index.call(|symbol, f| {
            let mut out: nvmlDevice_t = std::ptr::null_mut();
            // SAFETY: `f` is `nvmlReturn_t (nvmlDevice_t, unsigned int, nvmlDevice_t*)`; `h`
            // is a handle from this library; `out` is a valid handle slot.
            let rc = unsafe { f(h, index, &mut out) };
            check(symbol, rc)?;
            if out.is_null() {
                return Err(NvmlError::new(
                    "nvmlDeviceGetMigDeviceHandleByIndex (returned a NULL handle)",
                    codes::UNKNOWN,
                ));
            }
            Ok(self.device_of(out))
        })
    }

    /// Whether `d` is a MIG device handle.
    pub fn is_mig_device(&self, d: Device) -> Result<bool, NvmlError> {
        self.dev_uint(&self.syms.is_mig_device, d).map(|v| v != 0)
    }

    /// The GPU a MIG device handle belongs to.
    pub fn mig_parent(&self, mig: Device) -> Result<Device, NvmlError> {
        let h = self.raw(mig)?;
        self.syms.mig_parent.call(|symbol, f| {
            let mut out: nvmlDevice_t = std::ptr::null_mut();
            // SAFETY: `f` is `nvmlReturn_t (nvmlDevice_t, nvmlDevice_t*)`; `h` is a handle
            // from this library; `out` is a valid handle slot.
            let rc = unsafe { f(h, &mut out) };
            check(symbol, rc)?;
            if out.is_null() {
                return Err(NvmlError::new(
                    "nvmlDeviceGetDeviceHandleFromMigDeviceHandle (returned a NULL handle)",
                    codes::UNKNOWN,
                ));
            }
            Ok(self.device_of(out))
        })
    }

    /// The GPU instance id of a MIG device.
    pub fn gpu_instance_id(&self, mig: Device) -> Result<u32, NvmlError> {
        self.dev_uint(&self.syms.gpu_instance_id, mig)
    }

    /// The compute instance id of a MIG device.
    pub fn compute_instance_id(&self, mig: Device) -> Result<u32, NvmlError> {
        self.dev_uint(&self.syms.compute_instance_id, mig)
    }

    /// Takes a GPM snapshot of GPU instance `gpu_instance` of the (parent) GPU `d`.
    pub fn gpm_mig_sample_get(
        &self,
        d: Device,
        gpu_instance: u32,
        sample: &GpmSample<'_>,
    ) -> Result<(), NvmlError> {
        let h = self.raw(d)?;
        let s = self.own_sample(sample)?;
        self.syms.gpm_mig_sample_get.call(|symbol, f| {
            // SAFETY: `f` is `nvmlReturn_t (nvmlDevice_t, unsigned int, nvmlGpmSample_t)`;
            // both handles are live and from this library, and `GpmSample` is not Sync, so
            // no other thread is using the sample.
            let rc = unsafe { f(h, gpu_instance, s) };
            check(symbol, rc)
        })
    }

    /// Per-process utilization samples of `d` newer than `since_us` (0: every sample the
    /// driver keeps). No sample yet (NOT_FOUND) is an empty list. A fill with room for
    /// [`FIRST_PROCESS_SAMPLES`] comes first; only when the samples do not fit
    /// (INSUFFICIENT_SIZE, the count set to the size needed) a second fill follows, so a
    /// second's samples of a few processes cost one driver call instead of a size query and
    /// a fill.
    pub fn process_utilization(
        &self,
        d: Device,
        since_us: u64,
    ) -> Result<Vec<ProcessUtilization>, NvmlError> {
        let h = self.raw(d)?;
        self.syms.process_utilization.call(|symbol, f| {
            let mut capacity = FIRST_PROCESS_SAMPLES;
            let mut buf = vec![nvmlProcessUtilizationSample_t::default(); capacity as usize];
            // SAFETY: `f` is the nvml.h prototype of `nvmlDeviceGetProcessUtilization`;
            // `buf` holds `capacity` elements, the count passed.
            let mut rc = unsafe { f(h, buf.as_mut_ptr(), &mut capacity, since_us) };
            if rc == codes::INSUFFICIENT_SIZE {
                capacity = capacity.clamp(FIRST_PROCESS_SAMPLES, MAX_PROCESS_SAMPLES);
                buf = vec![nvmlProcessUtilizationSample_t::default(); capacity as usize];
                // SAFETY: as the call above, with the larger buffer and its count.
                rc = unsafe { f(h, buf.as_mut_ptr(), &mut capacity, since_us) };
            }
            if rc == codes::NOT_FOUND {
                return Ok(Vec::new());
            }
            check(symbol, rc)?;
            buf.truncate(capacity as usize);
            Ok(buf
                .iter()
                .map(|s| ProcessUtilization {
                    pid: s.pid,
                    timestamp_us: s.timeStamp,
                    sm_util: s.smUtil.min(100),
                    mem_util: s.memUtil.min(100),
                })
                .collect())
        })
    }
}

/// The layouts, constants and prototypes of this file, for the check against `nvml.h`.
#[cfg(all(test, target_os = "linux", target_pointer_width = "64"))]
pub(super) mod header {
    use nvml_header_check::Check;

    /// Adds this file's facts to `c`.
    pub(in super::super) fn facts(c: &mut Check) {
        c.constant("NVML_DEVICE_MIG_ENABLE", super::NVML_DEVICE_MIG_ENABLE);
        c.constant("NVML_DEVICE_MIG_DISABLE", super::NVML_DEVICE_MIG_DISABLE);
    }
}
