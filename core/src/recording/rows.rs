//! Full-resolution rows: a growable block (the first minutes, a kept window) and a ring (the
//! most recent rows).

/// Rows in time order, columnar. Growth is in bounded steps so capacity never runs far past
/// what is kept (see [`Rows::push_bounded`]).
#[derive(Debug, Clone, Default)]
pub(super) struct Rows {
    pub(super) t: Vec<f64>,
    pub(super) cols: Vec<Vec<f32>>,
}

impl Rows {
    /// Most rows one growth step adds.
    pub(super) const GROWTH_MAX: usize = 4_096;

    pub(super) fn new(columns: usize) -> Rows {
        Rows {
            t: Vec::new(),
            cols: vec![Vec::new(); columns],
        }
    }

    pub(super) fn len(&self) -> usize {
        self.t.len()
    }

    /// Appends a row, growing capacity by at most `len` (doubling) and never past `cap`.
    pub(super) fn push_bounded(&mut self, t: f64, row: &[f32], cap: usize) {
        if self.t.len() == self.t.capacity() {
            let more = self
                .t
                .len()
                .clamp(64, Self::GROWTH_MAX)
                .min(cap.saturating_sub(self.t.len()).max(1));
            self.t.reserve_exact(more);
            for c in &mut self.cols {
                c.reserve_exact(more);
            }
        }
        self.t.push(t);
        for (i, c) in self.cols.iter_mut().enumerate() {
            c.push(row.get(i).copied().unwrap_or(f32::NAN));
        }
    }

    /// Drops the slack left by growth (a closed window keeps exactly its rows).
    pub(super) fn shrink(&mut self) {
        self.t.shrink_to_fit();
        for c in &mut self.cols {
            c.shrink_to_fit();
        }
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.t.capacity() * 8 + self.cols.iter().map(|c| c.capacity() * 4).sum::<usize>()
    }
}

/// The most recent `cap` rows. Once full, each push evicts the oldest row.
#[derive(Debug, Clone)]
pub(super) struct Ring {
    rows: Rows,
    cap: usize,
    /// Position of the oldest row once the ring is full.
    start: usize,
}

impl Ring {
    pub(super) fn new(columns: usize, cap: usize) -> Ring {
        Ring {
            rows: Rows::new(columns),
            cap,
            start: 0,
        }
    }

    /// Appends a row. When the ring is full, the oldest row is copied into `evicted` and its
    /// time returned; with a ring of capacity 0 the new row itself is evicted.
    pub(super) fn push(&mut self, t: f64, row: &[f32], evicted: &mut Vec<f32>) -> Option<f64> {
        evicted.clear();
        if self.cap == 0 {
            evicted
                .extend((0..self.rows.cols.len()).map(|i| row.get(i).copied().unwrap_or(f32::NAN)));
            return Some(t);
        }
        if self.rows.len() < self.cap {
            self.rows.push_bounded(t, row, self.cap);
            return None;
        }
        let s = self.start;
        let old_t = std::mem::replace(&mut self.rows.t[s], t);
        for (i, c) in self.rows.cols.iter_mut().enumerate() {
            evicted.push(std::mem::replace(
                &mut c[s],
                row.get(i).copied().unwrap_or(f32::NAN),
            ));
        }
        self.start = (s + 1) % self.cap;
        Some(old_t)
    }

    /// Indices of the rows in time order.
    fn order(&self) -> impl Iterator<Item = usize> + '_ {
        let n = self.rows.len();
        (0..n).map(move |k| (self.start + k) % n.max(1))
    }

    pub(super) fn times_into(&self, out: &mut Vec<f64>) {
        out.extend(self.order().map(|i| self.rows.t[i]));
    }

    pub(super) fn column_into(&self, col: usize, out: &mut Vec<f32>) {
        out.extend(self.order().map(|i| self.rows.cols[col][i]));
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.rows.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_keeps_the_latest_rows_in_order() {
        let mut r = Ring::new(1, 3);
        let mut ev = Vec::new();
        let mut out = Vec::new();
        for i in 0..5 {
            let old = r.push(i as f64, &[i as f32 * 10.0], &mut ev);
            if i >= 3 {
                assert_eq!(old, Some((i - 3) as f64));
                assert_eq!(ev, vec![(i - 3) as f32 * 10.0]);
            } else {
                assert_eq!(old, None);
            }
        }
        r.times_into(&mut out);
        assert_eq!(out, vec![2.0, 3.0, 4.0]);
        let mut col = Vec::new();
        r.column_into(0, &mut col);
        assert_eq!(col, vec![20.0, 30.0, 40.0]);
    }
}
