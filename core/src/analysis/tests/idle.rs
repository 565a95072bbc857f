//! The answer on idle GPUs: unexplained idle time, near misses, short logs, ordering by
//! cost — through synthetic reports and through imported dmon logs.

use super::*;
use crate::analysis::diagnose_log;
use crate::import::{import, ImportOptions, Kind};
use crate::rules::{LaunchBound, Rule};
use crate::signals::{Signals, StepView};

fn dmon(text: &str) -> Report {
    let out = import(Kind::Dmon, text.as_bytes(), &ImportOptions::default()).expect("imports");
    let mut r = Report::from_recording(&out.recording);
    diagnose_log(&mut r);
    r
}

#[test]
fn a_short_dmon_log_swinging_between_30_and_95_gets_an_answer() {
    // An input pipeline in the main process: utilization never reaches zero, so no
    // near-zero sawtooth; ten 1 s samples, as `nvidia-smi dmon -s u` prints them.
    let mut text = String::from("# gpu sm mem enc dec\n# Idx % % % %\n");
    for sm in [31, 95, 94, 29, 96, 33, 93, 30, 95, 32] {
        text.push_str(&format!("    0 {sm:>5} {:>5}     0     0\n", sm / 3));
    }
    let r = dmon(&text);
    assert_eq!(r.verdict.id, "unexplained_idle", "{:#?}", r.findings);
    let f = find(&r, "unexplained_idle").expect("finding");
    let lost = f.lost_share.expect("share");
    assert!(
        (lost - (1.0 - 0.628)).abs() < 0.02,
        "time-weighted idle: {lost}"
    );
    assert!(f.summary.contains("input wait"), "{}", f.summary);
    assert!(f.confidence <= 0.5, "ten samples: {}", f.confidence);
    assert!(
        f.unseen.iter().any(|u| u.contains("would settle it")),
        "says how long to record: {:?}",
        f.unseen
    );
    assert_eq!(
        f.unseen
            .iter()
            .filter(|u| u.starts_with("Only 10 samples"))
            .count(),
        1,
        "said once: {:?}",
        f.unseen
    );
    assert!(f.unseen.iter().any(|u| u.contains("No step markers")));
    assert!(f
        .lost_share_basis
        .as_deref()
        .is_some_and(|b| b.contains("time-weighted")));
    assert!(!r.verdict.summary.starts_with("No rule fired"));
}

#[test]
fn four_gpus_at_20_percent_one_sample_each_get_an_answer() {
    let mut text = String::from("# gpu sm mem enc dec fb\n# Idx % % % % MB\n");
    for (gpu, sm) in [(0, 21), (1, 19), (2, 22), (3, 18)] {
        text.push_str(&format!("    {gpu} {sm:>5}    10     0     0 78000\n"));
    }
    let r = dmon(&text);
    assert_eq!(r.verdict.id, "unexplained_idle", "{:#?}", r.findings);
    let f = find(&r, "unexplained_idle").expect("finding");
    assert_eq!(f.devices, vec![0, 1, 2, 3]);
    // One sample shows the GPUs' state, not how long it lasts: no lost share.
    assert_eq!(f.lost_share, None);
    assert!(f
        .lost_share_basis
        .as_deref()
        .is_some_and(|b| b.starts_with("not estimated: a snapshot")));
    assert!(
        f.severity <= crate::report::Severity::Low,
        "{:?}",
        f.severity
    );
    assert!(
        f.confidence <= crate::rules::short_log::cap(1),
        "{}",
        f.confidence
    );
    assert!(
        f.unseen.iter().any(|u| u.contains("Only 1 sample per GPU")),
        "{:?}",
        f.unseen
    );
    assert!(
        r.verdict.summary.contains("snapshot"),
        "{}",
        r.verdict.summary
    );
    // The next rung of the ladder, with its command.
    assert!(
        f.experiment.change.contains("gw.data(loader)"),
        "{}",
        f.experiment.change
    );
    assert!(f
        .actions
        .iter()
        .any(|a| a.text.contains("gpuwhy record -o run.json --")));
    assert!(f
        .actions
        .iter()
        .any(|a| a.text.contains("--trace trace.json")));
}

