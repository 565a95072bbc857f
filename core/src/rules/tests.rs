//! Builders of synthetic reports for the rules' own tests (and the analysis's).

use std::collections::BTreeMap;

pub(crate) use crate::metric::GpuMetric;
use crate::report::{Column, DeviceInfo, DeviceSeries, Finding, Report, SeriesData};

/// A one-or-more-GPU report from per-device columns of equal length, 100 ms apart.
pub(crate) type Columns = Vec<(GpuMetric, Vec<f32>)>;

pub(crate) fn report(devs: Vec<(DeviceInfo, Columns)>) -> Report {
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

pub(crate) fn h100(index: u32) -> DeviceInfo {
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

pub(crate) fn constant(v: f32, n: usize) -> Vec<f32> {
    vec![v; n]
}

/// A square wave: `low` for the first `low_n` samples of every `period`, `high` otherwise.
pub(crate) fn square(n: usize, period: usize, low_n: usize, low: f32, high: f32) -> Vec<f32> {
    (0..n)
        .map(|i| if i % period < low_n { low } else { high })
        .collect()
}

pub(crate) fn find<'a>(r: &'a Report, id: &str) -> Option<&'a Finding> {
    r.findings.iter().find(|f| f.id == id)
}

/// `r` with the findings every rule gives on it, in registry order: the rules alone, without
/// the analysis's idle settling, short-log tempering and ordering (the tests of those, and of
/// whole diagnoses, are in `crate::analysis`).
pub(crate) fn diagnosed(mut r: Report) -> Report {
    let s = crate::signals::Signals::from_report(&r);
    r.findings = super::RULES.iter().filter_map(|x| x.evaluate(&s)).collect();
    r
}

pub(crate) const N: usize = 300;
