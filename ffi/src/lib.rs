//! The C ABI of gpuwhy: what `libgpuwhy.so` / `libgpuwhy.a` export and `include/gpuwhy.h`
//! declares.
//!
//! A C or C++ training loop creates a session ([`gpuwhy_session_new`]), marks each step
//! ([`gpuwhy_step_begin`], [`gpuwhy_phase`], [`gpuwhy_step_end`]), stops it
//! ([`gpuwhy_session_stop`]), writes or reads the diagnosed report and frees the session.
//! `docs/c-api.md` is the user's guide; the header carries every function's contract.
//!
//! How the ABI stays safe for the caller's process:
//! - every export runs inside [`boundary`]'s `catch_unwind`: a panic becomes
//!   [`gpuwhy_status::GPUWHY_PANIC`] and poisons that session, never unwinds into C;
//! - a session handle is an opaque number, never a pointer gpuwhy dereferences
//!   ([`handle`]): a freed, doubly freed or made-up handle is refused with
//!   [`gpuwhy_status::GPUWHY_INVALID_HANDLE`], and a thread still marking while another
//!   frees the session holds its own reference to what it uses;
//! - a child process after `fork()` never touches the parent's sampler thread or locks.

#![allow(non_camel_case_types)]

mod boundary;
mod config;
mod exports;
mod extras;
mod handle;
mod markers;
mod report_calls;
mod state;

pub use config::{gpuwhy_config, gpuwhy_flags};
pub use exports::*;
pub use extras::*;
pub use markers::*;
pub use report_calls::*;

use std::ffi::{c_char, CStr};

/// The version of this ABI. It changes only when an existing function, struct layout or
/// status number changes meaning (never so far); functions and config fields are added
/// without changing it. Compare with gpuwhy_abi_version() at run time, against the header you compiled
/// against.
pub const GPUWHY_ABI_VERSION: u32 = 1;

/// Ids of the built-in phases; custom phases get ids from gpuwhy_session_register_phase().
pub type gpuwhy_phase_id = u32;
/// Waiting for the next batch (the data loader).
pub const GPUWHY_PHASE_DATA: gpuwhy_phase_id = 0;
/// The forward pass.
pub const GPUWHY_PHASE_FORWARD: gpuwhy_phase_id = 1;
/// The backward pass.
pub const GPUWHY_PHASE_BACKWARD: gpuwhy_phase_id = 2;
/// The optimizer step.
pub const GPUWHY_PHASE_OPTIMIZER: gpuwhy_phase_id = 3;

/// What a call did. The numbers are frozen: new codes are only ever appended.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum gpuwhy_status {
    /// Success.
    GPUWHY_OK = 0,
    /// A required pointer argument was NULL.
    GPUWHY_NULL_ARGUMENT = 1,
    /// The session handle does not name a live session: it was freed, or never was one.
    GPUWHY_INVALID_HANDLE = 2,
    /// An argument is out of range or malformed (see gpuwhy_last_error()).
    GPUWHY_INVALID_ARGUMENT = 3,
    /// A phase id that was never registered in this session.
    GPUWHY_UNKNOWN_PHASE = 4,
    /// The session already has the most phases it can hold (16, the 4 built-in included).
    GPUWHY_TOO_MANY_PHASES = 5,
    /// The session is stopped: markers are no longer recorded.
    GPUWHY_STOPPED = 6,
    /// The report exists only once the session is stopped (gpuwhy_session_stop()).
    GPUWHY_NOT_STOPPED = 7,
    /// The buffer is too small; the size needed was written to the length output.
    GPUWHY_BUFFER_TOO_SMALL = 8,
    /// gpuwhy_config.struct_size is too small, or the config sets fields this library does
    /// not know (it is older than the header the caller was compiled with).
    GPUWHY_STRUCT_SIZE = 9,
    /// GPUWHY_FLAG_REQUIRE_GPU was given and no GPU can be sampled (see gpuwhy_last_error()).
    GPUWHY_NO_GPU = 10,
    /// A file could not be written; nothing recorded is lost (the report stays in memory,
    /// so the write can be retried with gpuwhy_session_write_report()).
    GPUWHY_IO = 11,
    /// An earlier call on this session failed inside gpuwhy (a bug); the session refuses
    /// further calls but can still be freed.
    GPUWHY_POISONED = 12,
    /// This call failed inside gpuwhy (a bug, reported in gpuwhy_last_error()); the session
    /// is poisoned. The caller's process is unaffected.
    GPUWHY_PANIC = 13,
}

