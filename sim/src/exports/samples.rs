//! `nvmlDeviceGetSamples`: the driver's sample buffers of power, utilization and clocks,
//! played from the scenario's model (docs/scenarios.md, "Sample buffers").
//!
//! Each type has a sampling period ([`period_us`]); sample *k* of a run is stamped at
//! init + *k* periods in the driver's time base (µs since 1970, like field timestamps:
//! `Call::unix_us`) and holds the model's value at that simulated time, so it is exactly
//! what the single call would have answered then. The buffer keeps the newest
//! [`BUFFER_DEPTH`] samples of each type.

use std::ffi::{c_uint, c_ulonglong};

use super::{boundary, non_null};
use crate::abi::*;
use crate::metric::Metric;
use crate::scenario::Device;
use crate::state::{self, Call};

/// `NVML_ERROR_NOT_FOUND`: no sample newer than `lastSeenTimeStamp`.
const ERROR_NOT_FOUND: NvmlReturn = 6;

/// `NVML_TOTAL_POWER_SAMPLES`.
pub const TOTAL_POWER_SAMPLES: c_uint = gpuwhy_nvml_sys::enums::NVML_TOTAL_POWER_SAMPLES;
/// `NVML_GPU_UTILIZATION_SAMPLES`.
pub const GPU_UTILIZATION_SAMPLES: c_uint = gpuwhy_nvml_sys::enums::NVML_GPU_UTILIZATION_SAMPLES;
/// `NVML_MEMORY_UTILIZATION_SAMPLES`.
pub const MEMORY_UTILIZATION_SAMPLES: c_uint =
    gpuwhy_nvml_sys::enums::NVML_MEMORY_UTILIZATION_SAMPLES;
/// `NVML_PROCESSOR_CLK_SAMPLES`.
pub const PROCESSOR_CLK_SAMPLES: c_uint = gpuwhy_nvml_sys::enums::NVML_PROCESSOR_CLK_SAMPLES;
/// `NVML_MEMORY_CLK_SAMPLES`.
pub const MEMORY_CLK_SAMPLES: c_uint = gpuwhy_nvml_sys::enums::NVML_MEMORY_CLK_SAMPLES;
/// `NVML_SAMPLINGTYPE_COUNT`: types at or above it are invalid.
pub const SAMPLINGTYPE_COUNT: c_uint = gpuwhy_nvml_sys::enums::NVML_SAMPLINGTYPE_COUNT;

/// Samples the driver keeps per type. NVML does not document the depth; 120 holds 12 s of
/// power samples and 20 s of utilization samples here, far more than a reader that comes
/// once a second needs (docs/scenarios.md, "Sample buffers").
pub const BUFFER_DEPTH: u64 = 120;

/// The names a scenario's `unsupported` list may use to refuse one sample type while
/// `nvmlDeviceGetSamples` answers the others (a driver quirk to test fallbacks with).
pub const TYPE_QUIRKS: [(&str, c_uint); 5] = [
    ("nvmlDeviceGetSamples:power", TOTAL_POWER_SAMPLES),
    ("nvmlDeviceGetSamples:gpu_util", GPU_UTILIZATION_SAMPLES),
    ("nvmlDeviceGetSamples:mem_util", MEMORY_UTILIZATION_SAMPLES),
    ("nvmlDeviceGetSamples:sm_clock", PROCESSOR_CLK_SAMPLES),
    ("nvmlDeviceGetSamples:mem_clock", MEMORY_CLK_SAMPLES),
];

/// The sampling period of a type, µs: power every 100 ms (the update interval measured on
/// A100 and H100 boards, arXiv 2312.02741), utilization every 1/6 s (the shortest period
/// `nvmlUtilization_t`'s documentation gives; 1 s on some products), clocks like
/// utilization (no public figure; a choice). `None` for a type the simulated GPUs do not
/// sample (encoder, decoder, JPEG, OFA, module power).
pub fn period_us(kind: c_uint) -> Option<u64> {
    match kind {
        TOTAL_POWER_SAMPLES => Some(100_000),
        GPU_UTILIZATION_SAMPLES | MEMORY_UTILIZATION_SAMPLES => Some(166_667),
        PROCESSOR_CLK_SAMPLES | MEMORY_CLK_SAMPLES => Some(166_667),
        _ => None,
    }
}

/// The simulated time of the newest sample of `kind` at simulated time `t`: what a single
/// call answering "the last completed sample period" reports on (nvml.h, `nvmlUtilization_t`:
/// "percent of time over the past sample period"; docs/nvml-facts.md, "Sampling periods and
/// call cost"). `t` itself for a type the simulated GPUs do not sample.
pub fn last_sample_at(kind: c_uint, t: f64) -> f64 {
    match period_us(kind) {
        Some(p) => ((t.max(0.0) * 1e6) as u64 / p * p) as f64 / 1e6,
        None => t,
    }
}

/// The single call that answers the same metric, whose `unsupported` entry refuses this type
/// too (a GPU without the sensor lacks both).
fn single_call(kind: c_uint) -> &'static str {
    match kind {
        TOTAL_POWER_SAMPLES => "nvmlDeviceGetPowerUsage",
        GPU_UTILIZATION_SAMPLES | MEMORY_UTILIZATION_SAMPLES => "nvmlDeviceGetUtilizationRates",
        _ => "nvmlDeviceGetClockInfo",
    }
}

