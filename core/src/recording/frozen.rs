//! A full block of rows frozen into a compact byte form, once, when it fills (or when a window
//! closes): what the ring, the first minutes and the windows hold apart from the one block
//! each is filling (docs/report-format.md, "Memory bound of a recording").
//!
//! Each column, and the times, is encoded on its own, so that reading one column decodes only
//! that column:
//! - times that are whole 0.1 ms ticks: the first tick, then each row's change of spacing
//!   (delta of deltas, zigzag), so rows at a steady interval cost nothing but a run of zeros;
//!   other times: each `f64` XOR the previous one;
//! - a column: which rows are missing (the canonical `NaN`), as alternating run lengths, then
//!   the present values either as whole numbers at 1, 1/100 or 1/1 000 (delta, zigzag) when
//!   every one reads back exactly from that form, or as bits XOR the previous value's;
//! - every number a LEB128 varint, and a run of zeros one zero followed by its length.
//!
//! A stream never takes more than its plain bytes (4 per value, 8 per time) plus one byte:
//! when the encoding is not smaller, the plain form is kept. Decoding gives back every value
//! bit for bit as the block held it (`recording::dense_tests`).

use super::block::{self, Block};

/// Ticks per second of whole-tick times, as in the dense block.
const TICKS: f64 = crate::report::TIME_DIV as f64;

/// Scales at which a column's values may be whole numbers, tried in this order.
const SCALES: [f64; 3] = [1.0, 100.0, 1_000.0];

const RAW: u8 = 0;
const INT: u8 = 1;
const XOR: u8 = 2;
const TICK_DD: u8 = 3;

/// One frozen block: `rows` rows, its streams (times, then each column) end to end in `data`,
/// `ends[s]` the end of stream `s`.
#[derive(Debug, Clone)]
pub(super) struct Frozen {
    rows: u32,
    /// Time of the last row, to skip the block without decoding it.
    t_last: f64,
    ends: Box<[u32]>,
    data: Box<[u8]>,
}

fn put_varint(out: &mut Vec<u8>, mut x: u64) {
    while x >= 0x80 {
        out.push((x as u8) | 0x80);
        x >>= 7;
    }
    out.push(x as u8);
}

fn get_varint(data: &[u8], at: &mut usize) -> u64 {
    let mut x = 0u64;
    let mut shift = 0;
    while let Some(b) = data.get(*at) {
        *at += 1;
        if shift < 64 {
            x |= u64::from(b & 0x7f) << shift;
        }
        shift += 7;
        if b & 0x80 == 0 {
            break;
        }
    }
    x
}

fn zigzag(d: i64) -> u64 {
    ((d << 1) ^ (d >> 63)) as u64
}

fn unzigzag(x: u64) -> i64 {
    ((x >> 1) as i64) ^ -((x & 1) as i64)
}

/// Writes numbers, a run of zeros as one zero and the run's length less one.
struct Tokens<'a> {
    out: &'a mut Vec<u8>,
    zeros: u64,
}

impl Tokens<'_> {
    fn put(&mut self, x: u64) {
        if x == 0 {
            self.zeros += 1;
            return;
        }
        self.flush();
        put_varint(self.out, x);
    }

    fn flush(&mut self) {
        if self.zeros > 0 {
            put_varint(self.out, 0);
            put_varint(self.out, self.zeros - 1);
            self.zeros = 0;
        }
    }
}

/// Reads what [`Tokens`] wrote.
struct Reader<'a> {
    data: &'a [u8],
    at: usize,
    zeros: u64,
}

impl Reader<'_> {
    fn next(&mut self) -> u64 {
        if self.zeros > 0 {
            self.zeros -= 1;
            return 0;
        }
        let x = get_varint(self.data, &mut self.at);
        if x == 0 {
            self.zeros = get_varint(self.data, &mut self.at);
        }
        x
    }
}

/// The value of `v` as a whole number at `scale`, when it reads back as the same bits.
fn whole(v: f32, scale: f64) -> Option<i64> {
    let k = (f64::from(v) * scale).round();
    if k.is_nan() || k.abs() >= 9_007_199_254_740_992.0 {
        return None;
    }
    // Through the integer, so that a negative zero (which that loses) is not whole.
    let k = k as i64;
    ((k as f64 / scale) as f32)
        .to_bits()
        .eq(&v.to_bits())
        .then_some(k)
}

