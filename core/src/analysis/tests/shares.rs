//! Lost shares from time, not from the median step, and findings ordered by what they cost.

use super::*;
use crate::steps::{PhaseId, StepLog, BUILTIN_PHASES, MAX_PHASES};

/// A report with one GPU at `util` and `n` steps: step `i` has `data(i)` seconds of data
/// phase and 0.1 s of forward+backward, then `gap(i)` seconds before the next step.
fn stepped(n: usize, util: f32, data: impl Fn(usize) -> f64, gap: impl Fn(usize) -> f64) -> Report {
    let mut log = StepLog::new(100_000);
    let mut t = 0.0;
    for i in 0..n {
        let mut p = [f64::NAN; MAX_PHASES];
        p[PhaseId::DATA.index()] = data(i);
        p[PhaseId::FORWARD.index()] = 0.03;
        p[PhaseId::BACKWARD.index()] = 0.07;
        let d = data(i) + 0.1;
        log.push(t, d, &p);
        t += d + gap(i);
    }
    let mut r = report(vec![(
        h100(0),
        vec![(GpuMetric::UtilGpu, constant(util, N))],
    )]);
    r.steps = Some(log.to_data(&BUILTIN_PHASES.map(String::from)));
    r
}

#[test]
fn a_few_long_data_waits_cost_their_time_not_the_median_steps_share() {
    // 190 steps wait 5 ms for data, ten irregularly placed ones 35 s: the data phase is
    // ~95% of the step time while the median step's data share is ~5%.
    let long = [3, 17, 40, 41, 77, 90, 120, 150, 151, 180];
    let r = diagnosed(stepped(
        200,
        40.0,
        |i| if long.contains(&i) { 35.0 } else { 0.005 },
        |_| 0.0,
    ));
    let f = find(&r, "data_starvation").expect("fires on the run's share");
    let lost = f.lost_share.expect("share");
    assert!((lost - 0.946).abs() < 0.01, "{lost}");
    assert!(f
        .lost_share_basis
        .as_deref()
        .is_some_and(|b| b.contains("total step time")));
    assert_eq!(r.verdict.id, "data_starvation", "{:#?}", r.findings);
    assert!(
        r.verdict.summary.contains("~95% of the run lost"),
        "{}",
        r.verdict.summary
    );
}

#[test]
fn checkpoints_and_evaluations_cost_their_excess_time() {
    // Every 25th step is followed by a synchronous stall (a checkpoint, an evaluation)
    // between steps; steps are 0.105 s, so 200 steps take 21 s of step time.
    for (stall_s, want) in [(0.66, 0.2), (1.31, 1.0 / 3.0)] {
        let r = diagnosed(stepped(
            200,
            90.0,
            |_| 0.005,
            |i| if i % 25 == 12 { stall_s } else { 0.0 },
        ));
        let f = find(&r, "periodic_stall").expect("fires");
        let lost = f.lost_share.expect("share");
        // 8 stalls × stall_s over 21 s + 8 × stall_s.
        let exact = 8.0 * stall_s / (21.0 + 8.0 * stall_s);
        assert!((exact - want).abs() < 0.005, "the case is what it claims");
        assert!((lost - exact).abs() < 0.01, "{lost} vs {exact}");
        assert!(
            f.summary
                .contains(&format!("~{:.0}% of the run", exact * 100.0)),
            "{}",
            f.summary
        );
    }
}

