//! A block of rows as the row stores hold it: the one being filled in the dense form of
//! [`Block`], every full one frozen into the compact form of [`Frozen`].

use super::block::{self, Block};
use super::frozen::Frozen;

/// Bytes of frozen rows the ring, the first minutes and the windows may hold per row they
/// keep: one a value and eight a row (docs/report-format.md, "Memory bound of a recording").
/// Rows that encode smaller keep every row the row counts allow; larger ones keep fewer.
pub(super) fn budget_row(columns: usize) -> usize {
    8 + columns
}

/// Bytes a frozen block may take beyond its rows' [`budget_row`]: per stream (the times and
/// each column) its end (4 bytes), its mode and the few numbers that head it.
pub(super) fn budget_block(columns: usize) -> usize {
    8 * (columns + 1)
}

/// One block of a row store.
#[derive(Debug, Clone)]
pub(super) enum Chunk {
    /// Being filled.
    Open(Block),
    /// Full, or closed with its window, and encoded.
    Frozen(Frozen),
}

impl Chunk {
    pub(super) fn len(&self) -> usize {
        match self {
            Chunk::Open(b) => b.len(),
            Chunk::Frozen(f) => f.len(),
        }
    }

    /// Time of the last row (`-inf` when empty).
    pub(super) fn last_time(&self) -> f64 {
        match self {
            Chunk::Open(b) if b.len() > 0 => b.time(b.len() - 1),
            Chunk::Open(_) => f64::NEG_INFINITY,
            Chunk::Frozen(f) => f.last_time(),
        }
    }

    /// True when no row may be added: a frozen block, or an open one that holds its rows.
    pub(super) fn is_full(&self) -> bool {
        match self {
            Chunk::Open(b) => b.is_full(),
            Chunk::Frozen(_) => true,
        }
    }

    pub(super) fn times_into(&self, from: usize, out: &mut Vec<f64>) {
        match self {
            Chunk::Open(b) => b.times_into(from, out),
            Chunk::Frozen(f) => f.times_into(from, out),
        }
    }

    pub(super) fn column_into(&self, c: usize, from: usize, divs: &[u32], out: &mut Vec<f32>) {
        match self {
            Chunk::Open(b) => b.column_into(c, from, divs, out),
            Chunk::Frozen(f) => f.column_into(c, from, out),
        }
    }

    pub(super) fn heap_bytes(&self) -> usize {
        match self {
            Chunk::Open(b) => b.heap_bytes(),
            Chunk::Frozen(f) => f.heap_bytes(),
        }
    }

    /// Heap bytes when frozen, 0 when open.
    pub(super) fn frozen_bytes(&self) -> usize {
        match self {
            Chunk::Open(_) => 0,
            Chunk::Frozen(f) => f.heap_bytes(),
        }
    }

    /// Freezes an open block; hands back the dense block it was (for reuse), `None` when
    /// already frozen.
    pub(super) fn freeze(&mut self, columns: usize, divs: &[u32]) -> Option<Block> {
        let Chunk::Open(b) = self else { return None };
        let f = Frozen::encode(b, columns, divs);
        match std::mem::replace(self, Chunk::Frozen(f)) {
            Chunk::Open(b) => Some(b),
            Chunk::Frozen(_) => None,
        }
    }

    /// Calls `f(t, row)` for every row from `from` on, decoding a frozen block into `thawed`.
    pub(super) fn for_each_row(
        &self,
        divs: &[u32],
        thawed: &mut Thawed,
        f: &mut impl FnMut(f64, &[f32]),
    ) {
        match self {
            Chunk::Open(b) => {
                let mut row = Vec::new();
                for i in 0..b.len() {
                    b.row_into(i, divs, &mut row);
                    f(b.time(i), &row);
                }
            }
            Chunk::Frozen(z) => {
                thawed.fill(z);
                for i in 0..z.len() {
                    f(thawed.time(i), thawed.row(i));
                }
            }
        }
    }

    /// Upper bound of the heap bytes of one block of `rows` rows, open or frozen.
    pub(super) fn worst_case_bytes(columns: usize, rows: usize) -> usize {
        Block::worst_case_bytes(columns, rows).max(Frozen::worst_case_bytes(columns, rows))
    }
}

/// A frozen block decoded whole, to hand its rows back one by one; its buffers are reused.
#[derive(Debug, Clone, Default)]
pub(super) struct Thawed {
    t: Vec<f64>,
    rows: Vec<f32>,
    col: Vec<f32>,
    columns: usize,
}

impl Thawed {
    pub(super) fn fill(&mut self, f: &Frozen) {
        f.thaw_into(&mut self.t, &mut self.rows, &mut self.col);
        self.columns = self.rows.len() / f.len().max(1);
    }

    pub(super) fn time(&self, i: usize) -> f64 {
        self.t[i]
    }

    pub(super) fn row(&self, i: usize) -> &[f32] {
        &self.rows[i * self.columns..(i + 1) * self.columns]
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.t.capacity() * 8 + (self.rows.capacity() + self.col.capacity()) * 4
    }

    /// Upper bound of [`Self::heap_bytes`] for blocks of at most `rows` rows.
    pub(super) fn worst_case_bytes(columns: usize, rows: usize) -> usize {
        rows * (block::wide_row(columns) + 4)
    }
}
