//! The marker hot path: each thread that marks steps owns a lane (a ring it alone writes),
//! found through a thread-local cache, so a marker is a clock read and three stores.

use std::cell::{Cell, RefCell};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::Instant;

use super::fold::{code, Folder, EVENT, RESET};
use super::ring::{Ring, RING_BYTES};
use crate::collect::{Clock, ManualClock, SamplerHook};
use crate::report::journal::JournalLine;
use crate::report::Event;

/// Threads that get a lane of their own, each with its own step sequence. Further threads
/// share one more lane behind a lock (their steps then interleave).
pub const MAX_LANES: usize = 8;
/// Distinct event kinds kept by name; further kinds are recorded as `other`.
pub const MAX_EVENT_KINDS: usize = 64;
/// Longest event kind or phase name, bytes.
pub const MAX_NAME_BYTES: usize = 64;
/// The most the lanes' rings use: one per private lane and the shared one, 1,179,648 bytes.
pub const RINGS_BOUND_BYTES: usize = (MAX_LANES + 1) * RING_BYTES;
/// Ticks the sampler keeps folding, one by one, after the last tick that found markers (1 s
/// at the default 100 ms interval). A loop that pauses for fewer ticks than this (a data
/// wait, a short eval) still has its rings drained every tick when it resumes; one that
/// pauses longer may find the sampler sleeping through ticks (up to a second) and, if it then
/// marks more than a ring holds in that time, folds its own ring once. Without it the first
/// empty tick let the sampler sleep, and a loop resuming after a 20 ms pause filled its ring
/// and folded it on the training thread: half the C marker's cost in `cargo xtask bench`
/// (docs/benchmarks.md).
const QUIET_AFTER_TICKS: u32 = 10;

/// Index of the shared lane.
const SHARED: usize = MAX_LANES;

/// Source of session ids; 0 never names a session, so a fresh thread matches none.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// (session id, lane) of the lane this thread writes to.
    static CACHE: Cell<(u64, usize)> = const { Cell::new((0, 0)) };
    /// Gives the lane back when the thread ends (or moves to another session).
    static GUARD: RefCell<Option<LaneGuard>> = const { RefCell::new(None) };
}

struct LaneGuard {
    markers: Weak<Markers>,
    lane: usize,
}

