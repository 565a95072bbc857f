//! Small reports built in code.

use std::collections::BTreeMap;

use gpuwhy::report::{
    Action, Capability, Column, Cost, DeviceInfo, DeviceSeries, Event, Evidence, Experiment,
    Finding, Overhead, Report, RunInfo, SeriesData, Severity, Tool, Verdict, SCHEMA,
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
        }],
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
    r
}
