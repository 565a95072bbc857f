//! Full-resolution rows: a growable run of blocks (the first minutes, a kept window) and a
//! ring of blocks (the most recent rows), in the dense form of [`Block`].

use std::collections::VecDeque;

use super::block::{self, Block, CHUNK};

/// Rows in time order, in blocks of at most [`CHUNK`] rows. Each block is made for the rows
/// still allowed (`cap` of [`Rows::push_bounded`]), so capacity never runs past what is kept
/// by more than one block's room.
#[derive(Debug, Clone, Default)]
pub(super) struct Rows {
    blocks: Vec<Block>,
    len: usize,
    columns: usize,
    /// Heap bytes of the blocks (not of their slots), kept up to date on every push.
    bytes: usize,
}

impl Rows {
    pub(super) fn new(columns: usize) -> Rows {
        Rows {
            blocks: Vec::new(),
            len: 0,
            columns,
            bytes: 0,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Appends a row, making a new block (of at most [`CHUNK`] rows, never past `cap` rows in
    /// all) when the last one is full.
    pub(super) fn push_bounded(&mut self, t: f64, row: &[f32], cap: usize, divs: &[u32]) {
        if self.blocks.last().is_none_or(Block::is_full) {
            let room = cap.saturating_sub(self.len).clamp(1, CHUNK);
            if self.blocks.len() == self.blocks.capacity() {
                // Doubling, exactly: the slots never exceed twice the blocks.
                self.blocks.reserve_exact(self.blocks.len().max(1));
            }
            let b = Block::new(self.columns, divs, room);
            self.bytes += b.heap_bytes();
            self.blocks.push(b);
        }
        if let Some(b) = self.blocks.last_mut() {
            self.bytes += b.push(t, row, divs);
            self.len += 1;
        }
    }

    /// Drops the room not used (a closed window keeps exactly its rows).
    pub(super) fn shrink(&mut self) {
        if let Some(b) = self.blocks.last_mut() {
            let before = b.heap_bytes();
            b.shrink();
            self.bytes = self.bytes - before + b.heap_bytes();
        }
        self.blocks.shrink_to_fit();
    }

    pub(super) fn times_into(&self, out: &mut Vec<f64>) {
        for b in &self.blocks {
            b.times_into(0, out);
        }
    }

    pub(super) fn column_into(&self, col: usize, divs: &[u32], out: &mut Vec<f32>) {
        for b in &self.blocks {
            b.column_into(col, 0, divs, out);
        }
    }

    /// Calls `f(t, row)` for every row in time order.
    pub(super) fn for_each_row(&self, divs: &[u32], mut f: impl FnMut(f64, &[f32])) {
        let mut row = Vec::with_capacity(self.columns);
        for b in &self.blocks {
            for i in 0..b.len() {
                b.row_into(i, divs, &mut row);
                f(b.time(i), &row);
            }
        }
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.bytes + self.blocks.capacity() * std::mem::size_of::<Block>()
    }

    /// Upper bound of [`Self::heap_bytes`] for `rows` rows pushed with a `cap` of `rows`.
    pub(super) fn worst_case_bytes(columns: usize, rows: usize) -> usize {
        let blocks = rows.div_ceil(CHUNK).max(1);
        rows * block::wide_row(columns)
            + blocks * Block::worst_case_bytes(columns, 0)
            + 2 * blocks * std::mem::size_of::<Block>()
    }
}

/// The most recent `cap` rows, within a byte budget. Rows are pushed into the newest block;
/// [`Ring::evict`] hands back the oldest rows while there are more than `cap` of them, or
/// while the blocks use more than the budget: enough for `cap` rows whose narrow columns
/// stayed narrow, so the budget binds only when values do not fit their narrow form.
#[derive(Debug, Clone)]
pub(super) struct Ring {
    blocks: VecDeque<Block>,
    /// Rows of the oldest block already handed back.
    front: usize,
    len: usize,
    cap: usize,
    chunk: usize,
    columns: usize,
    /// The last block handed back whole, kept to take the next rows instead of a new one.
    spare: Option<Block>,
    /// Heap bytes of the blocks and the spare (not of the deque's slots).
    bytes: usize,
    budget: usize,
}

impl Ring {
    pub(super) fn new(columns: usize, cap: usize, divs: &[u32]) -> Ring {
        let chunk = cap.clamp(1, CHUNK);
        // The oldest block may be partly handed back and the newest partly filled.
        let blocks = Self::max_blocks(cap, chunk);
        let budget = cap
            .saturating_add(2 * chunk)
            .saturating_mul(block::nominal_row(columns, divs))
            .saturating_add(blocks.saturating_mul(Block::nominal_bytes(columns, divs, 0)));
        Ring {
            blocks: VecDeque::new(),
            front: 0,
            len: 0,
            cap,
            chunk,
            columns,
            spare: None,
            bytes: 0,
            budget,
        }
    }

    fn max_blocks(cap: usize, chunk: usize) -> usize {
        cap.div_ceil(chunk).saturating_add(2)
    }

    pub(super) fn cap(&self) -> usize {
        self.cap
    }

    /// Appends a row; [`Ring::evict`] then hands back what no longer fits.
    pub(super) fn push(&mut self, t: f64, row: &[f32], divs: &[u32]) {
        if self.blocks.back().is_none_or(Block::is_full) {
            if self.blocks.capacity() == 0 {
                self.blocks
                    .reserve_exact(Self::max_blocks(self.cap, self.chunk).min(1 << 12));
            }
            let b = match self.spare.take() {
                // Already counted in `bytes`.
                Some(b) => b,
                None => {
                    let b = Block::new(self.columns, divs, self.chunk);
                    self.bytes += b.heap_bytes();
                    b
                }
            };
            self.blocks.push_back(b);
        }
        if let Some(b) = self.blocks.back_mut() {
            self.bytes += b.push(t, row, divs);
            self.len += 1;
        }
    }

    /// Hands back the oldest row (its values into `out`, its time returned) while the ring
    /// holds more than `cap` rows or its blocks more than the budget.
    pub(super) fn evict(&mut self, out: &mut Vec<f32>, divs: &[u32]) -> Option<f64> {
        let over = self.len > self.cap || (self.bytes > self.budget && self.blocks.len() > 1);
        if !over {
            return None;
        }
        let b = self.blocks.front()?;
        let t = b.time(self.front);
        b.row_into(self.front, divs, out);
        self.front += 1;
        self.len -= 1;
        if self.front >= b.len() {
            if let Some(mut b) = self.blocks.pop_front() {
                // Reusing the block spares an allocation and keeps warm memory; a widened one
                // is dropped, so that the spare never holds more than a new block.
                if self.spare.is_none() && b.is_full() && b.reset(divs) {
                    self.spare = Some(b);
                } else {
                    self.bytes -= b.heap_bytes();
                }
            }
            self.front = 0;
        }
        Some(t)
    }

    pub(super) fn times_into(&self, out: &mut Vec<f64>) {
        for (k, b) in self.blocks.iter().enumerate() {
            b.times_into(if k == 0 { self.front } else { 0 }, out);
        }
    }

    pub(super) fn column_into(&self, col: usize, divs: &[u32], out: &mut Vec<f32>) {
        for (k, b) in self.blocks.iter().enumerate() {
            b.column_into(col, if k == 0 { self.front } else { 0 }, divs, out);
        }
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.bytes + self.blocks.capacity() * std::mem::size_of::<Block>()
    }

    /// Upper bound of [`Self::heap_bytes`]: the budget, plus one block of wide rows (a
    /// single block is never handed back for the budget, and one push may open a block or
    /// widen the newest), plus the deque's slots (at most twice the blocks it may hold).
    pub(super) fn worst_case_bytes(&self) -> usize {
        if self.cap == 0 {
            return 0;
        }
        self.budget
            .saturating_add(Block::worst_case_bytes(self.columns, self.chunk))
            .saturating_add(
                2 * Self::max_blocks(self.cap, self.chunk)
                    .saturating_mul(std::mem::size_of::<Block>()),
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_keeps_the_latest_rows_in_order() {
        let mut r = Ring::new(1, 3, &[]);
        let mut ev = Vec::new();
        let mut out = Vec::new();
        for i in 0..5 {
            r.push(i as f64, &[i as f32 * 10.0], &[]);
            let old = r.evict(&mut ev, &[]);
            if i >= 3 {
                assert_eq!(old, Some((i - 3) as f64));
                assert_eq!(ev, vec![(i - 3) as f32 * 10.0]);
            } else {
                assert_eq!(old, None);
            }
            assert_eq!(r.evict(&mut ev, &[]), None, "one row out per row in");
        }
        r.times_into(&mut out);
        assert_eq!(out, vec![2.0, 3.0, 4.0]);
        let mut col = Vec::new();
        r.column_into(0, &[], &mut col);
        assert_eq!(col, vec![20.0, 30.0, 40.0]);
    }

    #[test]
    fn values_that_do_not_fit_narrow_shorten_the_ring_within_its_budget() {
        // 30 000 rows of one narrow column: nominally 10 B a row, 12 B once wide (times that
        // are not whole ticks, values not whole numbers).
        let divs = [1];
        let mut r = Ring::new(1, 30_000, &divs);
        let mut ev = Vec::new();
        let mut out_rows = 0;
        for i in 0..100_000u32 {
            // Half a percent: never narrow at one value per unit, so every block turns wide.
            let t = f64::from(i) + 0.000_01;
            r.push(t, &[(i % 100) as f32 + 0.5], &divs);
            while r.evict(&mut ev, &divs).is_some() {
                out_rows += 1;
            }
            assert!(r.heap_bytes() <= r.worst_case_bytes());
        }
        let mut t = Vec::new();
        r.times_into(&mut t);
        assert_eq!(
            t.len() + out_rows,
            100_000,
            "every row is kept or handed back"
        );
        assert!(t.len() < 30_000, "the budget binds before the row count");
        assert!(t.len() > 20_000, "{} rows: the budget is used", t.len());
        assert_eq!(*t.last().expect("rows"), 99_999.000_01);
        let mut col = Vec::new();
        r.column_into(0, &divs, &mut col);
        assert!(col.iter().all(|v| v.fract() == 0.5), "values unchanged");
    }
}
