//! The per-tick fields agree with the single calls, for every device of every bundled
//! scenario: what gpuwhy reads through `nvmlDeviceGetFieldValues` must be what it would have
//! read call by call.

use std::ffi::c_uint;

use super::*;
use crate::exports::clocks::{nvmlDeviceGetCurrentClocksThrottleReasons, nvmlDeviceGetTemperature};
use crate::exports::fields::nvmlDeviceGetFieldValues;
use crate::exports::pcie::nvmlDeviceGetPcieThroughput;
use crate::exports::system::nvmlDeviceGetCount;
use crate::exports::usage::nvmlDeviceGetPowerUsage;

/// Policy counters seen moving across all devices, so the policy check is not vacuous.
static POLICIES_MOVED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Every scenario file shipped with the simulator, by name.
pub(super) fn bundled() -> Vec<(String, String)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios");
    let mut all: Vec<(String, String)> = std::fs::read_dir(dir)
        .expect("scenarios dir")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let name = p.file_stem().and_then(|s| s.to_str()).expect("utf-8 name");
            (
                name.to_owned(),
                std::fs::read_to_string(&p).expect("readable"),
            )
        })
        .collect();
    all.sort();
    all
}

/// (return, value as f64, timestamp µs) of each requested field; the call's own code for
/// every field when the call as a whole fails (a device that lists `nvmlDeviceGetFieldValues`
/// as unsupported).
fn fields(h: NvmlDevice, ids: &[c_uint]) -> Vec<(NvmlReturn, f64, i64)> {
    let mut v: Vec<NvmlFieldValue> = ids
        .iter()
        .map(|&field_id| NvmlFieldValue {
            fieldId: field_id,
            scopeId: 0,
            timestamp: 0,
            latencyUsec: 0,
            valueType: 99,
            nvmlReturn: 99,
            value: NvmlValue { ullVal: 0 },
        })
        .collect();
    let n = v.len() as i32;
    // SAFETY: `v` holds `n` initialised elements.
    let whole = unsafe { nvmlDeviceGetFieldValues(h, n, v.as_mut_ptr()) };
    if whole != SUCCESS {
        return vec![(whole, 0.0, 0); ids.len()];
    }
    v.iter()
        .map(|f| {
            // SAFETY: each arm reads the member `valueType` names.
            let x = unsafe {
                match f.valueType {
                    VALUE_TYPE_DOUBLE => f.value.dVal,
                    VALUE_TYPE_UNSIGNED_INT => f64::from(f.value.uiVal),
                    _ => f.value.ullVal as f64,
                }
            };
            (f.nvmlReturn, x, f.timestamp)
        })
        .collect()
}

/// A scalar single call: (return, value).
fn single(call: impl FnOnce(*mut c_uint) -> NvmlReturn) -> (NvmlReturn, f64) {
    let mut v: c_uint = 0;
    let r = call(&mut v);
    (r, f64::from(v))
}