#[test]
fn a_short_recording_caps_confidence_and_says_how_long_to_record() {
    let r = diagnosed(report(vec![(
        h100(0),
        vec![(GpuMetric::UtilGpu, vec![30.0, 95.0, 30.0, 95.0, 30.0])],
    )]));
    assert!(!r.findings.is_empty(), "five samples still get a reading");
    for f in &r.findings {
        assert!(
            f.confidence <= crate::rules::short_log::cap(5),
            "{}: {}",
            f.id,
            f.confidence
        );
        assert!(
            f.unseen
                .iter()
                .any(|u| u.contains("Only 5 samples") && u.contains("120 s")),
            "{}: {:?}",
            f.id,
            f.unseen
        );
    }
}

#[test]
fn busy_gpus_and_start_up_idling_get_no_idle_finding() {
    let busy = diagnosed(report(vec![(
        h100(0),
        vec![(GpuMetric::UtilGpu, constant(93.0, N))],
    )]));
    assert_eq!(busy.verdict.id, "none");
    assert!(
        busy.verdict.summary.contains("busy 93% of the time"),
        "{}",
        busy.verdict.summary
    );
    // 6 s of start-up at 0 %, then full load: the span the job used the GPU is busy.
    let mut util = constant(97.0, N);
    util[..60].fill(0.0);
    let r = diagnosed(report(vec![(h100(0), vec![(GpuMetric::UtilGpu, util)])]));
    assert!(find(&r, "unexplained_idle").is_none(), "{:#?}", r.findings);
    assert!(
        r.verdict.summary.contains("6 s idle at start-up"),
        "the left-out idling is said: {}",
        r.verdict.summary
    );
}

#[test]
fn a_steadily_idle_gpu_with_memory_nearly_full_is_answered_from_a_long_log() {
    let r = diagnosed(report(vec![(
        h100(0),
        vec![
            (GpuMetric::UtilGpu, constant(40.0, N)),
            (GpuMetric::MemUsed, constant(78_000.0, N)),
        ],
    )]));
    assert_eq!(r.verdict.id, "unexplained_idle", "{:#?}", r.findings);
    let f = &r.findings[0];
    assert!((f.lost_share.expect("share") - 0.6).abs() < 0.01);
    assert!(f.summary.contains("not visible"), "{}", f.summary);
    assert!(f
        .evidence
        .iter()
        .any(|e| e.metric.contains("nearly full") && e.agrees));
    assert!(f.confidence >= 0.7, "300 samples: {}", f.confidence);
}

#[test]
fn an_explained_idle_gpu_gets_the_cause_not_the_unexplained_finding() {
    let util = square(N, 10, 4, 2.0, 98.0);
    let power: Vec<f32> = util.iter().map(|u| 90.0 + 5.5 * u).collect();
    let r = diagnosed(report(vec![(
        h100(0),
        vec![(GpuMetric::UtilGpu, util), (GpuMetric::Power, power)],
    )]));
    assert_eq!(r.verdict.id, "data_starvation");
    assert!(find(&r, "unexplained_idle").is_none(), "{:#?}", r.findings);
}

fn with_steps(util: f32, v: StepView) -> Signals {
    let r = report(vec![(
        h100(0),
        vec![(GpuMetric::UtilGpu, constant(util, N))],
    )]);
    let mut s = Signals::from_report(&r);
    s.steps = Some(v);
    s
}

fn view() -> StepView {
    StepView {
        count: 200,
        step_p50_s: 0.5,
        step_p95_s: 0.55,
        data_share_p50: Some(0.02),
        data_share_p95: Some(0.04),
        iqr_over_p50: 0.05,
        p95_over_p50: 1.1,
        ..Default::default()
    }
}

