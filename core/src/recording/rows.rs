//! Full-resolution rows: a growable run of blocks (the first minutes, a kept window) and a
//! ring of blocks (the most recent rows). The block being filled is in the dense form of
//! [`Block`]; every full one is frozen into the compact form of [`super::frozen`], and the
//! byte budgets count those frozen bytes.

use std::collections::VecDeque;

use super::block::{Block, CHUNK};
use super::chunk::{budget_block, budget_row, Chunk, Thawed};

/// Rows in time order, in blocks of at most [`CHUNK`] rows. Each block is made for the rows
/// still allowed (`cap` of [`Rows::push_bounded`]), so capacity never runs past what is kept
/// by more than one block's room; a block is frozen when full and when the store is shrunk.
#[derive(Debug, Clone, Default)]
pub(super) struct Rows {
    blocks: Vec<Chunk>,
    len: usize,
    columns: usize,
    /// Heap bytes of the frozen blocks.
    frozen: usize,
}

impl Rows {
    pub(super) fn new(columns: usize) -> Rows {
        Rows {
            blocks: Vec::new(),
            len: 0,
            columns,
            frozen: 0,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Heap bytes of the frozen blocks: what byte budgets count.
    pub(super) fn frozen_bytes(&self) -> usize {
        self.frozen
    }

    /// Rows in frozen blocks.
    pub(super) fn frozen_rows(&self) -> usize {
        self.blocks
            .iter()
            .filter(|c| c.frozen_bytes() > 0)
            .map(Chunk::len)
            .sum()
    }

    /// Appends a row, making a new block (of at most [`CHUNK`] rows, never past `cap` rows in
    /// all) when the last one is full, and freezing the block it fills.
    pub(super) fn push_bounded(&mut self, t: f64, row: &[f32], cap: usize, divs: &[u32]) {
        if self.blocks.last().is_none_or(Chunk::is_full) {
            let room = cap.saturating_sub(self.len).clamp(1, CHUNK);
            if self.blocks.len() == self.blocks.capacity() {
                // Doubling, exactly: the slots never exceed twice the blocks.
                self.blocks.reserve_exact(self.blocks.len().max(1));
            }
            self.blocks
                .push(Chunk::Open(Block::new(self.columns, divs, room)));
        }
        if let Some(Chunk::Open(b)) = self.blocks.last_mut() {
            b.push(t, row, divs);
            self.len += 1;
            if b.is_full() {
                self.freeze_last(divs);
            }
        }
    }

    fn freeze_last(&mut self, divs: &[u32]) {
        if let Some(c) = self.blocks.last_mut() {
            if c.freeze(self.columns, divs).is_some() {
                self.frozen += c.frozen_bytes();
            }
        }
    }

    /// Freezes the block being filled and drops the room not used (a closed window keeps
    /// exactly its rows).
    pub(super) fn shrink(&mut self, divs: &[u32]) {
        self.freeze_last(divs);
        self.blocks.shrink_to_fit();
    }

    pub(super) fn times_into(&self, out: &mut Vec<f64>) {
        for b in &self.blocks {
            b.times_into(0, out);
        }
    }

    /// The blocks in time order, each with its first row still held (always 0 here).
    pub(super) fn chunks(&self) -> impl Iterator<Item = (&Chunk, usize)> {
        self.blocks.iter().map(|c| (c, 0))
    }

    pub(super) fn column_into(&self, col: usize, divs: &[u32], out: &mut Vec<f32>) {
        for b in &self.blocks {
            b.column_into(col, 0, divs, out);
        }
    }

    /// Calls `f(t, row)` for every row in time order.
    pub(super) fn for_each_row(&self, divs: &[u32], mut f: impl FnMut(f64, &[f32])) {
        let mut thawed = Thawed::default();
        for b in &self.blocks {
            b.for_each_row(divs, &mut thawed, &mut f);
        }
    }

    pub(super) fn heap_bytes(&self) -> usize {
        let open = match self.blocks.last() {
            Some(c @ Chunk::Open(_)) => c.heap_bytes(),
            _ => 0,
        };
        self.frozen + open + self.blocks.capacity() * std::mem::size_of::<Chunk>()
    }

    /// Upper bound of [`Self::heap_bytes`] for at most `rows` rows pushed with a `cap` of
    /// `rows` while the frozen bytes stay within `budget` (checked before each push): the
    /// budget, one more block (the one being filled, or the one whose freezing passed the
    /// budget), and the slots.
    pub(super) fn worst_case_bytes(columns: usize, rows: usize, budget: usize) -> usize {
        let blocks = rows.div_ceil(CHUNK).max(1);
        budget
            + Chunk::worst_case_bytes(columns, rows.clamp(1, CHUNK))
            + 2 * blocks * std::mem::size_of::<Chunk>()
    }

    /// The byte budget of `rows` rows of `columns` columns in at most `blocks` blocks
    /// ([`budget_row`] a row, [`budget_block`] a block).
    pub(super) fn budget(columns: usize, rows: usize, blocks: usize) -> usize {
        rows.saturating_mul(budget_row(columns))
            .saturating_add(blocks.saturating_mul(budget_block(columns)))
    }
}

/// The most recent `cap` rows, within a byte budget. Rows are pushed into the newest block,
/// frozen when full; [`Ring::evict`] hands back the oldest rows while there are more than
/// `cap` of them, or while the frozen blocks use more than the budget ([`budget_row`] bytes a
/// row), so the budget binds only for rows that do not encode small.
#[derive(Debug, Clone)]
pub(super) struct Ring {
    blocks: VecDeque<Chunk>,
    /// Rows of the oldest block already handed back.
    front: usize,
    len: usize,
    cap: usize,
    chunk: usize,
    columns: usize,
    /// The dense block of the last block frozen, kept to take the next rows.
    spare: Option<Block>,
    /// Heap bytes of the frozen blocks.
    frozen: usize,
    budget: usize,
    /// The oldest block decoded, while its rows are handed back.
    thawed: Thawed,
    thawed_ok: bool,
}

impl Ring {
    pub(super) fn new(columns: usize, cap: usize, _divs: &[u32]) -> Ring {
        let chunk = cap.clamp(1, CHUNK);
        Ring {
            blocks: VecDeque::new(),
            front: 0,
            len: 0,
            cap,
            chunk,
            columns,
            spare: None,
            frozen: 0,
            // At least one block of any rows: the bound holds room for one frozen block
            // beside the budget anyway, so a smaller budget (a ring of a few hundred rows)
            // would save nothing and only keep fewer rows.
            budget: Rows::budget(columns, cap, Self::max_blocks(cap, chunk))
                .max(Chunk::worst_case_bytes(columns, chunk)),
            thawed: Thawed::default(),
            thawed_ok: false,
        }
    }

    fn max_blocks(cap: usize, chunk: usize) -> usize {
        cap.div_ceil(chunk).saturating_add(2)
    }

    pub(super) fn cap(&self) -> usize {
        self.cap
    }

    /// Rows held now.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Rows in frozen blocks (the oldest block's rows handed back included) and their bytes.
    pub(super) fn frozen(&self) -> (usize, usize) {
        let rows = self
            .blocks
            .iter()
            .filter(|c| c.frozen_bytes() > 0)
            .map(Chunk::len)
            .sum();
        (rows, self.frozen)
    }

    /// Appends a row; [`Ring::evict`] then hands back what no longer fits.
    pub(super) fn push(&mut self, t: f64, row: &[f32], divs: &[u32]) {
        if self.blocks.back().is_none_or(Chunk::is_full) {
            if self.blocks.capacity() == 0 {
                self.blocks
                    .reserve_exact(Self::max_blocks(self.cap, self.chunk).min(1 << 12));
            }
            let b = self
                .spare
                .take()
                .unwrap_or_else(|| Block::new(self.columns, divs, self.chunk));
            self.blocks.push_back(Chunk::Open(b));
        }
        let Some(c) = self.blocks.back_mut() else {
            return;
        };
        if let Chunk::Open(b) = c {
            b.push(t, row, divs);
            self.len += 1;
            if b.is_full() {
                if let Some(mut b) = c.freeze(self.columns, divs) {
                    // Reusing the dense block spares an allocation and keeps warm memory; a
                    // widened one is dropped, so that the spare never holds more than a new
                    // block.
                    if b.reset(divs) {
                        self.spare = Some(b);
                    }
                }
                self.frozen += c.frozen_bytes();
            }
        }
    }

    /// Hands back the oldest row (its values into `out`, its time returned) while the ring
    /// holds more than `cap` rows or its frozen blocks more than the budget.
    pub(super) fn evict(&mut self, out: &mut Vec<f32>, divs: &[u32]) -> Option<f64> {
        let over = self.len > self.cap || (self.frozen > self.budget && self.blocks.len() > 1);
        if !over {
            return None;
        }
        let c = self.blocks.front()?;
        let t = match c {
            Chunk::Open(b) => {
                b.row_into(self.front, divs, out);
                b.time(self.front)
            }
            Chunk::Frozen(f) => {
                if !self.thawed_ok {
                    self.thawed.fill(f);
                    self.thawed_ok = true;
                }
                out.clear();
                out.extend_from_slice(self.thawed.row(self.front));
                self.thawed.time(self.front)
            }
        };
        self.front += 1;
        self.len -= 1;
        if self.front >= c.len() {
            if let Some(c) = self.blocks.pop_front() {
                self.frozen -= c.frozen_bytes();
            }
            self.front = 0;
            self.thawed_ok = false;
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

    /// The blocks in time order, each with its first row still held.
    pub(super) fn chunks(&self) -> impl Iterator<Item = (&Chunk, usize)> {
        self.blocks
            .iter()
            .enumerate()
            .map(|(k, c)| (c, if k == 0 { self.front } else { 0 }))
    }

    pub(super) fn heap_bytes(&self) -> usize {
        let open = match self.blocks.back() {
            Some(c @ Chunk::Open(_)) => c.heap_bytes(),
            _ => 0,
        };
        self.frozen
            + open
            + self.spare.as_ref().map_or(0, Block::heap_bytes)
            + self.thawed.heap_bytes()
            + self.blocks.capacity() * std::mem::size_of::<Chunk>()
    }

    /// Upper bound of [`Self::heap_bytes`]: the budget (or one frozen block, which is never
    /// handed back for the budget when alone), one dense block (the one being filled, or the
    /// spare), the decoded oldest block, and the deque's slots (at most twice the blocks it
    /// may hold).
    pub(super) fn worst_case_bytes(&self) -> usize {
        if self.cap == 0 {
            return 0;
        }
        let block = Chunk::worst_case_bytes(self.columns, self.chunk);
        self.budget
            .max(block)
            .saturating_add(block)
            .saturating_add(Thawed::worst_case_bytes(self.columns, self.chunk))
            .saturating_add(
                2 * Self::max_blocks(self.cap, self.chunk)
                    .saturating_mul(std::mem::size_of::<Chunk>()),
            )
    }
}

#[cfg(test)]
#[path = "rows_tests.rs"]
mod tests;
