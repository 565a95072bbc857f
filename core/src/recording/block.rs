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

fn narrow(v: f32, div: u32) -> Option<u16> {
    if v.is_nan() {
        return Some(MISSING);
    }
    if div == 1 {
        // The common case, without the float division: `as` saturates, so a negative value,
        // an infinity or one past the range gives a whole number that reads back different.
        let k = v as u16;
        return (k != MISSING && f32::from(k).to_bits() == v.to_bits()).then_some(k);
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
    } else if div == 1 {
        f32::from(k)
    } else {
        (f64::from(k) / f64::from(div)) as f32
    }
}

/// `t` as whole ticks, when it is one and reads back as the same `f64`. Rounds by adding a
/// half and truncating (an instruction, where `f64::round` is a library call on the sampler's
/// every push): a time it would round wrongly does not read back and so is kept wide.
fn tick(t: f64) -> Option<i64> {
    let x = t * TICKS;
    if !(0.0..MAX_INT).contains(&x) {
        return None;
    }
    let k = (x + 0.5) as i64;
    ((k as f64 / TICKS).to_bits() == t.to_bits()).then_some(k)
}

#[derive(Debug, Clone)]
enum Times {
    Ticks { base: i64, off: Vec<u32> },
    Secs(Vec<f64>),
}

/// Where a column's values are in a row: their position among its narrow or its wide values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Narrow(u32),
    Wide(u32),
}

/// The slots of `columns` columns, narrow where `narrow(i)`, with the counts of each kind.
fn layout(columns: usize, narrow: impl Fn(usize) -> bool) -> (Vec<Slot>, usize, usize) {
    let (mut n, mut w) = (0u32, 0u32);
    let slots = (0..columns)
        .map(|i| {
            if narrow(i) {
                n += 1;
                Slot::Narrow(n - 1)
            } else {
                w += 1;
                Slot::Wide(w - 1)
            }
        })
        .collect();
    (slots, n as usize, w as usize)
}

/// Up to a fixed number of rows, row after row: the narrow values of a row together, its
/// wide values together (so that pushing and handing back a row touch few cache lines), and
/// the times apart. Each column, and the times, is narrow or wide for the whole block.
#[derive(Debug, Clone)]
pub(super) struct Block {
    t: Times,
    slots: Vec<Slot>,
    narrow: Vec<u16>,
    wide: Vec<f32>,
    n_narrow: usize,
    n_wide: usize,
    cap: usize,
}

impl Block {
    /// An empty block with room for exactly `cap` rows, its columns narrow where `divs` allows.
    pub(super) fn new(columns: usize, divs: &[u32], cap: usize) -> Block {
        let (slots, n_narrow, n_wide) = layout(columns, |i| div_of(divs, i) > 0);
        Block {
            t: Times::Ticks {
                base: 0,
                off: Vec::with_capacity(cap),
            },
            slots,
            narrow: Vec::with_capacity(cap * n_narrow),
            wide: Vec::with_capacity(cap * n_wide),
            n_narrow,
            n_wide,
            cap,
        }
    }

