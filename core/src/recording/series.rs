//! Bounded columnar storage for one stream of samples (one GPU, or the host).
//!
//! The first [`SeriesBuf::full_capacity`] rows are kept at full resolution. After that, rows
//! are folded into buckets that keep min/mean/max per column; when the bucket store is full,
//! neighbouring buckets are merged pairwise and the bucket width doubles. Memory is therefore
//! bounded for any run length (see [`SeriesBuf::worst_case_bytes`]) while a short run keeps
//! every sample and a days-long run keeps its shape.

/// Default number of full-resolution rows per stream: one hour at the default 100 ms interval.
///
/// Worst case for one GPU (24 columns): 36 000 × (8 + 24 × 4) B ≈ 3.7 MB; for 8 GPUs ≈ 30 MB.
pub const FULL_ROWS_DEFAULT: usize = 36_000;

/// Default number of coarse buckets per stream once the full-resolution part is full.
///
/// Worst case for one GPU (24 columns): 4 096 × (16 + 24 × 12) B ≈ 1.2 MB.
pub const COARSE_BUCKETS_DEFAULT: usize = 4_096;

/// The partly filled bucket: `(t_start, t_end, per-column (min, mean, max))`.
pub type PendingBucket = (f64, f64, Vec<(f32, f32, f32)>);

/// Running min/sum/max of one column inside the bucket being filled.
#[derive(Debug, Clone, Copy)]
struct Acc {
    min: f32,
    max: f32,
    sum: f64,
    n: u32,
}

impl Acc {
    const EMPTY: Acc = Acc {
        min: f32::INFINITY,
        max: f32::NEG_INFINITY,
        sum: 0.0,
        n: 0,
    };

    fn add(&mut self, v: f32) {
        if v.is_nan() {
            return;
        }
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.sum += f64::from(v);
        self.n += 1;
    }

    fn finish(self) -> (f32, f32, f32, u32) {
        if self.n == 0 {
            (f32::NAN, f32::NAN, f32::NAN, 0)
        } else {
            (
                self.min,
                (self.sum / f64::from(self.n)) as f32,
                self.max,
                self.n,
            )
        }
    }
}

/// Buckets of min/mean/max per column, each covering a time range.
#[derive(Debug, Clone, Default)]
pub struct Coarse {
    /// Rows folded into one bucket (doubles on every compaction).
    pub rows_per_bucket: usize,
    /// First sample time of each bucket, seconds since the recording started.
    pub t_start: Vec<f64>,
    /// Last sample time of each bucket, seconds.
    pub t_end: Vec<f64>,
    /// Per column: minimum of each bucket (`NaN` when the bucket had no value).
    pub min: Vec<Vec<f32>>,
    /// Per column: mean of each bucket.
    pub mean: Vec<Vec<f32>>,
    /// Per column: maximum of each bucket.
    pub max: Vec<Vec<f32>>,
    /// Per column: how many values each bucket's mean is over (for exact merges).
    count: Vec<Vec<u32>>,
}

impl Coarse {
    /// Number of finished buckets.
    pub fn len(&self) -> usize {
        self.t_start.len()
    }

    /// True when no bucket is finished yet.
    pub fn is_empty(&self) -> bool {
        self.t_start.is_empty()
    }
}

/// Columnar, bounded storage of `(t, row)` samples. `NaN` marks a missing value.
#[derive(Debug, Clone)]
pub struct SeriesBuf {
    columns: usize,
    full_cap: usize,
    coarse_cap: usize,
    t: Vec<f64>,
    cols: Vec<Vec<f32>>,
    coarse: Coarse,
    pending: Vec<Acc>,
    pending_rows: usize,
    pending_t: (f64, f64),
    total_rows: u64,
}

impl SeriesBuf {
    /// A buffer with the default capacities.
    pub fn new(columns: usize) -> Self {
        Self::with_capacity(columns, FULL_ROWS_DEFAULT, COARSE_BUCKETS_DEFAULT)
    }

    /// A buffer keeping `full_rows` rows at full resolution and at most `coarse_buckets`
    /// (rounded up to an even number, at least 2) buckets after that.
    pub fn with_capacity(columns: usize, full_rows: usize, coarse_buckets: usize) -> Self {
        let coarse_cap = coarse_buckets.max(2).next_multiple_of(2);
        SeriesBuf {
            columns,
            full_cap: full_rows,
            coarse_cap,
            t: Vec::new(),
            cols: vec![Vec::new(); columns],
            coarse: Coarse {
                rows_per_bucket: 1,
                min: vec![Vec::new(); columns],
                mean: vec![Vec::new(); columns],
                max: vec![Vec::new(); columns],
                count: vec![Vec::new(); columns],
                ..Coarse::default()
            },
            pending: vec![Acc::EMPTY; columns],
            pending_rows: 0,
            pending_t: (0.0, 0.0),
            total_rows: 0,
        }
    }

