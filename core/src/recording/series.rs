//! Bounded columnar storage for one stream of samples (one GPU, or the host).
//!
//! What is kept (`docs/report-format.md`, "Retention"):
//! - the first [`Retention::head_rows`] rows (the first minutes) at full resolution;
//! - the most recent [`Retention::recent_rows`] rows (the last hour) in a ring;
//! - rows leaving the ring inside a marked window ([`SeriesBuf::mark`]: around an event or a
//!   fault) at full resolution, up to [`Retention::window_rows`] rows in all; past that the
//!   least important window, oldest first, is folded into one bucket;
//! - every other row folded into buckets (min, max, mean, count, and for utilization-like
//!   columns the count per band of [`BAND_EDGES`]); when [`Retention::buckets`] buckets are
//!   full, neighbouring buckets are merged pairwise and the width of new buckets doubles.
//!
//! A bucket never spans a kept row. Memory is bounded for any run length
//! ([`SeriesBuf::worst_case_bytes`]). Rows are filled in the exact dense form of
//! [`super::block`] and frozen, a full block at a time, into the exact compact form of
//! [`super::frozen`]; the first rows, the ring and the windows have a budget of frozen bytes
//! beside their row count that only data which does not compress reaches.

use super::block::div_of;
use super::retired::{Limits, Piece, Retired};
use super::rows::{Ring, Rows};

pub use super::bucket::{band_of, BAND_EDGES};

/// Rows kept from the start of a stream: five minutes at the default 100 ms interval.
pub const HEAD_ROWS_DEFAULT: usize = 3_000;

/// Most recent rows kept: one hour at the default 100 ms interval.
pub const RECENT_ROWS_DEFAULT: usize = 36_000;

/// Continuous full-resolution rows per stream, first minutes plus last hour, within byte
/// budgets of 32 B a GPU row once frozen: 3 000 × 32 B ≈ 0.1 MB and 36 000 × 32 B ≈ 1.15 MB,
/// plus a dense block or two of 0.11 MB each (docs/report-format.md, "Memory bound of a
/// recording"). What a driver gives encodes in 9 to 17 B a row, so every row is kept.
pub const FULL_ROWS_DEFAULT: usize = HEAD_ROWS_DEFAULT + RECENT_ROWS_DEFAULT;

/// Rows kept in windows older than the last hour: 24 windows of one minute at 100 ms. Worst
/// case for one GPU: the byte budget 14 400 × 32 B + 79 blocks × 200 B ≈ 0.48 MB, one dense
/// block and the block slots ≈ 0.13 MB.
pub const WINDOW_ROWS_DEFAULT: usize = 14_400;

/// Most windows kept at once.
pub const MAX_WINDOWS: usize = 64;

/// Default number of buckets per stream. Worst case for one GPU (24 columns, 6 banded):
/// (4 096 + 65) × (24 × 20 + 6 × 28 + 36) B ≈ 2.8 MB.
pub const COARSE_BUCKETS_DEFAULT: usize = 4_096;

/// Seconds kept at full resolution before and after a marked instant.
pub const WINDOW_BEFORE_S: f64 = 30.0;
/// See [`WINDOW_BEFORE_S`].
pub const WINDOW_AFTER_S: f64 = 30.0;

/// Marks waiting for their rows to leave the ring; past this the least important, oldest
/// first, is forgotten.
const MAX_MARKS: usize = 64;

/// How much of a stream is kept at full resolution, in rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Rows kept from the start.
    pub head_rows: usize,
    /// Most recent rows kept.
    pub recent_rows: usize,
    /// Rows kept in marked windows older than the recent rows.
    pub window_rows: usize,
    /// Most buckets (rounded up to an even number, at least 2).
    pub buckets: usize,
}

impl Retention {
    /// `full_rows` continuous rows (one thirteenth at the start, the rest the most recent,
    /// as the defaults split 39 000 into 3 000 and 36 000), window rows up to
    /// [`WINDOW_ROWS_DEFAULT`] and `buckets` buckets.
    pub fn from_full_rows(full_rows: usize, buckets: usize) -> Retention {
        let head_rows = (full_rows / 13).min(HEAD_ROWS_DEFAULT);
        Retention {
            head_rows,
            recent_rows: full_rows - head_rows,
            window_rows: full_rows.min(WINDOW_ROWS_DEFAULT),
            buckets,
        }
    }
}

