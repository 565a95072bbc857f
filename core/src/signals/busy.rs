//! Time-weighted busy shares of one GPU: how much of the time it worked.
//!
//! NVML's utilization is "percent of time over the past sample period during which one or
//! more kernels was executing" (docs/rules.md, "Shares of time"), so the time-weighted mean
//! of the samples is the share of time the GPU was busy, and one minus it the share it
//! idled. Medians describe the typical sample; these shares say what the run lost, and a
//! few long idle stretches count for their length. Not for rendering.

use crate::report::SeriesData;

use super::timeshare::{mean, seconds, share_below, util_spans, Span};
use super::{BUSY_UTIL, NEAR_ZERO_UTIL};

/// Utilization (%) below which a sample is the low side of a swing: clearly less than
/// half busy. With [`BUSY_UTIL`] as the high side, a series that keeps crossing between the
/// two is a sawtooth even when its low side never reaches zero (an input pipeline in the
/// main process leaves some kernels running while the next batch is prepared).
pub const SWING_LOW_UTIL: f64 = 50.0;

/// Time-weighted shares of one GPU over its active span.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BusyShares {
    /// Time-weighted mean utilization over the active span, %.
    pub util_mean: f64,
    /// Share of the active span during which no kernel ran: `1 − util_mean / 100`.
    pub idle_share: f64,
    /// Share of the active span spent below [`NEAR_ZERO_UTIL`] (exact over buckets: they
    /// count their values per band).
    pub near_zero_share: f64,
    /// Length of the active span, seconds: from the first to the last sample at or above
    /// [`NEAR_ZERO_UTIL`] (start-up and shutdown idling are left out).
    pub span_s: f64,
    /// Idle time left out before the span (start-up), seconds.
    pub lead_idle_s: f64,
    /// Idle time left out after the span (shutdown), seconds.
    pub tail_idle_s: f64,
    /// Samples (or coarse buckets) in the span.
    pub samples: usize,
    /// Changes between low (< [`SWING_LOW_UTIL`]) and high (≥ [`BUSY_UTIL`]) stretches in
    /// the span, mid-level samples skipped: 3 or more is a sawtooth.
    pub swings: usize,
}

/// The busy shares of one GPU's samples, `None` without utilization samples. Rows and
/// buckets are weighted as [`super::timeshare`] says.
pub fn shares(data: &SeriesData, interval_s: f64) -> Option<BusyShares> {
    let all = util_spans(data, interval_s);
    if all.is_empty() {
        return None;
    }
    let first = all.iter().position(|x| x.u >= NEAR_ZERO_UTIL);
    let last = all.iter().rposition(|x| x.u >= NEAR_ZERO_UTIL);
    // A GPU that never worked idles over the whole record.
    let (a, b) = match (first, last) {
        (Some(a), Some(b)) => (a, b),
        _ => (0, all.len() - 1),
    };
    // Idling before the first work and after the last is start-up and shutdown only when it
    // is longer than any idle stretch in between: a log that starts inside one of the job's
    // own idle gaps (a data wait) keeps that gap.
    let longest = longest_idle(&all[a..=b]);
    let a = if seconds(&all[..a]) > longest { a } else { 0 };
    let b = if seconds(&all[b + 1..]) > longest {
        b
    } else {
        all.len() - 1
    };
    let span = &all[a..=b];
    let span_s = seconds(span);
    let util_mean = mean(span)?;
    Some(BusyShares {
        util_mean,
        idle_share: (1.0 - util_mean / 100.0).clamp(0.0, 1.0),
        near_zero_share: share_below(span, NEAR_ZERO_UTIL)?,
        span_s,
        lead_idle_s: seconds(&all[..a]),
        tail_idle_s: seconds(&all[b + 1..]),
        samples: span.len(),
        swings: swings(span),
    })
}

/// Changes between low and high stretches, mid-level samples skipped (a bucket by its mean).
fn swings(span: &[Span]) -> usize {
    let mut swings = 0;
    let mut side: Option<bool> = None;
    for x in span {
        let now = if x.u < SWING_LOW_UTIL {
            Some(false)
        } else if x.u >= BUSY_UTIL {
            Some(true)
        } else {
            None
        };
        if let Some(high) = now {
            if side.is_some_and(|s| s != high) {
                swings += 1;
            }
            side = Some(high);
        }
    }
    swings
}

/// The longest run of near-zero samples in `part`, seconds.
fn longest_idle(part: &[Span]) -> f64 {
    let (mut run, mut longest) = (0.0f64, 0.0f64);
    for x in part {
        run = if x.u < NEAR_ZERO_UTIL { run + x.w } else { 0.0 };
        longest = longest.max(run);
    }
    longest
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::GpuMetric;
    use crate::report::Column;

    fn data(util: &[f32], dt: f64) -> SeriesData {
        SeriesData {
            t: (0..util.len()).map(|i| i as f64 * dt).collect(),
            metrics: [(GpuMetric::UtilGpu.name().to_string(), Column(util.to_vec()))]
                .into_iter()
                .collect(),
            coarse: None,
        }
    }

    #[test]
    fn idle_share_is_time_weighted_and_leaves_out_start_up() {
        // 5 idle samples of start-up, then 30 %/90 % alternating: mean 60 %, idle 40 %.
        let mut u = vec![0.0; 5];
        u.extend((0..20).map(|i| if i % 2 == 0 { 30.0 } else { 90.0 }));
        let b = shares(&data(&u, 1.0), 1.0).expect("samples");
        assert!((b.util_mean - 60.0).abs() < 1e-9, "{b:?}");
        assert!((b.idle_share - 0.4).abs() < 1e-9);
        assert_eq!(b.lead_idle_s, 5.0);
        assert_eq!(b.samples, 20);
        assert_eq!(b.swings, 19, "every sample crosses between low and high");
    }

    #[test]
    fn a_log_that_starts_inside_a_data_wait_keeps_it() {
        // Idle 4 s of every 10, the log starting with one of those waits: 40 % idle, not the
        // 38 % left after taking the first wait for start-up.
        let u: Vec<f32> = (0..120)
            .map(|i| if i % 10 < 4 { 0.0 } else { 95.0 })
            .collect();
        let b = shares(&data(&u, 1.0), 1.0).expect("samples");
        assert_eq!(b.lead_idle_s, 0.0);
        assert!((b.near_zero_share - 0.4).abs() < 1e-9, "{b:?}");
    }

    #[test]
    fn a_hole_in_the_log_counts_as_two_gaps_at_most() {
        let mut d = data(&[90.0, 90.0, 0.0, 90.0], 1.0);
        // The idle sample is followed by a 100 s hole: it stands for 2 s, not 100.
        d.t = vec![0.0, 1.0, 2.0, 102.0];
        let b = shares(&d, 1.0).expect("samples");
        assert!((b.near_zero_share - 2.0 / 5.0).abs() < 1e-9, "{b:?}");
    }

    #[test]
    fn one_sample_is_read_and_a_never_busy_gpu_idles_throughout() {
        let one = shares(&data(&[20.0], 1.0), 1.0).expect("one sample");
        assert!((one.idle_share - 0.8).abs() < 1e-9);
        assert_eq!(one.samples, 1);
        let idle = shares(&data(&[0.0; 8], 1.0), 1.0).expect("samples");
        assert_eq!(idle.idle_share, 1.0);
        assert_eq!(idle.near_zero_share, 1.0);
        assert!(shares(&data(&[], 1.0), 1.0).is_none());
    }
}