/// Encodes one column's values (bits as the block reads them back) into `out`.
fn encode_column(vals: &[u32], out: &mut Vec<u8>) {
    let start = out.len();
    let missing = f32::NAN.to_bits();
    // Presence: alternating runs, present first.
    let mut runs = Vec::new();
    let (mut present, mut run) = (true, 0u64);
    for v in vals {
        if (*v != missing) != present {
            runs.push(run);
            (present, run) = (!present, 0);
        }
        run += 1;
    }
    runs.push(run);
    let values: Vec<f32> = vals
        .iter()
        .filter(|v| **v != missing)
        .map(|v| f32::from_bits(*v))
        .collect();
    let head = |out: &mut Vec<u8>, mode: u8| {
        out.push(mode);
        put_varint(out, runs.len() as u64);
        for r in &runs {
            put_varint(out, *r);
        }
    };
    let scale = (0..SCALES.len()).find(|s| values.iter().all(|v| whole(*v, SCALES[*s]).is_some()));
    if let Some(s) = scale {
        head(out, INT);
        out.push(s as u8);
        let mut tok = Tokens { out, zeros: 0 };
        let mut prev = 0i64;
        for v in &values {
            let k = whole(*v, SCALES[s]).unwrap_or_default();
            tok.put(zigzag(k.wrapping_sub(prev)));
            prev = k;
        }
        tok.flush();
    }
    // Whole numbers that jump about (a noisy power in mW) may take fewer bytes as bits.
    if scale.is_none() || out.len() - start > values.len() + 8 {
        let mut xor = Vec::with_capacity(values.len() * 3 + 16);
        head(&mut xor, XOR);
        let mut tok = Tokens {
            out: &mut xor,
            zeros: 0,
        };
        let mut prev = 0u32;
        for v in &values {
            tok.put(u64::from(v.to_bits() ^ prev));
            prev = v.to_bits();
        }
        tok.flush();
        if scale.is_none() || xor.len() < out.len() - start {
            out.truncate(start);
            out.extend_from_slice(&xor);
        }
    }
    if out.len() - start > 4 * vals.len() {
        out.truncate(start);
        out.push(RAW);
        for v in vals {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

/// Decodes one column's stream (`rows` values) onto `out`.
fn decode_column(data: &[u8], rows: usize, out: &mut Vec<f32>) {
    let mode = data.first().copied().unwrap_or(RAW);
    let mut at = 1;
    if mode == RAW {
        out.extend(
            data[1..]
                .chunks_exact(4)
                .take(rows)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        );
        return;
    }
    let runs = get_varint(data, &mut at) as usize;
    let runs: Vec<u64> = (0..runs).map(|_| get_varint(data, &mut at)).collect();
    let scale = if mode == INT {
        at += 1;
        SCALES[usize::from(data[at - 1]).min(SCALES.len() - 1)]
    } else {
        1.0
    };
    let mut rd = Reader { data, at, zeros: 0 };
    let (mut k, mut bits) = (0i64, 0u32);
    for (i, run) in runs.iter().enumerate() {
        for _ in 0..*run {
            if i % 2 == 1 {
                out.push(f32::NAN);
            } else if mode == INT {
                k = k.wrapping_add(unzigzag(rd.next()));
                out.push((k as f64 / scale) as f32);
            } else {
                bits ^= rd.next() as u32;
                out.push(f32::from_bits(bits));
            }
        }
    }
}

fn encode_times(b: &Block, out: &mut Vec<u8>) {
    let start = out.len();
    let n = b.len();
    if let Some((base, off)) = b.ticks() {
        out.push(TICK_DD);
        put_varint(out, base as u64);
        let mut tok = Tokens { out, zeros: 0 };
        let (mut prev, mut delta) = (0i64, 0i64);
        for o in off {
            let d = i64::from(*o) - prev;
            tok.put(zigzag(d - delta));
            (prev, delta) = (i64::from(*o), d);
        }
        tok.flush();
    } else {
        out.push(XOR);
        let mut tok = Tokens { out, zeros: 0 };
        let mut prev = 0u64;
        for i in 0..n {
            let bits = b.time(i).to_bits();
            tok.put(bits ^ prev);
            prev = bits;
        }
        tok.flush();
    }
    if out.len() - start > 8 * n {
        out.truncate(start);
        out.push(RAW);
        for i in 0..n {
            out.extend_from_slice(&b.time(i).to_le_bytes());
        }
    }
}

fn decode_times(data: &[u8], rows: usize, out: &mut Vec<f64>) {
    let mode = data.first().copied().unwrap_or(RAW);
    if mode == RAW {
        out.extend(
            data[1..]
                .chunks_exact(8)
                .take(rows)
                .map(|b| f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])),
        );
        return;
    }
    let mut at = 1;
    let base = if mode == TICK_DD {
        get_varint(data, &mut at) as i64
    } else {
        0
    };
    let mut rd = Reader { data, at, zeros: 0 };
    let (mut off, mut delta, mut bits) = (0i64, 0i64, 0u64);
    for _ in 0..rows {
        if mode == TICK_DD {
            delta += unzigzag(rd.next());
            off += delta;
            out.push((base + off) as f64 / TICKS);
        } else {
            bits ^= rd.next();
            out.push(f64::from_bits(bits));
        }
    }
}

impl Frozen {
    /// Encodes every row of `b` (whose narrow columns read back at `divs`).
    pub(super) fn encode(b: &Block, columns: usize, divs: &[u32]) -> Frozen {
        let n = b.len();
        let mut data = Vec::with_capacity(n * 16);
        let mut ends = Vec::with_capacity(columns + 1);
        encode_times(b, &mut data);
        ends.push(data.len() as u32);
        let mut col = Vec::with_capacity(n);
        for c in 0..columns {
            col.clear();
            b.column_into(c, 0, divs, &mut col);
            let bits: Vec<u32> = col.iter().map(|v| v.to_bits()).collect();
            encode_column(&bits, &mut data);
            ends.push(data.len() as u32);
        }
        Frozen {
            rows: n as u32,
            t_last: if n > 0 {
                b.time(n - 1)
            } else {
                f64::NEG_INFINITY
            },
            ends: ends.into_boxed_slice(),
            data: data.into_boxed_slice(),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.rows as usize
    }

    pub(super) fn last_time(&self) -> f64 {
        self.t_last
    }

    fn stream(&self, s: usize) -> &[u8] {
        let from = if s == 0 { 0 } else { self.ends[s - 1] as usize };
        &self.data[from..self.ends[s] as usize]
    }

    /// Appends the times of rows `from..` to `out`.
    pub(super) fn times_into(&self, from: usize, out: &mut Vec<f64>) {
        let at = out.len();
        decode_times(self.stream(0), self.len(), out);
        out.drain(at..at + from.min(self.len()));
    }

    /// Appends the values of column `c` in rows `from..` to `out`.
    pub(super) fn column_into(&self, c: usize, from: usize, out: &mut Vec<f32>) {
        let at = out.len();
        decode_column(self.stream(c + 1), self.len(), out);
        out.drain(at..at + from.min(self.len()));
    }

    /// Every row into `t` (times) and `rows` (row after row), both cleared first.
    pub(super) fn thaw_into(&self, t: &mut Vec<f64>, rows: &mut Vec<f32>, col: &mut Vec<f32>) {
        let (n, columns) = (self.len(), self.ends.len() - 1);
        t.clear();
        t.reserve_exact(n);
        self.times_into(0, t);
        rows.clear();
        rows.resize(n * columns, f32::NAN);
        for c in 0..columns {
            col.clear();
            col.reserve_exact(n);
            self.column_into(c, 0, col);
            for (r, v) in col.iter().enumerate() {
                rows[r * columns + c] = *v;
            }
        }
    }

    /// Heap bytes of this block.
    pub(super) fn heap_bytes(&self) -> usize {
        self.data.len() + self.ends.len() * 4
    }

    /// Upper bound of [`Self::heap_bytes`] for `rows` rows of `columns` columns: every stream
    /// plain, with its mode byte, and the stream ends.
    pub(super) fn worst_case_bytes(columns: usize, rows: usize) -> usize {
        rows * block::wide_row(columns) + (columns + 1) * 5
    }
}

#[cfg(test)]
#[path = "frozen_tests.rs"]
mod tests;
