//! The calls on a stopped session: its report as a file, as JSON text, and its top finding.

use std::ffi::c_char;

use crate::boundary::Fail;
use crate::config;
use crate::exports::own;
use crate::gpuwhy_status::{self, *};
pub use crate::handle::gpuwhy_session;
use crate::handle::with_session;
use crate::state::{not_stopped, Life};

/// The top finding of a stopped session (gpuwhy_session_top_finding()).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct gpuwhy_finding {
    /// The rule id, e.g. "data_starvation"; "none" when nothing was found. Owned by the
    /// session: valid until gpuwhy_session_free().
    pub id: *const c_char,
    /// One line for a log, e.g. "The GPU waits for input data"; owned like `id`.
    pub title: *const c_char,
    /// 0 to 1 (0 when nothing was found).
    pub confidence: f64,
}

/// Writes the stopped session's report (JSON, the format of docs/report-format.md) to `path`
/// atomically: a reader sees the old file or the new one, never half of one.
///
/// Errors: GPUWHY_NULL_ARGUMENT, GPUWHY_INVALID_HANDLE, GPUWHY_INVALID_ARGUMENT (not UTF-8),
/// GPUWHY_NOT_STOPPED, GPUWHY_IO (nothing is lost; try another path). Thread-safe.
///
/// # Safety
/// `path` must be NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn gpuwhy_session_write_report(
    session: *mut gpuwhy_session,
    path: *const c_char,
) -> gpuwhy_status {
    with_session(session, |inner| {
        own(inner)?;
        // SAFETY: NULL or NUL-terminated by the caller's promise.
        let path = unsafe { config::text(path, "path") }?
            .ok_or_else(|| Fail::new(GPUWHY_NULL_ARGUMENT, "path is NULL"))?;
        inner.write(std::path::Path::new(&path))
    })
}

/// Copies the stopped session's report (JSON) into `buf` as a NUL-terminated string and its
/// length (without the NUL) into `*len_out`.
///
/// Ask for the size first: with `buf` NULL (and any `capacity`) only `*len_out` is written and
/// GPUWHY_OK returned. With `capacity` < length + 1, GPUWHY_BUFFER_TOO_SMALL is returned, the
/// length is still written to `*len_out` and `buf` is left untouched. Other errors:
/// GPUWHY_NULL_ARGUMENT (`len_out`), GPUWHY_INVALID_HANDLE, GPUWHY_NOT_STOPPED. Thread-safe.
///
/// # Safety
/// `buf` must be NULL or point to `capacity` writable bytes; `len_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gpuwhy_session_report_json(
    session: *mut gpuwhy_session,
    buf: *mut c_char,
    capacity: usize,
    len_out: *mut usize,
) -> gpuwhy_status {
    with_session(session, |inner| {
        own(inner)?;
        if len_out.is_null() {
            return Err(Fail::new(GPUWHY_NULL_ARGUMENT, "len_out is NULL"));
        }
        let life = inner.life();
        let Life::Stopped(done) = &*life else {
            return Err(not_stopped());
        };
        let bytes = done.json.as_bytes();
        // SAFETY: non-NULL and writable by the caller's promise.
        unsafe { len_out.write(bytes.len()) };
        if buf.is_null() {
            return Ok(());
        }
        if capacity < bytes.len() + 1 {
            return Err(Fail::new(
                GPUWHY_BUFFER_TOO_SMALL,
                format!(
                    "the report needs {} bytes with its NUL, the buffer has {capacity}",
                    bytes.len() + 1
                ),
            ));
        }
        // SAFETY: `buf` has `capacity` ≥ len + 1 writable bytes, distinct from `bytes`.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf.cast::<u8>(), bytes.len()) };
        // SAFETY: index len < capacity.
        unsafe { buf.add(bytes.len()).write(0) };
        Ok(())
    })
}

/// Writes the stopped session's top finding to `*finding_out`: its rule id, title and
/// confidence, or id "none" when nothing holds the GPU back. The strings belong to the
/// session and stay valid until gpuwhy_session_free().
///
/// Errors: GPUWHY_NULL_ARGUMENT, GPUWHY_INVALID_HANDLE, GPUWHY_NOT_STOPPED. Thread-safe.
///
/// # Safety
/// `finding_out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gpuwhy_session_top_finding(
    session: *mut gpuwhy_session,
    finding_out: *mut gpuwhy_finding,
) -> gpuwhy_status {
    with_session(session, |inner| {
        own(inner)?;
        if finding_out.is_null() {
            return Err(Fail::new(GPUWHY_NULL_ARGUMENT, "finding_out is NULL"));
        }
        let life = inner.life();
        let Life::Stopped(done) = &*life else {
            return Err(not_stopped());
        };
        let f = gpuwhy_finding {
            id: done.top_id.as_ptr(),
            title: done.top_title.as_ptr(),
            confidence: done.top_confidence,
        };
        // SAFETY: non-NULL and writable by the caller's promise.
        unsafe { finding_out.write(f) };
        Ok(())
    })
}
