//! The session functions of the C ABI, but for the markers (`markers.rs`).

use std::ffi::c_char;
use std::sync::atomic::Ordering;
use std::time::Duration;

use gpuwhy_core::session::{Session, SessionConfig, MAX_NAME_BYTES};
use gpuwhy_core::steps::STEP_KEY;
use gpuwhy_core::Error;

use crate::boundary::{boundary, Fail, Res};
use crate::config::{self, gpuwhy_config, CONFIG_SIZE};
use crate::gpuwhy_status::{self, *};
pub use crate::handle::gpuwhy_session;
use crate::handle::{self, fork_generation, with_session};
use crate::state::{Inner, Life};

/// Fills `*config` with the defaults and sets `config->struct_size` to `struct_size`, which
/// must be `sizeof(gpuwhy_config)` as the caller compiled it.
///
/// Returns GPUWHY_NULL_ARGUMENT for a NULL `config`, GPUWHY_STRUCT_SIZE when `struct_size` is
/// smaller than the first version of the struct (or absurdly large); `*config` is then left
/// untouched. All `struct_size` bytes are written (fields this library does not know are
/// zeroed). Thread-safe.
///
/// # Safety
/// `config` must be NULL or point to `struct_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn gpuwhy_config_init(
    config: *mut gpuwhy_config,
    struct_size: usize,
) -> gpuwhy_status {
    boundary!({
        if config.is_null() {
            return Err(Fail::new(GPUWHY_NULL_ARGUMENT, "config is NULL"));
        }
        config::check_size(struct_size)?;
        // SAFETY: the caller promises `struct_size` writable bytes at `config`.
        unsafe { std::ptr::write_bytes(config.cast::<u8>(), 0, struct_size) };
        let defaults = gpuwhy_config::defaults(struct_size as u32);
        // The fields the caller's struct has: an older header's struct is smaller.
        // SAFETY: `struct_size` (≥ CONFIG_V1_SIZE, checked) writable bytes at `config`, of
        // which this writes at most `CONFIG_SIZE`, from a whole struct.
        unsafe {
            std::ptr::copy_nonoverlapping(
                (&raw const defaults).cast::<u8>(),
                config.cast::<u8>(),
                struct_size.min(CONFIG_SIZE),
            )
        };
        Ok(())
    })
}

/// Starts a session: sampling begins in a background thread and markers may be called.
/// `config` may be NULL for the defaults. On success `*session_out` receives the handle,
/// which the caller frees with gpuwhy_session_free(); on failure it is not written.
///
/// Without NVML or without a GPU the session still starts and records step timings; the
/// report then says why GPU metrics are absent (unless GPUWHY_FLAG_REQUIRE_GPU, which makes
/// that GPUWHY_NO_GPU). Errors: GPUWHY_NULL_ARGUMENT (`session_out`), GPUWHY_STRUCT_SIZE,
/// GPUWHY_INVALID_ARGUMENT (flags, interval, rank, non-UTF-8 strings), GPUWHY_NO_GPU; details
/// in gpuwhy_last_error(). Thread-safe; several sessions may run at once.
///
/// # Safety
/// `config` must be NULL or point to an initialised gpuwhy_config of `struct_size` bytes
/// whose strings are NULL or NUL-terminated; `session_out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gpuwhy_session_new(
    config: *const gpuwhy_config,
    session_out: *mut *mut gpuwhy_session,
) -> gpuwhy_status {
    boundary!({
        if session_out.is_null() {
            return Err(Fail::new(GPUWHY_NULL_ARGUMENT, "session_out is NULL"));
        }
        let settings = if config.is_null() {
            let defaults = gpuwhy_config::defaults(CONFIG_SIZE as u32);
            // SAFETY: the defaults hold no pointers and are CONFIG_SIZE bytes.
            unsafe { config::read(&defaults) }?
        } else {
            // SAFETY: non-NULL; the caller promises an initialised struct. Only the first
            // field is read before its size is checked.
            let size = unsafe { (*config).struct_size } as usize;
            config::check_size(size)?;
            // SAFETY: `config` points to `struct_size` (≥ CONFIG_V1_SIZE) readable bytes with
            // valid strings.
            unsafe { config::read(config) }?
        };
        let session = Session::start(SessionConfig {
            baseline: settings.baseline,
            provisional_period_s: settings.provisional_period_s,
            ..SessionConfig::from(settings.recorder)
        })
        .map_err(start_error)?;
        if settings.require_gpu {
            // The sampler thread probes the GPUs after the session starts: only then is it
            // known whether there are any (NVML can load and still find none).
            let probed = session.recorder().wait_probed(PROBE_WAIT);
            let why = match session.recorder().gpu_absent_reason() {
                Some(why) => Some(why),
                None if !probed => Some(format!(
                    "NVML did not list the GPUs within {} s",
                    PROBE_WAIT.as_secs()
                )),
                None if session.recorder().devices().is_empty() => {
                    Some("NVML reports no GPU".to_string())
                }
                None => None,
            };
            if let Some(why) = why {
                drop(session);
                return Err(Fail::new(GPUWHY_NO_GPU, why));
            }
        }
        let inner = Inner::new(
            handle::next_token(),
            fork_generation(),
            session,
            settings.output,
        );
        let h = handle::register(inner);
        // SAFETY: non-NULL and writable by the caller's promise.
        unsafe { session_out.write(h) };
        Ok(())
    })
}

