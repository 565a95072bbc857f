//! SM activity standing in for utilization where the driver gives no utilization.
//!
//! A MIG device (and a MIG-enabled GPU) answers NOT_SUPPORTED for utilization rates, but on
//! Hopper its GPU instance's GPM SM activity is read (`docs/job-gpus.md`, "MIG"). Rather than
//! call such a device idle or say nothing, the utilization-based signals (busy shares, dips,
//! periods) read GPM SM activity instead, and the device's signals say so
//! ([`super::DeviceSignals::util_from_gpm`]). SM activity is the share of time the SMs were
//! busy averaged over the SMs, so it reads lower than utilization (any kernel running) on
//! a GPU that is working: it is the closer of the two to the work done, never higher.
//!
//! GPM is read once per slow tick and each value is the mean since the snapshot before it,
//! so each value stands for the rows up to it (the rows since the previous value).

use crate::metric::GpuMetric;
use crate::report::{Column, SeriesData};

/// `data` with `util_gpu` replaced by GPM SM activity, when `util_gpu` has no value and
/// `gpm_sm_util` has; `None` otherwise (the series is read as it is).
pub fn util_from_gpm(data: &SeriesData) -> Option<SeriesData> {
    let util = GpuMetric::UtilGpu.name();
    let gpm = GpuMetric::GpmSmUtil.name();
    let has = |name: &str| {
        data.metrics
            .get(name)
            .is_some_and(|c| c.present().next().is_some())
            || data
                .coarse
                .as_ref()
                .and_then(|c| c.metrics.get(name))
                .is_some_and(|c| c.mean.present().next().is_some())
    };
    if has(util) || !has(gpm) {
        return None;
    }
    let mut out = data.clone();
    if let Some(c) = data.metrics.get(gpm) {
        let mut filled = c.0.clone();
        let mut next = f32::NAN;
        for v in filled.iter_mut().rev() {
            if v.is_nan() {
                *v = next;
            } else {
                next = *v;
            }
        }
        out.metrics.insert(util.to_string(), Column(filled));
    }
    if let Some(coarse) = out.coarse.as_mut() {
        if let Some(c) = coarse.metrics.get(gpm).cloned() {
            coarse.metrics.insert(util.to_string(), c);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(util: Vec<f32>, gpm: Vec<f32>) -> SeriesData {
        let n = util.len();
        SeriesData {
            t: (0..n).map(|i| i as f64 * 0.1).collect(),
            metrics: [
                (GpuMetric::UtilGpu.name().to_string(), Column(util)),
                (GpuMetric::GpmSmUtil.name().to_string(), Column(gpm)),
            ]
            .into_iter()
            .collect(),
            coarse: None,
        }
    }

    #[test]
    fn gpm_fills_in_for_missing_utilization_each_value_covering_the_rows_before_it() {
        let nan = f32::NAN;
        let d = series(vec![nan; 6], vec![nan, nan, 80.0, nan, 5.0, nan]);
        let u = util_from_gpm(&d).expect("no utilization, GPM present");
        let col = &u.metrics[GpuMetric::UtilGpu.name()].0;
        assert_eq!(&col[..5], &[80.0, 80.0, 80.0, 5.0, 5.0]);
        assert!(col[5].is_nan(), "after the last GPM value: unknown");
    }

    #[test]
    fn real_utilization_or_no_gpm_leaves_the_series_alone() {
        let nan = f32::NAN;
        assert!(util_from_gpm(&series(vec![50.0, nan], vec![40.0, nan])).is_none());
        assert!(util_from_gpm(&series(vec![nan, nan], vec![nan, nan])).is_none());
    }
}
