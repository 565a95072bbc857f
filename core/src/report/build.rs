//! Turning a [`Recording`] into a [`Report`] (and back, for journals and re-analysis).

use std::collections::BTreeMap;

use super::column::Column;
use super::model::{CoarseColumn, CoarseData, DeviceSeries, HostData, Report, SeriesData, Tool};
use super::{Verdict, SCHEMA};
use crate::metric::GpuMetric;
use crate::recording::{Recording, SeriesBuf, HOST_COLUMNS, HOST_UNITS};

fn series_data(buf: &SeriesBuf, names: &[String]) -> SeriesData {
    let mut metrics = BTreeMap::new();
    for (i, name) in names.iter().enumerate() {
        metrics.insert(name.clone(), Column(buf.column(i).to_vec()));
    }
    let c = buf.coarse();
    let pending = buf.pending_bucket();
    let coarse = if c.is_empty() && pending.is_none() {
        None
    } else {
        let mut t_start = c.t_start.clone();
        let mut t_end = c.t_end.clone();
        if let Some((a, b, _)) = &pending {
            t_start.push(*a);
            t_end.push(*b);
        }
        let mut cm = BTreeMap::new();
        for (i, name) in names.iter().enumerate() {
            let mut col = CoarseColumn {
                min: Column(c.min[i].clone()),
                mean: Column(c.mean[i].clone()),
                max: Column(c.max[i].clone()),
            };
            if let Some((_, _, vals)) = &pending {
                col.min.0.push(vals[i].0);
                col.mean.0.push(vals[i].1);
                col.max.0.push(vals[i].2);
            }
            cm.insert(name.clone(), col);
        }
        Some(CoarseData {
            rows_per_bucket: c.rows_per_bucket,
            t_start,
            t_end,
            metrics: cm,
        })
    };
    SeriesData {
        t: buf.times().to_vec(),
        metrics,
        coarse,
    }
}

impl Report {
    /// A report of `rec` with no findings yet (see [`crate::analysis::diagnose`]).
    pub fn from_recording(rec: &Recording) -> Report {
        let gpu_names: Vec<String> = GpuMetric::ALL
            .iter()
            .map(|m| m.name().to_string())
            .collect();
        let series = rec
            .devices
            .iter()
            .map(|d| DeviceSeries {
                device: d.info.index,
                data: series_data(&d.series, &gpu_names),
            })
            .collect();
        let host = rec.host.as_ref().map(|h| {
            let mut units: BTreeMap<String, String> = HOST_COLUMNS
                .iter()
                .zip(HOST_UNITS)
                .map(|(c, u)| (c.to_string(), u.to_string()))
                .collect();
            for c in h.columns.iter().skip(HOST_COLUMNS.len()) {
                units.insert(c.clone(), "%".into());
            }
            HostData {
                facts: h.facts.clone(),
                units,
                data: series_data(&h.series, &h.columns),
                unavailable: h.unavailable.iter().cloned().collect(),
            }
        });
        let mut overhead = rec.overhead.clone();
        overhead.memory_bytes = rec.heap_bytes() as u64;
        overhead.memory_bound_bytes = rec.worst_case_bytes() as u64;
        overhead.events_dropped = rec.events_dropped;
        let mut events = rec.events.clone();
        events.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
        Report {
            schema: SCHEMA.to_string(),
            tool: Tool::default(),
            run: rec.run.clone(),
            nvml: rec.nvml.clone(),
            gpu_absent_reason: rec.gpu_absent_reason.clone(),
            verdict: Verdict::default(),
            findings: Vec::new(),
            devices: rec.devices.iter().map(|d| d.info.clone()).collect(),
            series,
            host,
            steps: rec.steps.clone(),
            events,
            faults: rec.faults.clone(),
            overhead,
            ranks: None,
            comparison: None,
        }
    }
}