impl Drop for LaneGuard {
    fn drop(&mut self) {
        if let Some(m) = self.markers.upgrade() {
            m.release(self.lane);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while folding leaves plain data behind; keep using it.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[derive(Debug, Default)]
struct Lane {
    claimed: AtomicBool,
    ring: OnceLock<Ring>,
}

/// Everything the markers share: lanes, the fold state, phase names and event kinds.
pub struct Markers {
    id: u64,
    origin: Instant,
    /// `origin` in [`crate::os::monotonic_ns`]'s nanoseconds, where that clock exists.
    origin_ns: Option<u64>,
    /// A test's clock, read instead of the monotonic one when set.
    manual: Option<ManualClock>,
    me: Weak<Markers>,
    lanes: [Lane; MAX_LANES + 1],
    /// Serialises the writers of the shared lane.
    shared: Mutex<()>,
    /// The fold state; taken by the sampler each tick and by a writer whose ring is full.
    pub fold: Mutex<Folder>,
    /// Phase names in id order.
    pub names: Mutex<Vec<String>>,
    kinds: Mutex<Vec<String>>,
    /// Sampler ticks in a row that found no record ([`SamplerHook::quiet`] from
    /// [`QUIET_AFTER_TICKS`] on). Only the sampler thread writes it.
    empty_ticks: AtomicU32,
}

impl std::fmt::Debug for Markers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Markers")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl Markers {
    /// Shared marker state counting time from `clock`'s origin.
    pub fn new(me: Weak<Markers>, clock: &Clock, folder: Folder, names: Vec<String>) -> Self {
        let (origin, manual) = match clock {
            Clock::Real(c) => (c.origin(), None),
            Clock::Manual(m) => (Instant::now(), Some(m.clone())),
        };
        // The origin on the monotonic clock that `Instant` reads, so that markers can read it
        // directly (off by the few nanoseconds between these two reads).
        let origin_ns = crate::os::monotonic_ns().map(|now| {
            let since = Instant::now().saturating_duration_since(origin).as_nanos() as u64;
            now.saturating_sub(since)
        });
        Markers {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            origin,
            origin_ns,
            manual,
            me,
            lanes: Default::default(),
            shared: Mutex::new(()),
            fold: Mutex::new(folder),
            names: Mutex::new(names),
            kinds: Mutex::new(Vec::new()),
            empty_ticks: AtomicU32::new(0),
        }
    }

    /// Nanoseconds since the recording's origin: the one clock read of a marker.
    #[inline(always)]
    pub fn now_ns(&self) -> u64 {
        if let Some(m) = &self.manual {
            return m.elapsed_ns();
        }
        if let (Some(start), Some(now)) = (self.origin_ns, crate::os::monotonic_ns()) {
            return now.saturating_sub(start);
        }
        let d = Instant::now().saturating_duration_since(self.origin);
        // u64 arithmetic (as_nanos is u128): 2^64 ns is 584 years.
        d.as_secs()
            .wrapping_mul(1_000_000_000)
            .wrapping_add(u64::from(d.subsec_nanos()))
    }

    /// Publishes one record from the calling thread.
    #[inline]
    pub fn push(&self, a: u64, b: u64) {
        let (id, lane) = CACHE.with(Cell::get);
        if id == self.id && lane < SHARED {
            if let Some(ring) = self.lanes[lane].ring.get() {
                if !ring.push(a, b) {
                    self.push_full(lane, ring, a, b);
                }
                return;
            }
        }
        self.push_slow(id == self.id, a, b);
    }

    /// Claims a lane for the calling thread's exclusive use through the returned
    /// [`ThreadLane`] (the shared lane when all are taken), without the thread-local cache.
    pub fn claim_lane(self: &Arc<Self>) -> ThreadLane {
        let lane = self.lanes[..SHARED]
            .iter()
            .position(|lane| {
                lane.claimed
                    .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            })
            .unwrap_or(SHARED);
        self.lanes[lane].ring.get_or_init(Ring::default);
        ThreadLane {
            markers: Arc::clone(self),
            lane,
            _not_send: PhantomData,
        }
    }

    /// Publishes one record into `lane`, which the calling thread owns (or the shared lane).
    #[inline(always)]
    fn push_lane(&self, lane: usize, a: u64, b: u64) {
        if lane < SHARED {
            if let Some(ring) = self.lanes[lane].ring.get() {
                if !ring.push(a, b) {
                    self.push_full(lane, ring, a, b);
                }
                return;
            }
        }
        let _writer = lock(&self.shared);
        let ring = self.lanes[SHARED].ring.get_or_init(Ring::default);
        if !ring.push(a, b) {
            self.push_full(SHARED, ring, a, b);
        }
    }

    /// The ring is full: the sampler has not drained it for a while (a very fast loop or a
    /// long sampling interval). Fold it here rather than lose markers or wait.
    #[cold]
    fn push_full(&self, lane: usize, ring: &Ring, a: u64, b: u64) {
        let mut f = lock(&self.fold);
        self.drain_lane(&mut f, lane);
        drop(f);
        if !ring.push(a, b) {
            lock(&self.fold).ignore(lane);
        }
    }

    #[cold]
    fn push_slow(&self, known: bool, a: u64, b: u64) {
        if !known {
            if let Some(lane) = self.claim() {
                if let Some(ring) = self.lanes[lane].ring.get() {
                    if !ring.push(a, b) {
                        self.push_full(lane, ring, a, b);
                    }
                    return;
                }
            }
        }
        let _writer = lock(&self.shared);
        let ring = self.lanes[SHARED].ring.get_or_init(Ring::default);
        if !ring.push(a, b) {
            self.push_full(SHARED, ring, a, b);
        }
    }

    /// Gives the calling thread a lane of its own, or `None` when all are taken.
    fn claim(&self) -> Option<usize> {
        let claimed = GUARD.try_with(|g| {
            let mut g = g.try_borrow_mut().ok()?;
            // Leaving another session: give its lane back first.
            *g = None;
            for (i, lane) in self.lanes[..SHARED].iter().enumerate() {
                if lane
                    .claimed
                    .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    lane.ring.get_or_init(Ring::default);
                    *g = Some(LaneGuard {
                        markers: self.me.clone(),
                        lane: i,
                    });
                    return Some(i);
                }
            }
            None
        });
        let lane = claimed.ok().flatten();
        // A thread without a lane of its own writes to the shared one from now on.
        let _ = CACHE.try_with(|c| c.set((self.id, lane.unwrap_or(SHARED))));
        lane
    }

    /// The thread that owned `lane` is gone: close its books and free the lane.
    fn release(&self, lane: usize) {
        if let Some(ring) = self.lanes[lane].ring.get() {
            let t = self.now_ns();
            if !ring.push(t, code(RESET, 0)) {
                self.push_full(lane, ring, t, code(RESET, 0));
            }
        }
        // Release: the next owner sees the ring's counters as this thread left them.
        self.lanes[lane].claimed.store(false, Ordering::Release);
    }

    /// The index of event kind `name`, registering it on first use.
    pub fn kind(&self, name: &str) -> u16 {
        let name = if name.is_empty() { "event" } else { name };
        let name = truncate(name, MAX_NAME_BYTES);
        let mut kinds = lock(&self.kinds);
        if let Some(i) = kinds.iter().position(|k| k == name) {
            return i as u16;
        }
        if kinds.len() < MAX_EVENT_KINDS {
            kinds.push(name.to_string());
            return (kinds.len() - 1) as u16;
        }
        MAX_EVENT_KINDS as u16
    }

    fn kind_name(&self, k: u16) -> String {
        lock(&self.kinds)
            .get(usize::from(k))
            .cloned()
            .unwrap_or_else(|| "other".into())
    }

    /// Marks an event of kind `name` now.
    pub fn event(&self, name: &str) {
        let t = self.now_ns();
        let k = self.kind(name);
        self.push(t, code(EVENT, k));
    }

    fn drain_lane(&self, f: &mut Folder, lane: usize) -> u64 {
        self.lanes[lane].ring.get().map_or(0, |ring| {
            ring.drain(|a, b| f.record(lane, a, b, |k| self.kind_name(k)))
        })
    }

    /// Folds every published record (the caller holds the fold lock); returns how many.
    pub fn drain_all(&self, f: &mut Folder) -> u64 {
        (0..self.lanes.len())
            .map(|lane| self.drain_lane(f, lane))
            .sum()
    }

    /// Heap bytes of the rings allocated so far.
    pub fn ring_bytes(&self) -> usize {
        self.lanes.iter().filter(|l| l.ring.get().is_some()).count() * RING_BYTES
    }
}

/// A lane owned by one thread, which marks through it without any thread-local lookup (the
/// C ABI keeps one per thread and session in its own cache). It keeps the markers alive;
/// dropping it closes the thread's open step and frees the lane. A thread should mark a
/// session either through its `ThreadLane` or through the session's methods, not both: each
/// has its own step sequence.
pub struct ThreadLane {
    markers: Arc<Markers>,
    lane: usize,
    /// Only the claiming thread writes the ring.
    _not_send: PhantomData<*const ()>,
}

impl std::fmt::Debug for ThreadLane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThreadLane")
            .field("lane", &self.lane)
            .finish_non_exhaustive()
    }
}

