//! A trace's present samples in time order, each with whether it starts a new run (the
//! first one, and the first after a gap).
//!
//! Full-resolution rows and coarse buckets interleave in a long report (the first minutes,
//! buckets, a window around an event, buckets, the last hour): no row time lies inside a
//! bucket's span (docs/report-format.md, "Retention"), so the walk merges the two by time,
//! comparing the next row's time with the next bucket's start.

use super::{Sample, Trace};

/// Where a walk over a trace is.
pub(super) struct Samples<'t, 'a> {
    tr: &'t Trace<'a>,
    t1: f64,
    /// Next full-resolution row.
    i: usize,
    /// Next bucket.
    j: usize,
    /// The buckets' starts and ends, and the metric's minima, means and maxima, all cut to
    /// the same length (empty without buckets).
    ts: &'a [f64],
    te: &'a [f64],
    min: &'a [f32],
    mean: &'a [f32],
    max: &'a [f32],
    /// Rows passed without a value since the last sample.
    skipped: usize,
    /// End time of the last sample: `None` at the start and after a bucket without a value.
    prev: Option<f64>,
}

impl<'t, 'a> Samples<'t, 'a> {
    /// The samples of `tr` with `t0 <= t <= t1` (buckets: those whose span reaches into it).
    pub(super) fn new(tr: &'t Trace<'a>, t0: f64, t1: f64) -> Self {
        let (mut ts, mut te): (&[f64], &[f64]) = (&[], &[]);
        let (mut min, mut mean, mut max): (&[f32], &[f32], &[f32]) = (&[], &[], &[]);
        if let Some(c) = &tr.coarse {
            let n = c.t_start.len().min(c.t_end.len());
            let n = n.min(c.col.mean.0.len()).min(c.col.min.0.len());
            let n = n.min(c.col.max.0.len());
            (ts, te) = (&c.t_start[..n], &c.t_end[..n]);
            (min, mean, max) = (&c.col.min.0[..n], &c.col.mean.0[..n], &c.col.max.0[..n]);
        }
        Samples {
            tr,
            t1,
            i: tr.t.partition_point(|&t| t < t0),
            j: te.partition_point(|&t| t < t0),
            ts,
            te,
            min,
            mean,
            max,
            skipped: 0,
            prev: None,
        }
    }

    /// The next sample and whether it starts a new run. One copy, called by each of the
    /// trace's walks (decimation, statistics, the heatmap, the read-out): inlined into each,
    /// it cost the page's module more than a call per sample costs drawing.
    #[inline(never)]
    pub(super) fn step(&mut self) -> Option<(Sample, bool)> {
        let tr = self.tr;
        loop {
            while let Some(&t) = tr.t.get(self.i) {
                // A row at a bucket's start comes first: rows never lie inside a bucket.
                if self.j < self.ts.len() && self.ts[self.j] < t {
                    break;
                }
                if t > self.t1 {
                    return None;
                }
                let v = tr.v[self.i];
                self.i += 1;
                if v.is_nan() || !t.is_finite() {
                    self.skipped += 1;
                    continue;
                }
                let v = v * tr.scale;
                let brk = self.starts_run(t, t);
                let s = Sample {
                    t,
                    lo: v,
                    hi: v,
                    mean: v,
                };
                return Some((s, brk));
            }
            if let Some(s) = self.step_bucket()? {
                return Some(s);
            }
        }
    }

    /// Whether a sample from `start` to `end` starts a new run (the first sample, or one
    /// after a gap: more rows without a value than the metric's usual step, or more time
    /// than a gap's length); it becomes the last sample.
    #[inline(always)]
    fn starts_run(&mut self, start: f64, end: f64) -> bool {
        let tr = self.tr;
        let gap = self
            .prev
            .is_none_or(|p| self.skipped >= tr.step_rows || start - p > tr.hole_s);
        self.prev = Some(end);
        self.skipped = 0;
        gap
    }

    /// The next bucket: `None` when the walk is over, `Some(None)` for a bucket without a
    /// value (which ends the run), else its sample.
    fn step_bucket(&mut self) -> Option<Option<(Sample, bool)>> {
        let j = self.j;
        let (&ts, &te) = (self.ts.get(j)?, self.te.get(j)?);
        if ts > self.t1 {
            return None;
        }
        self.j += 1;
        let mean = self.mean[j];
        if mean.is_nan() {
            self.prev = None;
            return Some(None);
        }
        let brk = self.starts_run(ts, te);
        let (lo, hi, k) = (self.min[j], self.max[j], self.tr.scale);
        Some(Some((
            Sample {
                t: (ts + te) / 2.0,
                lo: if lo.is_nan() { mean } else { lo } * k,
                hi: if hi.is_nan() { mean } else { hi } * k,
                mean: mean * k,
            },
            brk,
        )))
    }
}