/// How long a call that needs the GPUs listed waits for the sampler thread to list them
/// (NVML's initialisation takes milliseconds, a few seconds on a large machine whose driver
/// is not kept loaded).
const PROBE_WAIT: Duration = Duration::from_secs(10);

fn start_error(e: Error) -> Fail {
    let status = match &e {
        Error::InvalidArgument(_) => GPUWHY_INVALID_ARGUMENT,
        Error::Io { .. } => GPUWHY_IO,
        _ => GPUWHY_NO_GPU,
    };
    Fail::new(status, e.to_string())
}

/// Refuses a session inherited through fork() for anything but markers and free.
pub(crate) fn own(inner: &Inner) -> Res {
    if inner.fork_gen != fork_generation() {
        return Err(Fail::new(
            GPUWHY_INVALID_HANDLE,
            "this session belongs to the parent process: after fork() a child can only free it (markers do nothing); start a new session in the child to record there",
        ));
    }
    Ok(())
}

/// Registers a custom phase named `name` (1 to 64 bytes of UTF-8, not "step") and writes its
/// id to `*id_out`; a name already registered (built-in ones included: "data", "forward",
/// "backward", "optimizer") gives its existing id.
///
/// Errors: GPUWHY_NULL_ARGUMENT, GPUWHY_INVALID_HANDLE, GPUWHY_INVALID_ARGUMENT (the name),
/// GPUWHY_TOO_MANY_PHASES (16 in all), GPUWHY_STOPPED. Takes a lock; call it before the
/// loop, not every step. Thread-safe.
///
/// # Safety
/// `name` must be NULL or NUL-terminated; `id_out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gpuwhy_session_register_phase(
    session: *mut gpuwhy_session,
    name: *const c_char,
    id_out: *mut u32,
) -> gpuwhy_status {
    with_session(session, |inner| {
        own(inner)?;
        if name.is_null() || id_out.is_null() {
            return Err(Fail::new(
                GPUWHY_NULL_ARGUMENT,
                "name and id_out must not be NULL",
            ));
        }
        // SAFETY: non-NULL and NUL-terminated by the caller's promise.
        let name = unsafe { config::text(name, "the phase name") }?.unwrap_or_default();
        inner.usable()?;
        let life = inner.life();
        let Life::Running(s) = &*life else {
            return Err(Fail::new(GPUWHY_STOPPED, "the session is stopped"));
        };
        let id = s.register_phase(&name).map_err(|e| {
            // The core refuses a bad name (before counting) and a full session with the same
            // error: tell them apart by the name. The phase count cannot decide it: a full
            // session refuses a bad name as a bad name, and another thread's registration
            // may not have reached `inner.phases` yet.
            let bad_name = name.is_empty() || name == STEP_KEY || name.len() > MAX_NAME_BYTES;
            let status = if bad_name {
                GPUWHY_INVALID_ARGUMENT
            } else {
                GPUWHY_TOO_MANY_PHASES
            };
            Fail::new(status, e.to_string())
        })?;
        inner
            .phases
            .fetch_max(u32::from(id.0) + 1, Ordering::AcqRel);
        // SAFETY: non-NULL and writable by the caller's promise.
        unsafe { id_out.write(u32::from(id.0)) };
        Ok(())
    })
}

