//! Quantiles and the Mann–Whitney U test as core computes them (`gpuwhy::signals::stats`,
//! `gpuwhy::compare::mann_whitney`), on the report's own `f32` columns.
//!
//! Why not core's functions: they sort `f64`s and `(f64, bool)` pairs, and each sort a
//! module contains is a few kilobytes of its own; sorting the `f32` values (which the page
//! already does, so the sort is there) gives the same order, and the same numbers. The
//! native tests check them against core's.

use gpuwhy::compare::{normal_cdf, MannWhitney, ALPHA};

/// Core's cap on the values the rank test ranks (larger samples are thinned evenly).
const MAX_N: usize = 20_000;

/// The finite values, sorted.
pub fn sorted(v: &[f32]) -> Vec<f32> {
    let mut s = finite(v);
    s.sort_by(f32::total_cmp);
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
    v.sort_by(f32::total_cmp);
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

/// The two-sided Mann–Whitney U test of core (normal approximation, tie and continuity
/// corrections): `None` when either sample has fewer than 2 values or all are tied.
pub fn mann_whitney(a: &[f32], b: &[f32]) -> Option<MannWhitney> {
    let (a, b) = (thin_sorted(a), thin_sorted(b));
    let (n1, n2) = (a.len(), b.len());
    if n1 < 2 || n2 < 2 {
        return None;
    }
    // Walk both sorted samples at once: each group of equal values takes the mean of the
    // ranks it spans, as in core's one sorted list.
    let (mut i, mut j, mut k) = (0, 0, 0usize);
    let (mut r1, mut ties) = (0.0, 0.0);
    while i < n1 || j < n2 {
        let v = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) => x.min(*y),
            (Some(x), None) => *x,
            (None, Some(y)) => *y,
            (None, None) => break,
        };
        let (i0, j0) = (i, j);
        while a.get(i) == Some(&v) {
            i += 1;
        }
        while b.get(j) == Some(&v) {
            j += 1;
        }
        let t = (i - i0) + (j - j0);
        let rank = (k + k + t - 1) as f64 / 2.0 + 1.0;
        let tf = t as f64;
        ties += tf * tf * tf - tf;
        r1 += (i - i0) as f64 * rank;
        k += t;
    }
    let (n1f, n2f, nf) = (n1 as f64, n2 as f64, (n1 + n2) as f64);
    let u = r1 - n1f * (n1f + 1.0) / 2.0;
    let mu = n1f * n2f / 2.0;
    let var = n1f * n2f / 12.0 * ((nf + 1.0) - ties / (nf * (nf - 1.0)));
    if var <= 0.0 {
        return None;
    }
    let diff = u - mu;
    let z = (diff - 0.5 * diff.signum()) / var.sqrt();
    let p = (2.0 * (1.0 - normal_cdf(z.abs()))).clamp(0.0, 1.0);
    Some(MannWhitney {
        u,
        z,
        p,
        significant: p < ALPHA,
    })
}
