//! A bounded quantile sketch with a relative-error guarantee, for step and phase durations
//! beyond the steps kept exactly.
//!
//! The idea is DDSketch's (Masson, Rim & Lee, VLDB 2019): buckets whose width grows with the
//! value, so any quantile is returned within a fixed *relative* error however skewed the
//! distribution. The bucket of a value comes from the bits of its `f64` — the exponent and
//! the top [`MANTISSA_BITS`] bits of the mantissa — which is DDSketch's "linearly
//! interpolated" mapping: no logarithm on the insert path, and a dense, fixed-size array.

/// Mantissa bits that split each power of two into sub-buckets.
pub const MANTISSA_BITS: u32 = 6;
/// Sub-buckets per power of two.
const SUB: usize = 1 << MANTISSA_BITS;
/// Smallest power of two with its own buckets: 2^-30 s ≈ 0.93 ns. Smaller values (and 0)
/// share one underflow bucket and are returned as the exact minimum, so their error is
/// below a nanosecond in absolute terms.
pub const SKETCH_MIN_EXP: i32 = -30;
/// One past the largest power of two with its own buckets: 2^20 s ≈ 12.1 days. Larger values
/// share one overflow bucket and are returned as the exact maximum.
pub const SKETCH_MAX_EXP: i32 = 20;
/// Buckets of one sketch: 64 per power of two from 2^-30 to 2^20, plus underflow and overflow.
pub const SKETCH_BUCKETS: usize = (SKETCH_MAX_EXP - SKETCH_MIN_EXP) as usize * SUB + 2;
/// Heap bytes of one sketch: 3,202 counters of 8 bytes = 25,616 bytes.
pub const SKETCH_BYTES: usize = SKETCH_BUCKETS * std::mem::size_of::<u64>();
/// Relative error of a quantile returned by the sketch, for values from 2^-30 s to 2^20 s.
///
/// A bucket spans `[L, L + 2^e/64)` with `L ≥ 2^e`; the sketch returns its midpoint, which is
/// within `(2^e/128) / L ≤ 1/128` (0.78 %) of any value in it. The quantile's rank is exact
/// (bucket counts are exact), so the estimate is within 1/128 of the exact nearest-rank
/// quantile of the same values.
pub const SKETCH_RELATIVE_ERROR: f64 = 1.0 / 128.0;

/// Counts of values per relative-width bucket, plus their exact minimum and maximum.
#[derive(Debug, Clone)]
pub struct QuantileSketch {
    counts: Box<[u64]>,
    total: u64,
    min: f64,
    max: f64,
}

impl Default for QuantileSketch {
    fn default() -> Self {
        Self::new()
    }
}

/// 2^`exp` for exponents of normal numbers.
const fn pow2(exp: i32) -> f64 {
    f64::from_bits(((exp + 1023) as u64) << 52)
}

/// Smallest value with its own bucket.
const MIN_VALUE: f64 = pow2(SKETCH_MIN_EXP);
/// Smallest value in the overflow bucket.
const MAX_VALUE: f64 = pow2(SKETCH_MAX_EXP);

fn bucket(x: f64) -> usize {
    // NaN goes to the underflow bucket too.
    if x.is_nan() || x < MIN_VALUE {
        return 0;
    }
    if x >= MAX_VALUE {
        return SKETCH_BUCKETS - 1;
    }
    let bits = x.to_bits();
    // Normal numbers only here (2^-30 is far above the subnormal range).
    let exp = ((bits >> 52) & 0x7ff) as i32 - 1023;
    let sub = ((bits >> (52 - MANTISSA_BITS)) as usize) & (SUB - 1);
    1 + (exp - SKETCH_MIN_EXP) as usize * SUB + sub
}

/// The value a bucket stands for: the midpoint of its range (see [`SKETCH_RELATIVE_ERROR`]).
fn representative(index: usize) -> f64 {
    let i = index - 1;
    let exp = SKETCH_MIN_EXP + (i / SUB) as i32;
    let sub = (i % SUB) as f64;
    pow2(exp) * (1.0 + (sub + 0.5) / SUB as f64)
}

