//! A trace's present samples in time order, each with whether it starts a new run (the
//! first one, and the first after a gap): the full-resolution rows first, then the coarse
//! buckets of a long run.

use super::{Sample, Trace};

/// Where a walk over a trace is.
pub(super) struct Samples<'t, 'a> {
    tr: &'t Trace<'a>,
    t0: f64,
    t1: f64,
    /// Next full-resolution row, then (once `coarse`) next bucket.
    i: usize,
    /// Bucket count (set when the walk reaches the buckets).
    n: usize,
    coarse: bool,
    done: bool,
    first: bool,
    /// Row and time of the last full-resolution value.
    last: Option<(usize, f64)>,
    /// Bucket (`usize::MAX` for the full-resolution part) and end time of the last value.
    prev_end: Option<(usize, f64)>,
}

impl<'t, 'a> Samples<'t, 'a> {
    /// The samples of `tr` with `t0 <= t <= t1`.
    pub(super) fn new(tr: &'t Trace<'a>, t0: f64, t1: f64) -> Self {
        Samples {
            tr,
            t0,
            t1,
            i: tr.t.partition_point(|&t| t < t0),
            n: 0,
            coarse: false,
            done: false,
            first: true,
            last: None,
            prev_end: None,
        }
    }

    /// The next sample and whether it starts a new run. Inlined into its callers' loops:
    /// drawing calls it for every sample of every line.
    #[inline(always)]
    pub(super) fn step(&mut self) -> Option<(Sample, bool)> {
        let tr = self.tr;
        if !self.coarse {
            while self.i < tr.t.len() {
                let i = self.i;
                self.i += 1;
                let t = tr.t[i];
                if t > self.t1 {
                    self.done = true;
                    return None;
                }
                let v = tr.v[i];
                if v.is_nan() || !t.is_finite() {
                    continue;
                }
                let brk = match self.last {
                    None => true,
                    Some((li, lt)) => i - li > tr.step_rows || t - lt > tr.hole_s,
                };
                self.last = Some((i, t));
                let first = std::mem::replace(&mut self.first, false);
                let v = v * tr.scale;
                let s = Sample {
                    t,
                    lo: v,
                    hi: v,
                    mean: v,
                };
                return Some((s, brk || first));
            }
            if self.done {
                return None;
            }
            self.start_coarse();
        }
        self.step_coarse()
    }

    /// Moves on to the buckets, once the full-resolution rows are done.
    fn start_coarse(&mut self) {
        self.coarse = true;
        let Some(c) = &self.tr.coarse else {
            return;
        };
        // The full-resolution part ended with a value only if its last rows were not a gap.
        self.prev_end = match self.last {
            Some((li, lt)) if self.tr.t.len() - 1 - li < self.tr.step_rows => {
                Some((usize::MAX, lt))
            }
            _ => None,
        };
        self.n = c
            .t_start
            .len()
            .min(c.t_end.len())
            .min(c.col.mean.0.len())
            .min(c.col.min.0.len())
            .min(c.col.max.0.len());
        let t0 = self.t0;
        self.i = c.t_end[..self.n].partition_point(|&t| t < t0);
    }

    /// The next bucket.
    fn step_coarse(&mut self) -> Option<(Sample, bool)> {
        if self.done {
            return None;
        }
        let tr = self.tr;
        let c = tr.coarse.as_ref()?;
        while self.i < self.n {
            let j = self.i;
            self.i += 1;
            let (ts, te) = (c.t_start[j], c.t_end[j]);
            if ts > self.t1 {
                self.done = true;
                return None;
            }
            let mean = c.col.mean.0[j];
            if mean.is_nan() {
                self.prev_end = None;
                continue;
            }
            let brk = match self.prev_end {
                None => true,
                Some((pj, pt)) => (pj != usize::MAX && pj + 1 != j) || ts - pt > tr.hole_s,
            };
            self.prev_end = Some((j, te));
            let (lo, hi) = (c.col.min.0[j], c.col.max.0[j]);
            let first = std::mem::replace(&mut self.first, false);
            let s = Sample {
                t: (ts + te) / 2.0,
                lo: if lo.is_nan() { mean } else { lo } * tr.scale,
                hi: if hi.is_nan() { mean } else { hi } * tr.scale,
                mean: mean * tr.scale,
            };
            return Some((s, brk || first));
        }
        self.done = true;
        None
    }
}
