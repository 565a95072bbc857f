//! Signals: the features rules read, derived from a report's samples and events.
//!
//! Rules never look at NVML, files or raw columns; they read these numbers. Everything here
//! is a plain function of the report, so the browser viewer computes the same signals.
//! Long runs: samples of the coarse (bucketed) part enter as their bucket means, which keeps
//! medians close but narrows the tails.

mod device;
pub mod stats;

pub use device::{DeviceSignals, LOAD_UTIL, NEAR_ZERO_UTIL};

use crate::report::{Event, Report};
use stats::{dist, Dist};

/// Signals across GPUs.
#[derive(Debug, Clone, Default)]
pub struct CrossSignals {
    /// Median utilization of each GPU that has one: (device index, p50).
    pub util_p50_by_device: Vec<(u32, f64)>,
    /// Largest minus smallest per-GPU median utilization, points.
    pub util_p50_spread: Option<f64>,
    /// The GPU furthest from the median of the per-GPU medians, and its distance in points.
    pub util_outlier: Option<(u32, f64)>,
    /// Median SM clock under load per GPU.
    pub clock_p50_by_device: Vec<(u32, f64)>,
}

/// Everything the rules read.
#[derive(Debug, Clone, Default)]
pub struct Signals {
    /// Per GPU.
    pub devices: Vec<DeviceSignals>,
    /// Across GPUs.
    pub cross: CrossSignals,
    /// Run length, seconds.
    pub duration_s: f64,
    /// Sample interval, seconds.
    pub interval_s: f64,
    /// Events of the run.
    pub events: Vec<Event>,
    /// Why there are no GPU metrics, when there are none.
    pub gpu_absent_reason: Option<String>,
    /// Host CPU busy (all cores), when sampled.
    pub host_cpu: Option<Dist>,
    /// Host disk read throughput, B/s, when sampled.
    pub host_disk_read: Option<Dist>,
}

impl Signals {
    /// Derives the signals of a report.
    pub fn from_report(report: &Report) -> Signals {
        let devices: Vec<DeviceSignals> = report
            .devices
            .iter()
            .map(|info| {
                let series = report.series.iter().find(|s| s.device == info.index);
                DeviceSignals::compute(
                    info,
                    series.map(|s| &s.data),
                    &report.events,
                    report.run.interval_s,
                )
            })
            .collect();
        let cross = cross_signals(&devices);
        let host_col = |name: &str| {
            report
                .host
                .as_ref()
                .and_then(|h| h.data.metrics.get(name))
                .and_then(|c| dist(c.present().map(f64::from)))
        };
        Signals {
            cross,
            duration_s: report.run.duration_s,
            interval_s: report.run.interval_s,
            events: report.events.clone(),
            gpu_absent_reason: report.gpu_absent_reason.clone(),
            host_cpu: host_col("cpu_total"),
            host_disk_read: host_col("disk_read"),
            devices,
        }
    }

    /// Devices that have utilization samples.
    pub fn sampled_devices(&self) -> impl Iterator<Item = &DeviceSignals> {
        self.devices.iter().filter(|d| d.util.is_some())
    }
}

fn cross_signals(devices: &[DeviceSignals]) -> CrossSignals {
    let util: Vec<(u32, f64)> = devices
        .iter()
        .filter_map(|d| d.util.map(|u| (d.index, u.p50)))
        .collect();
    let clocks: Vec<(u32, f64)> = devices
        .iter()
        .filter_map(|d| d.sm_clock_loaded.map(|c| (d.index, c.p50)))
        .collect();
    let mut out = CrossSignals {
        util_p50_by_device: util.clone(),
        clock_p50_by_device: clocks,
        ..Default::default()
    };
    if util.len() >= 2 {
        let lo = util.iter().map(|u| u.1).fold(f64::INFINITY, f64::min);
        let hi = util.iter().map(|u| u.1).fold(f64::NEG_INFINITY, f64::max);
        out.util_p50_spread = Some(hi - lo);
        let mut sorted: Vec<f64> = util.iter().map(|u| u.1).collect();
        sorted.sort_by(f64::total_cmp);
        let med = stats::percentile_sorted(&sorted, 0.5);
        out.util_outlier = util
            .iter()
            .map(|(d, v)| (*d, (v - med).abs()))
            .max_by(|a, b| a.1.total_cmp(&b.1));
    }
    out
}
