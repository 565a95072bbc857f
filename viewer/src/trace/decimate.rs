//! Decimation: about one min/max pair per pixel column, so a day of samples draws as fast as
//! a minute of them and still shows every spike.

use super::samples::Samples;
use super::{Sample, Trace};

impl Trace<'_> {
    /// The polylines to draw for `t0..=t1` on a plot `columns` pixels wide: one polyline per
    /// run between gaps, at most two points (the minimum and maximum, in the order they came)
    /// per pixel column.
    pub fn decimate(&self, t0: f64, t1: f64, columns: u32) -> Vec<Vec<(f64, f64)>> {
        let cols = columns.max(1) as f64;
        let span = (t1 - t0).max(f64::MIN_POSITIVE);
        let col_w = span / cols;
        let last_col = columns.max(1) as i64 - 1;
        let mut lines: Vec<Vec<(f64, f64)>> = Vec::new();
        let mut cur = Bucket::default();
        let mut it = Samples::new(self, t0, t1);
        // One loop, the walk inlined: this runs for every sample of every line drawn.
        while let Some((s, brk)) = it.step() {
            // `as` truncates: the floor for the non-negative, and 0 for what is clamped to 0.
            let col = ((((s.t - t0) / span) * cols) as i64).clamp(0, last_col);
            if brk || col != cur.col {
                if let Some(line) = lines.last_mut() {
                    cur.flush(line, t0, col_w);
                }
                if brk {
                    lines.push(Vec::new());
                }
                cur = Bucket {
                    col,
                    ..Bucket::default()
                };
            }
            cur.add(s);
        }
        if let Some(line) = lines.last_mut() {
            cur.flush(line, t0, col_w);
        }
        lines
    }
}

/// The samples of one pixel column.
#[derive(Default)]
struct Bucket {
    col: i64,
    count: u32,
    lo: f32,
    hi: f32,
    lo_first: bool,
    t_first: f64,
    single_exact: bool,
}

impl Bucket {
    #[inline(always)]
    fn add(&mut self, s: Sample) {
        if self.count == 0 {
            self.lo = s.lo;
            self.hi = s.hi;
            self.lo_first = true;
            self.t_first = s.t;
            self.single_exact = s.lo == s.hi;
        } else {
            if s.lo < self.lo {
                self.lo = s.lo;
                self.lo_first = false;
            }
            if s.hi > self.hi {
                self.hi = s.hi;
                self.lo_first = true;
            }
        }
        self.count += 1;
    }

    /// Appends the column's points to `line`: the one sample where it holds one exact value,
    /// else its extremes in the order they came, at the column's middle.
    fn flush(&self, line: &mut Vec<(f64, f64)>, t0: f64, col_w: f64) {
        if self.count == 0 {
            return;
        }
        if self.count == 1 && self.single_exact {
            line.push((self.t_first, self.lo as f64));
            return;
        }
        let tc = t0 + (self.col as f64 + 0.5) * col_w;
        let (a, z) = if self.lo_first {
            (self.lo, self.hi)
        } else {
            (self.hi, self.lo)
        };
        line.push((tc, a as f64));
        if z != a {
            line.push((tc, z as f64));
        }
    }
}
