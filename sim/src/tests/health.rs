//! The health exports through the ABI: each call agrees with the scenario and with the
//! others, counts rise at their rate, and what a board lacks is NOT_SUPPORTED.

use std::ffi::{c_uint, c_ulonglong};

use super::*;
use crate::exports::health::*;

const HEALTH: &str = r#"{
  "devices": [
    {"health": {
      "corrected": {"dram": 12, "sram": 3},
      "corrected_per_min": {"dram": 6},
      "uncorrected": {"dram": 1},
      "remap_correctable": 2, "remap_pending": true,
      "nvlink": {"crc_flit": 40}
    }},
    {"preset": "RTX-3090"},
    {"preset": "H100-SXM5-80GB", "unsupported": ["nvmlDeviceGetRemappedRows"],
     "pcie_max_gen": 4}
  ]
}"#;

fn total(h: NvmlDevice, error_type: c_uint, counter: c_uint) -> Result<u64, NvmlReturn> {
    let mut n: c_ulonglong = 0;
    // SAFETY: valid out pointer.
    match unsafe { nvmlDeviceGetTotalEccErrors(h, error_type, counter, &mut n) } {
        SUCCESS => Ok(n),
        e => Err(e),
    }
}

fn at(h: NvmlDevice, error_type: c_uint, location: c_uint) -> Result<u64, NvmlReturn> {
    let mut n: c_ulonglong = 0;
    // SAFETY: valid out pointer.
    match unsafe { nvmlDeviceGetMemoryErrorCounter(h, error_type, 0, location, &mut n) } {
        SUCCESS => Ok(n),
        e => Err(e),
    }
}

fn remap(h: NvmlDevice) -> Result<[c_uint; 4], NvmlReturn> {
    let mut o = [0 as c_uint; 4];
    let [a, b, c, d] = &mut o;
    // SAFETY: four distinct valid out pointers.
    match unsafe { nvmlDeviceGetRemappedRows(h, a, b, c, d) } {
        SUCCESS => Ok(o),
        e => Err(e),
    }
}

#[test]
fn corrected_errors_rise_and_the_total_is_the_sum_of_the_locations() {
    let s = Session::start(HEALTH);
    let h = s.handle(0);
    assert_eq!(at(h, 0, 2), Ok(12), "dram");
    assert_eq!(at(h, 0, 7), Ok(3), "sram");
    assert_eq!(total(h, 0, 0), Ok(15));
    assert_eq!(total(h, 0, 1), Ok(15), "aggregate = volatile");
    assert_eq!(total(h, 1, 0), Ok(1));
    s.advance(120.0);
    assert_eq!(at(h, 0, 2), Ok(24), "6 a minute for two minutes");
    assert_eq!(total(h, 0, 0), Ok(27));
    assert_eq!(
        at(h, 0, 0),
        Err(ERROR_NOT_SUPPORTED),
        "no L1 split on Hopper"
    );
    assert_eq!(at(h, 0, 8), Err(ERROR_INVALID_ARGUMENT));
    assert_eq!(total(h, 2, 0), Err(ERROR_INVALID_ARGUMENT));
    let (mut cur, mut pend) = (9, 9);
    // SAFETY: valid out pointers.
    let rc = unsafe { nvmlDeviceGetEccMode(h, &mut cur, &mut pend) };
    assert_eq!((rc, cur, pend), (SUCCESS, 1, 1));
}

