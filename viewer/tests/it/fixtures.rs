//! Small reports built in code.

use std::collections::BTreeMap;

use gpuwhy::report::{
    Action, Capability, Column, Cost, DeviceInfo, DeviceSeries, Event, Evidence, Experiment,
    Finding, FindingSource, Overhead, PhaseTimes, RankSteps, RankSummary, RanksData, Report,
    RunInfo, SeriesData, Severity, Straggler, Tool, Verdict, SCHEMA,
};

/// One GPU sampled every 0.1 s with the given `util_gpu` and `temp` columns.
pub fn one_gpu(util: Vec<f32>, temp: Vec<f32>) -> Report {
    let n = util.len();
    let mut metrics = BTreeMap::new();
    metrics.insert("util_gpu".to_string(), Column(util));
    metrics.insert("temp".to_string(), Column(temp));
    metrics.insert("power".to_string(), Column(vec![200.0; n]));
    let mut caps = BTreeMap::new();
    caps.insert("util_gpu".to_string(), Capability::available());
    caps.insert(
        "pcie_rx".to_string(),
        Capability::unavailable("NOT_SUPPORTED from nvmlDeviceGetPcieThroughput"),
    );
    Report {
        schema: SCHEMA.into(),
        tool: Tool::default(),
        run: RunInfo {
            duration_s: n as f64 * 0.1,
            interval_s: 0.1,
            complete: true,
            ..RunInfo::default()
        },
        nvml: None,
        gpu_absent_reason: None,
        verdict: Verdict::default(),
        findings: Vec::new(),
        devices: vec![DeviceInfo {
            index: 0,
            name: Some("Test GPU".into()),
            power_limit_w: Some(400.0),
            capabilities: caps,
            ..DeviceInfo::default()
        }],
        series: vec![DeviceSeries {
            device: 0,
            data: SeriesData {
                t: (0..n).map(|i| i as f64 * 0.1).collect(),
                metrics,
                coarse: None,
            },
        }],
        host: None,
        steps: None,
        events: Vec::new(),
        faults: Vec::new(),
        overhead: Overhead::default(),
        ranks: None,
        comparison: None,
        windows: Vec::new(),
    }
}

/// A report whose every text field is `s`.
pub fn every_text(s: &str) -> Report {
    let mut r = one_gpu(vec![50.0; 20], vec![f32::NAN; 20]);
    r.run.host = s.into();
    r.run.label = Some(s.into());
    r.run.command = Some(vec![s.into()]);
    r.devices[0].name = Some(s.into());
    r.devices[0]
        .capabilities
        .insert(s.into(), Capability::unavailable(s));
    r.verdict = Verdict {
        id: s.into(),
        title: s.into(),
        confidence: 0.5,
        lost_share: Some(0.2),
        summary: s.into(),
    };
    r.findings = vec![Finding {
        id: s.into(),
        title: s.into(),
        severity: Severity::High,
        confidence: 0.5,
        summary: s.into(),
        lost_share: Some(0.2),
        lost_share_basis: Some(s.into()),
        devices: vec![0],
        evidence: vec![Evidence {
            metric: s.into(),
            value: 1.0,
            threshold: 0.5,
            comparison: s.into(),
            unit: s.into(),
            device: Some(0),
            time_range: None,
            agrees: true,
            weight: None,
        }],
        source: Some(FindingSource::Trace),
        caused_by: None,
        actions: vec![Action {
            text: s.into(),
            cost: Cost::Low,
        }],
        experiment: Experiment {
            change: s.into(),
            expect: s.into(),
            metric: s.into(),
        },
        unseen: vec![s.into()],
    }];
    r.events = vec![Event {
        t_s: 1.0,
        device: Some(0),
        kind: s.into(),
        code: None,
        detail: s.into(),
    }];
    let mut job = ranks(4, &[2]);
    for x in &mut job.ranks {
        x.host = s.into();
        let steps = x.steps.as_mut().expect("steps");
        let data = steps.phases.remove("data").expect("data");
        steps.phases.insert(s.into(), data);
    }
    job.stragglers[0].phase = s.into();
    r.ranks = Some(job);
    r
}

/// The `ranks` section of an `n`-rank job on nodes of four, with a data phase twice the
/// others' on the `slow` ranks (the stragglers, in that order). Only the fields the viewer
/// reads are set: written out and read back, it is the same.
pub fn ranks(n: u32, slow: &[u32]) -> RanksData {
    let t = |p50_s| PhaseTimes { p50_s, p95_s: 0.0 };
    let row = |rank: u32| {
        let data = if slow.contains(&rank) { 0.2 } else { 0.1 };
        RankSummary {
            rank,
            host: format!("node-{}", rank / 4),
            local_rank: (rank != 1).then_some(rank % 4),
            complete: rank != 0,
            util_p50: (rank != 2).then_some(80.0 + rank as f64 / 3.0),
            steps: Some(RankSteps {
                count: 100 + rank as u64,
                step: t(0.3 + data),
                phases: [("data".into(), t(data)), ("forward".into(), t(0.3))].into(),
            }),
            ..RankSummary::default()
        }
    };
    RanksData {
        world_size: Some(n + 1),
        missing: vec![n],
        ranks: (0..n).map(row).collect(),
        stragglers: (slow.iter())
            .map(|&rank| Straggler {
                rank,
                phase: "data".into(),
                ..Straggler::default()
            })
            .collect(),
        ..RanksData::default()
    }
}
