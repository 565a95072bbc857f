//! Rules on buckets: findings from a bounded recording equal those from the same samples kept
//! at full resolution.
//!
//! Each scenario is played on the simulated GPU for two simulated hours (interval 0.5 s,
//! speed ×600, about 12 s of real time), with its training loop and step markers. The
//! report's samples are then pushed, with the same events, into two recordings that differ
//! only in capacity: one unbounded (`Recording::with_capacity` with room for every row) and
//! one small enough that most of the run is folded into buckets (1,300 continuous rows, 64
//! buckets). Both are diagnosed; they must find the same rules, and each finding's lost share
//! must agree within [`LOST_TOLERANCE`].
//!
//! Scenarios: `data_starvation` (a sawtooth: idle shares must stay exact over buckets),
//! `power_cap` (clock reasons under load: bucket means must keep loaded samples loaded),
//! `straggler_8gpu` (eight GPUs compared with each other: time-weighted cross-GPU shares over
//! buckets) and `healthy` (nothing to find, and nothing appears from buckets).

use gpuwhy::analysis::diagnose;
use gpuwhy::metric::GpuMetric;
use gpuwhy::recording::Recording;
use gpuwhy::report::Report;
use gpuwhy_tests::{record_session, scenario, Run};
use serde_json::Value;

/// Largest difference allowed between the lost shares of one finding (share of run time).
const LOST_TOLERANCE: f64 = 0.03;

/// The scenario with its sampling interval set to 0.5 s.
fn at_half_second(name: &str) -> String {
    let mut v: Value = serde_json::from_str(scenario(name).expect("bundled")).expect("JSON");
    v["demo"]["interval_ms"] = Value::from(500);
    v.to_string()
}

/// The report's samples and events pushed into a recording of the given capacity, diagnosed.
fn rediagnosed(r: &Report, full_rows: usize, buckets: usize) -> Report {
    let mut rec = Recording::with_capacity(r.run.clone(), full_rows, buckets);
    rec.nvml = r.nvml.clone();
    rec.steps = r.steps.clone();
    rec.faults = r.faults.clone();
    rec.overhead = r.overhead.clone();
    let mut events = r.events.clone();
    events.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
    for d in &r.devices {
        rec.add_device(d.clone());
    }
    let mut next_event = 0;
    let mut pushes: Vec<(f64, usize, usize)> = Vec::new();
    for (pos, s) in r.series.iter().enumerate() {
        assert!(s.data.coarse.is_none(), "the source keeps every row");
        pushes.extend(s.data.t.iter().enumerate().map(|(i, t)| (*t, pos, i)));
    }
    pushes.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (t, pos, i) in pushes {
        while next_event < events.len() && events[next_event].t_s <= t {
            rec.push_event(events[next_event].clone());
            next_event += 1;
        }
        let data = &r.series[pos].data;
        let mut row = [f32::NAN; GpuMetric::COUNT];
        for m in GpuMetric::ALL {
            if let Some(c) = data.metrics.get(m.name()) {
                row[m.index()] = c.0[i];
            }
        }
        rec.push_gpu(pos, t, &row);
    }
    for e in &events[next_event..] {
        rec.push_event(e.clone());
    }
    let mut out = Report::from_recording(&rec);
    diagnose(&mut out);
    out
}

fn lost(r: &Report) -> Vec<(String, Option<f64>)> {
    let mut v: Vec<(String, Option<f64>)> = r
        .findings
        .iter()
        .map(|f| (f.id.clone(), f.lost_share))
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

fn same_findings(name: &str) {
    let run = Run {
        duration_s: Some(7_200.0),
        speed: 600.0,
        ..Run::default()
    };
    let r = record_session(&at_half_second(name), &run).expect("records");
    let rows = r.series.iter().map(|s| s.data.t.len()).max().unwrap_or(0);
    assert!(rows > 5_000, "{name}: only {rows} rows recorded");
    let full = rediagnosed(&r, 1 << 22, 4_096);
    let bounded = rediagnosed(&r, 1_300, 64);
    assert!(
        bounded.series[0].data.t.len() < rows / 2,
        "{name}: the bounded form folds most rows"
    );
    let (a, b) = (lost(&full), lost(&bounded));
    let ids = |v: &[(String, Option<f64>)]| v.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&a), ids(&b), "{name}: the same rules fire");
    for ((id, x), (_, y)) in a.iter().zip(&b) {
        match (x, y) {
            (Some(x), Some(y)) => assert!(
                (x - y).abs() <= LOST_TOLERANCE,
                "{name}: {id} lost {x:.3} at full resolution, {y:.3} over buckets"
            ),
            (None, None) => {}
            _ => panic!("{name}: {id} has a lost share in one form only ({x:?}, {y:?})"),
        }
    }
}

#[test]
fn data_starvation_over_buckets_finds_what_full_resolution_finds() {
    same_findings("data_starvation");
}

#[test]
fn power_cap_over_buckets_finds_what_full_resolution_finds() {
    same_findings("power_cap");
}

#[test]
fn straggler_over_buckets_finds_what_full_resolution_finds() {
    same_findings("straggler_8gpu");
}

#[test]
fn healthy_over_buckets_finds_what_full_resolution_finds() {
    same_findings("healthy");
}
