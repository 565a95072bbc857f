//! Small statistics over sample columns: distributions, shares, correlation, periodicity.
//! Quantiles and the median are [`crate::stats`]'s (one definition in all of gpuwhy),
//! re-exported here for the signals and rules that read them.

pub use crate::stats::{median, percentile_sorted};

/// Percentiles ([`crate::stats`]'s definition) and mean of the present values of a column.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dist {
    /// 5th percentile.
    pub p5: f64,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// Mean (for energy-like sums only; rules compare medians and p95s).
    pub mean: f64,
    /// Number of present values.
    pub n: usize,
}

/// Distribution of the present (non-NaN) values, `None` when there are none.
pub fn dist(values: impl IntoIterator<Item = f64>) -> Option<Dist> {
    let mut v: Vec<f64> = values.into_iter().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    Some(Dist {
        p5: percentile_sorted(&v, 0.05),
        p50: percentile_sorted(&v, 0.5),
        p95: percentile_sorted(&v, 0.95),
        mean,
        n: v.len(),
    })
}

/// Share (0–1) of present values satisfying `pred`; `None` when there are none.
pub fn share(values: impl IntoIterator<Item = f64>, pred: impl Fn(f64) -> bool) -> Option<f64> {
    let (k, n) = count(values, pred);
    (n > 0).then(|| k as f64 / n as f64)
}

/// (present values satisfying `pred`, present values).
pub fn count(values: impl IntoIterator<Item = f64>, pred: impl Fn(f64) -> bool) -> (u64, u64) {
    let (mut n, mut k) = (0u64, 0u64);
    for v in values.into_iter().filter(|x| x.is_finite()) {
        n += 1;
        k += u64::from(pred(v));
    }
    (k, n)
}

/// Pearson correlation over the positions where both values are present.
pub fn correlation(a: &[f64], b: &[f64]) -> Option<f64> {
    let pairs: Vec<(f64, f64)> = a
        .iter()
        .zip(b)
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .map(|(x, y)| (*x, *y))
        .collect();
    if pairs.len() < 8 {
        return None;
    }
    let n = pairs.len() as f64;
    let (ma, mb) = (
        pairs.iter().map(|p| p.0).sum::<f64>() / n,
        pairs.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in &pairs {
        sab += (x - ma) * (y - mb);
        saa += (x - ma) * (x - ma);
        sbb += (y - mb) * (y - mb);
    }
    if saa <= f64::EPSILON || sbb <= f64::EPSILON {
        return None;
    }
    Some(sab / (saa.sqrt() * sbb.sqrt()))
}

/// A repeating pattern found by autocorrelation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Period {
    /// Lag of the strongest repeat, in samples.
    pub lag: usize,
    /// Autocorrelation at that lag (−1..1); ≥ 0.3 is a clear repeat.
    pub strength: f64,
}

/// Most samples the periodicity search looks at (the most recent ones), to bound its cost.
pub const PERIOD_MAX_SAMPLES: usize = 20_000;
/// Longest lag searched, in samples.
pub const PERIOD_MAX_LAG: usize = 1_200;

/// Dominant period of a series by autocorrelation: the highest autocorrelation peak after
/// the first zero crossing. Missing values are replaced by the mean. `None` for series too
/// short to hold two periods, flat series, or no peak.
pub fn dominant_period(values: &[f64]) -> Option<Period> {
    let start = values.len().saturating_sub(PERIOD_MAX_SAMPLES);
    let v = &values[start..];
    let present: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if present.len() < 16 || present.len() * 10 < v.len() * 9 {
        return None;
    }
    let mean = present.iter().sum::<f64>() / present.len() as f64;
    let x: Vec<f64> = v
        .iter()
        .map(|y| if y.is_finite() { y - mean } else { 0.0 })
        .collect();
    let var: f64 = x.iter().map(|y| y * y).sum();
    if var <= f64::EPSILON * x.len() as f64 {
        return None;
    }
    let max_lag = (x.len() / 2).min(PERIOD_MAX_LAG);
    let acf =
        |lag: usize| -> f64 { x.iter().zip(&x[lag..]).map(|(a, b)| a * b).sum::<f64>() / var };
    let mut lag = 1;
    while lag < max_lag && acf(lag) > 0.0 {
        lag += 1;
    }
    let mut best: Option<Period> = None;
    let mut prev = acf(lag.saturating_sub(1).max(1));
    let mut cur = acf(lag);
    while lag + 1 < max_lag {
        let next = acf(lag + 1);
        if cur > prev && cur >= next && best.is_none_or(|b| cur > b.strength + 0.05) {
            best = Some(Period { lag, strength: cur });
        }
        prev = cur;
        cur = next;
        lag += 1;
    }
    best.filter(|b| b.strength > 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_known_values() {
        let d = dist((1..=100).map(f64::from)).expect("values");
        assert_eq!(d.p50, 51.0);
        assert_eq!(d.p95, 95.0);
        assert_eq!(d.p5, 6.0);
        assert!(dist([f64::NAN]).is_none());
    }

    #[test]
    fn finds_square_wave_period_and_ignores_noise() {
        let sq: Vec<f64> = (0..400)
            .map(|i| if i % 10 < 4 { 2.0 } else { 98.0 })
            .collect();
        let p = dominant_period(&sq).expect("periodic");
        assert_eq!(p.lag, 10);
        assert!(p.strength > 0.8);
        // Deterministic pseudo-noise: no strong repeat.
        let noise: Vec<f64> = (0..400u64)
            .map(|i| {
                // splitmix64
                let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                ((z ^ (z >> 31)) % 100) as f64
            })
            .collect();
        assert!(dominant_period(&noise).is_none_or(|p| p.strength < 0.3));
        assert!(
            dominant_period(&[50.0; 100]).is_none(),
            "flat is not periodic"
        );
    }

    #[test]
    fn correlation_sign() {
        let a: Vec<f64> = (0..20).map(f64::from).collect();
        let b: Vec<f64> = a.iter().map(|x| 2.0 * x + 1.0).collect();
        let c: Vec<f64> = a.iter().map(|x| -x).collect();
        assert!((correlation(&a, &b).expect("corr") - 1.0).abs() < 1e-9);
        assert!((correlation(&a, &c).expect("corr") + 1.0).abs() < 1e-9);
    }
}
