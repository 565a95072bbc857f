//! Rows that left the recent ring: kept in windows where something happened, folded into
//! buckets elsewhere, in time order.
//!
//! Invariants (time-ordered pushes): pieces are in time order; a bucket never spans a kept
//! row, because a kept row closes the bucket being filled; buckets are merged only with a
//! neighbouring bucket, never across a window.

use super::block::CHUNK;
use super::bucket::Bucket;
use super::chunk::Chunk;
use super::reasons::{ReasonCols, ReasonCounts};
use super::rows::Rows;

/// One stretch of retired time.
#[derive(Debug, Clone)]
pub(super) enum Piece {
    /// Rows kept at full resolution, with the importance of the window that kept them.
    Window { rows: Rows, prio: u8 },
    /// Folded rows.
    Bucket(Bucket),
}

/// Limits of the retired part.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    pub(super) buckets: usize,
    pub(super) window_rows: usize,
    pub(super) windows: usize,
}

impl Limits {
    /// Blocks of a window hold at most this many rows.
    fn chunk(&self) -> usize {
        self.window_rows.clamp(1, CHUNK)
    }

    /// Frozen bytes the windows may hold: `window_rows` rows at [`super::chunk::budget_row`]
    /// bytes each. Rows that encode larger fold windows sooner; the row limit binds first
    /// otherwise.
    fn window_bytes(&self, columns: usize) -> usize {
        Rows::budget(columns, self.window_rows, self.blocks())
    }

    /// Most blocks the windows may hold at once: their rows' and one partial block each.
    fn blocks(&self) -> usize {
        self.window_rows.div_ceil(self.chunk()) + self.windows
    }
}

/// The retired part of one stream.
#[derive(Debug, Clone)]
pub(super) struct Retired {
    columns: usize,
    band_slot: Vec<Option<usize>>,
    banded: usize,
    limits: Limits,
    /// Per column, the values per unit of its narrow form (see [`super::block`]).
    divs: Vec<u32>,
    /// [`Limits::window_bytes`].
    window_budget: usize,
    /// Frozen bytes of the closed windows.
    closed_bytes: usize,
    pub(super) pieces: Vec<Piece>,
    pub(super) pending: Bucket,
    pub(super) rows_per_bucket: usize,
    buckets: usize,
    windows: usize,
    window_rows: usize,
    /// The last retired row was kept: the next kept row continues its window.
    in_window: bool,
    /// The columns buckets count by clock-event reason (a GPU stream's).
    reason_cols: ReasonCols,
}

impl Retired {
    pub(super) fn new(
        columns: usize,
        band_slot: Vec<Option<usize>>,
        limits: Limits,
        divs: &[u32],
    ) -> Retired {
        let banded = band_slot.iter().flatten().count();
        Retired {
            columns,
            banded,
            band_slot,
            limits,
            divs: divs.to_vec(),
            window_budget: limits.window_bytes(columns),
            closed_bytes: 0,
            pieces: Vec::new(),
            pending: Bucket::new(columns, banded),
            rows_per_bucket: 1,
            buckets: 0,
            windows: 0,
            window_rows: 0,
            in_window: false,
            reason_cols: None,
        }
    }

    /// Makes buckets count loaded rows by clock-event reason: `mask` is the clock-event
    /// column, `util` the utilization column (`recording::reasons`).
    pub(super) fn count_reasons(&mut self, mask: usize, util: usize) {
        self.reason_cols = Some((mask, util));
    }

    pub(super) fn reason_cols(&self) -> ReasonCols {
        self.reason_cols
    }

    /// Retires one row: kept in a window when `keep` gives its importance, folded otherwise.
    pub(super) fn retire(&mut self, t: f64, row: &[f32], keep: Option<u8>) {
        match keep {
            Some(prio) if self.limits.windows > 0 && self.limits.window_rows > 0 => {
                self.keep(t, row, prio)
            }
            _ => self.fold(t, row),
        }
    }

