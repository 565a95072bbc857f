//! The foundation's rules: data starvation, throttling, PCIe, imbalance, faults.

use super::*;

#[test]
fn data_starvation_fires_on_a_sawtooth_with_power_following() {
    let util = square(N, 10, 4, 2.0, 98.0);
    let power: Vec<f32> = util.iter().map(|u| 90.0 + 5.5 * u).collect();
    let r = diagnosed(report(vec![(
        h100(0),
        vec![(GpuMetric::UtilGpu, util), (GpuMetric::Power, power)],
    )]));
    let f = find(&r, "data_starvation").expect("fires");
    assert_eq!(r.verdict.id, "data_starvation");
    assert!((f.lost_share.expect("estimated") - 0.4).abs() < 0.01);
    assert!(
        f.confidence >= 0.7,
        "bimodal, periodic and power agree: {}",
        f.confidence
    );
    assert!(f.evidence.iter().all(|e| e.agrees));
}

#[test]
fn data_starvation_quiet_on_steady_moderate_or_fully_idle_use() {
    let steady = diagnosed(report(vec![(
        h100(0),
        vec![(GpuMetric::UtilGpu, constant(45.0, N))],
    )]));
    assert!(
        find(&steady, "data_starvation").is_none(),
        "steady 45% is not starvation"
    );
    let idle = diagnosed(report(vec![(
        h100(0),
        vec![(GpuMetric::UtilGpu, constant(0.0, N))],
    )]));
    assert!(
        find(&idle, "data_starvation").is_none(),
        "an idle GPU never works, so it is not starved between batches"
    );
    // One slow step: a single dip is not a pattern.
    let mut one_dip = constant(97.0, N);
    one_dip[100..110].fill(0.0);
    assert!(find(
        &diagnosed(report(vec![(h100(0), vec![(GpuMetric::UtilGpu, one_dip)])])),
        "data_starvation"
    )
    .is_none());
}

#[test]
fn throttling_fires_on_power_cap_reasons() {
    let reasons_col: Vec<f32> = (0..N)
        .map(|i| {
            if i % 2 == 0 {
                reasons::SW_POWER_CAP as f32
            } else {
                0.0
            }
        })
        .collect();
    let r = diagnosed(report(vec![(
        h100(0),
        vec![
            (GpuMetric::UtilGpu, constant(99.0, N)),
            (GpuMetric::ClockReasons, reasons_col),
            (GpuMetric::SmClock, constant(1300.0, N)),
            (GpuMetric::Power, constant(700.0, N)),
        ],
    )]));
    let f = find(&r, "throttling").expect("fires");
    assert!(f.summary.contains("sw_power_cap"), "{}", f.summary);
    assert!((f.lost_share.expect("clock loss") - (1.0 - 1300.0 / 1980.0)).abs() < 0.01);
}

#[test]
fn throttling_quiet_on_rare_reasons_and_on_idle_low_clocks() {
    let rare: Vec<f32> = (0..N)
        .map(|i| {
            if i % 20 == 0 {
                reasons::SW_POWER_CAP as f32
            } else {
                0.0
            }
        })
        .collect();
    let r = diagnosed(report(vec![(
        h100(0),
        vec![
            (GpuMetric::UtilGpu, constant(99.0, N)),
            (GpuMetric::ClockReasons, rare),
            (GpuMetric::SmClock, constant(1970.0, N)),
        ],
    )]));
    assert!(
        find(&r, "throttling").is_none(),
        "5% of samples touching the cap is boost behaviour"
    );
    // Low clocks while idle are power saving, not throttling.
    let idle = diagnosed(report(vec![(
        h100(0),
        vec![
            (GpuMetric::UtilGpu, constant(0.0, N)),
            (GpuMetric::SmClock, constant(345.0, N)),
        ],
    )]));
    assert!(find(&idle, "throttling").is_none());
}

#[test]
fn throttling_without_reasons_needs_low_clock_and_heat_or_cap() {
    let hot = diagnosed(report(vec![(
        h100(0),
        vec![
            (GpuMetric::UtilGpu, constant(99.0, N)),
            (GpuMetric::SmClock, constant(1100.0, N)),
            (GpuMetric::Temp, constant(89.0, N)),
        ],
    )]));
    assert!(find(&hot, "throttling").is_some());
    let cool = diagnosed(report(vec![(
        h100(0),
        vec![
            (GpuMetric::UtilGpu, constant(99.0, N)),
            (GpuMetric::SmClock, constant(1100.0, N)),
            (GpuMetric::Temp, constant(60.0, N)),
        ],
    )]));
    assert!(
        find(&cool, "throttling").is_none(),
        "a low clock alone could be an application clock setting"
    );
}

