//! The panic boundary and the thread-local last-error message.
//!
//! Every export runs its body through [`guard`] (via the `boundary!` macro): a panic is
//! caught before it can unwind into C and becomes [`gpuwhy_status::GPUWHY_PANIC`].
//! Failures carry a message for [`crate::gpuwhy_last_error`].

use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::gpuwhy_status;

/// A failed call: its status and what the caller should know.
#[derive(Debug)]
pub(crate) struct Fail {
    pub status: gpuwhy_status,
    pub message: String,
}

impl Fail {
    pub fn new(status: gpuwhy_status, message: impl Into<String>) -> Fail {
        Fail {
            status,
            message: message.into(),
        }
    }
}

/// What an export's body returns.
pub(crate) type Res = Result<(), Fail>;

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Runs `body`, turning its failure or panic into a status and the last-error message.
/// `on_panic` runs after a panic was caught (to poison a session).
///
/// Inlined into each export so that a call that succeeds costs no more than `body`: the
/// unwinding machinery is a landing pad, taken only by a panic, and the failure paths are
/// out of line.
#[inline(always)]
pub(crate) fn guard(body: impl FnOnce() -> Res, on_panic: impl FnOnce()) -> gpuwhy_status {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => gpuwhy_status::GPUWHY_OK,
        Ok(Err(fail)) => failed(fail),
        Err(payload) => panicked(payload, on_panic),
    }
}

/// A failed call: its message becomes the last error.
#[cold]
#[inline(never)]
fn failed(fail: Fail) -> gpuwhy_status {
    set_last_error(&fail.message);
    fail.status
}

/// A caught panic: the payload's message becomes the last error, `on_panic` runs.
#[cold]
#[inline(never)]
fn panicked(payload: Box<dyn std::any::Any + Send>, on_panic: impl FnOnce()) -> gpuwhy_status {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into());
    // Dropping the payload could itself panic (a payload with a panicking Drop), so it is
    // dropped inside another boundary; only the payload of such a second panic is leaked.
    // Forgetting every payload would leak one allocation per panic.
    if let Err(again) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(again);
    }
    let _ = catch_unwind(AssertUnwindSafe(on_panic));
    set_last_error(&format!(
        "internal error in gpuwhy: {what}; the session is poisoned (free it; your process is unaffected). Please report this with the message."
    ));
    gpuwhy_status::GPUWHY_PANIC
}

/// Runs an export's body inside the panic boundary (see [`guard`]).
macro_rules! boundary {
    ($body:block) => {
        $crate::boundary::guard(|| $body, || {})
    };
}
pub(crate) use boundary;

/// Records `message` as the calling thread's last error.
pub(crate) fn set_last_error(message: &str) {
    // NUL bytes cannot appear in a C string: show them escaped.
    let bytes = message.replace('\0', "\\0").into_bytes();
    let c = CString::new(bytes).unwrap_or_default();
    // During thread teardown the slot may be gone; the message is then dropped.
    let _ = LAST_ERROR.try_with(|l| {
        if let Ok(mut l) = l.try_borrow_mut() {
            *l = c;
        }
    });
}

/// Pointer to the calling thread's last-error message ("" when none, or during teardown).
pub(crate) fn last_error_ptr() -> *const c_char {
    LAST_ERROR
        .try_with(|l| l.try_borrow().map(|s| s.as_ptr()).ok())
        .ok()
        .flatten()
        .unwrap_or(c"".as_ptr())
}
