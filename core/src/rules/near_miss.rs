//! Evidence of rules that narrowly missed their thresholds.
//!
//! A rule that does not fire says nothing; when the GPUs idle and no rule explains it, the
//! signals that came close are still the best clues there are. Each item here is a rule's
//! own measurement against its own threshold (so `agrees` is false: the threshold was not
//! met), kept when it lies within a stated margin of it. [`super::UnexplainedIdle`] lists
//! them under its finding.

use super::{data_starvation, evidence, host_transfer, launch_bound, periodic_stall};
use crate::report::Comparator;
use crate::report::Evidence;
use crate::signals::Signals;

/// How close to a threshold a value must come to be kept: within this fraction of the
/// threshold (a data share of 0.10 against 0.15 is within a third; one of 0.02 is not).
pub const NEAR_FRACTION: f64 = 1.0 / 3.0;

/// Whether `value` misses `threshold` by no more than [`NEAR_FRACTION`] of it, on the side
/// `above` says the rule needs (true: the rule needs `value >= threshold`).
fn near(value: f64, threshold: f64, above: bool) -> bool {
    let margin = threshold.abs() * NEAR_FRACTION;
    if above {
        value < threshold && value >= threshold - margin
    } else {
        value > threshold && value <= threshold + margin
    }
}

fn named(rule: &str, mut e: Evidence) -> Evidence {
    e.metric = format!("{rule} (not met): {}", e.metric);
    e
}

/// The near misses of the step-marker rules: a data phase or a GPU/CPU ratio close to
/// their thresholds, step-time outliers almost regular.
fn from_steps(s: &Signals, out: &mut Vec<Evidence>) {
    let Some(st) = &s.steps else { return };
    if let Some(d) = st.data_share_p50 {
        if near(d, data_starvation::MIN_DATA_SHARE, true) {
            let e = evidence(
                "data phase share of step time p50",
                d,
                Comparator::AtLeast,
                data_starvation::MIN_DATA_SHARE,
                "fraction",
                None,
            );
            out.push(named("data_starvation", e));
        }
    }
    if let Some(r) = st.gpu_cpu_ratio_p50 {
        if near(r, launch_bound::MAX_GPU_CPU_RATIO, false) {
            let e = evidence(
                "GPU-measured / CPU forward+backward time p50",
                r,
                Comparator::AtMost,
                launch_bound::MAX_GPU_CPU_RATIO,
                "ratio",
                None,
            );
            out.push(named("launch_bound", e));
        }
    }
    if let Some(cv) = st.outlier_spacing_cv {
        if st.outliers >= periodic_stall::MIN_OUTLIERS
            && near(cv, periodic_stall::MAX_SPACING_CV, false)
        {
            let e = evidence(
                "coefficient of variation of outlier spacing",
                cv,
                Comparator::Below,
                periodic_stall::MAX_SPACING_CV,
                "ratio",
                None,
            );
            out.push(named("periodic_stall", e));
        }
    }
}

/// The near misses of the sample rules: a near-zero share close to the sawtooth's, PCIe
/// traffic close to the link's limit.
fn from_samples(s: &Signals, out: &mut Vec<Evidence>) {
    for d in s.sampled_devices() {
        let dev = Some(d.index);
        if let Some(z) = d.util_near_zero {
            if near(z, data_starvation::MIN_IDLE_SHARE, true) && d.util_dips >= 2 {
                let e = evidence(
                    "share of samples with util_gpu < 10%",
                    z,
                    Comparator::AtLeast,
                    data_starvation::MIN_IDLE_SHARE,
                    "fraction",
                    dev,
                );
                out.push(named("data_starvation", e));
            }
        }
        let (cap, against) = host_transfer::link_capacity(d);
        for (name, x) in [("pcie_rx", d.pcie_rx), ("pcie_tx", d.pcie_tx)] {
            let Some(x) = x else { continue };
            let r = x.p95 / cap;
            // Heavy two-way traffic (an optimizer offloaded to the CPU) is worth naming
            // from half of the threshold: both directions share the same copy engines' time.
            if near(r, host_transfer::HIGH_LINK_SHARE, true)
                || r >= host_transfer::HIGH_LINK_SHARE / 2.0
            {
                let e = evidence(
                    &format!("{name} p95 / {against}"),
                    r,
                    Comparator::AtLeast,
                    host_transfer::HIGH_LINK_SHARE,
                    "ratio",
                    dev,
                );
                out.push(named("host_transfer", e));
            }
        }
    }
}

/// Every near miss in `s`, step-marker rules first.
pub(crate) fn near_misses(s: &Signals) -> Vec<Evidence> {
    let mut out = Vec::new();
    from_steps(s, &mut out);
    from_samples(s, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_is_one_sided_and_bounded() {
        assert!(near(0.11, 0.15, true));
        assert!(!near(0.16, 0.15, true), "met is not a near miss");
        assert!(!near(0.05, 0.15, true), "a third below is far");
        assert!(near(0.6, 0.5, false));
        assert!(!near(0.9, 0.5, false));
    }
}
