//! Time-weighted utilization over rows and buckets: the one definition of a GPU's mean
//! utilization and of the share of time it spends below (or at or above) a threshold, used
//! by [`super::busy`] and [`super::cross`].
//!
//! A stream holds full-resolution rows and, for long runs, buckets of folded rows between
//! them (`docs/report-format.md`, "Retention"). Each row or bucket is one [`Span`]:
//! - a row stands for the time to the next row or bucket, capped at twice the typical row
//!   spacing (a hole in a log is not one sample's worth), and the last row for the typical
//!   spacing;
//! - a bucket stands for its folded time, `t_end − t_start` plus one typical spacing, scaled by
//!   the share of its rows that had a value.
//!
//! Mean utilization is `Σ u·w / Σ w`. The share of time below a threshold counts each row's
//! whole weight when its value is below, and a bucket's weight times the fraction of its
//! values in the bands below the threshold. The bands' edges are the signals' thresholds, so
//! this is exact over buckets; a bucket without bands (older reports) counts by its mean.

use crate::metric::GpuMetric;
use crate::report::SeriesData;

/// One row or bucket of a utilization series.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    /// Start, seconds.
    pub t: f64,
    /// Seconds it stands for.
    pub w: f64,
    /// The value (a bucket's mean), %.
    pub u: f64,
    kind: Kind,
}

/// What a span is.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    /// One row.
    Row,
    /// A bucket known by its mean only (older reports).
    Mean,
    /// A bucket with bands: the upper edge of each band but the last, and the fraction of
    /// its values in each band.
    Bands(Vec<f32>, Vec<f64>),
}

impl Span {
    /// The fraction of this span's time below `threshold` (exact when the threshold is a
    /// band edge).
    pub fn below(&self, threshold: f64) -> f64 {
        match &self.kind {
            Kind::Bands(edges, frac) => bands_below(edges, frac, threshold),
            Kind::Row | Kind::Mean => f64::from(u8::from(self.u < threshold)),
        }
    }

    /// The fraction of this span's time at or above `threshold`.
    pub fn at_least(&self, threshold: f64) -> f64 {
        1.0 - self.below(threshold)
    }

    /// True for a folded bucket rather than one row.
    pub fn is_bucket(&self) -> bool {
        self.kind != Kind::Row
    }
}

/// The fraction of values below `threshold` from band fractions: whole bands below it, and
/// within the band holding it a share proportional to where it falls (0–100 % scale), which
/// is exact when the threshold is an edge.
fn bands_below(edges: &[f32], frac: &[f64], threshold: f64) -> f64 {
    let mut lo = 0.0;
    let mut sum = 0.0;
    for (k, f) in frac.iter().enumerate() {
        let hi = edges.get(k).map_or(100.0, |e| f64::from(*e));
        if threshold >= hi {
            sum += f;
        } else {
            if threshold > lo && hi > lo {
                sum += f * (threshold - lo) / (hi - lo);
            }
            break;
        }
        lo = hi;
    }
    sum
}

/// The typical spacing of a stream's rows: their median positive gap, else `interval_s`,
/// else one second.
pub fn typical_gap(t: &[f64], interval_s: f64) -> f64 {
    let mut gaps: Vec<f64> = t
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|g| *g > 0.0)
        .collect();
    gaps.sort_by(f64::total_cmp);
    match gaps.get(gaps.len() / 2) {
        Some(g) => *g,
        None if interval_s > 0.0 => interval_s,
        None => 1.0,
    }
}

/// The stream's utilization as spans in time order, missing values left out.
pub fn util_spans(data: &SeriesData, interval_s: f64) -> Vec<Span> {
    let mut out: Vec<Span> = indexed(data, interval_s)
        .into_iter()
        .filter(|s| s.u.is_finite() && s.w > 0.0)
        .collect();
    out.sort_by(|a, b| a.t.total_cmp(&b.t));
    out
}

/// The stream's utilization as spans in the order signals read a column (the rows, then
/// the buckets), missing values included, each weighted as the module says.
pub fn indexed(data: &SeriesData, interval_s: f64) -> Vec<Span> {
    let typical = typical_gap(&data.t, interval_s);
    let util = data.metrics.get(GpuMetric::UtilGpu.name());
    let mut out: Vec<Span> = data
        .t
        .iter()
        .enumerate()
        .map(|(i, t)| Span {
            t: *t,
            w: 0.0,
            u: util
                .and_then(|c| c.0.get(i))
                .map_or(f64::NAN, |v| f64::from(*v)),
            kind: Kind::Row,
        })
        .collect();
    out.extend(buckets(data, typical));
    let mut order: Vec<usize> = (0..out.len()).collect();
    order.sort_by(|a, b| out[*a].t.total_cmp(&out[*b].t));
    // A row stands for the time to whatever comes next, row or bucket.
    for (k, i) in order.iter().enumerate() {
        if *i < data.t.len() {
            let next = order.get(k + 1).map(|n| out[*n].t);
            let t = out[*i].t;
            out[*i].w = next.map_or(typical, |n| (n - t).clamp(0.0, 2.0 * typical));
        }
    }
    out
}

