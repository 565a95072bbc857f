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

use std::cell::{Cell, OnceCell, RefCell};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Once};

use crate::boundary::Fail;
use crate::gpuwhy_status::*;
use gpuwhy_core::os::{ForkGate, LOADER_GATE};
use gpuwhy_core::session::{MarkerHandle, ThreadMarkers};

use crate::state::{freed, Inner, FREED, POISONED, RUNNING};

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
static GATE: ForkGate = ForkGate::new();
static REGISTRY: Mutex<Vec<Arc<Inner>>> = Mutex::new(Vec::new());
static ATFORK: Once = Once::new();

/// Sessions a thread keeps references to.
const CACHED: usize = 4;

/// One session as a thread holds it: a reference, and the thread's own marker lane.
struct Entry {
    token: usize,
    inner: Arc<Inner>,
    lane: Lane,
}

/// A thread's marker lane in a session, claimed by its first marker (a thread that only
/// stops or reads a session never takes a lane or allocates a ring).
pub(crate) struct Lane {
    markers: MarkerHandle,
    lane: OnceCell<ThreadMarkers>,
}

impl Lane {
    /// The thread's lane, claimed now if this is its first marker.
    #[inline]
    pub fn get(&self) -> &ThreadMarkers {
        self.lane.get_or_init(|| self.markers.for_this_thread())
    }
}

/// The sessions a thread holds. Whoever changes it clears `LAST` first, and so does its
/// destructor, so `LAST` never points at an entry that is gone.
struct Owned([Option<Box<Entry>>; CACHED]);

impl Drop for Owned {
    fn drop(&mut self) {
        forget_last();
    }
}

thread_local! {
    static OWNED: RefCell<Owned> = const { RefCell::new(Owned([None, None, None, None])) };
    /// The entry this thread used last ([`Hot`]). It has no destructor, so it can be read at
    /// any time, even while the thread is torn down; the markers' hot path reads only this:
    /// one thread-local access.
    static LAST: Cell<Hot> = const { Cell::new(Hot::NONE) };
    static NEXT_SLOT: Cell<usize> = const { Cell::new(0) };
}

/// What a marker needs of the entry this thread used last, copied out of it so that the hot
/// path reads one thread-local value and follows no pointer to find the session and lane:
/// the token it answers to, the session, and the thread's lane in it (set only once the
/// thread has its lane, and only for a session of this process's fork generation).
#[derive(Clone, Copy)]
pub(crate) struct Hot {
    token: usize,
    inner: *const Inner,
    lane: *const ThreadMarkers,
}

impl Hot {
    const NONE: Hot = Hot {
        token: 0,
        inner: std::ptr::null(),
        lane: std::ptr::null(),
    };
}

fn forget_last() {
    let _ = LAST.try_with(|l| l.set(Hot::NONE));
}

/// The current fork generation (0 in the process that loaded the library).
pub(crate) fn fork_generation() -> u32 {
    FORK_GEN.load(Ordering::Relaxed)
}

extern "C" fn before_fork() {
    GATE.close();
    // No gpuwhy thread may be inside the dynamic loader (the sampler loading NVML) when the
    // process is copied: the child would inherit the loader's lock held.
    LOADER_GATE.close();
}

extern "C" fn after_fork_parent() {
    LOADER_GATE.open();
    GATE.open();
}

