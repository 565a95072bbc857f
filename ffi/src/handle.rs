//! Session handles: opaque numbers, looked up in a registry, cached per thread.
//!
//! A `gpuwhy_session*` is never dereferenced. It carries a number that is never reused, so a
//! freed, doubly freed or made-up handle is simply not found. The first call from a thread
//! looks the number up in the registry (a lock); the thread then keeps its own reference in a
//! small cache, so later markers take no lock and a session freed by another thread stays
//! alive for as long as this thread might still be using it.
//!
//! After `fork()` the child inherits the registry but not the sampler thread: a fork
//! handler bumps [`fork_generation`], and sessions from an older generation become inert in
//! the child (markers do nothing, free forgets) without touching any lock held by a thread
//! that no longer exists.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Once};

use crate::boundary::Fail;
use crate::gpuwhy_status::*;
use crate::state::{freed, Inner, FREED, POISONED};

/// An opaque session handle. Only ever used through pointers returned by
/// gpuwhy_session_new().
pub struct gpuwhy_session {
    _private: [u8; 0],
}

/// Handles given out so far; handles are `(n << 4) | 1`, never 0 and never reused.
static NEXT: AtomicUsize = AtomicUsize::new(1);
/// Bumped in the child after every `fork()`.
static FORK_GEN: AtomicU32 = AtomicU32::new(0);
/// Held by the fork handler across `fork()` and by every registry user, so that no thread
/// holds the registry's mutex at the moment of a fork.
static GATE: AtomicBool = AtomicBool::new(false);
static REGISTRY: Mutex<Vec<Arc<Inner>>> = Mutex::new(Vec::new());
static ATFORK: Once = Once::new();

/// Sessions a thread keeps references to.
const CACHED: usize = 4;

thread_local! {
    static CACHE: RefCell<[(usize, Option<Arc<Inner>>); CACHED]> =
        const { RefCell::new([(0, None), (0, None), (0, None), (0, None)]) };
    static NEXT_SLOT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The current fork generation (0 in the process that loaded the library).
pub(crate) fn fork_generation() -> u32 {
    FORK_GEN.load(Ordering::Relaxed)
}

fn gate_close() {
    while GATE
        .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        std::thread::yield_now();
    }
}

fn gate_open() {
    GATE.store(false, Ordering::Release);
}

extern "C" fn before_fork() {
    gate_close();
}

extern "C" fn after_fork_parent() {
    gate_open();
}

extern "C" fn after_fork_child() {
    FORK_GEN.fetch_add(1, Ordering::Relaxed);
    gate_open();
}

/// Installs the fork handlers (once per process).
fn install_fork_handlers() {
    ATFORK.call_once(|| {
        // SAFETY: the three handlers are plain functions that only touch atomics; they stay
        // valid for the life of the process (this library is never unloaded while a session
        // exists, and the handlers do nothing harmful if it is).
        let rc = unsafe {
            libc::pthread_atfork(
                Some(before_fork),
                Some(after_fork_parent),
                Some(after_fork_child),
            )
        };
        debug_assert_eq!(rc, 0);
    });
}

/// Runs `f` on the registry, behind the fork gate.
fn with_registry<R>(f: impl FnOnce(&mut Vec<Arc<Inner>>) -> R) -> R {
    gate_close();
    struct Open;
    impl Drop for Open {
        fn drop(&mut self) {
            gate_open();
        }
    }
    let _open = Open;
    let mut reg: MutexGuard<'_, _> = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
    f(&mut reg)
}

/// A fresh handle number.
pub(crate) fn next_token() -> usize {
    (NEXT.fetch_add(1, Ordering::Relaxed) << 4) | 1
}

/// Adds a session to the registry and returns its handle.
pub(crate) fn register(inner: Inner) -> *mut gpuwhy_session {
    install_fork_handlers();
    let token = inner.token;
    let inner = Arc::new(inner);
    with_registry(|r| r.push(inner));
    token as *mut gpuwhy_session
}

