//! What a binding tells a running session besides markers: its data loader's settings and
//! profiler traces to read into the diagnosis.

use std::ffi::c_char;

use gpuwhy_core::report::DataLoaderInfo;

use crate::boundary::Fail;
use crate::config;
use crate::gpuwhy_status::{self, *};
pub use crate::handle::gpuwhy_session;
use crate::handle::{fork_generation, with_session};
use crate::state::{Inner, Life};

/// The settings of the training loop's data loader (PyTorch's `DataLoader` or a framework's
/// own), for gpuwhy_session_set_data_loader(). Initialise every field: a negative number is
/// "unknown", and so is any field past `struct_size`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct gpuwhy_data_loader {
    /// `sizeof(gpuwhy_data_loader)` as the caller compiled it (fields are only appended).
    pub struct_size: u32,
    /// Worker processes or threads making batches (0: the training thread makes them).
    pub num_workers: i32,
    /// Batches each worker prepares ahead.
    pub prefetch_factor: i32,
    /// 1 when batches are copied into page-locked (pinned) memory, 0 when not.
    pub pin_memory: i32,
    /// 1 when workers outlive an epoch, 0 when not.
    pub persistent_workers: i32,
    /// Samples per batch.
    pub batch_size: i64,
}

/// The first (and current) size of [`gpuwhy_data_loader`].
const LOADER_SIZE: usize = std::mem::size_of::<gpuwhy_data_loader>();

/// The session, running, in the process that started it.
fn running(inner: &Inner, f: impl FnOnce(&gpuwhy_core::session::Session)) -> Result<(), Fail> {
    if inner.fork_gen != fork_generation() {
        return Ok(()); // a child after fork(): inert, like the markers
    }
    inner.usable()?;
    let life = inner.life();
    let Life::Running(s) = &*life else {
        return Err(Fail::new(GPUWHY_STOPPED, "the session is stopped"));
    };
    f(s);
    Ok(())
}

/// Records the loop's data loader settings (`*loader`, copied) into the report
/// (`run.data_loader`), so that a finding about input can name them ("num_workers=0").
/// A later call replaces them.
///
/// Errors: GPUWHY_NULL_ARGUMENT, GPUWHY_STRUCT_SIZE (`loader->struct_size` smaller than the
/// first version), GPUWHY_INVALID_HANDLE, GPUWHY_STOPPED, GPUWHY_POISONED. Thread-safe; a
/// no-op in a child process after fork().
///
/// # Safety
/// `loader` must be NULL or point to `loader->struct_size` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn gpuwhy_session_set_data_loader(
    session: *mut gpuwhy_session,
    loader: *const gpuwhy_data_loader,
) -> gpuwhy_status {
    with_session(session, |inner| {
        if loader.is_null() {
            return Err(Fail::new(GPUWHY_NULL_ARGUMENT, "loader is NULL"));
        }
        // SAFETY: non-NULL, and the caller promises at least its struct_size field.
        let size = unsafe { std::ptr::addr_of!((*loader).struct_size).read_unaligned() };
        if (size as usize) < LOADER_SIZE {
            return Err(Fail::new(
                GPUWHY_STRUCT_SIZE,
                format!("loader->struct_size is {size}, smaller than sizeof(gpuwhy_data_loader) = {LOADER_SIZE}: set it to sizeof(gpuwhy_data_loader)"),
            ));
        }
        // SAFETY: struct_size (checked above) covers the whole struct by the caller's promise.
        let l = unsafe { loader.read_unaligned() };
        let info = DataLoaderInfo {
            num_workers: u32::try_from(l.num_workers).ok(),
            pin_memory: flag(l.pin_memory),
            prefetch_factor: u32::try_from(l.prefetch_factor).ok(),
            persistent_workers: flag(l.persistent_workers),
            batch_size: u64::try_from(l.batch_size).ok(),
        };
        running(inner, |s| s.set_data_loader(info))
    })
}

fn flag(v: i32) -> Option<bool> {
    (v >= 0).then_some(v != 0)
}

/// Has gpuwhy_session_stop() read the PyTorch profiler (Kineto) trace at `path` (`.json`
/// or `.json.gz`, a few of this run's steps) and diagnose the run with it, as `gpuwhy
/// diagnose run.json --trace PATH` does. The file need not exist yet: it is read at stop.
/// The path goes into the report's `run.traces`; a trace that cannot be read then becomes a
/// `trace_unreadable` event, and the diagnosis comes from the samples and steps alone.
///
/// Errors: GPUWHY_NULL_ARGUMENT, GPUWHY_INVALID_ARGUMENT (not UTF-8), GPUWHY_INVALID_HANDLE,
/// GPUWHY_STOPPED, GPUWHY_POISONED. Thread-safe; a no-op in a child process after fork().
///
/// # Safety
/// `path` must be NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn gpuwhy_session_add_trace(
    session: *mut gpuwhy_session,
    path: *const c_char,
) -> gpuwhy_status {
    with_session(session, |inner| {
        if path.is_null() {
            return Err(Fail::new(GPUWHY_NULL_ARGUMENT, "path is NULL"));
        }
        // SAFETY: non-NULL and NUL-terminated by the caller's promise.
        let path = unsafe { config::text(path, "the trace path") }?.unwrap_or_default();
        running(inner, |s| s.add_trace(path))
    })
}