extern "C" fn after_fork_child() {
    FORK_GEN.fetch_add(1, Ordering::Relaxed);
    // The child's only thread is the one that forked: with its hot entry gone, its next
    // marker takes the slow path, which sees the older generation (and never caches it
    // again), so the hot path needs no generation check.
    forget_last();
    LOADER_GATE.open();
    GATE.open();
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
    GATE.with(|| {
        let mut reg: MutexGuard<'_, _> = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut reg)
    })
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
    let _ = OWNED.try_with(|o| {
        if let Ok(mut o) = o.try_borrow_mut() {
            forget_last();
            for e in o.0.iter_mut() {
                if e.as_ref().is_some_and(|e| e.token == token) {
                    *e = None;
                }
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
    if let Some(inner) = cached(token, |i, _| Arc::clone(i)) {
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

/// Runs `f` on the cached session `token` and this thread's lane in it, if this thread has
/// it, without a lock or a reference count change; `None` for a freed session.
#[inline]
pub(crate) fn cached<R>(token: usize, f: impl FnOnce(&Arc<Inner>, &Lane) -> R) -> Option<R> {
    cached_slow(token, f)
}

/// The hot path of the markers: the session and this thread's lane in it, if this thread
/// marked running session `token` last (in this process) and already has its lane; `None`
/// for anything else (the caller takes the slow path). One thread-local read, one load of
/// the session's state.
///
/// The references live as long as the thread's cache entry, which only this thread changes
/// and which markers never change; callers use them before returning to C.
#[inline(always)]
pub(crate) fn running<'a>(token: usize) -> Option<(&'a Inner, &'a ThreadMarkers)> {
    // A const thread-local without a destructor: never unavailable, no lazy initialisation.
    let hot = LAST.with(Cell::get);
    if hot.token != token || hot.lane.is_null() {
        return None;
    }
    // SAFETY: `hot` was copied from an entry of this thread's `OWNED` by `cached_slow`; every
    // change to `OWNED`, and its destructor, clears `LAST` first, and only this thread changes
    // either, never while a marker runs. So the entry, the `Arc<Inner>` it holds and its lane
    // outlive the marker that uses them.
    let inner: &'a Inner = unsafe { &*hot.inner };
    // SAFETY: as above; `lane` points into the entry's `OnceCell`, set once and never taken.
    let lane: &'a ThreadMarkers = unsafe { &*hot.lane };
    if inner.state.load(Ordering::Acquire) != RUNNING {
        return None;
    }
    Some((inner, lane))
}

/// [`cached`] for a session this thread did not use last.
#[inline(never)]
fn cached_slow<R>(token: usize, f: impl FnOnce(&Arc<Inner>, &Lane) -> R) -> Option<R> {
    OWNED
        .try_with(|o| {
            let o = o.try_borrow().ok()?;
            let e = o.0.iter().flatten().find(|e| e.token == token)?;
            if e.inner.state.load(Ordering::Relaxed) == FREED {
                return None;
            }
            let r = f(&e.inner, &e.lane);
            // Hot only once the lane exists (`f` may have claimed it), and never for a
            // session inherited across fork().
            if let Some(lane) = e.lane.lane.get() {
                if e.inner.fork_gen == fork_generation() {
                    let hot = Hot {
                        token,
                        inner: Arc::as_ptr(&e.inner),
                        lane,
                    };
                    let _ = LAST.try_with(|l| l.set(hot));
                }
            }
            Some(r)
        })
        .ok()
        .flatten()
}

/// Caches `inner` for this thread, with a lane of the thread's own for its markers.
fn remember(inner: &Arc<Inner>) {
    let _ = OWNED.try_with(|o| {
        let Ok(mut o) = o.try_borrow_mut() else {
            return;
        };
        forget_last();
        // Drop freed sessions first; they only wait for this thread to let go.
        for e in o.0.iter_mut() {
            if e.as_ref()
                .is_some_and(|e| e.inner.state.load(Ordering::Relaxed) == FREED)
            {
                *e = None;
            }
        }
        let slot = match o.0.iter().position(Option::is_none) {
            Some(i) => i,
            None => NEXT_SLOT.with(|n| {
                let i = n.get() % CACHED;
                n.set(i + 1);
                i
            }),
        };
        o.0[slot] = Some(Box::new(Entry {
            token: inner.token,
            inner: Arc::clone(inner),
            lane: Lane {
                markers: inner.markers.clone(),
                lane: OnceCell::new(),
            },
        }));
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