#[test]
fn pcie_degraded_counts_loaded_samples_only() {
    let busy = diagnosed(report(vec![(
        h100(0),
        vec![
            (GpuMetric::UtilGpu, constant(95.0, N)),
            (GpuMetric::PcieGen, constant(3.0, N)),
            (GpuMetric::PcieWidth, constant(16.0, N)),
        ],
    )]));
    let f = find(&busy, "pcie_degraded").expect("fires");
    assert_eq!(f.devices, vec![0]);
    // Link power saving at idle: gen 1 while idle, full speed under load.
    let util = square(N, 10, 5, 0.0, 95.0);
    let gen: Vec<f32> = util
        .iter()
        .map(|u| if *u > 50.0 { 5.0 } else { 1.0 })
        .collect();
    let saving = diagnosed(report(vec![(
        h100(0),
        vec![
            (GpuMetric::UtilGpu, util),
            (GpuMetric::PcieGen, gen),
            (GpuMetric::PcieWidth, constant(16.0, N)),
        ],
    )]));
    assert!(find(&saving, "pcie_degraded").is_none());
}

#[test]
fn rank_imbalance_names_the_outlier_and_ignores_small_spreads() {
    let mut devs: Vec<_> = (0..4)
        .map(|i| (h100(i), vec![(GpuMetric::UtilGpu, constant(92.0, N))]))
        .collect();
    devs[2].1 = vec![(GpuMetric::UtilGpu, constant(70.0, N))];
    let r = diagnosed(report(devs));
    let f = find(&r, "rank_imbalance").expect("fires");
    assert_eq!(f.devices, vec![2]);
    let mut close: Vec<_> = (0..4)
        .map(|i| (h100(i), vec![(GpuMetric::UtilGpu, constant(92.0, N))]))
        .collect();
    close[1].1 = vec![(GpuMetric::UtilGpu, constant(87.0, N))];
    assert!(
        find(&diagnosed(report(close)), "rank_imbalance").is_none(),
        "a 5-point spread is not imbalance"
    );
}

#[test]
fn gpu_fault_on_xid_and_lost_gpu_outranks_everything() {
    let mut r = report(vec![
        (
            h100(0),
            vec![(GpuMetric::UtilGpu, square(N, 10, 4, 2.0, 98.0))],
        ),
        (h100(1), vec![(GpuMetric::UtilGpu, constant(95.0, N))]),
    ]);
    r.devices[1].lost_at_s = Some(10.0);
    r.events.push(Event {
        t_s: 10.0,
        device: Some(1),
        kind: "xid".into(),
        code: Some(79),
        detail: String::new(),
    });
    let r = diagnosed(r);
    assert_eq!(r.verdict.id, "gpu_fault");
    let f = find(&r, "gpu_fault").expect("fires");
    assert_eq!(f.devices, vec![1]);
    assert_eq!(f.confidence, 1.0);
    assert!(
        find(&r, "data_starvation").is_some(),
        "the other cause is still reported, after the fault"
    );
}

#[test]
fn healthy_run_gives_no_bottleneck_verdict() {
    let r = diagnosed(report(vec![(
        h100(0),
        vec![
            (GpuMetric::UtilGpu, constant(98.0, N)),
            (GpuMetric::SmClock, constant(1980.0, N)),
            (GpuMetric::ClockReasons, constant(0.0, N)),
            (GpuMetric::PcieGen, constant(5.0, N)),
            (GpuMetric::PcieWidth, constant(16.0, N)),
        ],
    )]));
    assert!(
        r.findings.is_empty(),
        "{:?}",
        r.findings.iter().map(|f| &f.id).collect::<Vec<_>>()
    );
    assert_eq!(r.verdict.id, "none");
    assert!(
        r.verdict.summary.contains("util p50 98%"),
        "{}",
        r.verdict.summary
    );
}

#[test]
fn a_single_idle_stretch_at_start_up_is_not_starvation() {
    // 3 s idle, then full load: 20% near-zero samples, but one stretch, not a pattern.
    let mut util = constant(97.0, N);
    util[..60].fill(1.0);
    let r = diagnosed(report(vec![(h100(0), vec![(GpuMetric::UtilGpu, util)])]));
    assert!(find(&r, "data_starvation").is_none());
}