/// Compares one device at the session's current time; returns what disagreed.
fn compare(name: &str, i: u32, h: NvmlDevice, s: &Session) -> Vec<String> {
    let mut wrong = Vec::new();
    let f = fields(h, &[FI_POWER_INSTANT, FI_GPU_TEMP]);
    // SAFETY: `p` is a valid out pointer.
    let power = single(|p| unsafe { nvmlDeviceGetPowerUsage(h, p) });
    // SAFETY: as above.
    let temp = single(|p| unsafe { nvmlDeviceGetTemperature(h, TEMPERATURE_GPU, p) });
    for (what, field, call, tolerance) in [("power", f[0], power, 0.0), ("temp", f[1], temp, 1.0)] {
        let agree = match call.0 {
            // A GPU without field values at all: gpuwhy takes the single call.
            _ if field.0 == ERROR_NOT_SUPPORTED && f.iter().all(|x| x.0 == field.0) => true,
            SUCCESS => field.0 == SUCCESS && (field.1 - call.1).abs() <= tolerance,
            ERROR_NOT_SUPPORTED => field.0 == ERROR_NOT_SUPPORTED,
            _ => true, // an injected fault on the single call only
        };
        if !agree {
            wrong.push(format!(
                "{name} gpu {i} {what}: field {field:?}, call {call:?}"
            ));
        }
    }
    // PCIe: the counters' rate over one second against the throughput sampled across it.
    let policies: Vec<c_uint> = crate::state::POLICIES.iter().map(|(id, _)| *id).collect();
    let ids = [FI_PCIE_COUNT_RX_BYTES, FI_PCIE_COUNT_TX_BYTES];
    let before = fields(h, &ids);
    let policies_before = fields(h, &policies);
    let mut held = [0.0; crate::state::POLICIES.len()];
    let (mut sum, mut n) = ([0.0; 2], 0.0);
    let mut refused = false;
    // Sampled every 5 ms: finer than any phase of a scenario's step, so bursts are not
    // aliased away.
    for _ in 0..200 {
        s.advance(0.005);
        for (k, counter) in [PCIE_UTIL_RX_BYTES, PCIE_UTIL_TX_BYTES]
            .into_iter()
            .enumerate()
        {
            // SAFETY: valid out pointer.
            let (r, kbs) = single(|p| unsafe { nvmlDeviceGetPcieThroughput(h, counter, p) });
            refused |= r == ERROR_NOT_SUPPORTED;
            sum[k] += kbs * 1024.0;
        }
        let mut bits = 0u64;
        // SAFETY: valid out pointer.
        let r = unsafe { nvmlDeviceGetCurrentClocksThrottleReasons(h, &mut bits) };
        for (k, (_, mask)) in crate::state::POLICIES.iter().enumerate() {
            if r == SUCCESS && bits & mask != 0 {
                held[k] += 0.005;
            }
        }
        n += 1.0;
    }
    let after = fields(h, &ids);
    for k in 0..2 {
        let (b, a) = (before[k], after[k]);
        let agree = if refused || a.0 == ERROR_NOT_SUPPORTED {
            a.0 == ERROR_NOT_SUPPORTED
        } else {
            let mean = sum[k] / n;
            a.0 == SUCCESS && b.0 == SUCCESS && ((a.1 - b.1) - mean).abs() <= 0.05 * mean + 2048.0
        };
        if !agree {
            wrong.push(format!(
                "{name} gpu {i} pcie {k}: {b:?} → {a:?}, throughput mean {}",
                sum[k] / n
            ));
        }
    }
    // Clock-event policies: the share of the time between the two readings the counters say
    // the policy held, against the share of the 5 ms samples whose reason bits were set.
    // Shares, not seconds: simulated time also runs with the wall clock, so on a busy machine
    // more than the 200 × 5 ms pass between the readings.
    let policies_after = fields(h, &policies);
    for (k, (b, a)) in policies_before.iter().zip(&policies_after).enumerate() {
        let elapsed_ns = (a.2 - b.2) as f64 * 1e3;
        if a.0 == SUCCESS && a.1 > b.1 {
            POLICIES_MOVED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        let agree = match (b.0, a.0) {
            (SUCCESS, SUCCESS) => {
                elapsed_ns > 0.0 && ((a.1 - b.1) / elapsed_ns - held[k] / (n * 0.005)).abs() <= 0.03
            }
            (x, y) => x == y && x != SUCCESS,
        };
        if !agree {
            wrong.push(format!(
                "{name} gpu {i} policy {}: {b:?} → {a:?}, bits held {} s",
                policies[k], held[k]
            ));
        }
    }
    wrong
}

#[test]
fn fields_agree_with_the_single_calls_in_every_bundled_scenario() {
    let mut wrong = Vec::new();
    let mut devices = 0;
    for (name, text) in bundled() {
        let s = Session::start(&text);
        s.advance(1.0);
        let mut count: c_uint = 0;
        // SAFETY: valid out pointer.
        assert_eq!(unsafe { nvmlDeviceGetCount(&mut count) }, SUCCESS);
        for i in 0..count {
            wrong.extend(compare(&name, i, s.handle(i), &s));
            devices += 1;
        }
    }
    assert!(
        devices > 38,
        "every scenario has at least one device ({devices})"
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(
        POLICIES_MOVED.load(std::sync::atomic::Ordering::Relaxed) > 0,
        "some bundled scenario throttles"
    );
}