/// The buckets of the stream's utilization, one span each (a bucket with no coarse
/// utilization column gives none).
fn buckets(data: &SeriesData, typical: f64) -> Vec<Span> {
    let Some(c) = &data.coarse else {
        return Vec::new();
    };
    let Some(cc) = c.metrics.get(GpuMetric::UtilGpu.name()) else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(c.t_start.len());
    for (i, (a, b)) in c.t_start.iter().zip(&c.t_end).enumerate() {
        let mean = cc.mean.0.get(i).map_or(f64::NAN, |v| f64::from(*v));
        let count = cc.count.get(i).map(|n| f64::from(*n));
        let rows = c.rows.get(i).map(|n| f64::from(*n));
        let present = match (count, rows) {
            (Some(n), Some(r)) if r > 0.0 => n / r,
            _ => 1.0,
        };
        let w = ((b - a).max(0.0) + typical) * present;
        let kind = band_fractions(&c.band_edges, &cc.bands, i, count).unwrap_or(Kind::Mean);
        let s = Span {
            t: *a,
            w,
            u: mean,
            kind,
        };
        out.push(s);
    }
    out
}

/// Fractions of bucket `i`'s values in each band, when the report has bands.
fn band_fractions(edges: &[f32], bands: &[Vec<u32>], i: usize, count: Option<f64>) -> Option<Kind> {
    if edges.is_empty() || bands.len() != edges.len() + 1 {
        return None;
    }
    let per: Vec<f64> = bands
        .iter()
        .map(|b| b.get(i).map_or(0.0, |n| f64::from(*n)))
        .collect();
    let n = count
        .unwrap_or_else(|| per.iter().sum())
        .max(per.iter().sum());
    (n > 0.0).then(|| Kind::Bands(edges.to_vec(), per.iter().map(|k| k / n).collect()))
}

/// Total seconds of `spans`.
pub fn seconds(spans: &[Span]) -> f64 {
    spans.iter().map(|s| s.w).sum()
}

/// Time-weighted mean utilization of `spans`, % (`None` when they cover no time).
pub fn mean(spans: &[Span]) -> Option<f64> {
    let total = seconds(spans);
    (total > 0.0).then(|| spans.iter().map(|s| s.u * s.w).sum::<f64>() / total)
}

/// Share of the time of `spans` with utilization below `threshold`.
pub fn share_below(spans: &[Span], threshold: f64) -> Option<f64> {
    let total = seconds(spans);
    (total > 0.0).then(|| spans.iter().map(|s| s.w * s.below(threshold)).sum::<f64>() / total)
}

/// Share of the time of `spans` with utilization at or above `threshold`.
pub fn share_at_least(spans: &[Span], threshold: f64) -> Option<f64> {
    share_below(spans, threshold).map(|b| 1.0 - b)
}

/// Utilization spans in column order, each with the number of values it holds (1 per row,
/// a bucket's count), for shares of samples rather than of time; missing values left out.
pub fn value_spans(data: &SeriesData, interval_s: f64) -> Vec<(f64, Span)> {
    let counts = data
        .coarse
        .as_ref()
        .and_then(|c| c.metrics.get(GpuMetric::UtilGpu.name()))
        .map(|cc| cc.count.clone())
        .unwrap_or_default();
    let rows = data.t.len();
    indexed(data, interval_s)
        .into_iter()
        .enumerate()
        .filter(|(_, s)| s.u.is_finite())
        .map(|(i, s)| {
            let n = if i < rows {
                1.0
            } else {
                counts.get(i - rows).map_or(1.0, |c| f64::from(*c))
            };
            (n, s)
        })
        .collect()
}

/// The share of values for which `frac` (a span's fraction) holds, `None` without values.
pub fn value_share(spans: &[(f64, Span)], frac: impl Fn(&Span) -> f64) -> Option<f64> {
    let total: f64 = spans.iter().map(|(n, _)| n).sum();
    (total > 0.0).then(|| spans.iter().map(|(n, s)| n * frac(s)).sum::<f64>() / total)
}