/// Marks a one-off event now, e.g. "eval" or "checkpoint"; it appears in the report's events
/// and explains periodic stalls. Names are cut to 64 bytes; after 64 distinct names further
/// ones are recorded as "other". Takes a short lock: for rare events, not every step.
///
/// Errors: GPUWHY_NULL_ARGUMENT, GPUWHY_INVALID_HANDLE, GPUWHY_INVALID_ARGUMENT (not UTF-8),
/// GPUWHY_STOPPED. Thread-safe; a no-op in a child process after fork().
///
/// # Safety
/// `name` must be NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn gpuwhy_session_event(
    session: *mut gpuwhy_session,
    name: *const c_char,
) -> gpuwhy_status {
    with_session(session, |inner| {
        if inner.fork_gen != fork_generation() {
            return Ok(());
        }
        if name.is_null() {
            return Err(Fail::new(GPUWHY_NULL_ARGUMENT, "name is NULL"));
        }
        // SAFETY: non-NULL and NUL-terminated by the caller's promise.
        let name = unsafe { config::text(name, "the event name") }?.unwrap_or_default();
        inner.usable()?;
        // Through this thread's own lane (the lookup above cached it), so that the event
        // keeps its place among the thread's markers.
        if handle::cached(inner.token, |_, lane| lane.get().event(&name)).is_none() {
            inner.markers.event(&name);
        }
        Ok(())
    })
}

/// The number of GPUs the session samples (0 without NVML or a GPU: the report's
/// `gpu_absent_reason` says why) into `*count_out`. Right after gpuwhy_session_new() it waits
/// until the sampler thread has listed the GPUs (milliseconds; at most 10 s, after which it
/// counts those listed so far). Errors: GPUWHY_NULL_ARGUMENT, GPUWHY_INVALID_HANDLE,
/// GPUWHY_STOPPED. Thread-safe.
///
/// # Safety
/// `count_out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gpuwhy_session_gpu_count(
    session: *mut gpuwhy_session,
    count_out: *mut u32,
) -> gpuwhy_status {
    with_session(session, |inner| {
        own(inner)?;
        if count_out.is_null() {
            return Err(Fail::new(GPUWHY_NULL_ARGUMENT, "count_out is NULL"));
        }
        let life = inner.life();
        let Life::Running(s) = &*life else {
            return Err(Fail::new(GPUWHY_STOPPED, "the session is stopped"));
        };
        // The GPUs are listed by the sampler thread, after the session started.
        s.recorder().wait_probed(PROBE_WAIT);
        let n = s.recorder().devices().len() as u32;
        // SAFETY: non-NULL and writable by the caller's promise.
        unsafe { count_out.write(n) };
        Ok(())
    })
}

/// Stops sampling and markers, diagnoses the run and keeps the report in the session; with
/// `output_path` configured, writes it there atomically and removes the crash journal.
///
/// Errors: GPUWHY_INVALID_HANDLE, GPUWHY_STOPPED (already stopped; nothing changes), GPUWHY_IO
/// (the write failed: the report is kept, retry with gpuwhy_session_write_report()).
/// Markers racing with stop on other threads are either recorded or refused with
/// GPUWHY_STOPPED. Thread-safe; takes as long as the final diagnosis (milliseconds).
#[no_mangle]
pub extern "C" fn gpuwhy_session_stop(session: *mut gpuwhy_session) -> gpuwhy_status {
    with_session(session, |inner| {
        own(inner)?;
        inner.stop()
    })
}

/// Frees a session. A session still recording is stopped first, and its report written to
/// the configured `output_path` (if any). NULL is a no-op returning GPUWHY_OK.
///
/// Returns GPUWHY_INVALID_HANDLE for a handle already freed (double free is detected, never
/// undefined) and GPUWHY_IO when the final write failed (the session is freed anyway; the
/// crash journal `<output_path>.partial` keeps the recording). May be called while other
/// threads are inside markers of the same session: they finish safely and later calls get
/// GPUWHY_INVALID_HANDLE. In a child process after fork() it only forgets the inherited
/// session (the parent's recording is untouched); the child's later calls with it get
/// GPUWHY_INVALID_HANDLE.
#[no_mangle]
pub extern "C" fn gpuwhy_session_free(session: *mut gpuwhy_session) -> gpuwhy_status {
    if session.is_null() {
        return GPUWHY_OK;
    }
    boundary!({
        let inner = handle::unregister(session)?;
        if inner.fork_gen != fork_generation() {
            return Ok(());
        }
        let running = matches!(&*inner.life(), Life::Running(_));
        if running {
            match inner.stop_for_free() {
                Ok(()) => {}
                Err(f) if f.status == GPUWHY_STOPPED => {}
                Err(f) => return Err(f),
            }
        }
        Ok(())
    })
}

/// A test-only export (built with the `testing` feature): panics inside the boundary, to
/// prove that a panic becomes GPUWHY_PANIC and poisons the session instead of unwinding.
#[cfg(feature = "testing")]
#[no_mangle]
pub extern "C" fn gpuwhy_test_panic(session: *mut gpuwhy_session) -> gpuwhy_status {
    with_session(session, |_| panic!("gpuwhy_test_panic was called"))
}
