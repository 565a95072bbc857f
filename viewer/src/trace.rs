//! A report column as something to draw: its present samples in time order, with the gaps
//! found, and decimated to about one min/max pair per pixel column.
//!
//! A gap is a place where a value was expected and none came: more `null` rows between two
//! values than the metric usually has (fast metrics have a value on every row, slow ones on
//! every k-th), or a stretch of time with no rows at all. Gaps are drawn as gaps, never as
//! zeros. Slow metrics' regular `null`s between reads are not gaps.

use gpuwhy::report::{CoarseColumn, CoarseData, SeriesData};

/// One value to draw: a full-resolution sample (`lo == hi == mean`) or a coarse bucket.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Seconds since the start (a bucket's midpoint).
    pub t: f64,
    /// Lowest value.
    pub lo: f32,
    /// Highest value.
    pub hi: f32,
    /// Mean value.
    pub mean: f32,
}

/// Summary of the samples in a time range, for text alternatives and read-outs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    /// Lowest value.
    pub min: f64,
    /// Median of the samples' means.
    pub median: f64,
    /// Highest value.
    pub max: f64,
    /// Number of samples (buckets count once).
    pub count: usize,
}

struct Coarse<'a> {
    t_start: &'a [f64],
    t_end: &'a [f64],
    col: &'a CoarseColumn,
}

/// One metric of one stream, ready to draw.
pub struct Trace<'a> {
    t: &'a [f64],
    v: &'a [f32],
    coarse: Option<Coarse<'a>>,
    scale: f32,
    /// Usual number of rows from one value to the next (1 for fast metrics).
    step_rows: usize,
    /// A stretch without rows longer than this is a gap, seconds.
    hole_s: f64,
}

impl<'a> Trace<'a> {
    /// The trace of `metric` in `data`, values multiplied by `scale` (for unit changes).
    /// A metric the stream does not have gives an empty trace.
    pub fn new(data: &'a SeriesData, metric: &str, scale: f32) -> Self {
        let v: &[f32] = data.metrics.get(metric).map_or(&[], |c| &c.0);
        let n = data.t.len().min(v.len());
        let (t, v) = (&data.t[..n], &v[..n]);
        let coarse = coarse_part(data.coarse.as_ref(), metric);
        let (step_rows, cadence) = cadence(t, v);
        let cadence = cadence
            .or_else(|| {
                let c = coarse.as_ref()?;
                let w = c.t_end.first()? - c.t_start.first()?;
                (w > 0.0).then_some(w)
            })
            .unwrap_or(1.0);
        Trace {
            t,
            v,
            coarse,
            scale,
            step_rows,
            hole_s: 3.0 * cadence,
        }
    }

    /// True when the trace has no value anywhere.
    pub fn is_empty(&self) -> bool {
        self.v.iter().all(|x| x.is_nan())
            && self
                .coarse
                .as_ref()
                .is_none_or(|c| c.col.mean.0.iter().all(|x| x.is_nan()))
    }

    /// Calls `f(sample, starts_new_run)` for each present sample with `t0 <= t <= t1`, in time
    /// order. `starts_new_run` is true for the first sample and after each gap.
    pub fn visit(&self, t0: f64, t1: f64, mut f: impl FnMut(Sample, bool)) {
        let mut first = true;
        let mut last: Option<(usize, f64)> = None;
        let start = self.t.partition_point(|&t| t < t0);
        for i in start..self.t.len() {
            let t = self.t[i];
            if t > t1 {
                return;
            }
            let v = self.v[i];
            if v.is_nan() || !t.is_finite() {
                continue;
            }
            let brk = match last {
                None => true,
                Some((li, lt)) => i - li > self.step_rows || t - lt > self.hole_s,
            };
            last = Some((i, t));
            let v = v * self.scale;
            f(
                Sample {
                    t,
                    lo: v,
                    hi: v,
                    mean: v,
                },
                brk || first,
            );
            first = false;
        }
        let Some(c) = &self.coarse else { return };
        // The full-resolution part ended with a value only if its last rows were not a gap.
        let mut prev_end = match last {
            Some((li, lt)) if self.t.len() - 1 - li < self.step_rows => Some((usize::MAX, lt)),
            _ => None,
        };
        let n = c
            .t_start
            .len()
            .min(c.t_end.len())
            .min(c.col.mean.0.len())
            .min(c.col.min.0.len())
            .min(c.col.max.0.len());
        let start = c.t_end[..n].partition_point(|&t| t < t0);
        for j in start..n {
            let (ts, te) = (c.t_start[j], c.t_end[j]);
            if ts > t1 {
                return;
            }
            let mean = c.col.mean.0[j];
            if mean.is_nan() {
                prev_end = None;
                continue;
            }
            let brk = match prev_end {
                None => true,
                Some((pj, pt)) => (pj != usize::MAX && pj + 1 != j) || ts - pt > self.hole_s,
            };
            prev_end = Some((j, te));
            let lo = c.col.min.0[j];
            let hi = c.col.max.0[j];
            f(
                Sample {
                    t: (ts + te) / 2.0,
                    lo: if lo.is_nan() { mean } else { lo } * self.scale,
                    hi: if hi.is_nan() { mean } else { hi } * self.scale,
                    mean: mean * self.scale,
                },
                brk || first,
            );
            first = false;
        }
    }