    fn fold(&mut self, t: f64, row: &[f32]) {
        if self.in_window {
            self.close_window();
            self.hold_window_limits();
        }
        self.pending.add(t, row, &self.band_slot);
        self.pending.count_reasons(row, self.reason_cols);
        if self.pending.rows as usize >= self.rows_per_bucket {
            self.close_bucket();
        }
    }

    fn keep(&mut self, t: f64, row: &[f32], prio: u8) {
        if self.pending.rows > 0 {
            self.close_bucket();
        }
        if !self.in_window {
            if self.pieces.capacity() == 0 {
                self.pieces.reserve_exact(self.max_pieces());
            }
            self.pieces.push(Piece::Window {
                rows: Rows::new(self.columns),
                prio,
            });
            self.windows += 1;
            self.in_window = true;
        }
        let budget = self.limits.window_rows;
        if let Some(Piece::Window { rows, prio: p }) = self.pieces.last_mut() {
            rows.push_bounded(t, row, budget, &self.divs);
            *p = (*p).max(prio);
        }
        self.window_rows += 1;
        self.hold_window_limits();
    }

    /// Folds windows while they hold more rows, more windows or more bytes than allowed.
    fn hold_window_limits(&mut self) {
        while self.window_rows > self.limits.window_rows
            || self.windows > self.limits.windows
            || self.window_bytes() > self.window_budget
        {
            if !self.drop_one_window() {
                break;
            }
        }
    }

    /// Frozen bytes of the rows kept in windows (the open window's block being filled is not
    /// counted: the bound has room for one).
    fn window_bytes(&self) -> usize {
        let open = match self.pieces.last() {
            Some(Piece::Window { rows, .. }) if self.in_window => rows.frozen_bytes(),
            _ => 0,
        };
        self.closed_bytes + open
    }

    /// Most pieces at once: every bucket, every window, and one bucket between each two.
    fn max_pieces(&self) -> usize {
        self.limits.buckets + 2 * self.limits.windows + 2
    }

    fn close_window(&mut self) {
        if let Some(Piece::Window { rows, .. }) = self.pieces.last_mut() {
            rows.shrink(&self.divs);
            self.closed_bytes += rows.frozen_bytes();
        }
        self.in_window = false;
    }

    fn close_bucket(&mut self) {
        if self.pieces.capacity() == 0 {
            self.pieces.reserve_exact(self.max_pieces());
        }
        let b = std::mem::replace(&mut self.pending, Bucket::new(self.columns, self.banded));
        self.pieces.push(Piece::Bucket(b));
        self.buckets += 1;
        if self.buckets >= self.limits.buckets {
            self.compact();
        }
    }

    /// Folds the least important window (oldest first among equals) into one bucket; false
    /// when there is none.
    fn drop_one_window(&mut self) -> bool {
        let victim = self
            .pieces
            .iter()
            .enumerate()
            .filter_map(|(i, p)| match p {
                Piece::Window { prio, .. } => Some((*prio, i)),
                Piece::Bucket(_) => None,
            })
            .min();
        let Some((_, i)) = victim else { return false };
        let mut b = Bucket::new(self.columns, self.banded);
        let open = i + 1 == self.pieces.len() && self.in_window;
        if let Piece::Window { rows, .. } = &self.pieces[i] {
            let reason_cols = self.reason_cols;
            rows.for_each_row(&self.divs, |t, row| {
                b.add(t, row, &self.band_slot);
                b.count_reasons(row, reason_cols);
            });
            self.window_rows -= rows.len();
            if !open {
                self.closed_bytes -= rows.frozen_bytes();
            }
        }
        if i + 1 == self.pieces.len() {
            self.in_window = false;
        }
        self.pieces[i] = Piece::Bucket(b);
        self.windows -= 1;
        self.buckets += 1;
        if self.buckets >= self.limits.buckets {
            self.compact();
        }
        true
    }

