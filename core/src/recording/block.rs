//! A block of full-resolution rows in a dense form: times as whole 0.1 ms ticks (`u32`
//! offsets from the block's first tick) and, for columns that NVML gives as whole numbers,
//! values as `u16`; everything else as before (`f64` seconds, `f32` values).
//!
//! The dense form is exact: a value is stored narrow only when reading it back gives the very
//! same `f32` (bit for bit), and a time only when it is a whole tick that reads back the same
//! `f64`. The first value or time that does not fit turns that column (or the times) of this
//! block into the wide form, the rows already in it converted without loss. So every reader
//! (the report, the signals, the crash journal) sees what was pushed, and the compact report
//! keeps what it kept (docs/report-format.md, "Memory bound of a recording"). Every `NaN` is
//! the missing value and reads back as [`f32::NAN`].

use crate::metric::GpuMetric;
use crate::report::TIME_DIV;

/// Most rows in one block: small enough that the unused room of a block is a small share of
/// a ring or a window, large enough that per-block overhead is negligible.
pub(super) const CHUNK: usize = 1_024;

/// Stored for a missing value in a narrow column.
const MISSING: u16 = u16::MAX;

/// Ticks per second of the dense times (the report's `times` precision).
const TICKS: f64 = TIME_DIV as f64;

/// Integers an `f64` holds exactly.
const MAX_INT: f64 = 9_007_199_254_740_992.0;

/// Per GPU column, the values per unit at which it may be stored in 16 bits: 1 for the metrics
/// NVML gives as whole numbers below 65 535 (percentages, °C, MHz, P-state, clock-event bits,
/// PCIe generation and width), 0 (never) for the others.
pub fn narrow_gpu_divs() -> Vec<u32> {
    GpuMetric::ALL
        .iter()
        .map(|m| u32::from(m.per_unit() == 1))
        .collect()
}

/// The value per unit of column `i` (0: the column is always wide).
pub(super) fn div_of(divs: &[u32], i: usize) -> u32 {
    divs.get(i).copied().unwrap_or(0)
}

/// Bytes of one row in the wide form: an `f64` time and an `f32` per column.
pub(super) fn wide_row(columns: usize) -> usize {
    8 + 4 * columns
}

/// Bytes of one row whose narrow columns hold whole numbers in range (the time counted wide,
/// so that times which are not whole ticks never shorten what is kept).
pub(super) fn nominal_row(columns: usize, divs: &[u32]) -> usize {
    8 + (0..columns)
        .map(|i| if div_of(divs, i) > 0 { 2 } else { 4 })
        .sum::<usize>()
}

fn narrow(v: f32, div: u32) -> Option<u16> {
    if v.is_nan() {
        return Some(MISSING);
    }
    let k = (f64::from(v) * f64::from(div)).round();
    if !(0.0..f64::from(MISSING)).contains(&k) {
        return None;
    }
    let k = k as u16;
    (widen(k, div).to_bits() == v.to_bits()).then_some(k)
}

fn widen(k: u16, div: u32) -> f32 {
    if k == MISSING {
        f32::NAN
    } else {
        (f64::from(k) / f64::from(div)) as f32
    }
}

/// `t` as whole ticks, when it is one and reads back as the same `f64`.
fn tick(t: f64) -> Option<i64> {
    let k = (t * TICKS).round();
    (k.abs() <= MAX_INT && (k / TICKS).to_bits() == t.to_bits()).then_some(k as i64)
}

#[derive(Debug, Clone)]
enum Col {
    Narrow(Vec<u16>),
    Wide(Vec<f32>),
}

#[derive(Debug, Clone)]
enum Times {
    Ticks { base: i64, off: Vec<u32> },
    Secs(Vec<f64>),
}

/// Up to a fixed number of rows, columnar, each column (and the times) narrow or wide.
#[derive(Debug, Clone)]
pub(super) struct Block {
    t: Times,
    cols: Vec<Col>,
    cap: usize,
}

impl Block {
    /// An empty block with room for exactly `cap` rows, its columns narrow where `divs` allows.
    pub(super) fn new(columns: usize, divs: &[u32], cap: usize) -> Block {
        let cols = (0..columns)
            .map(|i| {
                if div_of(divs, i) > 0 {
                    Col::Narrow(Vec::with_capacity(cap))
                } else {
                    Col::Wide(Vec::with_capacity(cap))
                }
            })
            .collect();
        Block {
            t: Times::Ticks {
                base: 0,
                off: Vec::with_capacity(cap),
            },
            cols,
            cap,
        }
    }

    pub(super) fn len(&self) -> usize {
        match &self.t {
            Times::Ticks { off, .. } => off.len(),
            Times::Secs(s) => s.len(),
        }
    }

    /// True when the block holds the rows it was made for.
    pub(super) fn is_full(&self) -> bool {
        self.len() >= self.cap
    }