    /// The polylines to draw for `t0..=t1` on a plot `columns` pixels wide: one polyline per
    /// run between gaps, at most two points (the minimum and maximum, in the order they came)
    /// per pixel column.
    pub fn decimate(&self, t0: f64, t1: f64, columns: u32) -> Vec<Vec<(f64, f64)>> {
        let cols = columns.max(1) as f64;
        let span = (t1 - t0).max(f64::MIN_POSITIVE);
        let col_w = span / cols;
        let mut lines: Vec<Vec<(f64, f64)>> = Vec::new();
        let mut cur = Bucket::default();
        let flush = |b: &Bucket, line: &mut Vec<(f64, f64)>| {
            if b.count == 0 {
                return;
            }
            if b.count == 1 && b.single_exact {
                line.push((b.t_first, b.lo as f64));
                return;
            }
            let tc = t0 + (b.col as f64 + 0.5) * col_w;
            let (a, z) = if b.lo_first {
                (b.lo, b.hi)
            } else {
                (b.hi, b.lo)
            };
            line.push((tc, a as f64));
            if z != a {
                line.push((tc, z as f64));
            }
        };
        let last_col = columns.max(1) as i64 - 1;
        self.visit(t0, t1, |s, brk| {
            // `as` truncates: the floor for the non-negative, and 0 for what is clamped to 0.
            let col = ((((s.t - t0) / span) * cols) as i64).clamp(0, last_col);
            if brk || col != cur.col {
                if let Some(line) = lines.last_mut() {
                    flush(&cur, line);
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
        });
        if let Some(line) = lines.last_mut() {
            flush(&cur, line);
        }
        lines
    }

    /// Number of samples in `t0..=t1`.
    pub fn count(&self, t0: f64, t1: f64) -> usize {
        let mut n = 0;
        self.visit(t0, t1, |_, _| n += 1);
        n
    }

    /// Statistics of the samples in `t0..=t1`.
    pub fn stats(&self, t0: f64, t1: f64) -> Option<Stats> {
        let mut means = Vec::new();
        let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
        self.visit(t0, t1, |s, _| {
            means.push(s.mean);
            lo = lo.min(s.lo);
            hi = hi.max(s.hi);
        });
        if means.is_empty() {
            return None;
        }
        let mid = means.len() / 2;
        let (_, m, _) = means.select_nth_unstable_by(mid, f32::total_cmp);
        Some(Stats {
            min: lo as f64,
            median: *m as f64,
            max: hi as f64,
            count: means.len(),
        })
    }

    /// The sample nearest to `t`, if one lies within a gap's distance of it.
    pub fn at(&self, t: f64) -> Option<Sample> {
        let mut best: Option<Sample> = None;
        self.visit(t - self.hole_s, t + self.hole_s, |s, _| {
            if best.is_none_or(|b| (s.t - t).abs() < (b.t - t).abs()) {
                best = Some(s);
            }
        });
        best
    }

    /// Mean of the samples in each of `n` equal slices of `t0..t1` (`None` where there are none).
    pub fn slice_means(&self, t0: f64, t1: f64, n: usize) -> Vec<Option<f64>> {
        let mut sums = vec![(0.0f64, 0u32); n];
        let span = (t1 - t0).max(f64::MIN_POSITIVE);
        self.visit(t0, t1, |s, _| {
            let i = (((s.t - t0) / span) * n as f64)
                .floor()
                .clamp(0.0, n as f64 - 1.0) as usize;
            sums[i].0 += s.mean as f64;
            sums[i].1 += 1;
        });
        sums.into_iter()
            .map(|(s, c)| (c > 0).then(|| s / c as f64))
            .collect()
    }
}

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
}

fn coarse_part<'a>(c: Option<&'a CoarseData>, metric: &str) -> Option<Coarse<'a>> {
    let c = c?;
    Some(Coarse {
        t_start: &c.t_start,
        t_end: &c.t_end,
        col: c.metrics.get(metric)?,
    })
}

/// Values looked at to find a series' cadence: the sampler's rhythm shows in its first
/// seconds, and scanning a whole day on every redraw would dominate drawing time.
const CADENCE_VALUES: usize = 4096;

/// The usual number of rows between two values, and the usual time between them: the
/// medians over the first [`CADENCE_VALUES`] values. `None` for the time when fewer than two.
fn cadence(t: &[f64], v: &[f32]) -> (usize, Option<f64>) {
    // Row steps are small integers: count them instead of sorting.
    const MAX_STEP: usize = 256;
    let mut steps = [0u32; MAX_STEP + 1];
    let mut dts = Vec::new();
    let mut last: Option<usize> = None;
    for (i, x) in v.iter().enumerate() {
        if x.is_nan() || !t[i].is_finite() {
            continue;
        }
        if let Some(l) = last {
            steps[(i - l).min(MAX_STEP)] += 1;
            let dt = t[i] - t[l];
            if dt > 0.0 {
                dts.push(dt);
            }
            if dts.len() >= CADENCE_VALUES {
                break;
            }
        }
        last = Some(i);
    }
    let total: u32 = steps.iter().sum();
    let mut seen = 0;
    let mut step_rows = 1;
    for (k, c) in steps.iter().enumerate() {
        seen += c;
        if total > 0 && seen * 2 >= total {
            step_rows = k.max(1);
            break;
        }
    }
    if dts.is_empty() {
        return (step_rows, None);
    }
    let mid = dts.len() / 2;
    let (_, m, _) = dts.select_nth_unstable_by(mid, f64::total_cmp);
    (step_rows, Some(*m))
}