#[test]
fn remapped_rows_retired_pages_and_nvlink_follow_the_scenario() {
    let s = Session::start(HEALTH);
    let h = s.handle(0);
    assert_eq!(remap(h), Ok([2, 0, 1, 0]));
    let mut n: c_uint = 0;
    // SAFETY: valid out pointer; NULL addresses with a count of 0 is the size query.
    let rc = unsafe { nvmlDeviceGetRetiredPages(h, 0, &mut n, std::ptr::null_mut()) };
    assert_eq!(rc, ERROR_NOT_SUPPORTED, "Hopper retires rows, not pages");
    let mut v: c_ulonglong = 0;
    // SAFETY: valid out pointer.
    let rc = unsafe { nvmlDeviceGetNvLinkErrorCounter(h, 0, 2, &mut v) };
    assert_eq!((rc, v), (SUCCESS, 40));
    // SAFETY: as above.
    let rc = unsafe { nvmlDeviceGetNvLinkErrorCounter(h, 17, 2, &mut v) };
    assert_eq!((rc, v), (SUCCESS, 0), "the other links are clean");
    assert_eq!(
        // SAFETY: as above.
        unsafe { nvmlDeviceGetNvLinkErrorCounter(h, 18, 2, &mut v) },
        ERROR_INVALID_ARGUMENT,
        "an H100 has 18 links"
    );
}

#[test]
fn a_board_without_a_feature_says_not_supported_everywhere() {
    let s = Session::start(HEALTH);
    let rtx = s.handle(1);
    let (mut cur, mut pend) = (0, 0);
    // SAFETY: valid out pointers.
    let rc = unsafe { nvmlDeviceGetEccMode(rtx, &mut cur, &mut pend) };
    assert_eq!(rc, ERROR_NOT_SUPPORTED);
    assert_eq!(total(rtx, 0, 0), Err(ERROR_NOT_SUPPORTED));
    assert_eq!(remap(rtx), Err(ERROR_NOT_SUPPORTED));
    let mut v: c_ulonglong = 0;
    assert_eq!(
        // SAFETY: valid out pointer.
        unsafe { nvmlDeviceGetNvLinkErrorCounter(rtx, 0, 2, &mut v) },
        ERROR_NOT_SUPPORTED
    );
    let listed = s.handle(2);
    assert_eq!(
        remap(listed),
        Err(ERROR_NOT_SUPPORTED),
        "`unsupported` wins"
    );
    assert_eq!(total(listed, 0, 0), Ok(0));
    assert_eq!(get_u32(nvmlDeviceGetGpuMaxPcieLinkGeneration, listed), 5);
    assert_eq!(
        get_u32(
            crate::exports::pcie::nvmlDeviceGetMaxPcieLinkGeneration,
            listed
        ),
        4,
        "a gen5 GPU in a gen4 slot"
    );
}

#[test]
fn retired_pages_answer_the_size_query_then_fill_the_buffer() {
    let s = Session::start(
        r#"{"devices": [{"preset": "A100-PCIE-40GB", "architecture": 6,
            "health": {"retired_double_bit": 2, "retired_pending": true}}]}"#,
    );
    let h = s.handle(0);
    let mut n: c_uint = 0;
    // SAFETY: valid out pointer; NULL addresses with a count of 0 is the size query.
    let rc = unsafe { nvmlDeviceGetRetiredPages(h, 1, &mut n, std::ptr::null_mut()) };
    assert_eq!((rc, n), (ERROR_INSUFFICIENT_SIZE, 2));
    let mut addrs = [0 as c_ulonglong; 4];
    n = 4;
    // SAFETY: `addrs` holds `n` entries.
    let rc = unsafe { nvmlDeviceGetRetiredPages(h, 1, &mut n, addrs.as_mut_ptr()) };
    assert_eq!((rc, n), (SUCCESS, 2));
    assert!(addrs[0] != 0 && addrs[1] != 0 && addrs[2] == 0);
    n = 0;
    // SAFETY: as in the size query.
    let rc = unsafe { nvmlDeviceGetRetiredPages(h, 0, &mut n, std::ptr::null_mut()) };
    assert_eq!((rc, n), (SUCCESS, 0), "no single-bit retirements");
    assert_eq!(get_u32(nvmlDeviceGetRetiredPagesPendingStatus, h), 1);
    assert_eq!(
        at(h, 0, 0),
        Ok(0),
        "before Ampere the L1 cache is a location"
    );
}
