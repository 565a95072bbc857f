//! Core's statistics ([`gpuwhy::stats`]: its quantile definition and Mann–Whitney test) on
//! the report's own `f32` columns, sorted with the page's one sort.
//!
//! Why not core's `f64` entry points that sort for themselves: each sort a module contains
//! is a few kilobytes of its own; sorting the `f32` values with the page's sort
//! ([`crate::sort::total`]) gives the same order, and core's generic functions the same
//! numbers. The native tests check them against core's `f64` ones.

use gpuwhy::stats::{mann_whitney_sorted, thin, MannWhitney};

pub use gpuwhy::stats::percentile_sorted as quantile;

/// The finite values, sorted.
pub fn sorted(v: &[f32]) -> Vec<f32> {
    let mut s = finite(v);
    crate::sort::total(&mut s);
    s
}

/// Median of the finite values, `None` when there are none.
pub fn median(v: &[f32]) -> Option<f64> {
    let s = sorted(v);
    (!s.is_empty()).then(|| quantile(&s, 0.5))
}

/// The present (not missing) values of a column, in their order.
pub fn present(c: &gpuwhy::report::Column) -> Vec<f32> {
    let mut s = Vec::with_capacity(c.0.len());
    for x in &c.0 {
        if !x.is_nan() {
            s.push(*x);
        }
    }
    s
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
    let prepared = |v: &[f32]| {
        let mut t = thin(finite(v));
        crate::sort::total(&mut t);
        t
    };
    mann_whitney_sorted(&prepared(a), &prepared(b))
}