    /// Merges neighbouring buckets pairwise (never across a window) and doubles the width of
    /// the buckets still to be filled.
    fn compact(&mut self) {
        let old = std::mem::take(&mut self.pieces);
        let mut out: Vec<Piece> = Vec::with_capacity(self.max_pieces());
        let mut open = false;
        for p in old {
            match p {
                Piece::Bucket(b) => match out.last_mut() {
                    Some(Piece::Bucket(prev)) if open => {
                        prev.merge(&b);
                        open = false;
                    }
                    _ => {
                        out.push(Piece::Bucket(b));
                        open = true;
                    }
                },
                w => {
                    out.push(w);
                    open = false;
                }
            }
        }
        self.buckets = out.iter().filter(|p| matches!(p, Piece::Bucket(_))).count();
        self.pieces = out;
        // Saturating: windows that come and go often add buckets between compactions, so in a
        // long run with few buckets the width could otherwise double past `usize`.
        self.rows_per_bucket = self.rows_per_bucket.saturating_mul(2);
    }

    /// Appends a piece restored from a written report (see [`super::restore`]), in time
    /// order after every piece already here, then holds the limits.
    pub(super) fn push_restored(&mut self, piece: Piece) {
        if self.pending.rows > 0 {
            self.close_bucket();
        }
        if self.in_window {
            self.close_window();
        }
        if self.pieces.capacity() == 0 {
            self.pieces.reserve_exact(self.max_pieces());
        }
        match &piece {
            Piece::Window { rows, .. } => {
                self.windows += 1;
                self.window_rows += rows.len();
                self.closed_bytes += rows.frozen_bytes();
            }
            Piece::Bucket(_) => self.buckets += 1,
        }
        self.pieces.push(piece);
        self.hold_window_limits();
        if self.buckets >= self.limits.buckets {
            self.compact();
        }
    }

    /// Sets the width of the buckets still to be filled (restoring a written report).
    pub(super) fn set_rows_per_bucket(&mut self, rows: usize) {
        self.rows_per_bucket = rows.max(1);
    }

    pub(super) fn columns(&self) -> usize {
        self.columns
    }

    pub(super) fn band_slot(&self) -> &[Option<usize>] {
        &self.band_slot
    }

    /// Rows kept in windows, and of them the rows in frozen blocks and their bytes.
    pub(super) fn window_rows(&self) -> (usize, usize, usize) {
        let mut out = (0, 0, 0);
        for p in &self.pieces {
            if let Piece::Window { rows, .. } = p {
                out.0 += rows.len();
                out.1 += rows.frozen_rows();
                out.2 += rows.frozen_bytes();
            }
        }
        out
    }

    /// Heap bytes in use now.
    pub(super) fn heap_bytes(&self) -> usize {
        let pieces: usize = self
            .pieces
            .iter()
            .map(|p| match p {
                Piece::Window { rows, .. } => rows.heap_bytes(),
                Piece::Bucket(b) => b.heap_bytes(),
            })
            .sum();
        pieces
            + self.pieces.capacity() * std::mem::size_of::<Piece>()
            + self.pending.heap_bytes()
            + self.divs.capacity() * 4
    }

    /// Upper bound of [`Self::heap_bytes`]. Windows hold at most their byte budget of frozen
    /// rows after each row (closed windows are frozen and shrunk to their rows), one block
    /// being filled, and their block slots.
    pub(super) fn worst_case_bytes(&self) -> usize {
        let reasons = self
            .reason_cols
            .map_or(0, |_| std::mem::size_of::<ReasonCounts>());
        let bucket = Bucket::bytes_for(self.columns, self.banded) + reasons;
        let windows = if self.limits.windows > 0 && self.limits.window_rows > 0 {
            self.window_budget
                + Chunk::worst_case_bytes(self.columns, self.limits.chunk())
                + 2 * self.limits.blocks() * std::mem::size_of::<Chunk>()
        } else {
            0
        };
        // `limits.buckets` finished buckets plus the windows folded since the last compaction.
        let buckets = (self.limits.buckets + self.limits.windows + 1) * bucket;
        windows
            + buckets
            + self.max_pieces() * std::mem::size_of::<Piece>()
            + self.divs.capacity() * 4
    }
}
