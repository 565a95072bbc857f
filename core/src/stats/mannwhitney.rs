//! The Mann–Whitney U test: are two samples' values shifted against each other?
//!
//! Rank-based, so it compares medians' worth of evidence without assuming a distribution —
//! step times are skewed and heavy-tailed, and the guides compare medians, never means.

pub use crate::report::MannWhitney;

/// Significance level.
pub const ALPHA: f64 = 0.05;

/// Largest sample the test ranks; larger ones are thinned evenly (deterministically) to this
/// size, which keeps the test's power far beyond what step-time differences need.
pub const MAX_N: usize = 20_000;

/// `v` thinned evenly (deterministically) to at most [`MAX_N`] values, in their order.
pub fn thin<T: Copy>(v: Vec<T>) -> Vec<T> {
    if v.len() <= MAX_N {
        return v;
    }
    let step = v.len() as f64 / MAX_N as f64;
    let mut t = Vec::with_capacity(MAX_N);
    for i in 0..MAX_N {
        t.push(v[(i as f64 * step) as usize]);
    }
    t
}

/// The finite values of `v`, [`thin`]ned.
fn finite_thinned(v: &[f64]) -> Vec<f64> {
    thin(v.iter().copied().filter(|x| x.is_finite()).collect())
}

/// Standard normal CDF (Abramowitz & Stegun 7.1.26 for erf, absolute error < 1.5e-7).
pub fn normal_cdf(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs() / std::f64::consts::SQRT_2);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-(x * x) / 2.0).exp();
    if x >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

/// Tests whether `a` and `b` differ in location. `None` when either has fewer than 2 values
/// or all values are tied.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    let (mut a, mut b) = (finite_thinned(a), finite_thinned(b));
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    mann_whitney_sorted(&a, &b)
}

/// [`mann_whitney`] of two samples already thinned, free of NaN and sorted ascending: the
/// test walks both at once, each group of equal values taking the mean of the ranks it
/// spans. Generic so that the viewer runs it on the report's `f32` columns, which it sorts
/// with its own sort, without a second sort in its module.
pub fn mann_whitney_sorted<T: Copy + PartialOrd>(a: &[T], b: &[T]) -> Option<MannWhitney> {
    let (n1, n2) = (a.len(), b.len());
    if n1 < 2 || n2 < 2 {
        return None;
    }
    let (mut i, mut j, mut k) = (0, 0, 0usize);
    let (mut r1, mut ties) = (0.0, 0.0);
    while i < n1 || j < n2 {
        let v = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) => {
                if x <= y {
                    x
                } else {
                    y
                }
            }
            (Some(&x), None) => x,
            (None, Some(&y)) => y,
            (None, None) => break,
        };
        let (i0, j0) = (i, j);
        while a.get(i).is_some_and(|x| *x == v) {
            i += 1;
        }
        while b.get(j).is_some_and(|y| *y == v) {
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
    // Continuity correction toward zero.
    let z = (diff - 0.5 * diff.signum()) / var.sqrt();
    let p = (2.0 * (1.0 - normal_cdf(z.abs()))).clamp(0.0, 1.0);
    Some(MannWhitney {
        u,
        z,
        p,
        significant: p < ALPHA,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_cdf_known_points() {
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_cdf(1.959_964) - 0.975).abs() < 1e-6);
        assert!((normal_cdf(-1.0) - 0.158_655).abs() < 1e-5);
    }

    #[test]
    fn shifted_samples_differ_and_identical_ones_do_not() {
        let a: Vec<f64> = (0..200).map(|i| 1.0 + (i % 17) as f64 * 0.01).collect();
        let b: Vec<f64> = a.iter().map(|x| x * 0.7).collect();
        let r = mann_whitney(&a, &b).expect("test runs");
        assert!(r.significant && r.p < 1e-10, "{r:?}");
        let same = mann_whitney(&a, &a).expect("test runs");
        assert!(!same.significant && same.p > 0.9, "{same:?}");
        assert!(mann_whitney(&[1.0], &a).is_none());
        assert!(mann_whitney(&[2.0; 10], &[2.0; 10]).is_none(), "all tied");
    }

    #[test]
    fn matches_a_hand_computed_small_case() {
        // a = {1, 2, 3}, b = {4, 5, 6}: U1 = 0, mu = 4.5, var = 9*7/12 = 5.25.
        let r = mann_whitney(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).expect("runs");
        assert_eq!(r.u, 0.0);
        assert!((r.z - (-4.0 / 5.25f64.sqrt())).abs() < 1e-9);
    }
}
