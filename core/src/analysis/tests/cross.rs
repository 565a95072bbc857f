//! Cross-GPU evidence in sampled reports: stragglers at several severities (as waits at
//! ~100 % utilization and low power, and as idle dips), low power explained by clocks, and the
//! near misses that must stay quiet. Logs without reasons or max clocks: `cross_logs.rs`.

use super::*;

/// Deterministic noise in [-1, 1] (an LCG), so fixtures vary like samples without randomness.
pub(super) fn noise(seed: &mut u64) -> f32 {
    *seed = seed
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    ((*seed >> 33) as f32 / (1u64 << 31) as f32) * 2.0 - 1.0
}

/// Eight GPUs stepping in lockstep (20 samples of 100 ms per step). GPU `straggler` computes
/// the whole step; the others finish early and wait `cost` of every step showing `wait`
/// (utilization %, power W): a collective spinning, idle, or a partial drop.
fn lockstep(straggler: Option<u32>, cost: f64, wait: (f32, f32)) -> Report {
    lockstep_with_blips(straggler, cost, wait, 0)
}

/// [`lockstep`], and on every GPU the first `blips` rows of each step show utilization at
/// 30 % and compute power: a short phase (a data load) that a utilization sample caught,
/// described by the sample for up to its whole period while power is already back at
/// compute.
fn lockstep_with_blips(
    straggler: Option<u32>,
    cost: f64,
    wait: (f32, f32),
    blips: usize,
) -> Report {
    let period = 20usize;
    let wait_n = (cost * period as f64).round() as usize;
    let mut seed = 7u64;
    let devs = (0..8u32)
        .map(|g| {
            let (mut util, mut power) = (Vec::with_capacity(N), Vec::with_capacity(N));
            for i in 0..N {
                let waiting = Some(g) != straggler && i % period >= period - wait_n;
                let (u, p) = if waiting {
                    wait
                } else if i % period < blips {
                    (30.0, 600.0)
                } else {
                    (97.0, 600.0)
                };
                util.push((u + 2.0 * noise(&mut seed)).clamp(0.0, 100.0));
                power.push(p + 15.0 * noise(&mut seed));
            }
            let cols = vec![
                (GpuMetric::UtilGpu, util),
                (GpuMetric::Power, power),
                (GpuMetric::SmClock, constant(1980.0, N)),
                (GpuMetric::Temp, constant(60.0, N)),
            ];
            (h100(g), cols)
        })
        .collect();
    report(devs)
}

#[test]
fn a_straggler_is_caught_at_each_severity_with_its_lost_share() {
    // Spinning in a collective (full utilization, low power), idle, and a partial drop whose
    // power follows utilization.
    for wait in [(96.0, 180.0), (3.0, 120.0), (70.0, 480.0)] {
        for cost in [0.1, 0.2, 0.4] {
            let r = diagnosed(lockstep(Some(5), cost, wait));
            let f = find(&r, "rank_imbalance")
                .unwrap_or_else(|| panic!("cost {cost} wait {wait:?}: {:?}", r.verdict));
            assert_eq!(f.devices, vec![5], "{}", f.summary);
            let lost = f.lost_share.expect("lost share");
            assert!((lost - cost).abs() < 0.03, "cost {cost}: lost {lost}");
            assert!(find(&r, "throttling").is_none());
            assert!(
                find(&r, "comm_sync").is_none(),
                "the straggler does not dip"
            );
            assert!(
                f.evidence.iter().any(|e| e.device == Some(5)
                    && e.metric.contains("works while all others wait")
                    && e.agrees),
                "the wait pattern names it"
            );
        }
    }
}

/// The accuracy corpus's `straggler_mild_10pct` in per-tick mode: the others wait 10 % of
/// each step at full utilization and low power, and every GPU shows a one-row utilization
/// blip a step. Counted the larger way per GPU, the straggler waits 5 % (its blips) and the
/// others 10 % (their low power): a gap of 5 %, under the bar. Compared way by way, the gap
/// at low power is the whole 10 %.
#[test]
fn a_straggler_whose_only_dips_are_utilization_blips_is_compared_like_with_like() {
    let r = diagnosed(lockstep_with_blips(Some(3), 0.1, (96.0, 180.0), 1));
    let f = find(&r, "rank_imbalance").unwrap_or_else(|| panic!("{:?}", r.verdict));
    assert_eq!(f.devices, vec![3], "{}", f.summary);
    let lost = f.lost_share.expect("lost share");
    assert!((lost - 0.1).abs() < 0.03, "lost {lost}");
    // The blips alone, on every GPU alike, are no straggler.
    let even = diagnosed(lockstep_with_blips(None, 0.0, (96.0, 180.0), 1));
    assert!(
        find(&even, "rank_imbalance").is_none(),
        "{:?}",
        even.findings
    );
}

