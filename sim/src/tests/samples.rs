//! `nvmlDeviceGetSamples`: the buffers agree with the single calls on every device of every
//! bundled scenario, and the call keeps nvml.h's contract (size query, `lastSeenTimeStamp`,
//! truncation, depth, NOT_FOUND, NOT_SUPPORTED, INVALID_ARGUMENT).

use std::ffi::{c_uint, c_ulonglong};

use super::*;
use crate::exports::clocks::nvmlDeviceGetClockInfo;
use crate::exports::samples::*;
use crate::exports::system::nvmlDeviceGetCount;
use crate::exports::usage::{nvmlDeviceGetPowerUsage, nvmlDeviceGetUtilizationRates};

/// One call: (return, value type, samples as (timestamp µs, value)).
fn read(h: NvmlDevice, kind: c_uint, last_seen: c_ulonglong, capacity: usize) -> Read {
    let mut buf = vec![
        NvmlSample {
            timeStamp: 0,
            sampleValue: NvmlValue { ullVal: 0 },
        };
        capacity
    ];
    let mut vt: c_uint = 99;
    let mut n = capacity as c_uint;
    // SAFETY: `buf` holds `n` elements; the outputs are valid locals.
    let r = unsafe { nvmlDeviceGetSamples(h, kind, last_seen, &mut vt, &mut n, buf.as_mut_ptr()) };
    let got = if r == SUCCESS {
        buf[..n as usize]
            .iter()
            // SAFETY: the call reported UNSIGNED_INT (checked by the callers), `ui_val`.
            .map(|s| (s.timeStamp, f64::from(unsafe { s.sampleValue.uiVal })))
            .collect()
    } else {
        Vec::new()
    };
    (r, vt, got)
}

type Read = (NvmlReturn, c_uint, Vec<(u64, f64)>);

/// The size query: (return, count).
fn count(h: NvmlDevice, kind: c_uint, last_seen: c_ulonglong) -> (NvmlReturn, c_uint) {
    let mut vt: c_uint = 0;
    let mut n: c_uint = 0;
    // SAFETY: a NULL array is the size query; the outputs are valid locals.
    let r =
        unsafe { nvmlDeviceGetSamples(h, kind, last_seen, &mut vt, &mut n, std::ptr::null_mut()) };
    (r, n)
}

/// The single call answering the same metric now: (return, value).
fn single(h: NvmlDevice, kind: c_uint) -> (NvmlReturn, f64) {
    let mut v: c_uint = 0;
    let mut u = NvmlUtilization { gpu: 0, memory: 0 };
    let r = match kind {
        // SAFETY: valid out pointer.
        TOTAL_POWER_SAMPLES => unsafe { nvmlDeviceGetPowerUsage(h, &mut v) },
        GPU_UTILIZATION_SAMPLES | MEMORY_UTILIZATION_SAMPLES => {
            // SAFETY: valid out pointer.
            unsafe { nvmlDeviceGetUtilizationRates(h, &mut u) }
        }
        // SAFETY: valid out pointer.
        _ => unsafe { nvmlDeviceGetClockInfo(h, CLOCK_SM, &mut v) },
    };
    let x = match kind {
        GPU_UTILIZATION_SAMPLES => u.gpu,
        MEMORY_UTILIZATION_SAMPLES => u.memory,
        _ => v,
    };
    (r, f64::from(x))
}

/// `json` with time nearly frozen, so only `advance` moves it.
fn frozen(json: &str) -> String {
    let mut v: serde_json::Value = serde_json::from_str(json).expect("scenario json");
    v["speed"] = serde_json::json!(1e-9);
    v.to_string()
}

/// Compares the newest sample of each type with the single call at (within a microsecond
/// of) that sample's time.
fn compare(name: &str, i: u32, h: NvmlDevice, kinds: &[c_uint]) -> (Vec<String>, usize) {
    let (mut wrong, mut agreed) = (Vec::new(), 0);
    for &kind in kinds {
        let (r, vt, got) = read(h, kind, 0, 256);
        let call = single(h, kind);
        let ok = match (call.0, r) {
            (SUCCESS, SUCCESS) => {
                let newest = got.last().map(|s| s.1);
                agreed += 1;
                vt == VALUE_TYPE_UNSIGNED_INT && newest == Some(call.1)
            }
            // A GPU without the sensor lacks both; MIG-enabled GPUs have no utilization
            // samples while the single call still answers.
            (ERROR_NOT_SUPPORTED, r) => r == ERROR_NOT_SUPPORTED,
            (SUCCESS, ERROR_NOT_SUPPORTED) => kind == 1 || kind == 2,
            _ => true, // an injected fault or a lost GPU: both calls go through it
        };
        if !ok {
            wrong.push(format!(
                "{name} gpu {i} type {kind}: samples {r} {:?}, call {call:?}",
                got.last()
            ));
        }
    }
    (wrong, agreed)
}