/// Removes a session from the registry (and this thread's cache) and returns it.
pub(crate) fn unregister(h: *mut gpuwhy_session) -> Result<Arc<Inner>, Fail> {
    let token = h as usize;
    let found = find(token)?;
    if found.fork_gen != fork_generation() {
        // A session inherited by a child of fork(): its sampler thread does not exist here,
        // so it must never be dropped (that would join the thread) nor stopped. It stays in
        // the registry, which keeps it alive, and is marked freed in this process's copy of
        // memory only (the parent's is untouched), so that the child's later calls with the
        // handle are refused as after any free.
        if found.state.swap(FREED, Ordering::AcqRel) == FREED {
            return Err(freed());
        }
        forget_cached(token);
        return Ok(found);
    }
    let removed = with_registry(|r| {
        let i = r.iter().position(|s| s.token == token)?;
        Some(r.swap_remove(i))
    });
    forget_cached(token);
    match removed {
        Some(inner) => {
            inner.state.store(FREED, Ordering::Release);
            Ok(inner)
        }
        // Another thread freed it between the lookup and now.
        None => Err(freed()),
    }
}

/// Drops this thread's cached reference to session `token`.
fn forget_cached(token: usize) {
    let _ = CACHE.try_with(|c| {
        if let Ok(mut c) = c.try_borrow_mut() {
            for e in c.iter_mut().filter(|e| e.0 == token) {
                *e = (0, None);
            }
        }
    });
}

/// The session `h` names, from this thread's cache or the registry.
pub(crate) fn find(token: usize) -> Result<Arc<Inner>, Fail> {
    if token == 0 {
        return Err(Fail::new(
            GPUWHY_NULL_ARGUMENT,
            "the session handle is NULL",
        ));
    }
    if let Some(inner) = cached(token, Arc::clone) {
        return Ok(inner);
    }
    // Only a child of fork() keeps freed sessions in its registry (see `unregister`).
    let inner = with_registry(|r| {
        r.iter()
            .find(|s| s.token == token && s.state.load(Ordering::Acquire) != FREED)
            .cloned()
    });
    let Some(inner) = inner else {
        return Err(Fail::new(
            GPUWHY_INVALID_HANDLE,
            "not a live gpuwhy session: it was freed, or the pointer never came from gpuwhy_session_new",
        ));
    };
    remember(&inner);
    Ok(inner)
}

/// Runs `f` on the cached session `token`, if this thread has it, without a lock or a
/// reference count change; a freed session is dropped from the cache.
#[inline]
pub(crate) fn cached<R>(token: usize, f: impl FnOnce(&Arc<Inner>) -> R) -> Option<R> {
    CACHE
        .try_with(|c| {
            let c = c.try_borrow().ok()?;
            let inner = c.iter().find(|e| e.0 == token)?.1.as_ref()?;
            if inner.state.load(Ordering::Relaxed) == FREED {
                return None;
            }
            Some(f(inner))
        })
        .ok()
        .flatten()
}

fn remember(inner: &Arc<Inner>) {
    let _ = CACHE.try_with(|c| {
        let Ok(mut c) = c.try_borrow_mut() else {
            return;
        };
        // Drop freed sessions first; they only wait for this thread to let go.
        for e in c.iter_mut() {
            if e.1
                .as_ref()
                .is_some_and(|i| i.state.load(Ordering::Relaxed) == FREED)
            {
                *e = (0, None);
            }
        }
        let slot = match c.iter().position(|e| e.0 == 0) {
            Some(i) => i,
            None => NEXT_SLOT.with(|n| {
                let i = n.get() % CACHED;
                n.set(i + 1);
                i
            }),
        };
        c[slot] = (inner.token, Some(Arc::clone(inner)));
    });
}

/// Runs a session's call inside the panic boundary: finds the session, refuses a poisoned
/// one, and poisons it if `body` panics.
pub(crate) fn with_session(
    h: *mut gpuwhy_session,
    body: impl FnOnce(&Arc<Inner>) -> Result<(), Fail>,
) -> crate::gpuwhy_status {
    let poison: std::cell::Cell<Option<Arc<Inner>>> = std::cell::Cell::new(None);
    crate::boundary::guard(
        || {
            let inner = find(h as usize)?;
            if inner.state.load(Ordering::Acquire) == POISONED {
                return Err(crate::state::poisoned());
            }
            poison.set(Some(Arc::clone(&inner)));
            body(&inner)
        },
        || {
            if let Some(i) = poison.take() {
                i.state.store(POISONED, Ordering::Release);
            }
        },
    )
}
