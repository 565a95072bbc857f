//! Each rule on synthetic reports and signals: it fires on its pattern and stays quiet on
//! its near miss. Helpers here; the tests by theme below.

mod cross;
mod cross_logs;
mod foundation;
mod idle;
mod samples;
mod shares;
mod steps;

use std::collections::BTreeMap;

pub(super) use crate::analysis::diagnose;
pub(super) use crate::metric::{reasons, GpuMetric};
pub(super) use crate::report::{
    Column, DeviceInfo, DeviceSeries, Event, Finding, Report, SeriesData,
};

/// A one-or-more-GPU report from per-device columns of equal length, 100 ms apart.
pub(super) type Columns = Vec<(GpuMetric, Vec<f32>)>;

pub(super) fn report(devs: Vec<(DeviceInfo, Columns)>) -> Report {
    let mut r = Report::from_recording(&crate::recording::Recording::new(Default::default()));
    r.run.interval_s = 0.1;
    for (info, cols) in devs {
        let n = cols.first().map_or(0, |c| c.1.len());
        let mut metrics = BTreeMap::new();
        for (m, v) in cols {
            metrics.insert(m.name().to_string(), Column(v));
        }
        r.series.push(DeviceSeries {
            device: info.index,
            data: SeriesData {
                t: (0..n).map(|i| i as f64 * 0.1).collect(),
                metrics,
                coarse: None,
            },
        });
        r.devices.push(info);
    }
    r.run.duration_s = r
        .series
        .first()
        .map_or(0.0, |s| s.data.t.last().copied().unwrap_or(0.0));
    r
}

pub(super) fn h100(index: u32) -> DeviceInfo {
    DeviceInfo {
        index,
        name: Some("H100".into()),
        power_limit_w: Some(700.0),
        max_sm_clock_mhz: Some(1980.0),
        pcie_max_gen: Some(5),
        pcie_max_width: Some(16),
        temp_slowdown_c: Some(90.0),
        memory_total_mib: Some(81_559.0),
        ..Default::default()
    }
}

pub(super) fn constant(v: f32, n: usize) -> Vec<f32> {
    vec![v; n]
}

/// A square wave: `low` for the first `low_n` samples of every `period`, `high` otherwise.
pub(super) fn square(n: usize, period: usize, low_n: usize, low: f32, high: f32) -> Vec<f32> {
    (0..n)
        .map(|i| if i % period < low_n { low } else { high })
        .collect()
}

pub(super) fn find<'a>(r: &'a Report, id: &str) -> Option<&'a Finding> {
    r.findings.iter().find(|f| f.id == id)
}

pub(super) fn diagnosed(mut r: Report) -> Report {
    diagnose(&mut r);
    r
}

pub(super) const N: usize = 300;