#[test]
fn a_straggler_at_full_utilization_is_the_verdict_not_silence() {
    // The case: every GPU's median utilization ~95 %; the others wait a third.
    let r = diagnosed(lockstep(Some(2), 0.35, (95.0, 200.0)));
    assert_eq!(r.verdict.id, "rank_imbalance", "{}", r.verdict.summary);
    assert_eq!(r.findings[0].devices, vec![2]);
}

#[test]
fn balanced_gpus_and_joint_waits_are_not_stragglers() {
    let even = diagnosed(lockstep(None, 0.0, (96.0, 180.0)));
    assert!(
        find(&even, "rank_imbalance").is_none(),
        "{:?}",
        even.findings
    );
    // Every GPU waits together (a collective): nobody is the straggler.
    let together = diagnosed(lockstep(None, 0.3, (3.0, 120.0)));
    assert!(find(&together, "rank_imbalance").is_none());
    assert!(find(&together, "comm_sync").is_some());
    // A straggler costing 4 % of a step is within run-to-run noise.
    let mild = diagnosed(lockstep(Some(1), 0.04, (96.0, 180.0)));
    assert!(find(&mild, "rank_imbalance").is_none());
}

#[test]
fn comm_sync_loses_the_time_every_gpu_idles_at_once() {
    let r = diagnosed(lockstep(None, 0.3, (3.0, 120.0)));
    let f = find(&r, "comm_sync").expect("fires");
    let lost = f.lost_share.expect("lost share");
    assert!((lost - 0.3).abs() < 0.02, "{lost}");
}

/// Two GPUs, 20-sample steps: both wait in a shared data phase (`shared` samples); GPU 1
/// also waits `extra` samples for GPU 0, right after it (lockstep) or, `independent`, at its
/// own offset in a step of its own length.
fn two_gpus(shared: usize, extra: usize, independent: bool) -> Report {
    let flags = |g: u32, i: usize| {
        if g == 0 {
            i % 20 < shared
        } else if independent {
            (i + 7) % 23 < shared + extra
        } else {
            i % 20 < shared + extra
        }
    };
    let devs = (0..2u32)
        .map(|g| {
            let util = (0..N)
                .map(|i| if flags(g, i) { 3.0 } else { 97.0 })
                .collect();
            (h100(g), vec![(GpuMetric::UtilGpu, util)])
        })
        .collect();
    report(devs)
}

#[test]
fn two_gpus_in_lockstep_show_the_straggler_and_two_independent_ones_do_not() {
    let lockstep = diagnosed(two_gpus(4, 4, false));
    let f = find(&lockstep, "rank_imbalance").expect("fires");
    assert_eq!(f.devices, vec![0]);
    assert!((f.lost_share.expect("lost") - 0.2).abs() < 0.03);
    let apart = diagnosed(two_gpus(4, 4, true));
    assert!(
        find(&apart, "rank_imbalance").is_none(),
        "{:?}",
        apart.findings
    );
}

#[test]
fn low_power_explained_by_a_held_down_clock_is_not_idle_compute() {
    // Four H100s at 100 % utilization; three run at 40 % of their clock and so draw about a
    // third of GPU 0's power. Low power is the clock's doing: throttling, not small kernels.
    let gpus = (0..4)
        .map(|g| {
            let (pwr, clk) = if g == 0 {
                (650.0, 1980.0)
            } else {
                (220.0, 790.0)
            };
            (
                h100(g),
                vec![
                    (GpuMetric::UtilGpu, constant(100.0, N)),
                    (GpuMetric::Power, constant(pwr, N)),
                    (GpuMetric::SmClock, constant(clk, N)),
                ],
            )
        })
        .collect();
    let r = diagnosed(report(gpus));
    assert_eq!(r.verdict.id, "throttling", "{}", r.verdict.summary);
    assert!(find(&r, "busy_not_working").is_none(), "{:?}", r.findings);
    // The same low power at full clock is still read as compute units left idle.
    let gpus = (0..4)
        .map(|g| {
            (
                h100(g),
                vec![
                    (GpuMetric::UtilGpu, constant(100.0, N)),
                    (GpuMetric::Power, constant(220.0, N)),
                    (GpuMetric::SmClock, constant(1980.0, N)),
                ],
            )
        })
        .collect();
    assert!(find(&diagnosed(report(gpus)), "busy_not_working").is_some());
}
