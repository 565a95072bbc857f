//! One bucket of folded samples: per column min, max, mean and count, and for utilization-like
//! columns how many samples fell in each band of [`BAND_EDGES`].

use super::reasons::{ReasonCols, ReasonCounts};

/// Band edges (%) of utilization-like columns. Band 0 holds values below 5, band *i* values in
/// `[BAND_EDGES[i-1], BAND_EDGES[i])`, the last band values at or above 95. The edges are the
/// thresholds the signals count time against (near zero, dip, load, busy; see
/// `docs/report-format.md`, "Retention"), so a share of time below or above any of them is
/// exact over buckets too.
pub const BAND_EDGES: [f32; 6] = [5.0, 10.0, 20.0, 50.0, 80.0, 95.0];

/// Number of bands: one more than [`BAND_EDGES`].
pub const BANDS: usize = BAND_EDGES.len() + 1;

/// The band a value falls in.
pub fn band_of(v: f32) -> usize {
    BAND_EDGES.iter().take_while(|e| v >= **e).count()
}

/// Running statistics of one column inside one bucket. Packed to 4-byte alignment: 20 bytes
/// instead of 24, the `f64` sum kept whole so that means are what they were.
#[derive(Debug, Clone, Copy)]
#[repr(C, packed(4))]
pub(super) struct Stat {
    pub(super) sum: f64,
    pub(super) min: f32,
    pub(super) max: f32,
    pub(super) n: u32,
}

impl Stat {
    const EMPTY: Stat = Stat {
        min: f32::INFINITY,
        max: f32::NEG_INFINITY,
        sum: 0.0,
        n: 0,
    };

    /// A column's statistics as a report wrote them (`n` values of mean `mean`).
    pub(super) fn from_parts(min: f32, mean: f32, max: f32, n: u32) -> Stat {
        if n == 0 || mean.is_nan() {
            return Stat::EMPTY;
        }
        Stat {
            min,
            max,
            sum: f64::from(mean) * f64::from(n),
            n,
        }
    }

    fn add(&mut self, v: f32) {
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.sum += f64::from(v);
        self.n += 1;
    }

    fn merge(&mut self, o: &Stat) {
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.sum += o.sum;
        self.n += o.n;
    }

    /// `(min, mean, max)`, `NaN` when the bucket had no value.
    pub(super) fn values(&self) -> (f32, f32, f32) {
        if self.n == 0 {
            (f32::NAN, f32::NAN, f32::NAN)
        } else {
            (self.min, (self.sum / f64::from(self.n)) as f32, self.max)
        }
    }
}

/// Folded samples over `t0..=t1` (first and last folded sample times).
#[derive(Debug, Clone)]
pub(super) struct Bucket {
    pub(super) t0: f64,
    pub(super) t1: f64,
    /// Rows folded in (missing values included).
    pub(super) rows: u32,
    /// Boxed slices rather than vectors: a bucket is one of thousands of pieces, and a slice
    /// takes 8 bytes less in each.
    pub(super) stats: Box<[Stat]>,
    /// One band count per banded column, in the order of the buffer's banded columns.
    pub(super) bands: Box<[[u32; BANDS]]>,
    /// Loaded samples by clock-event reason, in a GPU stream (`recording::reasons`).
    pub(super) reasons: Option<Box<ReasonCounts>>,
}

impl Bucket {
    /// An empty bucket for `columns` columns of which `banded` carry bands.
    pub(super) fn new(columns: usize, banded: usize) -> Bucket {
        Bucket {
            t0: 0.0,
            t1: 0.0,
            rows: 0,
            stats: vec![Stat::EMPTY; columns].into_boxed_slice(),
            bands: vec![[0; BANDS]; banded].into_boxed_slice(),
            reasons: None,
        }
    }

    /// Counts one row by clock-event reason when `cols` names the mask and utilization
    /// columns (a GPU stream).
    pub(super) fn count_reasons(&mut self, row: &[f32], cols: ReasonCols) {
        if let Some((mask, util)) = cols {
            let at = |i: usize| row.get(i).copied().unwrap_or(f32::NAN);
            self.reasons
                .get_or_insert_with(Default::default)
                .add(at(mask), at(util));
        }
    }

    /// Folds one row in; `band_slot[i]` is column `i`'s index in `bands`, if banded.
    pub(super) fn add(&mut self, t: f64, row: &[f32], band_slot: &[Option<usize>]) {
        if self.rows == 0 {
            self.t0 = t;
        }
        self.t1 = t;
        self.rows += 1;
        for (i, st) in self.stats.iter_mut().enumerate() {
            let v = row.get(i).copied().unwrap_or(f32::NAN);
            if v.is_nan() {
                continue;
            }
            st.add(v);
            if let Some(b) = band_slot.get(i).copied().flatten() {
                self.bands[b][band_of(v)] += 1;
            }
        }
    }

    /// Folds a later bucket in (exact: counts and sums add).
    pub(super) fn merge(&mut self, o: &Bucket) {
        if self.rows == 0 {
            self.t0 = o.t0;
        }
        if o.rows > 0 {
            self.t1 = o.t1;
        }
        self.rows += o.rows;
        for (a, b) in self.stats.iter_mut().zip(&o.stats) {
            a.merge(b);
        }
        for (a, b) in self.bands.iter_mut().zip(&o.bands) {
            for (x, y) in a.iter_mut().zip(b) {
                *x += *y;
            }
        }
        match (&mut self.reasons, &o.reasons) {
            (Some(a), Some(b)) => a.merge(b),
            (None, Some(b)) => self.reasons = Some(b.clone()),
            _ => {}
        }
    }

    /// Heap bytes of this bucket.
    pub(super) fn heap_bytes(&self) -> usize {
        self.stats.len() * std::mem::size_of::<Stat>()
            + self.bands.len() * std::mem::size_of::<[u32; BANDS]>()
            + self
                .reasons
                .as_ref()
                .map_or(0, |_| std::mem::size_of::<ReasonCounts>())
    }

    /// Upper bound of [`Self::heap_bytes`] for a bucket of `columns` columns, `banded` banded.
    pub(super) fn bytes_for(columns: usize, banded: usize) -> usize {
        columns * std::mem::size_of::<Stat>() + banded * std::mem::size_of::<[u32; BANDS]>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_split_at_the_edges() {
        assert_eq!(band_of(0.0), 0);
        assert_eq!(band_of(4.9), 0);
        assert_eq!(band_of(5.0), 1);
        assert_eq!(band_of(19.9), 2);
        assert_eq!(band_of(50.0), 4);
        assert_eq!(band_of(95.0), 6);
        assert_eq!(band_of(100.0), BANDS - 1);
    }

    #[test]
    fn merging_is_exact() {
        let slots = [Some(0), None];
        let mut a = Bucket::new(2, 1);
        a.add(1.0, &[0.0, 3.0], &slots);
        a.add(2.0, &[100.0, f32::NAN], &slots);
        let mut b = Bucket::new(2, 1);
        b.add(3.0, &[60.0, 5.0], &slots);
        a.merge(&b);
        assert_eq!((a.t0, a.t1, a.rows), (1.0, 3.0, 3));
        assert_eq!(a.stats[0].values(), (0.0, 160.0 / 3.0, 100.0));
        assert_eq!({ a.stats[1].n }, 2);
        assert_eq!(a.stats[1].values(), (3.0, 4.0, 5.0));
        assert_eq!(a.bands[0], [1, 0, 0, 0, 1, 0, 1]);
    }
}