    /// Number of columns in a row.
    pub fn columns(&self) -> usize {
        self.columns
    }

    /// Rows kept at full resolution before coarsening starts.
    pub fn full_capacity(&self) -> usize {
        self.full_cap
    }

    /// Upper bound of the heap bytes this buffer can ever use (excluding `Vec` slack from
    /// growth, which the bounded pre-sizing avoids for the full part).
    pub fn worst_case_bytes(&self) -> usize {
        let full = self.full_cap * (8 + 4 * self.columns);
        // Buckets: two times, and min/mean/max/count per column; the store can transiently
        // hold `coarse_cap` buckets before a compaction halves it.
        let coarse = self.coarse_cap * (16 + 16 * self.columns);
        full + coarse + self.columns * std::mem::size_of::<Acc>()
    }

    /// Heap bytes in use now (capacity of the vectors).
    pub fn heap_bytes(&self) -> usize {
        let mut b = self.t.capacity() * 8;
        b += self.cols.iter().map(|c| c.capacity() * 4).sum::<usize>();
        b += self.coarse.t_start.capacity() * 8 + self.coarse.t_end.capacity() * 8;
        for v in [&self.coarse.min, &self.coarse.mean, &self.coarse.max] {
            b += v.iter().map(|c| c.capacity() * 4).sum::<usize>();
        }
        b += self
            .coarse
            .count
            .iter()
            .map(|c| c.capacity() * 4)
            .sum::<usize>();
        b + self.pending.capacity() * std::mem::size_of::<Acc>()
    }

    /// Total rows ever pushed.
    pub fn total_rows(&self) -> u64 {
        self.total_rows
    }

    /// Appends one row taken at `t` seconds. Rows shorter than [`Self::columns`] are padded
    /// with `NaN`; extra values are ignored.
    pub fn push(&mut self, t: f64, row: &[f32]) {
        self.total_rows += 1;
        if self.t.len() < self.full_cap {
            if self.t.is_empty() {
                // Reserve the whole full-resolution part once (up to a sane first chunk) so
                // growth never doubles past the bound.
                let first = self.full_cap.min(4_096);
                self.t.reserve_exact(first);
                for c in &mut self.cols {
                    c.reserve_exact(first);
                }
            } else if self.t.len() == self.t.capacity() {
                let more = (self.t.len()).min(self.full_cap - self.t.len());
                self.t.reserve_exact(more);
                for c in &mut self.cols {
                    c.reserve_exact(more);
                }
            }
            self.t.push(t);
            for (i, c) in self.cols.iter_mut().enumerate() {
                c.push(row.get(i).copied().unwrap_or(f32::NAN));
            }
            return;
        }
        if self.pending_rows == 0 {
            self.pending_t.0 = t;
        }
        self.pending_t.1 = t;
        for (i, acc) in self.pending.iter_mut().enumerate() {
            acc.add(row.get(i).copied().unwrap_or(f32::NAN));
        }
        self.pending_rows += 1;
        if self.pending_rows >= self.coarse.rows_per_bucket {
            self.close_bucket();
        }
    }

    fn close_bucket(&mut self) {
        let cap = self.coarse_cap;
        let c = &mut self.coarse;
        if c.t_start.capacity() == 0 {
            // One exact allocation for the whole bucket store: it never grows past `cap`.
            c.t_start.reserve_exact(cap);
            c.t_end.reserve_exact(cap);
            for v in [&mut c.min, &mut c.mean, &mut c.max] {
                v.iter_mut().for_each(|col| col.reserve_exact(cap));
            }
            c.count.iter_mut().for_each(|col| col.reserve_exact(cap));
        }
        c.t_start.push(self.pending_t.0);
        c.t_end.push(self.pending_t.1);
        for (i, acc) in self.pending.iter_mut().enumerate() {
            let (mn, mean, mx, n) = std::mem::replace(acc, Acc::EMPTY).finish();
            c.min[i].push(mn);
            c.mean[i].push(mean);
            c.max[i].push(mx);
            c.count[i].push(n);
        }
        self.pending_rows = 0;
        if c.t_start.len() >= self.coarse_cap {
            self.compact();
        }
    }

