//! Deterministic draws: every random quantity of a schedule is a hash of (seed, step,
//! phase, purpose), so a step's durations never depend on how far the schedule reaches.

/// What a draw is for, so two draws of one (step, phase) are independent.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Purpose {
    Jitter = 1,
    GpuJitter = 2,
    ShapeA = 3,
    ShapeB = 4,
}

/// One SplitMix64 step.
fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// A uniform value in `[0, 1)`.
pub(crate) fn unit(seed: u64, step: u64, phase: u64, purpose: Purpose) -> f64 {
    let mut x = seed ^ 0x5157_4F52_4B4C_4F41; // "WORKLOA"
    for part in [step, phase, purpose as u64] {
        x = splitmix(x ^ part);
    }
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// A uniform value in `[-1, 1)`.
pub(crate) fn symmetric(seed: u64, step: u64, phase: u64, purpose: Purpose) -> f64 {
    unit(seed, step, phase, purpose) * 2.0 - 1.0
}

/// A standard normal value (Box–Muller over two independent uniforms).
pub(crate) fn normal(seed: u64, step: u64) -> f64 {
    let u1 = unit(seed, step, u64::MAX, Purpose::ShapeA).max(1e-12);
    let u2 = unit(seed, step, u64::MAX, Purpose::ShapeB);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_repeat_and_differ_by_every_input() {
        let a = unit(1, 2, 3, Purpose::Jitter);
        assert_eq!(a, unit(1, 2, 3, Purpose::Jitter));
        for b in [
            unit(2, 2, 3, Purpose::Jitter),
            unit(1, 3, 3, Purpose::Jitter),
            unit(1, 2, 4, Purpose::Jitter),
            unit(1, 2, 3, Purpose::GpuJitter),
        ] {
            assert_ne!(a, b);
        }
    }

    #[test]
    fn normal_draws_have_unit_spread() {
        let n = 20_000;
        let v: Vec<f64> = (0..n).map(|k| normal(7, k)).collect();
        let mean = v.iter().sum::<f64>() / n as f64;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        assert!(mean.abs() < 0.03, "{mean}");
        assert!((var - 1.0).abs() < 0.05, "{var}");
        let u: Vec<f64> = (0..n)
            .map(|k| symmetric(7, k, 0, Purpose::Jitter))
            .collect();
        assert!(u.iter().all(|x| (-1.0..1.0).contains(x)));
    }
}
