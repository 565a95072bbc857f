//! GPU Performance Monitoring (Hopper and newer, Linux): SM occupancy, tensor activity,
//! DRAM bandwidth and link rates computed by NVML between two snapshots taken more than
//! 100 ms apart.

use std::ffi::{c_uint, c_void};

use super::device::Device;
use super::error::NvmlError;
use super::library::{check, Nvml};
use super::sys::{self, codes};

pub use super::sys::gpm_ids::*;

/// Most metrics requested in one `nvmlGpmMetricsGet` call: the array length of the oldest
/// GPM headers, which older drivers assume.
pub const GPM_METRICS_PER_CALL: usize = sys::NVML_GPM_METRIC_MAX_V1;

/// A GPM snapshot buffer, freed on drop. Send but not Sync, like [`super::EventSet`].
pub struct GpmSample<'nvml> {
    nvml: &'nvml Nvml,
    handle: sys::nvmlGpmSample_t,
}

// SAFETY: the sample is an opaque NVML buffer with no thread affinity; only one thread can
// use it at a time because the type is not Sync. `&Nvml` is Send (Nvml is Sync).
unsafe impl Send for GpmSample<'_> {}

impl std::fmt::Debug for GpmSample<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GpmSample({:p})", self.handle)
    }
}

impl Drop for GpmSample<'_> {
    fn drop(&mut self) {
        if let Some(free) = self.nvml.syms.gpm_sample_free.get() {
            // SAFETY: `free` is `nvmlReturn_t (nvmlGpmSample_t)`; the sample came from this
            // library's `nvmlGpmSampleAlloc` and is freed exactly once, here.
            let _ = unsafe { free(self.handle) };
        }
    }
}

/// Eight words after the metrics array that no driver may touch, checked after each call.
const GUARD_WORDS: usize = 8;
/// The guard's pattern ("gpuwhyG!").
const GUARD: u64 = 0x2147_7968_7775_7067;

/// `nvmlGpmMetricsGet_t` of the newest header checked (477 entries; the struct grew with its
/// version still 1, so a driver may treat the buffer as that long whatever `numMetrics`
/// says), followed by a guard that shows whether a driver wrote past even that.
#[repr(C)]
struct MetricsGetBuffer {
    get: sys::nvmlGpmMetricsGet_t,
    guard: [u64; GUARD_WORDS],
}

impl MetricsGetBuffer {
    /// The error for a driver that wrote past the 477 entries (a header newer than the one
    /// checked): GPM is switched off rather than risk memory the driver does not own.
    const OVERRUN: NvmlError = NvmlError::new(
        "nvmlGpmMetricsGet (wrote past the end of a 477-entry nvmlGpmMetricsGet_t)",
        codes::ARGUMENT_VERSION_MISMATCH,
    );

    fn guard_intact(&self) -> bool {
        self.guard.iter().all(|w| *w == GUARD)
    }
}

/// `(id, result)` for a filled metric slot.
fn metric_result(m: &sys::nvmlGpmMetric_t) -> Result<f64, NvmlError> {
    if m.nvmlReturn == codes::SUCCESS {
        Ok(m.value)
    } else {
        Err(NvmlError::new("nvmlGpmMetricsGet", m.nvmlReturn))
    }
}

impl Nvml {
    /// Whether `d` supports GPM (`nvmlGpmQueryDeviceSupport`).
    pub fn gpm_supported(&self, d: Device) -> Result<bool, NvmlError> {
        let h = self.raw(d)?;
        self.syms.gpm_query_support.call(|symbol, f| {
            let mut s = sys::nvmlGpmSupport_t {
                version: sys::NVML_GPM_SUPPORT_VERSION,
                isSupportedDevice: 0,
            };
            // SAFETY: `f` is `nvmlReturn_t (nvmlDevice_t, nvmlGpmSupport_t*)`; `s` is one with
            // its version set.
            let rc = unsafe { f(h, &mut s) };
            check(symbol, rc).map(|()| s.isSupportedDevice != 0)
        })
    }