impl QuantileSketch {
    /// An empty sketch ([`SKETCH_BYTES`] on the heap).
    pub fn new() -> Self {
        QuantileSketch {
            counts: vec![0; SKETCH_BUCKETS].into_boxed_slice(),
            total: 0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
        }
    }

    /// Adds one value (seconds). NaN is ignored.
    pub fn insert(&mut self, x: f64) {
        if x.is_nan() {
            return;
        }
        self.counts[bucket(x)] += 1;
        self.total += 1;
        self.min = self.min.min(x);
        self.max = self.max.max(x);
    }

    /// Values inserted.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// The `q`-quantile as [`crate::stats`] defines it (rank [`crate::stats::rank`]), within [`SKETCH_RELATIVE_ERROR`] of the
    /// exact one, clamped to the exact minimum and maximum; NaN when empty.
    pub fn quantile(&self, q: f64) -> f64 {
        if self.total == 0 {
            return f64::NAN;
        }
        let rank = crate::stats::rank(self.total, q);
        let mut seen = 0u64;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen > rank {
                return match i {
                    0 => self.min,
                    i if i == SKETCH_BUCKETS - 1 => self.max,
                    i => representative(i).clamp(self.min, self.max),
                };
            }
        }
        self.max
    }

    /// Heap bytes ([`SKETCH_BYTES`]).
    pub fn heap_bytes(&self) -> usize {
        self.counts.len() * std::mem::size_of::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::percentile_sorted;

    /// splitmix64: a deterministic generator, so the tests see the same values every run.
    fn uniform01(i: u64) -> f64 {
        let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn check(values: &[f64]) {
        let mut s = QuantileSketch::new();
        for v in values {
            s.insert(*v);
        }
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        for q in [0.0, 0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0] {
            let exact = percentile_sorted(&sorted, q);
            let est = s.quantile(q);
            let err = (est - exact).abs() / exact;
            assert!(
                err <= SKETCH_RELATIVE_ERROR + 1e-12,
                "q {q}: exact {exact}, sketch {est}, relative error {err}"
            );
        }
        assert_eq!(s.count(), values.len() as u64);
    }

    #[test]
    fn uniform_quantiles_are_within_the_stated_error() {
        // Step times between 80 and 120 ms.
        let v: Vec<f64> = (0..200_000).map(|i| 0.08 + 0.04 * uniform01(i)).collect();
        check(&v);
    }

    #[test]
    fn heavy_tailed_quantiles_are_within_the_stated_error() {
        // Lognormal-ish: exp of a sum of uniforms (≈ normal), spanning microseconds to
        // minutes, like phase durations with rare huge stalls.
        let v: Vec<f64> = (0..200_000u64)
            .map(|i| {
                let z: f64 = (0..6).map(|k| uniform01(i * 6 + k) - 0.5).sum::<f64>();
                (-3.0 + 4.0 * z).exp()
            })
            .collect();
        check(&v);
    }

    #[test]
    fn tiny_and_huge_values_fall_back_to_the_exact_extremes() {
        let mut s = QuantileSketch::new();
        s.insert(0.0);
        s.insert(1e-12);
        s.insert(5e6);
        s.insert(f64::NAN);
        assert_eq!(s.count(), 3);
        assert_eq!(s.quantile(0.0), 0.0);
        assert_eq!(s.quantile(1.0), 5e6);
        assert!(QuantileSketch::new().quantile(0.5).is_nan());
    }

    #[test]
    fn the_stated_size_is_the_real_size() {
        assert_eq!(SKETCH_BUCKETS, 3_202);
        assert_eq!(SKETCH_BYTES, 25_616);
        assert_eq!(QuantileSketch::new().heap_bytes(), SKETCH_BYTES);
        // Every bucket's representative lies inside the range of values that map to it.
        for i in 1..SKETCH_BUCKETS - 1 {
            assert_eq!(bucket(representative(i)), i);
        }
    }
}
