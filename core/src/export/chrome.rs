//! A report as a Chrome trace (JSON object format): GPU metrics as counter tracks, steps and
//! phases as slices, events as instants.
//!
//! Timestamps are microseconds since the Unix epoch (the run's wall-clock start plus the
//! sample time), the clock PyTorch's profiler (Kineto) writes, so the file opens next to a
//! trace of the same run in Perfetto.

use serde_json::{json, Value};

use crate::metric::GpuMetric;
use crate::report::Report;

/// Process id used for GPU counter tracks (one per GPU: `PID_GPU_BASE + index`).
pub const PID_GPU_BASE: u64 = 1_000;
/// Process id of the step and event tracks.
pub const PID_STEPS: u64 = 999;

const COUNTERS: [GpuMetric; 8] = [
    GpuMetric::UtilGpu,
    GpuMetric::Power,
    GpuMetric::SmClock,
    GpuMetric::MemUsed,
    GpuMetric::Temp,
    GpuMetric::PcieRx,
    GpuMetric::PcieTx,
    GpuMetric::GpmSmUtil,
];

/// The trace document (`{"traceEvents": [...], ...}`).
pub fn chrome_trace(r: &Report) -> Value {
    let base_us = r.run.start_unix_ms as f64 * 1e3;
    let us = |t: f64| (base_us + t * 1e6).round();
    let mut ev: Vec<Value> = Vec::new();
    for d in &r.devices {
        let pid = PID_GPU_BASE + u64::from(d.index);
        let name = format!("GPU {} {}", d.index, d.name.as_deref().unwrap_or(""));
        ev.push(json!({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": name}}));
        let Some(s) = r.series.iter().find(|s| s.device == d.index) else {
            continue;
        };
        for m in COUNTERS {
            let Some(c) = s.data.metrics.get(m.name()) else {
                continue;
            };
            // Rows, then each bucket's mean at its start: buckets fill the folded time between
            // rows (docs/report-format.md, "Retention"), so a counter does not hold the last
            // row's value across hours; Chrome orders counter samples by `ts`.
            let buckets = s.data.coarse.as_ref().and_then(|cd| {
                let cc = cd.metrics.get(m.name())?;
                Some(cd.t_start.iter().zip(&cc.mean.0))
            });
            for (t, v) in s
                .data
                .t
                .iter()
                .zip(&c.0)
                .chain(buckets.into_iter().flatten())
            {
                if !v.is_nan() {
                    ev.push(json!({"ph": "C", "name": format!("{} ({})", m.name(), m.unit()), "pid": pid, "tid": 0, "ts": us(*t), "args": {"value": v}}));
                }
            }
        }
    }
    ev.push(json!({"ph": "M", "name": "process_name", "pid": PID_STEPS, "tid": 0, "args": {"name": "gpuwhy steps"}}));
    if let Some(st) = &r.steps {
        for (i, (t, dur)) in st.t.iter().zip(&st.duration.0).enumerate() {
            if dur.is_nan() {
                continue;
            }
            ev.push(json!({"ph": "X", "name": format!("step {i}"), "cat": "step", "pid": PID_STEPS, "tid": 1, "ts": us(*t), "dur": (f64::from(*dur) * 1e6).round()}));
            let mut start = *t;
            for name in &st.phases {
                let Some(p) = st
                    .phase_durations
                    .get(name)
                    .and_then(|c| c.0.get(i))
                    .filter(|p| !p.is_nan())
                else {
                    continue;
                };
                ev.push(json!({"ph": "X", "name": name, "cat": "phase", "pid": PID_STEPS, "tid": 2, "ts": us(start), "dur": (f64::from(*p) * 1e6).round()}));
                start += f64::from(*p);
            }
        }
    }
    for e in &r.events {
        ev.push(json!({"ph": "i", "s": "g", "name": e.kind, "cat": "event", "pid": PID_STEPS, "tid": 3, "ts": us(e.t_s), "args": {"device": e.device, "code": e.code, "detail": e.detail}}));
    }
    json!({"traceEvents": ev, "displayTimeUnit": "ms", "otherData": {"tool": "gpuwhy", "schema": r.schema, "verdict": r.verdict.id}})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Column, DeviceInfo, DeviceSeries, Event, SeriesData};

    #[test]
    fn counters_slices_and_instants_with_epoch_timestamps() {
        let mut r = Report::from_recording(&crate::recording::Recording::new(Default::default()));
        r.run.start_unix_ms = 1_700_000_000_000;
        r.devices.push(DeviceInfo {
            index: 0,
            name: Some("H100".into()),
            ..Default::default()
        });
        let mut data = SeriesData {
            t: vec![0.0, 0.1, 0.2],
            ..Default::default()
        };
        data.metrics
            .insert("util_gpu".into(), Column(vec![90.0, f32::NAN, 95.0]));
        r.series.push(DeviceSeries { device: 0, data });
        r.events.push(Event {
            t_s: 0.15,
            device: None,
            kind: "eval".into(),
            code: None,
            detail: String::new(),
        });
        let v = chrome_trace(&r);
        let ev = v["traceEvents"].as_array().expect("events");
        let counters: Vec<&Value> = ev.iter().filter(|e| e["ph"] == "C").collect();
        assert_eq!(counters.len(), 2, "the gap is a gap");
        assert_eq!(counters[0]["ts"], 1_700_000_000_000_000.0);
        assert_eq!(ev.iter().filter(|e| e["ph"] == "i").count(), 1);
    }

    #[test]
    fn a_long_run_exports_its_buckets_between_the_rows() {
        let mut rec = crate::recording::Recording::with_capacity(Default::default(), 26, 8);
        rec.add_device(DeviceInfo::default());
        let mut row = [f32::NAN; crate::metric::GpuMetric::COUNT];
        for i in 0..200 {
            row[crate::metric::GpuMetric::UtilGpu.index()] = (i % 100) as f32;
            rec.push_gpu(0, f64::from(i), &row);
        }
        let r = Report::from_recording(&rec);
        let c = r.series[0].data.coarse.as_ref().expect("buckets");
        let v = chrome_trace(&r);
        let ev = v["traceEvents"].as_array().expect("events");
        let counters = ev.iter().filter(|e| e["ph"] == "C").count();
        assert_eq!(
            counters,
            26 + c.t_start.len(),
            "every row and every bucket's mean"
        );
    }
}
