//! Quantiles and the Mann–Whitney U test as core computes them (`gpuwhy::signals::stats`,
//! `gpuwhy::compare::mann_whitney`), on the report's own `f32` columns.
//!
//! Why not core's `f64` entry points: each sort a module contains is a few kilobytes of its
//! own; sorting the `f32` values (which the page already does, so the sort is there) gives
//! the same order, and core's [`mann_whitney_sorted`] the same numbers. The native tests
//! check them against core's.

use gpuwhy::compare::{mann_whitney_sorted, MannWhitney, MAX_N};

/// The finite values, sorted.
pub fn sorted(v: &[f32]) -> Vec<f32> {
    let mut s = finite(v);
    crate::sort::total(&mut s);
    s
}

/// The value at quantile `q` of sorted values (nearest rank, as core's
/// `percentile_sorted`), NaN when there are none.
pub fn quantile(sorted: &[f32], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64).round() as usize;
    f64::from(sorted[rank.min(sorted.len() - 1)])
}

/// Median of the finite values, `None` when there are none.
pub fn median(v: &[f32]) -> Option<f64> {
    let s = sorted(v);
    (!s.is_empty()).then(|| quantile(&s, 0.5))
}

/// The finite values in their order, thinned evenly to [`MAX_N`] as core does; sorted.
fn thin_sorted(v: &[f32]) -> Vec<f32> {
    let mut v = finite(v);
    if v.len() > MAX_N {
        let step = v.len() as f64 / MAX_N as f64;
        let mut t = Vec::with_capacity(MAX_N);
        for i in 0..MAX_N {
            t.push(v[(i as f64 * step) as usize]);
        }
        v = t;
    }
    crate::sort::total(&mut v);
    v
}

/// The finite values in their order.
fn finite(v: &[f32]) -> Vec<f32> {
    let mut s = Vec::with_capacity(v.len());
    for x in v {
        if x.is_finite() {
            s.push(*x);
        }
    }
    s
}

/// Core's two-sided Mann–Whitney U test on the finite values, thinned as core thins them.
pub fn mann_whitney(a: &[f32], b: &[f32]) -> Option<MannWhitney> {
    mann_whitney_sorted(&thin_sorted(a), &thin_sorted(b))
}