impl gpuwhy_status {
    /// The static description of this status.
    fn message(self) -> &'static CStr {
        use gpuwhy_status::*;
        match self {
            GPUWHY_OK => c"ok",
            GPUWHY_NULL_ARGUMENT => c"a required pointer argument was NULL",
            GPUWHY_INVALID_HANDLE => c"not a live gpuwhy session (freed, or never created)",
            GPUWHY_INVALID_ARGUMENT => c"an argument is out of range or malformed",
            GPUWHY_UNKNOWN_PHASE => c"unknown phase id: register custom phases with gpuwhy_session_register_phase",
            GPUWHY_TOO_MANY_PHASES => c"too many phases: a session holds at most 16, the 4 built-in ones included",
            GPUWHY_STOPPED => c"the session is stopped; markers are no longer recorded",
            GPUWHY_NOT_STOPPED => c"the report exists only after gpuwhy_session_stop",
            GPUWHY_BUFFER_TOO_SMALL => c"the buffer is too small; the size needed was returned",
            GPUWHY_STRUCT_SIZE => c"gpuwhy_config.struct_size does not match this library: set it with gpuwhy_config_init",
            GPUWHY_NO_GPU => c"no GPU can be sampled (GPUWHY_FLAG_REQUIRE_GPU was given)",
            GPUWHY_IO => c"a file could not be written; the report is kept in memory, retry with gpuwhy_session_write_report",
            GPUWHY_POISONED => c"the session was poisoned by an earlier internal error; free it",
            GPUWHY_PANIC => c"internal error in gpuwhy (please report it); the session is poisoned, the process is unaffected",
        }
    }

    fn from_u32(code: u32) -> Option<gpuwhy_status> {
        use gpuwhy_status::*;
        const ALL: [gpuwhy_status; 14] = [
            GPUWHY_OK,
            GPUWHY_NULL_ARGUMENT,
            GPUWHY_INVALID_HANDLE,
            GPUWHY_INVALID_ARGUMENT,
            GPUWHY_UNKNOWN_PHASE,
            GPUWHY_TOO_MANY_PHASES,
            GPUWHY_STOPPED,
            GPUWHY_NOT_STOPPED,
            GPUWHY_BUFFER_TOO_SMALL,
            GPUWHY_STRUCT_SIZE,
            GPUWHY_NO_GPU,
            GPUWHY_IO,
            GPUWHY_POISONED,
            GPUWHY_PANIC,
        ];
        ALL.into_iter().find(|s| *s as u32 == code)
    }
}

/// The ABI version of the library actually loaded (GPUWHY_ABI_VERSION of its build).
///
/// Never fails; thread-safe.
#[no_mangle]
pub extern "C" fn gpuwhy_abi_version() -> u32 {
    GPUWHY_ABI_VERSION
}

/// The library's version, e.g. "0.1.0": a static NUL-terminated string, never NULL, never
/// to be freed. Thread-safe.
#[no_mangle]
pub extern "C" fn gpuwhy_version() -> *const c_char {
    const VERSION: &CStr =
        match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
            Ok(v) => v,
            Err(_) => c"unknown",
        };
    VERSION.as_ptr()
}

/// A static NUL-terminated description of status `code` (any number: unknown codes get
/// "unknown gpuwhy status"). Never NULL, never to be freed. Thread-safe.
#[no_mangle]
pub extern "C" fn gpuwhy_status_message(code: u32) -> *const c_char {
    match gpuwhy_status::from_u32(code) {
        Some(s) => s.message().as_ptr(),
        None => c"unknown gpuwhy status".as_ptr(),
    }
}

/// Details of the last failure of a gpuwhy call on the calling thread (what was wrong and
/// what to do), or "" if none failed yet. Calls that succeed leave it unchanged.
///
/// The string belongs to gpuwhy and stays valid until the next gpuwhy call on this thread;
/// copy it to keep it. Never NULL.
#[no_mangle]
pub extern "C" fn gpuwhy_last_error() -> *const c_char {
    boundary::last_error_ptr()
}