    /// Appends a row (missing values are `NaN`, short rows padded with it). Returns true when
    /// a column or the times had to turn wide, so the block's size changed.
    pub(super) fn push(&mut self, t: f64, row: &[f32], divs: &[u32]) -> bool {
        let mut widened = self.push_time(t);
        for (i, c) in self.cols.iter_mut().enumerate() {
            let v = row.get(i).copied().unwrap_or(f32::NAN);
            let div = div_of(divs, i);
            let wide = match c {
                Col::Wide(w) => {
                    w.push(v);
                    continue;
                }
                Col::Narrow(n) => match narrow(v, div) {
                    Some(k) => {
                        n.push(k);
                        continue;
                    }
                    None => {
                        let mut w = Vec::with_capacity(n.capacity());
                        w.extend(n.iter().map(|k| widen(*k, div)));
                        w.push(v);
                        w
                    }
                },
            };
            *c = Col::Wide(wide);
            widened = true;
        }
        widened
    }

    fn push_time(&mut self, t: f64) -> bool {
        let secs = match &mut self.t {
            Times::Secs(s) => {
                s.push(t);
                return false;
            }
            Times::Ticks { base, off } => {
                if off.is_empty() {
                    if let Some(k) = tick(t) {
                        *base = k;
                    }
                }
                match tick(t).and_then(|k| u32::try_from(k - *base).ok()) {
                    Some(o) => {
                        off.push(o);
                        return false;
                    }
                    None => {
                        let mut s = Vec::with_capacity(off.capacity());
                        s.extend(off.iter().map(|o| (*base + i64::from(*o)) as f64 / TICKS));
                        s.push(t);
                        s
                    }
                }
            }
        };
        self.t = Times::Secs(secs);
        true
    }

    /// Time of row `i`, seconds.
    pub(super) fn time(&self, i: usize) -> f64 {
        match &self.t {
            Times::Ticks { base, off } => (*base + i64::from(off[i])) as f64 / TICKS,
            Times::Secs(s) => s[i],
        }
    }

    /// Appends the times of rows `from..` to `out`.
    pub(super) fn times_into(&self, from: usize, out: &mut Vec<f64>) {
        match &self.t {
            Times::Ticks { base, off } => out.extend(
                off[from..]
                    .iter()
                    .map(|o| (*base + i64::from(*o)) as f64 / TICKS),
            ),
            Times::Secs(s) => out.extend_from_slice(&s[from..]),
        }
    }

    /// Appends the values of column `c` in rows `from..` to `out`.
    pub(super) fn column_into(&self, c: usize, from: usize, divs: &[u32], out: &mut Vec<f32>) {
        match &self.cols[c] {
            Col::Narrow(n) => {
                let div = div_of(divs, c);
                out.extend(n[from..].iter().map(|k| widen(*k, div)));
            }
            Col::Wide(w) => out.extend_from_slice(&w[from..]),
        }
    }

    /// Row `i`'s values into `out` (cleared first).
    pub(super) fn row_into(&self, i: usize, divs: &[u32], out: &mut Vec<f32>) {
        out.clear();
        out.extend(self.cols.iter().enumerate().map(|(c, col)| match col {
            Col::Narrow(n) => widen(n[i], div_of(divs, c)),
            Col::Wide(w) => w[i],
        }));
    }

    /// Drops the room not used (a closed window keeps exactly its rows).
    pub(super) fn shrink(&mut self) {
        match &mut self.t {
            Times::Ticks { off, .. } => off.shrink_to_fit(),
            Times::Secs(s) => s.shrink_to_fit(),
        }
        for c in &mut self.cols {
            match c {
                Col::Narrow(n) => n.shrink_to_fit(),
                Col::Wide(w) => w.shrink_to_fit(),
            }
        }
        self.cap = self.len();
    }

    /// Heap bytes of this block.
    pub(super) fn heap_bytes(&self) -> usize {
        let t = match &self.t {
            Times::Ticks { off, .. } => off.capacity() * 4,
            Times::Secs(s) => s.capacity() * 8,
        };
        t + self
            .cols
            .iter()
            .map(|c| match c {
                Col::Narrow(n) => n.capacity() * 2,
                Col::Wide(w) => w.capacity() * 4,
            })
            .sum::<usize>()
            + self.cols.capacity() * std::mem::size_of::<Col>()
    }

    /// Upper bound of [`Self::heap_bytes`] for a block of `rows` rows of `columns` columns.
    pub(super) fn worst_case_bytes(columns: usize, rows: usize) -> usize {
        rows * wide_row(columns) + columns * std::mem::size_of::<Col>()
    }

    /// [`Self::heap_bytes`] of a block of `rows` rows whose narrow columns stayed narrow.
    pub(super) fn nominal_bytes(columns: usize, divs: &[u32], rows: usize) -> usize {
        rows * nominal_row(columns, divs) + columns * std::mem::size_of::<Col>()
    }
}

#[cfg(test)]
#[path = "block_tests.rs"]
mod tests;