/// The longest run of rows with no bucket between two of them, as `from..to` row indices
/// (all rows when the stream has no buckets).
pub fn longest_contiguous_rows(data: &SeriesData) -> (usize, usize) {
    let t = &data.t;
    let starts: &[f64] = data.coarse.as_ref().map_or(&[], |c| &c.t_start);
    let (mut best, mut start, mut k) = ((0, 0), 0, 0);
    for i in 1..=t.len() {
        // Buckets and rows are both in time order: walk the bucket starts alongside.
        while k < starts.len() && i < t.len() && starts[k] <= t[i - 1] {
            k += 1;
        }
        let broken = i == t.len() || starts.get(k).is_some_and(|b| *b < t[i]);
        if broken {
            if i - start > best.1 - best.0 {
                best = (start, i);
            }
            start = i;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::GpuMetric;
    use crate::recording::{Recording, Retention, SeriesBuf};
    use crate::report::{DeviceInfo, Report, RunInfo};

    /// A stream of `n` rows at 1 s, utilization from `u(i)`, kept with `retention`, as the
    /// report has it.
    fn stream(n: usize, retention: Retention, u: impl Fn(usize) -> f32) -> SeriesData {
        let mut rec = Recording::new(RunInfo::default());
        rec.add_device(DeviceInfo::default());
        rec.devices[0].series = SeriesBuf::with_retention(
            GpuMetric::COUNT,
            retention,
            &crate::recording::banded_gpu_columns(),
        );
        let mut row = [f32::NAN; GpuMetric::COUNT];
        for i in 0..n {
            row[GpuMetric::UtilGpu.index()] = u(i);
            rec.push_gpu(0, i as f64, &row);
        }
        Report::from_recording(&rec).series.remove(0).data
    }

    fn unbounded() -> Retention {
        Retention {
            head_rows: 0,
            recent_rows: 1 << 20,
            window_rows: 0,
            buckets: 2,
        }
    }

    #[test]
    fn shares_over_buckets_equal_those_over_every_row() {
        // A sawtooth whose period does not divide any bucket width: bucket means mix busy and
        // idle samples, so only the band counts keep the shares exact.
        let u = |i: usize| match i % 7 {
            0 | 1 => 0.0,
            2 => 15.0,
            3 => 60.0,
            _ => 97.0,
        };
        let small = Retention {
            head_rows: 50,
            recent_rows: 100,
            window_rows: 0,
            buckets: 16,
        };
        let full = util_spans(&stream(20_000, unbounded(), u), 1.0);
        let folded = util_spans(&stream(20_000, small, u), 1.0);
        assert!(folded.len() < 200, "{} spans", folded.len());
        assert!((seconds(&full) - seconds(&folded)).abs() < 1e-6);
        for thr in [10.0, 20.0, 50.0, 80.0] {
            let (a, b) = (share_below(&full, thr), share_below(&folded, thr));
            let (a, b) = (a.expect("time"), b.expect("time"));
            assert!((a - b).abs() < 1e-9, "below {thr}: {a} vs {b}");
        }
        let (a, b) = (mean(&full).expect("time"), mean(&folded).expect("time"));
        assert!((a - b).abs() < 1e-3, "mean {a} vs {b}");
    }

    #[test]
    fn a_bucket_without_bands_counts_by_its_mean() {
        let mut d = stream(
            300,
            Retention {
                head_rows: 0,
                recent_rows: 10,
                window_rows: 0,
                buckets: 4,
            },
            |i| {
                if i % 2 == 0 {
                    0.0
                } else {
                    30.0
                }
            },
        );
        let c = d.coarse.as_mut().expect("buckets");
        c.band_edges.clear();
        c.rows.clear();
        for col in c.metrics.values_mut() {
            col.bands.clear();
            col.count.clear();
        }
        let spans = util_spans(&d, 1.0);
        let buckets: Vec<&Span> = spans.iter().filter(|s| s.is_bucket()).collect();
        assert!(!buckets.is_empty());
        // Mean 15 %: none of it below 10, all of it below 20.
        assert!(buckets
            .iter()
            .all(|s| s.below(10.0) == 0.0 && s.below(20.0) == 1.0));
    }

    #[test]
    fn the_longest_contiguous_rows_skip_over_buckets() {
        let r = Retention {
            head_rows: 5,
            recent_rows: 20,
            window_rows: 0,
            buckets: 8,
        };
        let d = stream(100, r, |_| 50.0);
        assert_eq!(longest_contiguous_rows(&d), (5, 25));
        let whole = stream(10, r, |_| 50.0);
        assert_eq!(longest_contiguous_rows(&whole), (0, 10));
    }
}
