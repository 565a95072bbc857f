//! Interval arithmetic on `(start, end)` pairs in µs, and distributions.

use super::summary::Spread;
use crate::stats::percentile_sorted;

/// Sorts and merges overlapping or touching intervals.
pub(crate) fn merge(mut v: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(v.len().min(1 << 16));
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Total length of merged intervals (0, not `Sum`'s -0, when there are none).
pub(crate) fn length(merged: &[(f64, f64)]) -> f64 {
    merged.iter().fold(0.0, |total, (s, e)| total + (e - s))
}

/// Length of the intersection of two merged interval lists.
pub(crate) fn intersection(a: &[(f64, f64)], b: &[(f64, f64)]) -> f64 {
    let (mut i, mut j, mut total) = (0, 0, 0.0);
    while i < a.len() && j < b.len() {
        let lo = a[i].0.max(b[j].0);
        let hi = a[i].1.min(b[j].1);
        if hi > lo {
            total += hi - lo;
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    total
}

/// Percentiles and mean of `v` (sorted in place).
pub(crate) fn spread(v: &mut [f64]) -> Spread {
    if v.is_empty() {
        return Spread::default();
    }
    v.sort_by(f64::total_cmp);
    Spread {
        n: v.len(),
        p50: percentile_sorted(v, 0.5),
        p95: percentile_sorted(v, 0.95),
        mean: v.iter().sum::<f64>() / v.len() as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_and_intersection() {
        let a = merge(vec![(5.0, 7.0), (0.0, 2.0), (1.0, 3.0)]);
        assert_eq!(a, vec![(0.0, 3.0), (5.0, 7.0)]);
        assert_eq!(length(&a), 5.0);
        let b = merge(vec![(2.0, 6.0)]);
        assert_eq!(intersection(&a, &b), 2.0);
        let s = spread(&mut [3.0, 1.0, 2.0]);
        assert_eq!((s.n, s.p50, s.mean), (3, 2.0, 2.0));
    }
}
