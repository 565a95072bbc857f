//! The driver's sample buffers (`nvmlDeviceGetSamples`): the power, utilization and clock
//! samples the driver keeps for each GPU, read many at a time instead of one value per call.
//!
//! What it is for: one call returns every sample of one type newer than a timestamp, so a
//! sampler can read a second's worth of values in one trip into the driver
//! (docs/nvml-loading.md, "Sample buffers"). What it is not for: deciding which sample stands
//! for which moment; the sampler does that.
//!
//! The call fills as many samples as the caller's array holds and says how many it wrote; a
//! NULL array asks for the number available; NOT_FOUND means no sample is newer than
//! `lastSeenTimeStamp` (nvml.h). Power, utilization and clock samples are `unsigned int`
//! values (mW, percent, MHz), but the value type the call reports is honoured (`fields::decode`).

#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::{c_uint, c_ulonglong};

use super::device::Device;
use super::error::NvmlError;
use super::fields::decode;
use super::library::{check, Nvml};
use super::sys::{self, codes, nvmlDevice_t, nvmlSample_t};

/// `nvmlReturn_t (nvmlDevice_t, nvmlSamplingType_t, unsigned long long lastSeenTimeStamp,
/// nvmlValueType_t *sampleValType, unsigned int *sampleCount, nvmlSample_t *samples)`.
pub(super) type SamplesFn = unsafe extern "C" fn(
    nvmlDevice_t,
    c_uint,
    c_ulonglong,
    *mut c_uint,
    *mut c_uint,
    *mut nvmlSample_t,
) -> c_uint;

/// `nvmlSamplingType_t` values gpuwhy reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum SamplingType {
    /// `NVML_TOTAL_POWER_SAMPLES`: board power, mW.
    TotalPower = sys::enums::NVML_TOTAL_POWER_SAMPLES,
    /// `NVML_GPU_UTILIZATION_SAMPLES`: percent of the sample period a kernel ran.
    GpuUtilization = sys::enums::NVML_GPU_UTILIZATION_SAMPLES,
    /// `NVML_MEMORY_UTILIZATION_SAMPLES`: percent of the period device memory was busy.
    MemoryUtilization = sys::enums::NVML_MEMORY_UTILIZATION_SAMPLES,
    /// `NVML_PROCESSOR_CLK_SAMPLES`: processor (SM) clock, MHz.
    ProcessorClock = sys::enums::NVML_PROCESSOR_CLK_SAMPLES,
    /// `NVML_MEMORY_CLK_SAMPLES`: memory clock, MHz.
    MemoryClock = sys::enums::NVML_MEMORY_CLK_SAMPLES,
}

impl SamplingType {
    /// Every type above with its name in `nvml.h`.
    pub const ALL: [(&'static str, SamplingType); 5] = [
        ("NVML_TOTAL_POWER_SAMPLES", SamplingType::TotalPower),
        ("NVML_GPU_UTILIZATION_SAMPLES", SamplingType::GpuUtilization),
        (
            "NVML_MEMORY_UTILIZATION_SAMPLES",
            SamplingType::MemoryUtilization,
        ),
        ("NVML_PROCESSOR_CLK_SAMPLES", SamplingType::ProcessorClock),
        ("NVML_MEMORY_CLK_SAMPLES", SamplingType::MemoryClock),
    ];
}

/// One sample from a driver buffer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// CPU timestamp of the sample, microseconds since 1970 (the driver's time base).
    pub timestamp_us: u64,
    /// The value in the type's unit (mW, percent, MHz).
    pub value: f64,
}

/// Most samples read in one call. NVML does not document its buffers' depth; a second's
/// worth at the shortest documented period (1/6 s, docs/nvml-loading.md) is 6, and this
/// leaves room for drivers that sample much faster or a read that comes late.
pub const SAMPLES_PER_CALL: usize = 128;

impl Nvml {
    /// How many samples of `kind` newer than `since_us` the driver holds (the NULL-array size
    /// query); 0 when it has none (NOT_FOUND).
    pub fn sample_count(
        &self,
        d: Device,
        kind: SamplingType,
        since_us: u64,
    ) -> Result<u32, NvmlError> {
        let h = self.raw(d)?;
        self.syms.samples.call(|symbol, f| {
            let mut vt: c_uint = 0;
            let mut count: c_uint = 0;
            // SAFETY: `f` is the nvml.h prototype of `nvmlDeviceGetSamples`; a NULL samples
            // array is the documented size query, and both outputs point to live locals.
            let rc = unsafe {
                f(
                    h,
                    kind as c_uint,
                    since_us,
                    &mut vt,
                    &mut count,
                    std::ptr::null_mut(),
                )
            };
            if rc == codes::NOT_FOUND {
                return Ok(0);
            }
            check(symbol, rc)?;
            Ok(count)
        })
    }

    /// The samples of `kind` newer than `since_us` (0: all the driver holds), oldest first,
    /// at most [`SAMPLES_PER_CALL`], into `out` (cleared first). One driver call; no samples
    /// newer than `since_us` (NOT_FOUND) is an empty `out`, not an error.
    pub fn samples(
        &self,
        d: Device,
        kind: SamplingType,
        since_us: u64,
        out: &mut Vec<Sample>,
    ) -> Result<(), NvmlError> {
        out.clear();
        let h = self.raw(d)?;
        self.syms.samples.call(|symbol, f| {
            let mut buf = [nvmlSample_t::EMPTY; SAMPLES_PER_CALL];
            let mut vt: c_uint = 0;
            let mut count = SAMPLES_PER_CALL as c_uint;
            // SAFETY: `f` is the nvml.h prototype of `nvmlDeviceGetSamples`; `buf` holds
            // `count` elements, the capacity passed, and the outputs point to live locals.
            let rc = unsafe {
                f(
                    h,
                    kind as c_uint,
                    since_us,
                    &mut vt,
                    &mut count,
                    buf.as_mut_ptr(),
                )
            };
            if rc == codes::NOT_FOUND {
                return Ok(());
            }
            check(symbol, rc)?;
            let n = (count as usize).min(SAMPLES_PER_CALL);
            for s in &buf[..n] {
                // An unknown value type fails the whole read: no sample can be trusted.
                let value = decode(vt, &s.sampleValue).map_err(|_| {
                    out.clear();
                    NvmlError::new("nvmlDeviceGetSamples (unknown valueType)", codes::UNKNOWN)
                })?;
                out.push(Sample {
                    timestamp_us: s.timeStamp,
                    value,
                });
            }
            // The header does not promise an order; the sampler needs oldest first.
            out.sort_by_key(|s| s.timestamp_us);
            Ok(())
        })
    }
}

/// The layouts, constants and prototypes of this file, for the check against `nvml.h`.
#[cfg(all(test, target_os = "linux", target_pointer_width = "64"))]
pub(super) mod header {
    use nvml_header_check::Check;

    use super::SamplingType;

    /// Adds this file's facts to `c`.
    pub(in super::super) fn facts(c: &mut Check) {
        for (name, kind) in SamplingType::ALL {
            c.constant(name, kind as u32);
        }
    }
}
