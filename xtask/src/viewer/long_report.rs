//! The viewer benchmark's synthetic long report: hours of samples on several GPUs, the
//! first five minutes and the last hour at full resolution and the time between in coarse
//! buckets, as a long recording keeps them (docs/report-format.md, "Retention").

use std::collections::BTreeMap;

use gpuwhy::metric::GpuMetric;
use gpuwhy::report::{
    Capability, CoarseColumn, CoarseData, Column, DeviceInfo, DeviceSeries, Overhead, Report,
    RunInfo, SeriesData, Tool, Verdict, SCHEMA,
};

/// The long report's sampling interval, seconds.
const LONG_INTERVAL_S: f64 = 0.1;

/// The long report's sample of metric `m` on GPU `g` at row `i`: a data-starved shape, 40%
/// of each second near idle, staggered across GPUs; slow metrics only every tenth row, as
/// the sampler reads them.
fn long_value(m: GpuMetric, g: u32, i: usize) -> f32 {
    let t = i as f64 * LONG_INTERVAL_S;
    let idle = ((t + g as f64 * 0.13) % 1.0) < 0.4;
    let slow_row = (i + g as usize).is_multiple_of(10);
    match m {
        GpuMetric::UtilGpu => {
            if idle {
                2.0
            } else {
                97.0
            }
        }
        GpuMetric::UtilMem => {
            if idle {
                1.0
            } else {
                40.0
            }
        }
        GpuMetric::Power => {
            if idle {
                90.0
            } else {
                380.0
            }
        }
        GpuMetric::SmClock | GpuMetric::GraphicsClock => 1410.0,
        GpuMetric::MemClock => 1593.0,
        GpuMetric::MemUsed => 60_000.0 + (i % 100) as f32,
        GpuMetric::Pstate | GpuMetric::ClockReasons => 0.0,
        GpuMetric::Temp if slow_row => 60.0 + (t / 3600.0) as f32,
        GpuMetric::PcieRx if slow_row => {
            if idle {
                9000.0
            } else {
                100.0
            }
        }
        GpuMetric::PcieTx if slow_row => 50.0,
        _ => f32::NAN,
    }
}

/// Metric `m` of GPU `g` in buckets of `rows_per_bucket` rows from row `full_rows` up to
/// `total_rows`: each bucket's least, mean and largest value.
fn long_coarse(
    m: GpuMetric,
    g: u32,
    full_rows: usize,
    rows_per_bucket: usize,
    total_rows: usize,
) -> CoarseColumn {
    let buckets = (total_rows - full_rows).div_ceil(rows_per_bucket);
    let (mut lo, mut mean, mut hi) = (Vec::new(), Vec::new(), Vec::new());
    for b in 0..buckets {
        let first = full_rows + b * rows_per_bucket;
        let last = (full_rows + (b + 1) * rows_per_bucket).min(total_rows);
        let vals: Vec<f32> = (first..last)
            .map(|i| long_value(m, g, i))
            .filter(|v| !v.is_nan())
            .collect();
        if vals.is_empty() {
            lo.push(f32::NAN);
            mean.push(f32::NAN);
            hi.push(f32::NAN);
        } else {
            lo.push(vals.iter().copied().fold(f32::INFINITY, f32::min));
            hi.push(vals.iter().copied().fold(f32::NEG_INFINITY, f32::max));
            mean.push(vals.iter().sum::<f32>() / vals.len() as f32);
        }
    }
    CoarseColumn {
        min: Column(lo),
        mean: Column(mean),
        max: Column(hi),
        ..CoarseColumn::default()
    }
}

/// GPU `g` of the long report: an A100 with every metric the samples have.
fn long_device(g: u32) -> DeviceInfo {
    let mut caps = BTreeMap::new();
    for m in GpuMetric::ALL {
        let ok = (0..10).any(|i| !long_value(m, g, i).is_nan());
        let cap = if ok {
            Capability::available()
        } else {
            Capability::unavailable("GPM is not supported on this GPU (Hopper and newer only)")
        };
        caps.insert(m.name().to_string(), cap);
    }
    DeviceInfo {
        index: g,
        name: Some("NVIDIA A100-SXM4-80GB".into()),
        memory_total_mib: Some(81_920.0),
        power_limit_w: Some(400.0),
        max_sm_clock_mhz: Some(1410.0),
        temp_slowdown_c: Some(87.0),
        capabilities: caps,
        ..DeviceInfo::default()
    }
}

/// A synthetic long report: `hours` of 100 ms samples on `gpus` GPUs, the first five minutes
/// and the last hour at full resolution and the time between in coarse buckets, as the
/// recorder keeps a long run: rows, buckets, rows, in time order.
pub fn long_report(hours: f64, gpus: u32) -> Report {
    let interval = LONG_INTERVAL_S;
    let total_rows = (hours * 36_000.0) as usize;
    let head = total_rows.min(3_000);
    let tail_from = head.max(total_rows.saturating_sub(36_000));
    let coarse_rows = tail_from - head;
    let mut rows_per_bucket = 1usize;
    while coarse_rows / rows_per_bucket > 4096 {
        rows_per_bucket *= 2;
    }
    let buckets = coarse_rows.div_ceil(rows_per_bucket);
    let kept = || (0..head).chain(tail_from..total_rows);
    let mut devices = Vec::new();
    let mut series = Vec::new();
    for g in 0..gpus {
        devices.push(long_device(g));
        let mut metrics = BTreeMap::new();
        let mut coarse = BTreeMap::new();
        for m in GpuMetric::ALL {
            metrics.insert(
                m.name().to_string(),
                Column(kept().map(|i| long_value(m, g, i)).collect()),
            );
            coarse.insert(
                m.name().to_string(),
                long_coarse(m, g, head, rows_per_bucket, tail_from),
            );
        }
        let coarse = (buckets > 0).then(|| CoarseData {
            rows_per_bucket,
            t_start: (0..buckets)
                .map(|b| (head + b * rows_per_bucket) as f64 * interval)
                .collect(),
            t_end: (0..buckets)
                .map(|b| ((head + (b + 1) * rows_per_bucket).min(tail_from) - 1) as f64 * interval)
                .collect(),
            metrics: coarse,
            ..CoarseData::default()
        });
        series.push(DeviceSeries {
            device: g,
            data: SeriesData {
                t: kept().map(|i| i as f64 * interval).collect(),
                metrics,
                coarse,
            },
        });
    }
    Report {
        schema: SCHEMA.into(),
        tool: Tool::default(),
        run: RunInfo {
            duration_s: hours * 3600.0,
            interval_s: interval,
            source: "synthetic".into(),
            complete: true,
            label: Some(format!("synthetic {hours} h × {gpus} GPUs")),
            ..RunInfo::default()
        },
        nvml: None,
        gpu_absent_reason: None,
        verdict: Verdict::default(),
        findings: Vec::new(),
        devices,
        series,
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
