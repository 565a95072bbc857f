//! The statistics every crate uses, each defined once: quantiles (percentiles, the median,
//! selection without sorting) and the Mann–Whitney rank test. The command line, the C ABI
//! and the browser viewer all call these, so a median means the same thing everywhere.
//!
//! # The quantile definition
//! The quantile `q` (0..=1) of `n` values sorted ascending is the value at 0-based rank
//! `round(q·(n−1))`, halves rounded away from zero: the observation nearest to the
//! position that numpy's default (`linear`) method interpolates at. It is numpy's
//! `quantile(method="nearest")` except at an exact half, where numpy picks the even rank
//! and this picks the higher one (docs/statistics.md has the source and examples). Every
//! quantile is a value that was measured, never a value between two; the median of an even
//! count is the upper of the two middle values.
//!
//! Not here: time-weighted shares and mean utilization (signals), and the bounded step-time
//! sketch (`steps::sketch`), which estimates these quantiles in fixed memory.

mod mannwhitney;

pub use mannwhitney::{
    mann_whitney, mann_whitney_sorted, normal_cdf, thin, MannWhitney, ALPHA, MAX_N,
};

/// The 0-based rank of quantile `q` among `n` sorted values (see the module docs); 0 when
/// `n` is 0. In `u64` because the step sketch counts more values than a 32-bit index.
pub fn rank(n: u64, q: f64) -> u64 {
    let last = n.saturating_sub(1);
    ((q.clamp(0.0, 1.0) * last as f64).round() as u64).min(last)
}

/// Quantile `q` of values sorted ascending (f64 or the report's f32 columns), NaN when
/// there are none.
pub fn percentile_sorted<T: Copy + Into<f64>>(sorted: &[T], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[rank(sorted.len() as u64, q) as usize].into()
}

/// The median of the finite values, `None` when there are none.
pub fn median(mut values: Vec<f64>) -> Option<f64> {
    values.retain(|x| x.is_finite());
    values.sort_by(f64::total_cmp);
    (!values.is_empty()).then(|| percentile_sorted(&values, 0.5))
}

/// Quantile `q` of `values` (finite, in any order) by selection, without a full sort: the
/// same value [`percentile_sorted`] gives. Reorders `values`; `None` when empty.
pub fn select(values: &mut [f64], q: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let k = rank(values.len() as u64, q) as usize;
    let (_, m, _) = values.select_nth_unstable_by(k, f64::total_cmp);
    Some(*m)
}

/// The median of ascending `sorted` without one occurrence of `v` (which it holds): what
/// "the others" have, as every rank-against-the-others comparison reads it. O(1) after a
/// binary search, so each of a thousand ranks is measured against the rest after one sort.
/// `None` when nothing is left.
pub fn median_without_sorted(sorted: &[f64], v: f64) -> Option<f64> {
    let k = sorted.partition_point(|x| x.total_cmp(&v).is_lt());
    let m = sorted.len().checked_sub(1).filter(|m| *m > 0)?;
    let j = rank(m as u64, 0.5) as usize;
    Some(if j < k { sorted[j] } else { sorted[j + 1] })
}

/// As [`median_without_sorted`], for values in any order, by selection (no sort: the viewer
/// runs this too, and every sort is code in its module).
pub fn median_without(values: &[f64], v: f64) -> Option<f64> {
    let mut rest = values.to_vec();
    let at = rest.iter().position(|y| *y == v)?;
    rest.swap_remove(at);
    select(&mut rest, 0.5)
}

/// The median of ascending `sorted`, `None` when empty.
pub fn median_sorted(sorted: &[f64]) -> Option<f64> {
    (!sorted.is_empty()).then(|| percentile_sorted(sorted, 0.5))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_without_one_value_use_the_one_rank() {
        let s = [1.0, 2.0, 3.0, 10.0];
        // Three left: the middle one.
        assert_eq!(median_without_sorted(&s, 10.0), Some(2.0));
        assert_eq!(median_without_sorted(&s, 1.0), Some(3.0));
        assert_eq!(median_without_sorted(&s, 2.0), Some(3.0));
        // Two left: the upper, as `percentile_sorted` gives.
        assert_eq!(median_without_sorted(&[1.0, 2.0, 2.0], 2.0), Some(2.0));
        assert_eq!(median_without_sorted(&[4.0], 4.0), None);
        for v in s {
            assert_eq!(
                median_without(&[10.0, 3.0, 1.0, 2.0], v),
                median_without_sorted(&s, v)
            );
        }
        assert_eq!(median_without(&[1.0, 4.0, 1.0], 1.0), Some(4.0));
        assert_eq!(median_without(&[5.0], 6.0), None);
        assert_eq!(median_sorted(&[1.0, 2.0]), Some(2.0));
        assert_eq!(median_sorted(&[]), None);
    }

    #[test]
    fn quantiles_are_measured_values_at_the_rounded_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile_sorted(&v, 0.5), 51.0);
        assert_eq!(percentile_sorted(&v, 0.95), 95.0);
        assert_eq!(percentile_sorted(&v, 0.05), 6.0);
        assert_eq!(percentile_sorted(&v, 0.0), 1.0);
        assert_eq!(percentile_sorted(&v, 1.0), 100.0);
        // The upper middle of an even count; the middle of an odd one.
        assert_eq!(percentile_sorted(&[1.0f32, 2.0, 3.0, 4.0], 0.5), 3.0);
        assert_eq!(percentile_sorted(&[1.0, 2.0, 3.0], 0.5), 2.0);
        assert!(percentile_sorted::<f64>(&[], 0.5).is_nan());
    }

    #[test]
    fn median_and_selection_agree_with_the_sorted_quantile() {
        assert_eq!(median(vec![4.0, f64::NAN, 1.0, 3.0, 2.0]), Some(3.0));
        assert_eq!(median(vec![f64::NAN]), None);
        let v: Vec<f64> = (0..37).map(|i| f64::from((i * 17) % 37)).collect();
        let mut s = v.clone();
        s.sort_by(f64::total_cmp);
        for q in [0.0, 0.05, 0.25, 0.5, 0.95, 0.99, 1.0] {
            let mut w = v.clone();
            assert_eq!(select(&mut w, q), Some(percentile_sorted(&s, q)), "q = {q}");
        }
        assert_eq!(select(&mut [], 0.5), None);
    }
}