impl ThreadLane {
    /// Nanoseconds since the recording's origin.
    #[inline(always)]
    pub fn now_ns(&self) -> u64 {
        self.markers.now_ns()
    }

    /// Publishes one record.
    #[inline(always)]
    pub fn push(&self, a: u64, b: u64) {
        self.markers.push_lane(self.lane, a, b);
    }

    /// Marks an event of kind `name` now.
    pub fn event(&self, name: &str) {
        let t = self.now_ns();
        let k = self.markers.kind(name);
        self.push(t, code(EVENT, k));
    }
}

impl Drop for ThreadLane {
    fn drop(&mut self) {
        if self.lane < SHARED {
            self.markers.release(self.lane);
        }
    }
}

/// `s` cut to at most `max` bytes on a character boundary.
fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

impl SamplerHook for Markers {
    fn tick(&self, events: &mut Vec<Event>) {
        let mut f = lock(&self.fold);
        let empty = match self.drain_all(&mut f) {
            0 => self.empty_ticks.load(Ordering::Relaxed).saturating_add(1),
            _ => 0,
        };
        self.empty_ticks.store(empty, Ordering::Relaxed);
        f.take_events(events);
    }

    fn quiet(&self) -> bool {
        self.empty_ticks.load(Ordering::Relaxed) >= QUIET_AFTER_TICKS
    }

    fn windows(&self, times: &mut Vec<f64>) {
        lock(&self.fold).take_windows(times);
    }

    fn journal(&self, lines: &mut Vec<JournalLine>) {
        let names = lock(&self.names).clone();
        let mut f = lock(&self.fold);
        if let Some((first, mut data)) = f.journal_delta(&names) {
            data.memory_bytes += self.ring_bytes() as u64;
            data.memory_bound_bytes += RINGS_BOUND_BYTES as u64;
            lines.push(JournalLine::Steps { first, data });
        }
    }
}

#[cfg(test)]
mod tests;