#[test]
fn a_data_share_just_under_the_threshold_is_left_as_evidence() {
    let s = with_steps(
        55.0,
        StepView {
            data_share_p50: Some(0.12),
            data_share_total: Some(0.12),
            ..view()
        },
    );
    let mut r = report(vec![(
        h100(0),
        vec![(GpuMetric::UtilGpu, constant(55.0, N))],
    )]);
    crate::analysis::diagnose_with(&mut r, &s);
    assert_eq!(r.verdict.id, "unexplained_idle", "{:#?}", r.findings);
    let f = &r.findings[0];
    let e = f
        .evidence
        .iter()
        .find(|e| e.metric.starts_with("data_starvation (not met)"))
        .expect("the near miss is listed");
    assert!(!e.agrees && (e.value - 0.12).abs() < 1e-9);
    assert!(
        !f.unseen.iter().any(|u| u.contains("No step markers")),
        "steps were there: {:?}",
        f.unseen
    );
}

#[test]
fn a_gpu_working_half_of_forward_and_backward_is_launch_bound_with_lower_confidence() {
    let near = LaunchBound
        .evaluate(&with_steps(
            55.0,
            StepView {
                gpu_cpu_ratio_p50: Some(0.6),
                fwd_bwd_share_total: Some(0.9),
                ..view()
            },
        ))
        .expect("fires near the threshold");
    assert_eq!(
        near.lost_share,
        Some(0.36),
        "40% of the 90% forward+backward"
    );
    let clear = LaunchBound
        .evaluate(&with_steps(
            55.0,
            StepView {
                gpu_cpu_ratio_p50: Some(0.3),
                fwd_bwd_share_total: Some(0.9),
                ..view()
            },
        ))
        .expect("fires");
    assert!(near.confidence < clear.confidence);
    assert!(
        near.summary.contains("near the threshold"),
        "{}",
        near.summary
    );
}

#[test]
fn heavy_two_way_pcie_traffic_in_a_dmon_log_without_link_facts_is_named() {
    // An optimizer offloaded to the CPU: ~40 GB/s each way (dmon -s t prints MB/s).
    let mut text = String::from("# gpu sm mem rxpci txpci\n# Idx % % MB/s MB/s\n");
    for i in 0..120 {
        let sm = if i % 3 == 0 { 20 } else { 70 };
        text.push_str(&format!("    0 {sm:>4} 20 40000 39000\n"));
    }
    let r = dmon(&text);
    let f = find(&r, "host_transfer").expect("fires");
    assert!(
        f.evidence.iter().any(|e| e.metric.contains("gen5 x16")),
        "{:#?}",
        f.evidence
    );
    assert!(f.lost_share.is_some() && f.lost_share_basis.is_some());
}

#[test]
fn spare_gpus_that_never_worked_are_named_not_counted_as_the_jobs_idle_time() {
    let mut devs: Vec<_> = (0..2)
        .map(|i| (h100(i), vec![(GpuMetric::UtilGpu, constant(50.0, N))]))
        .collect();
    devs.extend((2..4).map(|i| (h100(i), vec![(GpuMetric::UtilGpu, constant(0.0, N))])));
    // The rule itself (rank_imbalance, which reads the same spread, is another's call).
    let r = report(devs);
    let f = crate::rules::UnexplainedIdle
        .evaluate(&Signals::from_report(&r))
        .expect("the working GPUs idle half the time");
    assert_eq!(f.devices, vec![0, 1]);
    assert!((f.lost_share.expect("share") - 0.5).abs() < 0.01);
    // The GPUs that never worked are unused, not waiting: named by idle_gpu, compared
    // with nothing.
    let r = diagnosed(r);
    assert_eq!(
        find(&r, "idle_gpu").map(|f| f.devices.clone()),
        Some(vec![2, 3])
    );
    assert!(find(&r, "rank_imbalance").is_none(), "{:#?}", r.findings);
    // A lone GPU that never works has no work, and nothing else is said.
    let idle = diagnosed(report(vec![(
        h100(0),
        vec![(GpuMetric::UtilGpu, constant(0.0, N))],
    )]));
    assert_eq!(idle.verdict.id, "idle_gpu");
    let ids: Vec<&str> = idle.findings.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids, ["idle_gpu"]);
    assert_eq!(idle.findings[0].severity, crate::report::Severity::Low);
}