impl Default for Retention {
    fn default() -> Self {
        Retention::from_full_rows(FULL_ROWS_DEFAULT, COARSE_BUCKETS_DEFAULT)
    }
}

/// A time span whose rows are kept when they leave the ring.
#[derive(Debug, Clone, Copy)]
struct Mark {
    t0: f64,
    t1: f64,
    prio: u8,
}

/// Columnar, bounded storage of `(t, row)` samples. `NaN` marks a missing value.
#[derive(Debug, Clone)]
pub struct SeriesBuf {
    pub(super) columns: usize,
    pub(super) band_slot: Vec<Option<usize>>,
    /// Per column, the values per unit of its narrow form; empty: all wide.
    pub(super) divs: Vec<u32>,
    pub(super) retention: Retention,
    pub(super) head: Rows,
    /// Frozen bytes the first rows may take ([`Rows::budget`]); past them, or past
    /// [`Retention::head_rows`], the head is done for good.
    head_budget: usize,
    head_done: bool,
    pub(super) ring: Ring,
    pub(super) retired: Retired,
    marks: Vec<Mark>,
    scratch: Vec<f32>,
    pub(super) total_rows: u64,
}

impl SeriesBuf {
    /// A buffer with the default retention and no banded column.
    pub fn new(columns: usize) -> Self {
        Self::with_retention(columns, Retention::default(), &[])
    }

    /// A buffer keeping `full_rows` continuous rows at full resolution (see
    /// [`Retention::from_full_rows`]) and at most `coarse_buckets` buckets.
    pub fn with_capacity(columns: usize, full_rows: usize, coarse_buckets: usize) -> Self {
        Self::with_retention(
            columns,
            Retention::from_full_rows(full_rows, coarse_buckets),
            &[],
        )
    }

    /// A buffer keeping what `retention` says; the columns in `banded` (utilization-like,
    /// in %) also count their folded values per band of [`BAND_EDGES`].
    pub fn with_retention(columns: usize, retention: Retention, banded: &[usize]) -> Self {
        Self::with_precision(columns, retention, banded, &[])
    }

    /// [`Self::with_retention`], column `i` held in 16 bits at `divs[i]` values per unit
    /// when a value reads back exactly from that form (0: 32 bits; see
    /// [`crate::recording::narrow_gpu_divs`]). Nothing read back differs; values that need
    /// the wide form make the ring and the windows keep fewer rows within the bound.
    pub fn with_precision(
        columns: usize,
        retention: Retention,
        banded: &[usize],
        divs: &[u32],
    ) -> Self {
        let divs: Vec<u32> = if divs.iter().any(|d| *d > 0) {
            (0..columns).map(|i| div_of(divs, i)).collect()
        } else {
            Vec::new()
        };
        let buckets = retention.buckets.max(2).next_multiple_of(2);
        let retention = Retention {
            buckets,
            ..retention
        };
        let mut band_slot = vec![None; columns];
        let mut n = 0;
        for i in banded.iter().copied().filter(|i| *i < columns) {
            if band_slot[i].is_none() {
                band_slot[i] = Some(n);
                n += 1;
            }
        }
        // Compaction must at least halve the buckets: each window can leave one unmerged.
        let limits = Limits {
            buckets,
            window_rows: retention.window_rows,
            windows: MAX_WINDOWS.min((buckets / 4).saturating_sub(1)),
        };
        SeriesBuf {
            columns,
            retired: Retired::new(columns, band_slot.clone(), limits, &divs),
            band_slot,
            retention,
            head: Rows::new(columns),
            head_budget: Rows::budget(
                columns,
                retention.head_rows,
                retention.head_rows.div_ceil(super::block::CHUNK),
            ),
            head_done: false,
            ring: Ring::new(columns, retention.recent_rows, &divs),
            divs,
            marks: Vec::new(),
            scratch: Vec::with_capacity(columns),
            total_rows: 0,
        }
    }

    /// Number of columns in a row.
    pub fn columns(&self) -> usize {
        self.columns
    }

    /// What this buffer keeps.
    pub fn retention(&self) -> Retention {
        self.retention
    }

    /// Continuous rows kept at full resolution: the first ones plus the most recent ones.
    pub fn full_capacity(&self) -> usize {
        self.retention.head_rows + self.retention.recent_rows
    }

