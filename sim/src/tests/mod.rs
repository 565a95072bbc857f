//! Tests that call the exported functions directly, as a C caller would.
//!
//! The library's state is process-global, so every test holds [`Session`], which
//! serialises them and plays its own scenario without touching the environment.

use std::ffi::{c_char, c_uint, CStr};
use std::sync::{Mutex, MutexGuard};

use crate::abi::*;
use crate::exports::system::{nvmlDeviceGetHandleByIndex, nvmlInit, nvmlShutdown};
use crate::scenario::source_test_override as test_override;
use crate::state;

mod device;
mod faults;
mod fields;
#[cfg(not(feature = "old-driver"))]
mod gpm;
#[cfg(all(
    not(feature = "old-driver"),
    target_os = "linux",
    target_pointer_width = "64"
))]
mod header;
#[cfg(not(feature = "old-driver"))]
mod health;
mod lifecycle;
mod samples;
mod threads;

static SERIAL: Mutex<()> = Mutex::new(());

/// One test's exclusive use of the library, initialised with a scenario.
pub struct Session {
    _serial: MutexGuard<'static, ()>,
}

impl Session {
    /// Takes the library, resets it and sets the scenario without initialising.
    pub fn uninitialised(json: &str) -> Session {
        let serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        shutdown_all();
        test_override::set(Some(json));
        Session { _serial: serial }
    }

    /// Takes the library and initialises it with `json`.
    pub fn start(json: &str) -> Session {
        let session = Session::uninitialised(json);
        assert_eq!(nvmlInit(), SUCCESS, "init with the test scenario");
        session
    }

    /// The handle of device `index`.
    pub fn handle(&self, index: u32) -> NvmlDevice {
        let mut h: NvmlDevice = std::ptr::null_mut();
        assert_eq!(
            // SAFETY: `h` is a valid out pointer.
            unsafe { nvmlDeviceGetHandleByIndex(index, &mut h) },
            SUCCESS
        );
        h
    }

    /// Moves simulated time forward.
    pub fn advance(&self, seconds: f64) {
        state::advance(seconds);
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        shutdown_all();
        test_override::set(None);
    }
}

fn shutdown_all() {
    while state::refcount() > 0 {
        nvmlShutdown();
    }
}

/// Reads a NUL-terminated buffer filled by a string getter.
pub fn text(buf: &[c_char]) -> String {
    // SAFETY: the getter wrote a NUL inside the buffer (checked by its SUCCESS).
    unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// A scalar getter's value, asserting SUCCESS.
pub fn get_u32(
    f: unsafe extern "C" fn(NvmlDevice, *mut c_uint) -> NvmlReturn,
    h: NvmlDevice,
) -> u32 {
    let mut v = 0;
    // SAFETY: `v` is a valid out pointer.
    assert_eq!(unsafe { f(h, &mut v) }, SUCCESS);
    v
}

/// One H100 with a 1 s square-wave utilization and power following it.
pub const SQUARE: &str = r#"{
  "devices": [{
    "metrics": {
      "util_gpu": {"square": {"period_s": 1.0, "duty": 0.5, "high": 100, "low": 0}},
      "power_w": {"follow": "util_gpu", "scale": [100, 600]},
      "nvlink_tx_kibs": 1000,
      "nvlink_rx_kibs": {"steps": [[0, 0], [5, 2048]]},
      "mem_used_mib": 1024
    },
    "processes": [{"pid": 11, "used_mib": 700}, {"pid": 12, "used_mib": 300}]
  }]
}"#;