/// Whether `d` answers samples of `kind`: a sampled type, not refused through its single
/// call or a [`TYPE_QUIRKS`] entry, and no utilization on MIG (nvml.h: "not currently
/// supported" on MIG-enabled GPUs).
fn supported(d: &Device, kind: c_uint) -> bool {
    let refused = |name: &str| d.unsupported.iter().any(|u| u == name);
    let quirk = TYPE_QUIRKS.iter().any(|(n, k)| *k == kind && refused(n));
    let mig = d.instance.is_some() || !d.mig.is_empty();
    let util = matches!(kind, GPU_UTILIZATION_SAMPLES | MEMORY_UTILIZATION_SAMPLES);
    let mig_util = mig && util;
    period_us(kind).is_some() && !quirk && !refused(single_call(kind)) && !mig_util
}

/// The value of sample type `kind` at simulated time `t`, in its unit (mW, %, MHz).
fn value(d: &Device, kind: c_uint, t: f64) -> c_uint {
    match kind {
        TOTAL_POWER_SAMPLES => super::usage::milliwatts(d.value(Metric::PowerW, t)),
        GPU_UTILIZATION_SAMPLES => d.value_u32(Metric::UtilGpu, t),
        MEMORY_UTILIZATION_SAMPLES => d.value_u32(Metric::UtilMem, t),
        PROCESSOR_CLK_SAMPLES => d.value_u32(Metric::SmClockMhz, t),
        _ => d.value_u32(Metric::MemClockMhz, t),
    }
}

/// The buffer's samples newer than `last_seen` at the call's time, oldest first, as
/// (timestamp µs, simulated time s).
fn held(call: Call, period: u64, last_seen: u64) -> impl Iterator<Item = (u64, f64)> {
    let base = u64::try_from(call.unix_us() - (call.t * 1e6) as i64).unwrap_or(0);
    let now_us = (call.t.max(0.0) * 1e6) as u64;
    let newest = now_us / period;
    let oldest = (newest + 1).saturating_sub(BUFFER_DEPTH);
    (oldest..=newest)
        .map(move |k| (base + k * period, (k * period) as f64 / 1e6))
        .filter(move |(ts, _)| *ts > last_seen)
}

/// `nvmlDeviceGetSamples`: the samples of `kind` newer than `last_seen` (0: all held),
/// oldest first, as `unsigned int` values. With `samples` NULL it is the size query (the
/// number held newer than `last_seen`, SUCCESS). Otherwise `*count` is the array's capacity
/// (0 is INVALID_ARGUMENT): it fills the oldest that fit and sets `*count` to how many, so a
/// caller that passes the last timestamp it got as `last_seen` continues where it stopped
/// (NVML has no "more data" code; nvml.h documents only this truncation). None newer is
/// NOT_FOUND; a type the device does not sample is NOT_SUPPORTED; a type beyond
/// `NVML_SAMPLINGTYPE_COUNT` is INVALID_ARGUMENT.
///
/// # Safety
/// `value_type` and `count` must be NULL or valid for one `unsigned int` (read and write
/// for `count`); `samples` must be NULL or valid for writing `*count` elements.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetSamples(
    device: NvmlDevice,
    kind: c_uint,
    last_seen: c_ulonglong,
    value_type: *mut c_uint,
    count: *mut c_uint,
    samples: *mut NvmlSample,
) -> NvmlReturn {
    boundary(|| {
        let (call, d) = state::device("nvmlDeviceGetSamples", device)?;
        non_null(value_type)?;
        non_null(count)?;
        if kind >= SAMPLINGTYPE_COUNT {
            return Err(ERROR_INVALID_ARGUMENT);
        }
        let period = period_us(kind).filter(|_| supported(d, kind));
        let period = period.ok_or(ERROR_NOT_SUPPORTED)?;
        // SAFETY: `count` is non-NULL and the caller guarantees it is valid for reads.
        let capacity = unsafe { count.read() } as usize;
        if !samples.is_null() && capacity == 0 {
            return Err(ERROR_INVALID_ARGUMENT);
        }
        let mut n: usize = 0;
        for (ts, t) in held(call, period, last_seen) {
            if !samples.is_null() {
                if n == capacity {
                    break;
                }
                let s = NvmlSample {
                    timeStamp: ts,
                    sampleValue: NvmlValue {
                        uiVal: value(d, kind, t),
                    },
                };
                // SAFETY: `samples` is valid for `capacity` elements and `n < capacity`.
                unsafe { samples.add(n).write(s) };
            }
            n += 1;
        }
        if n == 0 {
            return Err(ERROR_NOT_FOUND);
        }
        // SAFETY: both are non-NULL and valid for one write (checked above).
        unsafe { value_type.write(VALUE_TYPE_UNSIGNED_INT) };
        // SAFETY: as above.
        unsafe { count.write(c_uint::try_from(n).unwrap_or(c_uint::MAX)) };
        Ok(())
    })
}