    /// Empties the block for reuse when it is still in the form [`Block::new`] makes for
    /// `divs` (nothing widened); false, and nothing changed, otherwise.
    pub(super) fn reset(&mut self, divs: &[u32]) -> bool {
        let fresh = matches!(self.t, Times::Ticks { .. })
            && self
                .slots
                .iter()
                .enumerate()
                .all(|(i, s)| matches!(s, Slot::Narrow(_)) == (div_of(divs, i) > 0));
        if fresh {
            if let Times::Ticks { off, .. } = &mut self.t {
                off.clear();
            }
            self.narrow.clear();
            self.wide.clear();
        }
        fresh
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

    /// Appends a row (missing values are `NaN`, short rows padded with it). Returns the heap
    /// bytes the block grew by: more than 0 only when a column or the times turned wide.
    pub(super) fn push(&mut self, t: f64, row: &[f32], divs: &[u32]) -> usize {
        let mut grew = 0;
        loop {
            let (n0, w0) = (self.narrow.len(), self.wide.len());
            let mut misfit = None;
            for (c, s) in self.slots.iter().enumerate() {
                let v = row.get(c).copied().unwrap_or(f32::NAN);
                match s {
                    Slot::Wide(_) => self.wide.push(v),
                    Slot::Narrow(_) => match narrow(v, div_of(divs, c)) {
                        Some(k) => self.narrow.push(k),
                        None => {
                            misfit = Some(c);
                            break;
                        }
                    },
                }
            }
            let Some(c) = misfit else { break };
            self.narrow.truncate(n0);
            self.wide.truncate(w0);
            grew += self.widen_column(c, divs);
        }
        grew + self.push_time(t)
    }

    /// Turns column `c` wide, the rows already here converted without loss; the heap bytes
    /// the block grew by.
    fn widen_column(&mut self, c: usize, divs: &[u32]) -> usize {
        let before = self.narrow.capacity() * 2 + self.wide.capacity() * 4;
        let old = &self.slots;
        let (slots, n_narrow, n_wide) =
            layout(old.len(), |i| i != c && matches!(old[i], Slot::Narrow(_)));
        let mut narrow = Vec::with_capacity(self.cap * n_narrow);
        let mut wide = Vec::with_capacity(self.cap * n_wide);
        for r in 0..self.len() {
            for (i, s) in slots.iter().enumerate() {
                match (s, self.slots[i]) {
                    (Slot::Narrow(_), Slot::Narrow(j)) => {
                        narrow.push(self.narrow[r * self.n_narrow + j as usize])
                    }
                    _ => wide.push(self.value(r, i, divs)),
                }
            }
        }
        let after = narrow.capacity() * 2 + wide.capacity() * 4;
        (self.slots, self.narrow, self.wide) = (slots, narrow, wide);
        (self.n_narrow, self.n_wide) = (n_narrow, n_wide);
        after.saturating_sub(before)
    }

    /// Value of column `c` in row `r`.
    fn value(&self, r: usize, c: usize, divs: &[u32]) -> f32 {
        match self.slots[c] {
            Slot::Narrow(j) => widen(self.narrow[r * self.n_narrow + j as usize], div_of(divs, c)),
            Slot::Wide(j) => self.wide[r * self.n_wide + j as usize],
        }
    }

    /// Appends a time; the heap bytes the times grew by, as [`Self::push`].
    fn push_time(&mut self, t: f64) -> usize {
        let secs = match &mut self.t {
            Times::Secs(s) => {
                s.push(t);
                return 0;
            }
            Times::Ticks { base, off } => {
                let k = tick(t);
                if let (true, Some(k)) = (off.is_empty(), k) {
                    *base = k;
                }
                match k.and_then(|k| u32::try_from(k - *base).ok()) {
                    Some(o) => {
                        off.push(o);
                        return 0;
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
        let grew = secs.capacity() * 4;
        self.t = Times::Secs(secs);
        grew
    }

    /// The first tick and each row's offset from it, when the times are whole ticks.
    pub(super) fn ticks(&self) -> Option<(i64, &[u32])> {
        match &self.t {
            Times::Ticks { base, off } => Some((*base, off)),
            Times::Secs(_) => None,
        }
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
        out.extend((from..self.len()).map(|r| self.value(r, c, divs)));
    }

    /// Row `i`'s values into `out` (cleared first).
    pub(super) fn row_into(&self, i: usize, divs: &[u32], out: &mut Vec<f32>) {
        out.clear();
        let n = &self.narrow[i * self.n_narrow..(i + 1) * self.n_narrow];
        let w = &self.wide[i * self.n_wide..(i + 1) * self.n_wide];
        out.extend(self.slots.iter().enumerate().map(|(c, s)| match *s {
            Slot::Narrow(j) => widen(n[j as usize], div_of(divs, c)),
            Slot::Wide(j) => w[j as usize],
        }));
    }

    /// Heap bytes of this block.
    pub(super) fn heap_bytes(&self) -> usize {
        let t = match &self.t {
            Times::Ticks { off, .. } => off.capacity() * 4,
            Times::Secs(s) => s.capacity() * 8,
        };
        t + self.narrow.capacity() * 2
            + self.wide.capacity() * 4
            + self.slots.capacity() * std::mem::size_of::<Slot>()
    }

    /// Upper bound of [`Self::heap_bytes`] for a block of `rows` rows of `columns` columns.
    pub(super) fn worst_case_bytes(columns: usize, rows: usize) -> usize {
        rows * wide_row(columns) + columns * std::mem::size_of::<Slot>()
    }
}

#[cfg(test)]
#[path = "block_tests.rs"]
mod tests;