    /// Upper bound of the heap bytes this buffer can ever use.
    pub fn worst_case_bytes(&self) -> usize {
        let head = if self.retention.head_rows > 0 {
            Rows::worst_case_bytes(self.columns, self.retention.head_rows, self.head_budget)
        } else {
            0
        };
        head + self.ring.worst_case_bytes()
            + self.retired.worst_case_bytes()
            + MAX_MARKS * std::mem::size_of::<Mark>()
            + self.columns * 4
            + self.divs.capacity() * 4
    }

    /// Heap bytes in use now (capacity of the vectors).
    pub fn heap_bytes(&self) -> usize {
        self.head.heap_bytes()
            + self.ring.heap_bytes()
            + self.retired.heap_bytes()
            + self.marks.capacity() * std::mem::size_of::<Mark>()
            + self.scratch.capacity() * 4
            + self.divs.capacity() * 4
    }

    /// Total rows ever pushed.
    pub fn total_rows(&self) -> u64 {
        self.total_rows
    }

    /// Makes the buckets count their loaded rows by clock-event reason (`mask`: the
    /// clock-event column, `util`: the utilization column), as a GPU stream's do.
    pub fn count_reasons(&mut self, mask: usize, util: usize) {
        self.retired.count_reasons(mask, util);
    }

    /// Keeps the rows from `t0` to `t1` seconds at full resolution when they leave the recent
    /// ring; `prio` orders which windows are folded first when the window budget is full
    /// (lowest first, then oldest). Rows already retired are not brought back.
    pub fn mark(&mut self, t0: f64, t1: f64, prio: u8) {
        if let Some(m) = self
            .marks
            .iter_mut()
            .find(|m| t0 <= m.t1 && m.t0 <= t1 && m.prio == prio)
        {
            m.t0 = m.t0.min(t0);
            m.t1 = m.t1.max(t1);
            return;
        }
        if self.marks.len() >= MAX_MARKS {
            if let Some((_, i)) = self
                .marks
                .iter()
                .enumerate()
                .map(|(i, m)| (m.prio, i))
                .min()
            {
                self.marks.remove(i);
            }
        }
        if self.marks.capacity() == 0 {
            self.marks.reserve_exact(MAX_MARKS);
        }
        self.marks.push(Mark { t0, t1, prio });
    }

    /// Appends one row taken at `t` seconds. Rows shorter than [`Self::columns`] are padded
    /// with `NaN`; extra values are ignored.
    pub fn push(&mut self, t: f64, row: &[f32]) {
        self.total_rows += 1;
        if !self.head_done {
            if self.head.len() < self.retention.head_rows
                && self.head.frozen_bytes() <= self.head_budget
            {
                self.head
                    .push_bounded(t, row, self.retention.head_rows, &self.divs);
                return;
            }
            self.head_done = true;
        }
        let mut evicted = std::mem::take(&mut self.scratch);
        if self.ring.cap() == 0 {
            evicted.clear();
            evicted.extend((0..self.columns).map(|i| row.get(i).copied().unwrap_or(f32::NAN)));
            self.retire(t, &evicted);
        } else {
            self.ring.push(t, row, &self.divs);
            while let Some(old_t) = self.ring.evict(&mut evicted, &self.divs) {
                self.retire(old_t, &evicted);
            }
        }
        self.scratch = evicted;
    }

    /// Hands a row that left the ring to the retired part, kept if a mark covers it.
    fn retire(&mut self, old_t: f64, row: &[f32]) {
        self.marks.retain(|m| m.t1 >= old_t);
        let keep = self
            .marks
            .iter()
            .filter(|m| m.t0 <= old_t)
            .map(|m| m.prio)
            .max();
        self.retired.retire(old_t, row, keep);
    }

    /// Sample times of the rows kept at full resolution, in time order, seconds since start.
    pub fn times(&self) -> Vec<f64> {
        let mut out = Vec::new();
        self.head.times_into(&mut out);
        for p in &self.retired.pieces {
            if let Piece::Window { rows, .. } = p {
                rows.times_into(&mut out);
            }
        }
        self.ring.times_into(&mut out);
        out
    }

    /// Full-resolution values of one column, one per entry of [`Self::times`].
    pub fn column(&self, i: usize) -> Vec<f32> {
        let mut out = Vec::new();
        self.head.column_into(i, &self.divs, &mut out);
        for p in &self.retired.pieces {
            if let Piece::Window { rows, .. } = p {
                rows.column_into(i, &self.divs, &mut out);
            }
        }
        self.ring.column_into(i, &self.divs, &mut out);
        out
    }
}
