//! `nvmlDeviceGetFieldValues`: the NVLink link count, cumulative NVLink data counters, the
//! T.Limit temperature thresholds, power, GPU temperature, the PCIe byte counters and the
//! perf-policy (clock-event) time counters.

use std::ffi::{c_int, c_uint};

use super::{boundary, non_null};
use crate::abi::*;
use crate::metric::Metric;
use crate::scenario::Device;
use crate::state::{self, Call};

/// `scopeId` asking for the sum over all links.
const SCOPE_ALL_LINKS: c_uint = c_uint::MAX;
/// The refresh latency reported for every field, microseconds.
const LATENCY_USEC: i64 = 25;

/// `nvmlDeviceGetFieldValues`: fills each element's `timestamp` (µs since 1970 on the
/// simulated clock), `valueType`, `nvmlReturn` and `value`. Field 91 is `nvlink_links`;
/// fields 138/139 are cumulative KiB sent/received over NVLink since init, integrated from
/// `nvlink_tx_kibs`/`nvlink_rx_kibs` (`scopeId` = UINT_MAX for all links, a link index for
/// an even share, NOT_SUPPORTED without NVLink); fields 193–196 are the T.Limit
/// thresholds (signed int, °C) on Ada and later; 197/198 the cumulative PCIe bytes sent and
/// received (integrated from `pcie_tx_kbs`/`pcie_rx_kbs` with 1 KB = 1024 bytes); 186 the
/// power (unsigned int, mW, as `nvmlDeviceGetPowerUsage`); 308 the GPU temperature (double,
/// `temp_c`); 74–77 and 79 the perf-policy counters, cumulative ns during which the
/// `clock_event_reasons` bits of that policy were set (74 power cap 0x4, 75 thermal 0x20 or
/// 0x40, 76 sync boost 0x10, 77 board limit 0x200, 79 reliability 0x400; 78, low
/// utilization, is NOT_SUPPORTED). A field whose single call the device lists as `unsupported` (power, PCIe
/// throughput, temperature) is NOT_SUPPORTED too, as a GPU without that sensor answers both
/// ways alike. Every other id is NOT_SUPPORTED in its element; the call itself succeeds.
///
/// # Safety
/// `values` must be NULL or valid for reading and writing `values_count` elements whose
/// `fieldId` and `scopeId` are initialised.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetFieldValues(
    device: NvmlDevice,
    values_count: c_int,
    values: *mut NvmlFieldValue,
) -> NvmlReturn {
    boundary(|| {
        let (call, d) = state::device("nvmlDeviceGetFieldValues", device)?;
        let count = usize::try_from(values_count).map_err(|_| ERROR_INVALID_ARGUMENT)?;
        if count == 0 {
            return Ok(());
        }
        non_null(values)?;
        let mut counters = None;
        for i in 0..count {
            // SAFETY: `values` is valid for `count` elements and `i < count`.
            let element = unsafe { values.add(i) };
            // SAFETY: `element` is in bounds and its input field `fieldId` is initialised.
            let field_id = unsafe { (&raw const (*element).fieldId).read() };
            // SAFETY: as above, for `scopeId`.
            let scope_id = unsafe { (&raw const (*element).scopeId).read() };
            let (nvml_return, value_type, value) =
                field(call, d, field_id, scope_id, &mut counters);
            let filled = NvmlFieldValue {
                fieldId: field_id,
                scopeId: scope_id,
                timestamp: call.unix_us(),
                latencyUsec: LATENCY_USEC,
                valueType: value_type,
                nvmlReturn: nvml_return,
                value,
            };
            // SAFETY: `element` is in bounds and valid for writes.
            unsafe { element.write(filled) };
        }
        Ok(())
    })
}

/// One field: (per-field return, value type, value).
fn field(
    call: Call,
    d: &Device,
    field_id: c_uint,
    scope_id: c_uint,
    counters: &mut Option<state::LinkTotals>,
) -> (NvmlReturn, c_uint, NvmlValue) {
    let links = d.facts.nvlink_links;
    let none = NvmlValue { ullVal: 0 };
    if single_call_unsupported(d, field_id) {
        return (ERROR_NOT_SUPPORTED, VALUE_TYPE_UNSIGNED_LONG_LONG, none);
    }
    match field_id {
        FI_NVLINK_LINK_COUNT => (SUCCESS, VALUE_TYPE_UNSIGNED_INT, NvmlValue { uiVal: links }),
        FI_NVLINK_THROUGHPUT_DATA_TX
        | FI_NVLINK_THROUGHPUT_DATA_RX
        | FI_PCIE_COUNT_TX_BYTES
        | FI_PCIE_COUNT_RX_BYTES
        | FI_PERF_POLICY_POWER..=FI_PERF_POLICY_RELIABILITY => {
            counter_field(call, d, field_id, scope_id, counters)
        }
        FI_POWER_INSTANT => (
            SUCCESS,
            VALUE_TYPE_UNSIGNED_INT,
            NvmlValue {
                uiVal: super::usage::milliwatts(d.value(Metric::PowerW, call.t)),
            },
        ),
        FI_GPU_TEMP => (
            SUCCESS,
            VALUE_TYPE_DOUBLE,
            NvmlValue {
                dVal: d.value(Metric::TempC, call.t),
            },
        ),
        FI_TEMPERATURE_SHUTDOWN_TLIMIT..=FI_TEMPERATURE_GPU_MAX_TLIMIT => tlimit(d, field_id)
            .map_or((ERROR_NOT_SUPPORTED, VALUE_TYPE_SIGNED_INT, none), |c| {
                (SUCCESS, VALUE_TYPE_SIGNED_INT, NvmlValue { siVal: c })
            }),
        _ => (ERROR_NOT_SUPPORTED, VALUE_TYPE_UNSIGNED_LONG_LONG, none),
    }
}