#[test]
fn samples_agree_with_the_single_calls_in_every_bundled_scenario() {
    let (mut wrong, mut agreed, mut devices) = (Vec::new(), 0, 0);
    for (name, text) in super::fields::bundled() {
        let s = Session::start(&frozen(&text));
        let mut n: c_uint = 0;
        // SAFETY: valid out pointer.
        assert_eq!(unsafe { nvmlDeviceGetCount(&mut n) }, SUCCESS);
        // Power samples every 100 ms: at 2.0 s the newest is stamped 2.0 s.
        s.advance(2.0);
        for i in 0..n {
            let (w, a) = compare(&name, i, s.handle(i), &[TOTAL_POWER_SAMPLES]);
            wrong.extend(w);
            agreed += a;
        }
        // Utilization and clock samples every 166,667 µs: the 12th is at 2.000004 s.
        s.advance(0.000_000_5 + 0.000_004);
        for i in 0..n {
            let kinds = [
                GPU_UTILIZATION_SAMPLES,
                MEMORY_UTILIZATION_SAMPLES,
                PROCESSOR_CLK_SAMPLES,
            ];
            let (w, a) = compare(&name, i, s.handle(i), &kinds);
            wrong.extend(w);
            agreed += a;
            devices += 1;
        }
    }
    assert!(devices > 38, "every scenario has a device ({devices})");
    assert!(
        agreed > 3 * devices,
        "most answer ({agreed} of {devices} devices)"
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_buffer_keeps_nvml_h_contract() {
    let s = Session::start(&frozen(SQUARE));
    let h = s.handle(0);
    let power = TOTAL_POWER_SAMPLES;
    s.advance(1.05);
    // Samples at 0, 0.1, …, 1.0 s: 11, stamped in µs, oldest first, 100 ms apart.
    assert_eq!(count(h, power, 0), (SUCCESS, 11));
    let (r, vt, all) = read(h, power, 0, 64);
    assert_eq!((r, vt, all.len()), (SUCCESS, VALUE_TYPE_UNSIGNED_INT, 11));
    assert!(all.windows(2).all(|w| w[1].0 - w[0].0 == 100_000));
    // The square wave: 600 W in the first half of each second, 100 W in the second.
    assert_eq!(all[0].1, 600_000.0);
    assert_eq!(all[6].1, 100_000.0);
    // Only newer than lastSeenTimeStamp; nothing newer is NOT_FOUND.
    let since = all[7].0;
    assert_eq!(count(h, power, since), (SUCCESS, 3));
    assert_eq!(read(h, power, since, 64).2, all[8..].to_vec());
    assert_eq!(read(h, power, all[10].0, 64).0, 6);
    assert_eq!(count(h, power, all[10].0).0, 6);
    // A short array gets the oldest that fit; continuing from the last one misses nothing.
    let (r, _, first) = read(h, power, 0, 4);
    assert_eq!((r, first.to_vec()), (SUCCESS, all[..4].to_vec()));
    assert_eq!(read(h, power, first[3].0, 64).2, all[4..].to_vec());
    // The buffer holds the newest BUFFER_DEPTH samples.
    s.advance(100.0);
    assert_eq!(count(h, power, 0), (SUCCESS, BUFFER_DEPTH as c_uint));
    let (_, _, depth) = read(h, power, 0, 256);
    assert_eq!(depth.len() as u64, BUFFER_DEPTH);
    assert_eq!(depth[0].0, all[0].0 + (1011 - BUFFER_DEPTH) * 100_000);
    // Errors: no array room, a type out of range, a type the GPU does not sample, NULLs.
    assert_eq!(read(h, power, 0, 0).0, ERROR_INVALID_ARGUMENT);
    assert_eq!(read(h, SAMPLINGTYPE_COUNT, 0, 8).0, ERROR_INVALID_ARGUMENT);
    assert_eq!(read(h, 3, 0, 8).0, ERROR_NOT_SUPPORTED);
    let mut n: c_uint = 8;
    // SAFETY: NULL value type is refused before anything is written.
    let r = unsafe {
        nvmlDeviceGetSamples(
            h,
            power,
            0,
            std::ptr::null_mut(),
            &mut n,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(r, ERROR_INVALID_ARGUMENT);
}

#[test]
fn a_quirk_refuses_one_type_and_leaves_the_others() {
    let json = SQUARE.replace(
        "\"processes\"",
        "\"unsupported\": [\"nvmlDeviceGetSamples:gpu_util\"], \"processes\"",
    );
    let s = Session::start(&frozen(&json));
    let h = s.handle(0);
    s.advance(1.0);
    assert_eq!(
        read(h, GPU_UTILIZATION_SAMPLES, 0, 8).0,
        ERROR_NOT_SUPPORTED
    );
    assert_eq!(single(h, GPU_UTILIZATION_SAMPLES).0, SUCCESS);
    assert_eq!(read(h, MEMORY_UTILIZATION_SAMPLES, 0, 8).0, SUCCESS);
    assert_eq!(read(h, TOTAL_POWER_SAMPLES, 0, 8).0, SUCCESS);
}
