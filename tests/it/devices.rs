//! What the loader and sampler make of particular devices: lost GPUs, unsupported metrics.

use gpuwhy::metric::GpuMetric;
use gpuwhy_tests::{record, scenario, Run};

#[test]
fn a_lost_gpu_stops_its_series_with_an_event_while_the_other_keeps_recording() {
    let r = record(scenario("gpu_lost").expect("bundled"), &Run::default()).expect("records");
    assert_eq!(r.devices.len(), 2);
    let lost = r
        .devices
        .iter()
        .find(|d| d.lost_at_s.is_some())
        .expect("one GPU is lost");
    let t_lost = lost.lost_at_s.expect("lost time");
    let ev = r
        .events
        .iter()
        .find(|e| e.kind == "gpu_lost")
        .expect("a gpu_lost event");
    assert_eq!(ev.device, Some(lost.index));
    let series = |i: u32| r.series.iter().find(|s| s.device == i).expect("series");
    let lost_t = &series(lost.index).data.t;
    assert!(
        lost_t.last().copied().unwrap_or(0.0) <= t_lost,
        "no samples after the loss"
    );
    let other = r
        .devices
        .iter()
        .find(|d| d.lost_at_s.is_none())
        .expect("a healthy GPU");
    let other_t = &series(other.index).data.t;
    assert!(
        other_t.last().copied().unwrap_or(0.0) > t_lost + 1.0,
        "the healthy GPU kept recording after the loss"
    );
    assert!(other_t.len() > lost_t.len());
    assert_eq!(r.verdict.id, "gpu_fault");
}

#[test]
fn unsupported_metrics_are_null_with_a_reason_never_zero() {
    let r = record(
        scenario("consumer_gpu").expect("bundled"),
        &Run {
            duration_s: Some(4.0),
            ..Run::default()
        },
    )
    .expect("records");
    let d = &r.devices[0];
    let s = &r.series[0].data;
    let mut unsupported = 0;
    for m in [
        GpuMetric::PcieRx,
        GpuMetric::PcieTx,
        GpuMetric::ClockReasons,
        GpuMetric::GpmSmUtil,
    ] {
        let cap = d
            .capabilities
            .get(m.name())
            .expect("every metric has a capability");
        assert!(
            !cap.available,
            "{} should be unavailable on a consumer GPU",
            m.name()
        );
        let reason = cap.reason.as_deref().unwrap_or("");
        assert!(!reason.is_empty(), "{} has a reason", m.name());
        let col = s.metrics.get(m.name()).expect("column present");
        assert!(
            col.0.iter().all(|v| v.is_nan()),
            "{} is all null, never 0",
            m.name()
        );
        unsupported += 1;
    }
    assert!(d.capabilities["pcie_rx"]
        .reason
        .as_deref()
        .unwrap_or("")
        .contains("NOT_SUPPORTED"));
    // What the GPU does support is recorded.
    assert!(d.capabilities["util_gpu"].available);
    assert!(s.metrics["util_gpu"].present().count() > 10);
    let json: serde_json::Value = serde_json::from_str(&r.to_json()).expect("valid JSON");
    // In the compact series form: one run of nulls (`[null, n]`), nothing else.
    let runs = &json["series"][0]["columns"]["pcie_rx"]["runs"];
    let col = runs
        .as_array()
        .map(|a| a.iter().all(|r| r.is_null() || r[0].is_null()));
    assert_eq!(col, Some(true), "null in the JSON itself: {runs}");
    assert_eq!(unsupported, 4);
}
