//! A single-producer, single-consumer ring of marker records: the training thread publishes,
//! the folding side (the sampler thread, or the producer itself when the ring is full) reads.

use std::sync::atomic::{AtomicU64, Ordering};

/// Records one ring holds: 8,192 × 16 bytes = 128 KiB. At six markers per step that is
/// 1,365 steps between two sampler ticks (13,000 steps/s at the default 100 ms interval)
/// before a full ring makes the training thread fold the records itself.
pub const RING_SLOTS: usize = 8_192;
/// Heap bytes of one ring.
pub const RING_BYTES: usize = RING_SLOTS * std::mem::size_of::<Slot>();

const MASK: u64 = RING_SLOTS as u64 - 1;

/// One record: two words whose meaning [`super::fold`] defines.
#[derive(Debug, Default)]
struct Slot {
    a: AtomicU64,
    b: AtomicU64,
}

/// Keeps the producer's and the consumer's counters on separate cache lines, so publishing
/// a record never invalidates the line the other side is reading.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Padded(AtomicU64);

/// The ring. Exactly one thread may push at a time (the lane's owner), and one may drain
/// at a time (whoever holds the fold lock); they need no lock between them.
#[derive(Debug)]
pub struct Ring {
    slots: Box<[Slot]>,
    /// Records published (written by the producer only).
    head: Padded,
    /// The producer's last view of `tail`, so it reads the consumer's line only when the
    /// ring looks full.
    tail_seen: Padded,
    /// Records consumed (written by the consumer only).
    tail: Padded,
}

impl Default for Ring {
    fn default() -> Self {
        Ring {
            slots: (0..RING_SLOTS).map(|_| Slot::default()).collect(),
            head: Padded::default(),
            tail_seen: Padded::default(),
            tail: Padded::default(),
        }
    }
}

impl Ring {
    /// Publishes one record; false when the ring is full (nothing is written then).
    #[inline(always)]
    pub fn push(&self, a: u64, b: u64) -> bool {
        let head = self.head.0.load(Ordering::Relaxed);
        if head - self.tail_seen.0.load(Ordering::Relaxed) >= RING_SLOTS as u64 {
            // Acquire: the consumer has finished reading the slots it released.
            let tail = self.tail.0.load(Ordering::Acquire);
            self.tail_seen.0.store(tail, Ordering::Relaxed);
            if head - tail >= RING_SLOTS as u64 {
                return false;
            }
        }
        let slot = &self.slots[(head & MASK) as usize];
        slot.a.store(a, Ordering::Relaxed);
        slot.b.store(b, Ordering::Relaxed);
        // Release: the slot's words are visible to a consumer that sees the new head.
        self.head.0.store(head + 1, Ordering::Release);
        true
    }

    /// Hands every published record to `f`, oldest first, and frees their slots; returns
    /// how many there were.
    pub fn drain(&self, mut f: impl FnMut(u64, u64)) -> u64 {
        let tail = self.tail.0.load(Ordering::Relaxed);
        let head = self.head.0.load(Ordering::Acquire);
        for i in tail..head {
            let slot = &self.slots[(i & MASK) as usize];
            f(
                slot.a.load(Ordering::Relaxed),
                slot.b.load(Ordering::Relaxed),
            );
        }
        self.tail.0.store(head, Ordering::Release);
        head - tail
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_come_out_in_order_and_a_full_ring_refuses() {
        let r = Ring::default();
        for i in 0..RING_SLOTS as u64 {
            assert!(r.push(i, i * 2));
        }
        assert!(!r.push(0, 0), "full");
        let mut got = Vec::new();
        r.drain(|a, b| got.push((a, b)));
        assert_eq!(got.len(), RING_SLOTS);
        assert!(got
            .iter()
            .enumerate()
            .all(|(i, (a, b))| *a == i as u64 && *b == 2 * *a));
        assert!(r.push(7, 8), "drained slots are free again");
    }

    #[test]
    fn a_consumer_thread_sees_every_record_once() {
        let r = Ring::default();
        let n = 200_000u64;
        let mut seen = Vec::with_capacity(n as usize);
        std::thread::scope(|s| {
            s.spawn(|| {
                for i in 0..n {
                    while !r.push(i, !i) {
                        std::thread::yield_now();
                    }
                }
            });
            while (seen.len() as u64) < n {
                r.drain(|a, b| {
                    assert_eq!(b, !a);
                    seen.push(a);
                });
            }
        });
        assert!(seen.iter().enumerate().all(|(i, a)| *a == i as u64));
    }
}