    /// Allocates a snapshot buffer.
    pub fn gpm_sample(&self) -> Result<GpmSample<'_>, NvmlError> {
        self.syms.gpm_sample_alloc.call(|symbol, f| {
            let mut handle: *mut c_void = std::ptr::null_mut();
            // SAFETY: `f` is `nvmlReturn_t (nvmlGpmSample_t*)`; `handle` is a valid out-pointer.
            let rc = unsafe { f(&mut handle) };
            check(symbol, rc)?;
            if handle.is_null() {
                return Err(NvmlError::new(
                    "nvmlGpmSampleAlloc (returned a NULL sample)",
                    codes::UNKNOWN,
                ));
            }
            Ok(GpmSample { nvml: self, handle })
        })
    }

    pub(super) fn own_sample(&self, s: &GpmSample<'_>) -> Result<sys::nvmlGpmSample_t, NvmlError> {
        if std::ptr::eq(s.nvml, self) {
            Ok(s.handle)
        } else {
            Err(NvmlError::new(
                "gpuwhy (GpmSample from another Nvml instance)",
                codes::INVALID_ARGUMENT,
            ))
        }
    }

    /// Takes a snapshot of `d` into `sample`. Snapshots compared by [`Nvml::gpm_metrics`]
    /// must be more than 100 ms apart.
    pub fn gpm_sample_get(&self, d: Device, sample: &GpmSample<'_>) -> Result<(), NvmlError> {
        let h = self.raw(d)?;
        let s = self.own_sample(sample)?;
        self.syms.gpm_sample_get.call(|symbol, f| {
            // SAFETY: `f` is `nvmlReturn_t (nvmlDevice_t, nvmlGpmSample_t)`; both handles are
            // live and from this library, and `GpmSample` is not Sync, so no other thread is
            // using the sample.
            let rc = unsafe { f(h, s) };
            check(symbol, rc)
        })
    }

    /// Computes `ids` between two snapshots of the same device, in chunks of at most
    /// [`GPM_METRICS_PER_CALL`]. The outer error is for a call as a whole; each metric has
    /// its own result (NOT_SUPPORTED for ids this GPU lacks).
    pub fn gpm_metrics(
        &self,
        earlier: &GpmSample<'_>,
        later: &GpmSample<'_>,
        ids: &[u32],
    ) -> Result<Vec<Result<f64, NvmlError>>, NvmlError> {
        let (s1, s2) = (self.own_sample(earlier)?, self.own_sample(later)?);
        SCRATCH.with_borrow_mut(|slot| {
            let buf = slot.get_or_insert_with(MetricsGetBuffer::boxed);
            buf.reset(s1, s2);
            self.gpm_metrics_in(buf, ids)
        })
    }

    /// [`Nvml::gpm_metrics`] into `buf`, reset, with its samples set.
    fn gpm_metrics_in(
        &self,
        buf: &mut MetricsGetBuffer,
        ids: &[u32],
    ) -> Result<Vec<Result<f64, NvmlError>>, NvmlError> {
        let mut results = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(GPM_METRICS_PER_CALL) {
            buf.get.version = sys::NVML_GPM_METRICS_GET_VERSION;
            // A chunk has at most 98 entries, so this cannot truncate.
            buf.get.numMetrics = chunk.len() as c_uint;
            for (slot, &id) in buf.get.metrics.iter_mut().zip(chunk) {
                *slot = sys::nvmlGpmMetric_t {
                    metricId: id,
                    ..sys::nvmlGpmMetric_t::EMPTY
                };
            }
            let get: *mut sys::nvmlGpmMetricsGet_t = &mut buf.get;
            self.syms.gpm_metrics_get.call(|symbol, f| {
                // SAFETY: `f` is `nvmlReturn_t (nvmlGpmMetricsGet_t*)`; `get` points to a live
                // struct of the newest header's full length (477 entries, `numMetrics` of them
                // set) that nothing else borrows during the call. The samples are live, from
                // this library, and borrowed for this call.
                let rc = unsafe { f(get) };
                check(symbol, rc)
            })?;
            if !buf.guard_intact() {
                return Err(MetricsGetBuffer::OVERRUN);
            }
            results.extend(buf.get.metrics[..chunk.len()].iter().map(metric_result));
        }
        Ok(results)
    }
}

thread_local! {
    /// The `nvmlGpmMetricsGet_t` buffer of this thread (19,168 bytes with its guard), reused
    /// by every [`Nvml::gpm_metrics`] call on it: allocated afresh each call, it made the
    /// allocator grow and shrink the sampler thread's heap (page faults, `mprotect`) once per
    /// GPU per second, a few per cent of the thread's CPU.
    static SCRATCH: std::cell::RefCell<Option<Box<MetricsGetBuffer>>> =
        const { std::cell::RefCell::new(None) };
}

impl MetricsGetBuffer {
    /// A buffer as [`MetricsGetBuffer::reset`] leaves it, on the heap.
    fn boxed() -> Box<Self> {
        Box::new(MetricsGetBuffer {
            get: sys::nvmlGpmMetricsGet_t {
                version: sys::NVML_GPM_METRICS_GET_VERSION,
                numMetrics: 0,
                sample1: std::ptr::null_mut(),
                sample2: std::ptr::null_mut(),
                metrics: [sys::nvmlGpmMetric_t::EMPTY; sys::NVML_GPM_METRIC_MAX],
            },
            guard: [GUARD; GUARD_WORDS],
        })
    }

    /// Back to a fresh buffer for samples `s1` and `s2`: every slot empty, the guard whole.
    fn reset(&mut self, s1: sys::nvmlGpmSample_t, s2: sys::nvmlGpmSample_t) {
        self.get.version = sys::NVML_GPM_METRICS_GET_VERSION;
        self.get.numMetrics = 0;
        self.get.sample1 = s1;
        self.get.sample2 = s2;
        self.get.metrics.fill(sys::nvmlGpmMetric_t::EMPTY);
        self.guard = [GUARD; GUARD_WORDS];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_buffer_is_the_newest_headers_struct_then_the_guard() {
        // 13.5's NVML_GPM_METRIC_MAX is 477: 24 + 477 × 40 = 19,104 bytes (docs/nvml-loading.md).
        assert_eq!(std::mem::size_of::<sys::nvmlGpmMetricsGet_t>(), 19_104);
        assert_eq!(std::mem::offset_of!(MetricsGetBuffer, get), 0);
        assert_eq!(std::mem::offset_of!(MetricsGetBuffer, guard), 19_104);
    }

    #[test]
    fn per_metric_status_becomes_per_metric_result() {
        let ok = sys::nvmlGpmMetric_t {
            metricId: GPM_SM_OCCUPANCY,
            value: 37.5,
            ..sys::nvmlGpmMetric_t::EMPTY
        };
        assert_eq!(metric_result(&ok), Ok(37.5));
        let bad = sys::nvmlGpmMetric_t {
            nvmlReturn: codes::NOT_SUPPORTED,
            ..ok
        };
        assert!(metric_result(&bad).unwrap_err().is_not_supported());
    }
}
