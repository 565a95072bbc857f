//! GPU Performance Monitoring (Hopper and newer): samples and interval metrics.
//!
//! A sample records (device, simulated time); `nvmlGpmMetricsGet` reports each metric's
//! mean over the interval between two samples, as the hardware counters would.

use std::ffi::{c_uint, CStr};

use super::{boundary, device_scalar, non_null, put};
use crate::abi::*;
use crate::metric::Metric;
use crate::scenario::Device;
use crate::state::{self, Call};

/// `nvmlGpmQueryDeviceSupport`: `isSupportedDevice` is 1 when the scenario's `gpm` is true
/// (Hopper by default). `version` must be 1, else ARGUMENT_VERSION_MISMATCH.
///
/// # Safety
/// `gpm_support` must be NULL or valid for reading and writing one `nvmlGpmSupport_t`
/// whose `version` is initialised.
#[no_mangle]
pub unsafe extern "C" fn nvmlGpmQueryDeviceSupport(
    device: NvmlDevice,
    gpm_support: *mut NvmlGpmSupport,
) -> NvmlReturn {
    let read = |_: Call, d: &Device| {
        // SAFETY: `device_scalar` checked the pointer is non-NULL; the caller guarantees
        // the input field `version` is initialised.
        let version = unsafe { (&raw const (*gpm_support).version).read() };
        if version != GPM_SUPPORT_VERSION {
            return Err(ERROR_ARGUMENT_VERSION_MISMATCH);
        }
        Ok(NvmlGpmSupport {
            version,
            isSupportedDevice: c_uint::from(d.gpm),
        })
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { device_scalar("nvmlGpmQueryDeviceSupport", device, gpm_support, read) }
}

/// `nvmlGpmSampleAlloc`: a new, empty sample.
///
/// # Safety
/// `gpm_sample` must be NULL or valid for writing one `nvmlGpmSample_t`.
#[no_mangle]
pub unsafe extern "C" fn nvmlGpmSampleAlloc(gpm_sample: *mut NvmlGpmSample) -> NvmlReturn {
    boundary(|| {
        state::system("nvmlGpmSampleAlloc")?;
        non_null(gpm_sample)?;
        let sample = state::gpm_alloc()?;
        // SAFETY: forwarded from this function's contract.
        unsafe { put(gpm_sample, sample) }
    })
}

/// `nvmlGpmSampleFree`: releases a sample; unknown samples are INVALID_ARGUMENT.
#[no_mangle]
pub extern "C" fn nvmlGpmSampleFree(gpm_sample: NvmlGpmSample) -> NvmlReturn {
    boundary(|| {
        state::system("nvmlGpmSampleFree")?;
        state::gpm_free(gpm_sample)
    })
}

/// `nvmlGpmSampleGet`: records the device and the current simulated time in the sample;
/// NOT_SUPPORTED on a device without GPM.
#[no_mangle]
pub extern "C" fn nvmlGpmSampleGet(device: NvmlDevice, gpm_sample: NvmlGpmSample) -> NvmlReturn {
    boundary(|| {
        let (call, d) = state::device("nvmlGpmSampleGet", device)?;
        if !d.gpm {
            return Err(ERROR_NOT_SUPPORTED);
        }
        state::gpm_record(gpm_sample, d.index, call.t)
    })
}

/// `nvmlGpmMetricsGet`: for each of the first `numMetrics` entries, the mean of the
/// metric over [sample1, sample2]. Ids 1, 2, 3, 5, 10, 20, 21, 60 and 61 are modelled;
/// others get NOT_SUPPORTED in their entry. `version` must be 1; `numMetrics` at most
/// [`GPM_METRIC_MAX`]; both samples taken on the same device, sample2 later (else
/// INVALID_ARGUMENT). Like a driver that treats the struct as full length (its version
/// stayed 1 while the array grew), it then clears every entry past `numMetrics` up to
/// [`GPM_METRIC_MAX`]: a caller whose buffer is shorter than the newest header's struct
/// gets the memory after it overwritten, which its tests can see.
///
/// # Safety
/// `metrics_get` must be NULL or point to a writable `nvmlGpmMetricsGet_t` of the newest
/// header's length whose header fields and first `numMetrics` `metricId`s are initialised.
#[no_mangle]
pub unsafe extern "C" fn nvmlGpmMetricsGet(metrics_get: *mut NvmlGpmMetricsGet) -> NvmlReturn {
    boundary(|| {
        state::system("nvmlGpmMetricsGet")?;
        non_null(metrics_get)?;
        // SAFETY: non-NULL; the caller guarantees the header fields are initialised.
        let version = unsafe { (&raw const (*metrics_get).version).read() };
        if version != GPM_METRICS_GET_VERSION {
            return Err(ERROR_ARGUMENT_VERSION_MISMATCH);
        }
        // SAFETY: as above.
        let num_metrics = unsafe { (&raw const (*metrics_get).numMetrics).read() } as usize;
        // SAFETY: as above.
        let sample1 = unsafe { (&raw const (*metrics_get).sample1).read() };
        // SAFETY: as above.
        let sample2 = unsafe { (&raw const (*metrics_get).sample2).read() };
        if num_metrics > GPM_METRIC_MAX {
            return Err(ERROR_INVALID_ARGUMENT);
        }
        let (s1, s2) = state::gpm_pair(sample1, sample2)?;
        if s1.device != s2.device || s2.t <= s1.t {
            return Err(ERROR_INVALID_ARGUMENT);
        }
        let (_, d) = state::device_by_index("nvmlGpmMetricsGet", s1.device)?;
        // Raw element pointers only: no reference to the whole struct is formed.
        // SAFETY: `metrics` is at offset 24 inside the caller's struct.
        let first = unsafe { (&raw mut (*metrics_get).metrics) }.cast::<NvmlGpmMetric>();
        for i in 0..num_metrics {
            // SAFETY: the caller's array holds at least `num_metrics > i` entries.
            let entry = unsafe { first.add(i) };
            // SAFETY: `entry` is in bounds and its input field `metricId` is initialised.
            let metric_id = unsafe { (&raw const (*entry).metricId).read() };
            let (nvml_return, value) = match Metric::for_gpm_id(metric_id) {
                Some(m) => (SUCCESS, d.mean(m, s1.t, s2.t)),
                None => (ERROR_NOT_SUPPORTED, 0.0),
            };
            let (short_name, long_name, unit) = info(metric_id);
            let filled = NvmlGpmMetric {
                metricId: metric_id,
                nvmlReturn: nvml_return,
                value,
                // nvml.h declares the names `char *`; the caller only reads them.
                shortName: short_name.as_ptr().cast_mut(),
                longName: long_name.as_ptr().cast_mut(),
                unit: unit.as_ptr().cast_mut(),
            };
            // SAFETY: `entry` is in bounds and writable.
            unsafe { entry.write(filled) };
        }
        let cleared = NvmlGpmMetric {
            metricId: 0,
            nvmlReturn: SUCCESS,
            value: 0.0,
            shortName: std::ptr::null_mut(),
            longName: std::ptr::null_mut(),
            unit: std::ptr::null_mut(),
        };
        for i in num_metrics..GPM_METRIC_MAX {
            // SAFETY: the caller's struct is of the full length, `GPM_METRIC_MAX > i` entries.
            unsafe { first.add(i).write(cleared) };
        }
        Ok(())
    })
}

/// `metricInfo` strings: (short name, long name, unit); static, owned by the library.
fn info(metric_id: c_uint) -> (&'static CStr, &'static CStr, &'static CStr) {
    match metric_id {
        1 => (c"GR_ACTIVE", c"Graphics activity", c"%"),
        2 => (c"SM_ACTIVE", c"SM activity", c"%"),
        3 => (c"SM_OCCUPANCY", c"SM occupancy", c"%"),
        5 => (c"ANY_TENSOR_ACTIVE", c"Any tensor pipe activity", c"%"),
        10 => (c"DRAM_BW_UTIL", c"DRAM bandwidth utilization", c"%"),
        20 => (c"PCIE_TX", c"PCIe bytes transmitted per second", c"MiB/s"),
        21 => (c"PCIE_RX", c"PCIe bytes received per second", c"MiB/s"),
        60 => (c"NVLINK_RX", c"NVLink bytes received per second", c"MiB/s"),
        61 => (
            c"NVLINK_TX",
            c"NVLink bytes transmitted per second",
            c"MiB/s",
        ),
        _ => (c"", c"", c""),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_modelled_metric_has_names() {
        for id in [1, 2, 3, 5, 10, 20, 21, 60, 61] {
            assert!(crate::metric::Metric::for_gpm_id(id).is_some(), "{id}");
            assert!(!super::info(id).0.is_empty(), "{id}");
        }
    }
}