/// A field read from the device's running totals: NVLink and PCIe bytes, and the time each
/// clock-event policy held the clocks.
fn counter_field(
    call: Call,
    d: &Device,
    field_id: c_uint,
    scope_id: c_uint,
    counters: &mut Option<state::LinkTotals>,
) -> (NvmlReturn, c_uint, NvmlValue) {
    let links = d.facts.nvlink_links;
    let none = NvmlValue { ullVal: 0 };
    match field_id {
        FI_NVLINK_THROUGHPUT_DATA_TX | FI_NVLINK_THROUGHPUT_DATA_RX => {
            if links == 0 {
                return (ERROR_NOT_SUPPORTED, VALUE_TYPE_UNSIGNED_LONG_LONG, none);
            }
            let share = match scope_id {
                SCOPE_ALL_LINKS => 1.0,
                link if link < links => 1.0 / f64::from(links),
                _ => return (ERROR_INVALID_ARGUMENT, VALUE_TYPE_UNSIGNED_LONG_LONG, none),
            };
            let totals = match totals(call, d, counters) {
                Ok(t) => t,
                Err(code) => return (code, VALUE_TYPE_UNSIGNED_LONG_LONG, none),
            };
            let kib = if field_id == FI_NVLINK_THROUGHPUT_DATA_TX {
                totals.nvlink_tx_kib
            } else {
                totals.nvlink_rx_kib
            };
            let value = NvmlValue {
                ullVal: (kib * share).floor() as u64,
            };
            (SUCCESS, VALUE_TYPE_UNSIGNED_LONG_LONG, value)
        }
        FI_PCIE_COUNT_TX_BYTES | FI_PCIE_COUNT_RX_BYTES => match totals(call, d, counters) {
            Ok(t) => {
                let bytes = if field_id == FI_PCIE_COUNT_TX_BYTES {
                    t.pcie_tx_bytes
                } else {
                    t.pcie_rx_bytes
                };
                let value = NvmlValue {
                    ullVal: bytes.floor() as u64,
                };
                (SUCCESS, VALUE_TYPE_UNSIGNED_LONG_LONG, value)
            }
            Err(code) => (code, VALUE_TYPE_UNSIGNED_LONG_LONG, none),
        },
        FI_PERF_POLICY_POWER..=FI_PERF_POLICY_RELIABILITY => {
            let Some(k) = state::POLICIES.iter().position(|(id, _)| *id == field_id) else {
                return (ERROR_NOT_SUPPORTED, VALUE_TYPE_UNSIGNED_LONG_LONG, none);
            };
            match totals(call, d, counters) {
                Ok(t) => {
                    let value = NvmlValue {
                        ullVal: t.policy_ns[k].floor() as u64,
                    };
                    (SUCCESS, VALUE_TYPE_UNSIGNED_LONG_LONG, value)
                }
                Err(code) => (code, VALUE_TYPE_UNSIGNED_LONG_LONG, none),
            }
        }
        _ => (ERROR_NOT_SUPPORTED, VALUE_TYPE_UNSIGNED_LONG_LONG, none),
    }
}

/// Whether the device lists as unsupported the single call that reads what `field_id` reads.
fn single_call_unsupported(d: &Device, field_id: c_uint) -> bool {
    let function = match field_id {
        FI_POWER_INSTANT => "nvmlDeviceGetPowerUsage",
        FI_PCIE_COUNT_TX_BYTES | FI_PCIE_COUNT_RX_BYTES => "nvmlDeviceGetPcieThroughput",
        FI_GPU_TEMP => "nvmlDeviceGetTemperature",
        FI_PERF_POLICY_POWER..=FI_PERF_POLICY_RELIABILITY => {
            "nvmlDeviceGetCurrentClocksEventReasons"
        }
        _ => return false,
    };
    d.unsupported.iter().any(|f| f == function)
}

/// The link counters at this call's time, integrated once per call however many fields ask.
fn totals(
    call: Call,
    d: &Device,
    counters: &mut Option<state::LinkTotals>,
) -> Result<state::LinkTotals, NvmlReturn> {
    match counters {
        Some(t) => Ok(*t),
        None => state::link_totals(d, call.t).map(|t| *counters.insert(t)),
    }
}

/// A T.Limit temperature field (193–196), °C: the header supports them on Ada and later
/// (architecture 8+), from the same device facts as `nvmlDeviceGetTemperatureThreshold`; a
/// fact of 0 means the GPU does not report that threshold.
fn tlimit(d: &Device, field_id: c_uint) -> Option<i32> {
    const ADA: u32 = 8;
    let f = &d.facts;
    if f.architecture < ADA {
        return None;
    }
    let c = match field_id {
        FI_TEMPERATURE_SHUTDOWN_TLIMIT => f.temp_shutdown_c,
        FI_TEMPERATURE_SLOWDOWN_TLIMIT => f.temp_slowdown_c,
        FI_TEMPERATURE_MEM_MAX_TLIMIT => f.temp_mem_max_c,
        _ => f.temp_gpu_max_c,
    };
    i32::try_from(c).ok().filter(|c| *c > 0)
}
