//! A report column as something to draw: its present samples in time order, with the gaps
//! found, and decimated to about one min/max pair per pixel column.
//!
//! A gap is a place where a value was expected and none came: more `null` rows between two
//! values than the metric usually has (fast metrics have a value on every row, slow ones on
//! every k-th), or a stretch of time with no rows at all. Gaps are drawn as gaps, never as
//! zeros. Slow metrics' regular `null`s between reads are not gaps.

mod decimate;
mod samples;

use gpuwhy::report::{CoarseColumn, CoarseData, SeriesData};

use samples::Samples;

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

    /// True for a metric read less often than the rows come (PCIe throughput, once a
    /// second while utilization is read every 100 ms): its rows between reads are `null`.
    pub fn is_slow(&self) -> bool {
        self.step_rows > 1
    }

    /// True when the trace has no value anywhere.
    pub fn is_empty(&self) -> bool {
        all_nan(self.v) && self.coarse.as_ref().is_none_or(|c| all_nan(&c.col.mean.0))
    }

    /// Calls `f(sample, starts_new_run)` for each present sample with `t0 <= t <= t1`, in time
    /// order. `starts_new_run` is true for the first sample and after each gap.
    pub fn visit(&self, t0: f64, t1: f64, mut f: impl FnMut(Sample, bool)) {
        let mut it = Samples::new(self, t0, t1);
        while let Some((s, brk)) = it.step() {
            f(s, brk);
        }
    }

    /// Number of samples in `t0..=t1`, counting no further than `limit`.
    pub fn count(&self, t0: f64, t1: f64, limit: usize) -> usize {
        let mut it = Samples::new(self, t0, t1);
        let mut n = 0;
        while n < limit && it.step().is_some() {
            n += 1;
        }
        n
    }

    /// Statistics of the samples in `t0..=t1`.
    pub fn stats(&self, t0: f64, t1: f64) -> Option<Stats> {
        let most = self.t.len() + self.coarse.as_ref().map_or(0, |c| c.t_start.len());
        let mut means = Vec::with_capacity(most);
        let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
        let mut it = Samples::new(self, t0, t1);
        while let Some((s, _)) = it.step() {
            means.push(f64::from(s.mean));
            lo = lo.min(s.lo);
            hi = hi.max(s.hi);
        }
        // In f64, as the row steps below: one selection routine in the module, not two.
        let median = gpuwhy::stats::select(&mut means, 0.5)?;
        Some(Stats {
            min: lo as f64,
            median,
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
        let mut it = Samples::new(self, t0, t1);
        while let Some((s, _)) = it.step() {
            // `as` truncates: the floor for the non-negative, and 0 for what is clamped to 0.
            let i = ((((s.t - t0) / span) * n as f64) as usize).min(n.saturating_sub(1));
            sums[i].0 += s.mean as f64;
            sums[i].1 += 1;
        }
        let mut out = Vec::with_capacity(n);
        for (s, c) in sums {
            out.push((c > 0).then(|| s / c as f64));
        }
        out
    }
}

/// True when no value is present (a plain loop: GPUs without GPM metrics have whole
/// columns of `null` to look through on every redraw).
fn all_nan(v: &[f32]) -> bool {
    for &x in v {
        if !x.is_nan() {
            return false;
        }
    }
    true
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
/// seconds (about a minute and a half of 100 ms samples), and scanning more on every
/// redraw would be a good share of drawing time.
const CADENCE_VALUES: usize = 1024;

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
    (step_rows, gpuwhy::stats::select(&mut dts, 0.5))
}