    /// Merges neighbouring buckets pairwise, halving their number and doubling their width.
    fn compact(&mut self) {
        let c = &mut self.coarse;
        let n = c.t_start.len() / 2;
        for j in 0..n {
            c.t_start[j] = c.t_start[2 * j];
            c.t_end[j] = c.t_end[2 * j + 1];
        }
        c.t_start.truncate(n);
        c.t_end.truncate(n);
        for col in 0..self.columns {
            for j in 0..n {
                let (a, b) = (2 * j, 2 * j + 1);
                let (na, nb) = (c.count[col][a], c.count[col][b]);
                let mean = match (na, nb) {
                    (0, 0) => f32::NAN,
                    (_, 0) => c.mean[col][a],
                    (0, _) => c.mean[col][b],
                    _ => {
                        let s = f64::from(c.mean[col][a]) * f64::from(na)
                            + f64::from(c.mean[col][b]) * f64::from(nb);
                        (s / f64::from(na + nb)) as f32
                    }
                };
                c.min[col][j] = nan_min(c.min[col][a], c.min[col][b]);
                c.max[col][j] = nan_max(c.max[col][a], c.max[col][b]);
                c.mean[col][j] = mean;
                c.count[col][j] = na + nb;
            }
            c.min[col].truncate(n);
            c.mean[col].truncate(n);
            c.max[col].truncate(n);
            c.count[col].truncate(n);
        }
        c.rows_per_bucket *= 2;
    }

    /// Sample times of the full-resolution part, seconds since start.
    pub fn times(&self) -> &[f64] {
        &self.t
    }

    /// Full-resolution values of one column.
    pub fn column(&self, i: usize) -> &[f32] {
        &self.cols[i]
    }

    /// The coarse part (empty until the full-resolution part is full).
    pub fn coarse(&self) -> &Coarse {
        &self.coarse
    }

    /// The partly filled bucket, if any rows are pending: `(t_start, t_end, per-column (min, mean, max))`.
    pub fn pending_bucket(&self) -> Option<PendingBucket> {
        if self.pending_rows == 0 {
            return None;
        }
        let vals = self.pending.iter().map(|a| {
            let (mn, mean, mx, _) = a.finish();
            (mn, mean, mx)
        });
        Some((self.pending_t.0, self.pending_t.1, vals.collect()))
    }
}

fn nan_min(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else {
        a.min(b)
    }
}

fn nan_max(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else {
        a.max(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_full_resolution_up_to_capacity() {
        let mut s = SeriesBuf::with_capacity(2, 10, 4);
        for i in 0..10 {
            s.push(i as f64, &[i as f32, f32::NAN]);
        }
        assert_eq!(s.times().len(), 10);
        assert_eq!(s.column(0)[9], 9.0);
        assert!(s.column(1)[3].is_nan());
        assert!(s.coarse().is_empty());
    }

    #[test]
    fn coarsens_with_exact_min_mean_max_after_capacity() {
        let mut s = SeriesBuf::with_capacity(1, 2, 4);
        // 2 full rows, then buckets of 1 row until 4 buckets, then compaction to 2 buckets of 2.
        for i in 0..6 {
            s.push(i as f64, &[i as f32]);
        }
        let c = s.coarse();
        assert_eq!(c.rows_per_bucket, 2);
        assert_eq!(c.len(), 2);
        assert_eq!((c.min[0][0], c.mean[0][0], c.max[0][0]), (2.0, 2.5, 3.0));
        assert_eq!((c.t_start[1], c.t_end[1]), (4.0, 5.0));
    }

    #[test]
    fn gaps_stay_gaps_in_buckets() {
        let mut s = SeriesBuf::with_capacity(1, 0, 2);
        s.push(0.0, &[f32::NAN]);
        s.push(1.0, &[4.0]);
        s.push(2.0, &[f32::NAN]);
        // First two buckets compacted into one: mean over the single real value.
        let c = s.coarse();
        assert_eq!(c.len(), 1);
        assert_eq!(c.mean[0][0], 4.0);
        let (_, _, pending) = s.pending_bucket().expect("a row is pending");
        assert!(
            pending[0].1.is_nan(),
            "a bucket of missing values is missing, not 0"
        );
    }

    #[test]
    fn memory_stays_within_worst_case_for_a_long_run() {
        let mut s = SeriesBuf::with_capacity(24, 1_000, 64);
        let row = [50.0f32; 24];
        for i in 0..200_000 {
            s.push(i as f64 * 0.1, &row);
        }
        assert_eq!(s.total_rows(), 200_000);
        assert!(s.coarse().len() <= 64);
        assert!(
            s.heap_bytes() <= s.worst_case_bytes(),
            "{} > {}",
            s.heap_bytes(),
            s.worst_case_bytes()
        );
        let c = s.coarse();
        assert!(c.t_end[c.len() - 1] < 200_000.0 * 0.1);
    }
}