#[test]
fn the_costlier_of_two_causes_is_the_verdict_and_throttling_keeps_its_advice() {
    // Waits for input 40% of the time (near zero), and while computing runs at a power
    // cap that holds the clock ~14% low: the wait costs more.
    let util = square(N, 10, 4, 2.0, 98.0);
    let reasons_col: Vec<f32> = util
        .iter()
        .map(|u| {
            if *u > 50.0 {
                reasons::SW_POWER_CAP as f32
            } else {
                0.0
            }
        })
        .collect();
    let power: Vec<f32> = util.iter().map(|u| 90.0 + 6.2 * u).collect();
    let r = diagnosed(report(vec![(
        h100(0),
        vec![
            (GpuMetric::UtilGpu, util),
            (GpuMetric::Power, power),
            (GpuMetric::ClockReasons, reasons_col),
            (GpuMetric::SmClock, constant(1700.0, N)),
        ],
    )]));
    let ids: Vec<&str> = r.findings.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(&ids[..2], ["data_starvation", "throttling"], "{ids:?}");
    let data = find(&r, "data_starvation").expect("data");
    let hw = find(&r, "throttling").expect("throttling");
    assert!(data.lost_share > hw.lost_share);
    assert!(hw.actions[0]
        .text
        .starts_with("Fix power and cooling first"));
    // A failing GPU still goes first whatever it costs.
    let with = |id: &str, severity| crate::report::Finding {
        id: id.into(),
        severity,
        ..hw.clone()
    };
    use crate::report::Severity;
    assert_eq!(
        crate::analysis::precedence(&with("gpu_fault", Severity::Critical)),
        0
    );
    assert_eq!(
        crate::analysis::precedence(&with("gpu_fault", Severity::High)),
        0
    );
    // Health counters that only need watching are ordered by cost.
    assert_eq!(
        crate::analysis::precedence(&with("gpu_fault", Severity::Low)),
        1
    );
    assert_eq!(
        crate::analysis::precedence(&with("throttling", Severity::High)),
        1
    );
}

#[test]
fn lost_share_basis_round_trips_through_json_and_is_optional() {
    let r = diagnosed(stepped(
        200,
        90.0,
        |_| 0.005,
        |i| if i % 25 == 12 { 0.75 } else { 0.0 },
    ));
    let json = serde_json::to_string(&r).expect("serializes");
    assert!(json.contains("\"lost_share_basis\""));
    let back: Report = serde_json::from_str(&json).expect("reads");
    assert_eq!(back.findings, r.findings);
    let old = json.replace("\"lost_share_basis\"", "\"unknown_key\"");
    let back: Report = serde_json::from_str(&old).expect("an older report still reads");
    assert!(back.findings.iter().all(|f| f.lost_share_basis.is_none()));
}

#[test]
fn an_optimizer_on_the_cpu_with_two_way_pcie_traffic_is_named_with_its_share() {
    // A third of every step in the optimizer while ~25 GB/s go each way over a gen5 x16
    // link (40% of it each way: under the one-way threshold).
    let mut log = StepLog::new(100_000);
    for i in 0..100 {
        let mut p = [f64::NAN; MAX_PHASES];
        p[PhaseId::DATA.index()] = 0.005;
        p[PhaseId::FORWARD.index()] = 0.1;
        p[PhaseId::BACKWARD.index()] = 0.195;
        p[PhaseId::OPTIMIZER.index()] = 0.15;
        log.push(i as f64 * 0.45, 0.45, &p);
    }
    let mut r = report(vec![(
        h100(0),
        vec![
            (GpuMetric::UtilGpu, square(N, 9, 3, 3.0, 90.0)),
            (GpuMetric::PcieRx, constant(25_000.0, N)),
            (GpuMetric::PcieTx, constant(24_000.0, N)),
            (GpuMetric::PcieGen, constant(5.0, N)),
            (GpuMetric::PcieWidth, constant(16.0, N)),
        ],
    )]);
    r.steps = Some(log.to_data(&BUILTIN_PHASES.map(String::from)));
    let r = diagnosed(r);
    let f = find(&r, "host_transfer").expect("fires on the offload signature");
    assert!((f.lost_share.expect("share") - 1.0 / 3.0).abs() < 0.01);
    assert!(f.summary.contains("offloaded"), "{}", f.summary);
    assert!(f
        .evidence
        .iter()
        .any(|e| e.metric.starts_with("optimizer phase") && e.agrees));
    // Without the optimizer phase, 40% of the link is not heavy copying.
    let mut quiet = report(vec![(
        h100(0),
        vec![
            (GpuMetric::UtilGpu, constant(90.0, N)),
            (GpuMetric::PcieRx, constant(25_000.0, N)),
            (GpuMetric::PcieTx, constant(24_000.0, N)),
            (GpuMetric::PcieGen, constant(5.0, N)),
            (GpuMetric::PcieWidth, constant(16.0, N)),
        ],
    )]);
    quiet.steps = None;
    assert!(find(&diagnosed(quiet), "host_transfer").is_none());
}
