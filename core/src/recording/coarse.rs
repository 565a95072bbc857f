//! A stream's buckets read out, columnar and in time order, for the report
//! (`recording::build`) and the signals over buckets.

use super::bucket::{Bucket, BANDS};
use super::reasons::ReasonCounts;
use super::retired::Piece;
use super::series::SeriesBuf;

/// Buckets of one stream, columnar, in time order (see [`SeriesBuf::coarse`]).
#[derive(Debug, Clone, Default)]
pub struct Coarse {
    /// Width in rows of the buckets being filled now (doubles on every compaction).
    pub rows_per_bucket: usize,
    /// First folded sample time of each bucket, seconds since the recording started.
    pub t_start: Vec<f64>,
    /// Last folded sample time of each bucket, seconds.
    pub t_end: Vec<f64>,
    /// Rows folded into each bucket, missing values included.
    pub rows: Vec<u32>,
    /// Per column: minimum of each bucket (`NaN` when the bucket had no value).
    pub min: Vec<Vec<f32>>,
    /// Per column: mean of each bucket.
    pub mean: Vec<Vec<f32>>,
    /// Per column: maximum of each bucket.
    pub max: Vec<Vec<f32>>,
    /// Per column: values each bucket holds (its missing values left out).
    pub count: Vec<Vec<u32>>,
    /// Per column: for banded columns, per bucket the count in each band of [`super::BAND_EDGES`].
    pub bands: Vec<Option<Vec<[u32; BANDS]>>>,
    /// In a GPU stream, per bucket: its loaded samples by clock-event reason
    /// (`recording::reasons`); empty otherwise.
    pub reasons: Vec<ReasonCounts>,
}

impl Coarse {
    /// Number of buckets.
    pub fn len(&self) -> usize {
        self.t_start.len()
    }

    /// True when there is no bucket.
    pub fn is_empty(&self) -> bool {
        self.t_start.is_empty()
    }
}

impl SeriesBuf {
    /// The buckets in time order, the one being filled last (empty until rows leave the ring
    /// outside any window).
    pub fn coarse(&self) -> Coarse {
        let n = self.columns;
        let mut c = Coarse {
            rows_per_bucket: self.retired.rows_per_bucket,
            min: vec![Vec::new(); n],
            mean: vec![Vec::new(); n],
            max: vec![Vec::new(); n],
            count: vec![Vec::new(); n],
            bands: self
                .band_slot
                .iter()
                .map(|s| s.map(|_| Vec::new()))
                .collect(),
            ..Coarse::default()
        };
        let pending = (self.retired.pending.rows > 0).then_some(&self.retired.pending);
        let buckets = self.retired.pieces.iter().filter_map(|p| match p {
            Piece::Bucket(b) => Some(b),
            Piece::Window { .. } => None,
        });
        let counted = self.retired.reason_cols().is_some();
        for b in buckets.chain(pending) {
            push_bucket(&mut c, b, &self.band_slot);
            if counted {
                c.reasons
                    .push(b.reasons.as_deref().copied().unwrap_or_default());
            }
        }
        c
    }
}

fn push_bucket(c: &mut Coarse, b: &Bucket, band_slot: &[Option<usize>]) {
    c.t_start.push(b.t0);
    c.t_end.push(b.t1);
    c.rows.push(b.rows);
    for (i, st) in b.stats.iter().enumerate() {
        let (mn, mean, mx) = st.values();
        c.min[i].push(mn);
        c.mean[i].push(mean);
        c.max[i].push(mx);
        c.count[i].push(st.n);
        if let (Some(slot), Some(Some(out))) = (band_slot[i], c.bands.get_mut(i)) {
            out.push(b.bands[slot]);
        }
    }
}
