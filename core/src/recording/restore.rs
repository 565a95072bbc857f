//! Rebuilding a stream's storage from what a report (or a journal checkpoint) wrote: rows
//! and buckets in time order, each piece back where it was.

use super::bucket::{Bucket, Stat};
use super::reasons::ReasonCounts;
use super::retired::Piece;
use super::rows::Rows;
use super::SeriesBuf;
use crate::metric::reasons::THROTTLING_BITS;
use crate::report::{CoarseData, SeriesData};

/// Window importance given to restored windows (their own importance is not written).
const RESTORED_PRIO: u8 = 2;

impl SeriesBuf {
    /// Refills an empty buffer from `data`, whose columns are named `names` in this buffer's
    /// column order: leading rows up to the head capacity go to the head, trailing rows up
    /// to the recent capacity to the ring, rows between buckets become windows, and buckets
    /// come back with their counts and bands. Rows pushed afterwards continue the stream.
    pub fn restore(&mut self, data: &SeriesData, names: &[String]) {
        let cols: Vec<Vec<f32>> = names
            .iter()
            .map(|n| {
                let mut c = data.metrics.get(n).map(|c| c.0.clone()).unwrap_or_default();
                c.resize(data.t.len(), f32::NAN);
                c
            })
            .collect();
        let row = |i: usize| -> Vec<f32> { cols.iter().map(|c| c[i]).collect() };
        let Some(coarse) = data.coarse.as_ref().filter(|c| !c.t_start.is_empty()) else {
            for (i, t) in data.t.iter().enumerate() {
                self.push(*t, &row(i));
            }
            return;
        };
        let t = &data.t;
        let first_bucket = coarse.t_start[0];
        let last_bucket = coarse.t_end[coarse.t_end.len() - 1];
        let lead = t.iter().take_while(|x| **x < first_bucket).count();
        let trail_from = t
            .iter()
            .rposition(|x| *x <= last_bucket)
            .map_or(0, |p| p + 1);
        let head = lead.min(self.retention.head_rows);
        for (i, ti) in t.iter().enumerate().take(head) {
            self.push(*ti, &row(i));
        }
        // A shorter head than this buffer's: later rows must not go on filling it.
        self.retention.head_rows = head;
        let recent_from = trail_from.max(t.len().saturating_sub(self.retention.recent_rows));
        let mut window = Rows::new(self.columns);
        let mut k = 0;
        for (i, ti) in t.iter().enumerate().take(recent_from).skip(head) {
            while k < coarse.t_start.len() && coarse.t_start[k] < *ti {
                self.flush_window(&mut window);
                self.retired
                    .push_restored(Piece::Bucket(self.bucket(coarse, names, k)));
                k += 1;
            }
            window.push_bounded(*ti, &row(i), usize::MAX, &self.divs);
        }
        self.flush_window(&mut window);
        for k in k..coarse.t_start.len() {
            self.retired
                .push_restored(Piece::Bucket(self.bucket(coarse, names, k)));
        }
        self.retired.set_rows_per_bucket(coarse.rows_per_bucket);
        for (i, ti) in t.iter().enumerate().skip(recent_from) {
            self.push(*ti, &row(i));
        }
        let folded: u64 = coarse.rows.iter().map(|r| u64::from(*r)).sum();
        self.total_rows = t.len() as u64 + folded;
    }

    fn flush_window(&mut self, window: &mut Rows) {
        if window.len() > 0 {
            let mut rows = std::mem::replace(window, Rows::new(self.columns));
            rows.shrink(&self.divs);
            self.retired.push_restored(Piece::Window {
                rows,
                prio: RESTORED_PRIO,
            });
        }
    }

    /// Bucket `k` of `coarse` (an older report without counts counts each bucket's rows as
    /// its values).
    fn bucket(&self, coarse: &CoarseData, names: &[String], k: usize) -> Bucket {
        let banded = self.retired.band_slot().iter().flatten().count();
        let mut b = Bucket::new(self.retired.columns(), banded);
        b.t0 = coarse.t_start[k];
        b.t1 = coarse.t_end.get(k).copied().unwrap_or(b.t0);
        let rows = coarse.rows.get(k).copied();
        b.rows = rows.unwrap_or(coarse.rows_per_bucket as u32);
        for (i, name) in names.iter().enumerate() {
            let Some(cc) = coarse.metrics.get(name) else {
                continue;
            };
            let at = |c: &crate::report::Column| c.0.get(k).copied().unwrap_or(f32::NAN);
            let n = cc.count.get(k).copied().unwrap_or(b.rows);
            b.stats[i] = Stat::from_parts(at(&cc.min), at(&cc.mean), at(&cc.max), n);
            if let Some(slot) = self.retired.band_slot().get(i).copied().flatten() {
                for (band, counts) in b.bands[slot].iter_mut().zip(&cc.bands) {
                    *band = counts.get(k).copied().unwrap_or(0);
                }
            }
        }
        if self.retired.reason_cols().is_some() {
            b.reasons = restored_reasons(coarse, k).map(Box::new);
        }
        b
    }
}

/// Bucket `k`'s loaded samples by clock-event reason as `coarse` wrote them; `None` for a
/// report written before they were counted.
fn restored_reasons(coarse: &CoarseData, k: usize) -> Option<ReasonCounts> {
    let cc = coarse.reasons.as_ref()?;
    let mut r = ReasonCounts {
        loaded: *cc.loaded.get(k)?,
        throttled: cc.throttled.get(k).copied().unwrap_or(0),
        ..ReasonCounts::default()
    };
    for (slot, bit) in r.bits.iter_mut().zip(THROTTLING_BITS) {
        if let Some(j) = cc.bits.iter().position(|b| *b == bit) {
            *slot = cc
                .loaded_bits
                .get(j)
                .and_then(|v| v.get(k))
                .copied()
                .unwrap_or(0);
        }
    }
    Some(r)
}
