//! One provisional pass: the rows recorded since the last pass, diagnosed on their own, and
//! the instants whose windows keep each new finding's evidence at full resolution
//! (`docs/report-format.md`, "Retention").
//!
//! The pass copies only the stretch's rows out of the recording (under the sampler's lock,
//! [`copy_stretch`]), builds a small recording of them with time counted from the stretch's
//! start, and runs the real report builder and rules on it ([`diagnose_stretch`]) with no
//! lock held. Where a finding's evidence names no time range, [`window_time`] picks the
//! minute in which the metric the evidence measured was most extreme on its device.

use crate::analysis::diagnose;
use crate::metric::GpuMetric;
use crate::recording::{HostRecording, Recording, SeriesBuf, WINDOW_AFTER_S, WINDOW_BEFORE_S};
use crate::report::{Comparator, Finding, Report, Severity};

/// Width of the bins [`window_time`] compares, seconds: the window kept around an instant
/// is one minute too ([`WINDOW_BEFORE_S`] + [`WINDOW_AFTER_S`]).
pub const STRENGTH_BIN_S: f64 = 60.0;

/// Buckets the stretch's own recording may use; it keeps every row, so none are filled.
const STRETCH_BUCKETS: usize = 2;

/// One stream's rows taken after the previous pass: times and one vector per column.
#[derive(Debug, Clone, Default)]
pub(crate) struct Rows {
    t: Vec<f64>,
    cols: Vec<Vec<f32>>,
}

impl Rows {
    /// The rows of `s` taken after `after` seconds (all of them for `None`), decoding only
    /// the blocks of kept rows that hold them ([`SeriesBuf::rows_after`]).
    fn after(s: &SeriesBuf, after: Option<f64>) -> Rows {
        let (t, cols) = s.rows_after(after);
        Rows { t, cols }
    }

    fn bytes(&self) -> usize {
        self.t.len() * 8 + self.cols.iter().map(|c| c.len() * 4).sum::<usize>()
    }
}

/// What a pass copies out of the recording: the stretch's rows and what describes them.
#[derive(Debug, Clone)]
pub(crate) struct Stretch {
    /// The recording's frame (run, devices, host facts) with no rows yet.
    frame: Recording,
    gpus: Vec<Rows>,
    host: Option<Rows>,
    /// Recording time the stretch's time 0 stands for.
    pub origin: f64,
}

impl Stretch {
    /// Time of the last row copied, in recording time (`origin` when none was).
    pub fn last_t(&self) -> f64 {
        let last = |r: &Rows| r.t.last().copied();
        self.gpus
            .iter()
            .filter_map(last)
            .chain(self.host.as_ref().and_then(last))
            .fold(self.origin, f64::max)
    }

    /// GPU rows copied, over all GPUs.
    pub fn gpu_rows(&self) -> usize {
        self.gpus.iter().map(|r| r.t.len()).sum()
    }

    /// Bytes of the copied rows: the pass's transient memory, besides the report it builds.
    pub fn bytes(&self) -> usize {
        self.gpus.iter().map(Rows::bytes).sum::<usize>() + self.host.as_ref().map_or(0, Rows::bytes)
    }
}

/// Copies the rows of `rec` taken after `after` seconds, or all of them (call under the
/// sampler's lock).
pub(crate) fn copy_stretch(rec: &Recording, after: Option<f64>) -> Stretch {
    let origin = after.unwrap_or(0.0);
    let mut frame = Recording::new(rec.run.clone());
    frame.nvml = rec.nvml.clone();
    frame.gpu_absent_reason = rec.gpu_absent_reason.clone();
    frame.events = rec
        .events
        .iter()
        .filter(|e| after.is_none_or(|a| e.t_s > a))
        .cloned()
        .collect();
    let gpus = rec
        .devices
        .iter()
        .map(|d| Rows::after(&d.series, after))
        .collect();
    let host = rec.host.as_ref().map(|h| Rows::after(&h.series, after));
    for d in &rec.devices {
        frame.add_device(d.info.clone());
    }
    if let Some(h) = &rec.host {
        frame.host = Some(HostRecording {
            facts: h.facts.clone(),
            columns: h.columns.clone(),
            series: SeriesBuf::with_capacity(h.columns.len(), 1, STRETCH_BUCKETS),
            unavailable: h.unavailable.clone(),
        });
    }
    Stretch {
        frame,
        gpus,
        host,
        origin,
    }
}

/// The stretch as a recording of its own, time counted from its origin, diagnosed.
pub(crate) fn diagnose_stretch(s: Stretch) -> Report {
    let o = s.origin;
    let most = s.gpus.iter().map(|r| r.t.len()).max().unwrap_or(0);
    let host_rows = s.host.as_ref().map_or(0, |r| r.t.len());
    // Room for every row: nothing of the stretch is folded.
    let mut rec = Recording::with_capacity(s.frame.run.clone(), most + 1, STRETCH_BUCKETS);
    rec.nvml = s.frame.nvml;
    rec.gpu_absent_reason = s.frame.gpu_absent_reason;
    rec.run.duration_s = (s.frame.run.duration_s - o).max(0.0);
    for d in s.frame.devices {
        let mut info = d.info;
        info.lost_at_s = info.lost_at_s.map(|l| (l - o).max(0.0));
        rec.add_device(info);
    }
    for (pos, rows) in s.gpus.iter().enumerate() {
        let mut row = [f32::NAN; GpuMetric::COUNT];
        for (j, t) in rows.t.iter().enumerate() {
            for (c, col) in rows.cols.iter().enumerate().take(GpuMetric::COUNT) {
                row[c] = col[j];
            }
            rec.push_gpu(pos, t - o, &row);
        }
    }
    if let (Some(mut h), Some(rows)) = (s.frame.host, s.host) {
        h.series = SeriesBuf::with_capacity(h.columns.len(), host_rows + 1, STRETCH_BUCKETS);
        let mut row = vec![f32::NAN; h.columns.len()];
        for (j, t) in rows.t.iter().enumerate() {
            for (c, col) in rows.cols.iter().enumerate() {
                row[c] = col[j];
            }
            h.series.push(t - o, &row);
        }
        rec.host = Some(h);
    }
    for mut e in s.frame.events {
        e.t_s -= o;
        rec.push_event(e);
    }
    let mut report = Report::from_recording(&rec);
    diagnose(&mut report);
    report
}

/// Findings of a stretch's report worth a window: not info-only, not the verdict that
/// nothing was found, most costly first (the report's order).
pub(crate) fn worth_a_window(report: &Report) -> impl Iterator<Item = &Finding> {
    report
        .findings
        .iter()
        .filter(|f| f.severity > Severity::Info && f.id != "none")
}

/// The instant, in the stretch's time, whose window best shows `f`'s evidence:
/// - the first agreeing evidence item with a `time_range` (heaviest first): the range's
///   middle when the range fits in one window, else its start (where the condition began);
/// - else the [`STRENGTH_BIN_S`] bin in which the metric an agreeing item measured (the
///   first word of its `metric` naming a GPU column, e.g. `sm_clock p50 under load`) was
///   most extreme on the item's device (or the finding's first device): the highest mean
///   for a `>`/`>=` comparison, the lowest for `<`/`<=`; its middle;
/// - else the stretch's middle.
pub fn window_time(report: &Report, f: &Finding) -> f64 {
    let dur = report.run.duration_s.max(0.0);
    let mut items: Vec<_> = f.evidence.iter().filter(|e| e.agrees).collect();
    items.sort_by(|a, b| b.weight.unwrap_or(0.0).total_cmp(&a.weight.unwrap_or(0.0)));
    if let Some([a, b]) = items.iter().find_map(|e| e.time_range) {
        let (a, b) = (a.clamp(0.0, dur), b.clamp(0.0, dur));
        return if b - a <= WINDOW_BEFORE_S + WINDOW_AFTER_S {
            (a + b) / 2.0
        } else {
            a
        };
    }
    items
        .iter()
        .find_map(|e| {
            let name = e.metric.split_whitespace().next()?;
            let metric = GpuMetric::ALL.iter().find(|m| m.name() == name)?;
            let high = match e.comparison {
                Comparator::AtLeast | Comparator::Above => true,
                Comparator::AtMost | Comparator::Below => false,
                _ => return None,
            };
            let dev = e.device.or_else(|| f.devices.first().copied())?;
            let s = report.series.iter().find(|s| s.device == dev)?;
            let col = s.data.metrics.get(metric.name())?;
            strongest_bin(&s.data.t, &col.0, high).map(|t| t.min(dur))
        })
        .unwrap_or(dur / 2.0)
}

/// Middle of the [`STRENGTH_BIN_S`] bin whose mean of `v` is highest (`high`) or lowest;
/// `None` when no value is present.
fn strongest_bin(t: &[f64], v: &[f32], high: bool) -> Option<f64> {
    let mut bins: Vec<(f64, u32)> = Vec::new();
    for (t, v) in t.iter().zip(v).filter(|(_, v)| v.is_finite()) {
        let i = (t.max(0.0) / STRENGTH_BIN_S) as usize;
        if bins.len() <= i {
            bins.resize(i + 1, (0.0, 0));
        }
        bins[i].0 += f64::from(*v);
        bins[i].1 += 1;
    }
    let means = bins
        .iter()
        .enumerate()
        .filter(|(_, (_, n))| *n > 0)
        .map(|(i, (sum, n))| (i, sum / f64::from(*n)));
    let best = if high {
        means.max_by(|a, b| a.1.total_cmp(&b.1))
    } else {
        means.min_by(|a, b| a.1.total_cmp(&b.1))
    };
    best.map(|(i, _)| (i as f64 + 0.5) * STRENGTH_BIN_S)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{DeviceInfo, Evidence, Experiment, RunInfo};

    /// Ten minutes of one GPU (index 3) at 1 s: util 50 with a busy minute 7, sm_clock 1400
    /// with a slow minute 4.
    fn ten_minutes() -> Report {
        let mut rec = Recording::new(RunInfo::default());
        rec.add_device(DeviceInfo {
            index: 3,
            ..DeviceInfo::default()
        });
        for i in 0..600 {
            let t = f64::from(i);
            let mut row = [f32::NAN; GpuMetric::COUNT];
            row[GpuMetric::UtilGpu.index()] = if (420.0..480.0).contains(&t) {
                95.0
            } else {
                50.0
            };
            row[GpuMetric::SmClock.index()] = if (240.0..300.0).contains(&t) {
                900.0
            } else {
                1400.0
            };
            rec.push_gpu(0, t, &row);
        }
        rec.run.duration_s = 599.0;
        Report::from_recording(&rec)
    }

    fn finding(evidence: Vec<Evidence>, devices: Vec<u32>) -> Finding {
        Finding {
            id: "throttling".into(),
            title: String::new(),
            severity: Severity::Medium,
            confidence: 0.8,
            summary: String::new(),
            lost_share: None,
            lost_share_basis: None,
            devices,
            evidence,
            actions: Vec::new(),
            experiment: Experiment::default(),
            unseen: Vec::new(),
            source: None,
            caused_by: None,
        }
    }

    fn item(metric: &str, cmp: &str, device: Option<u32>, agrees: bool) -> Evidence {
        Evidence {
            metric: metric.into(),
            value: 1.0,
            threshold: 1.0,
            comparison: Comparator::from(cmp),
            unit: String::new(),
            device,
            time_range: None,
            agrees,
            weight: None,
        }
    }

    #[test]
    fn without_a_time_range_the_window_goes_to_the_most_extreme_minute_of_the_metric() {
        let r = ten_minutes();
        // Low clocks support the finding: the slow minute 4 (240–300 s), on the finding's
        // device when the item names none.
        let low = finding(
            vec![item("sm_clock p50 under load", "<=", None, true)],
            vec![3],
        );
        assert_eq!(window_time(&r, &low), 270.0);
        // High utilization supports it: the busy minute 7.
        let high = finding(vec![item("util_gpu p50", ">=", Some(3), true)], vec![3]);
        assert_eq!(window_time(&r, &high), 450.0);
        // An item that did not agree is not followed; the next one is.
        let both = finding(
            vec![
                item("util_gpu p50", ">=", Some(3), false),
                item("sm_clock p50", "<", Some(3), true),
            ],
            vec![3],
        );
        assert_eq!(window_time(&r, &both), 270.0);
    }

    #[test]
    fn nothing_to_follow_means_the_stretch_middle() {
        let r = ten_minutes();
        // No GPU column named, a device with no series, an unknown comparison, no devices.
        for f in [
            finding(
                vec![item("share of loaded samples", ">=", Some(3), true)],
                vec![3],
            ),
            finding(vec![item("util_gpu p50", ">=", Some(7), true)], vec![7]),
            finding(vec![item("util_gpu p50", "~", Some(3), true)], vec![3]),
            finding(vec![item("util_gpu p50", ">=", None, true)], vec![]),
        ] {
            assert_eq!(window_time(&r, &f), 299.5, "{:?}", f.evidence);
        }
    }

    #[test]
    fn a_time_range_wins_its_middle_when_short_its_start_when_long() {
        let r = ten_minutes();
        let mut e = item("events of kind xid", ">=", Some(3), true);
        e.time_range = Some([100.0, 140.0]);
        assert_eq!(window_time(&r, &finding(vec![e.clone()], vec![3])), 120.0);
        e.time_range = Some([100.0, 5_000.0]);
        assert_eq!(window_time(&r, &finding(vec![e.clone()], vec![3])), 100.0);
        // Clamped to the stretch.
        e.time_range = Some([-50.0, -10.0]);
        assert_eq!(window_time(&r, &finding(vec![e], vec![3])), 0.0);
    }

    #[test]
    fn a_stretch_is_copied_from_after_its_origin_and_diagnosed_in_its_own_time() {
        let mut rec = Recording::new(RunInfo::default());
        rec.add_device(DeviceInfo::default());
        for i in 0..1_000 {
            let mut row = [f32::NAN; GpuMetric::COUNT];
            row[GpuMetric::UtilGpu.index()] = 99.0;
            rec.push_gpu(0, f64::from(i), &row);
        }
        rec.run.duration_s = 999.0;
        let s = copy_stretch(&rec, Some(599.0));
        assert_eq!(s.gpu_rows(), 400);
        assert_eq!(s.last_t(), 999.0);
        assert_eq!(s.bytes(), 400 * (8 + 4 * GpuMetric::COUNT));
        let r = diagnose_stretch(s);
        assert_eq!(r.series[0].data.t.first(), Some(&1.0));
        assert_eq!(r.series[0].data.t.len(), 400);
        assert_eq!(r.run.duration_s, 400.0);
        assert_eq!(copy_stretch(&rec, None).gpu_rows(), 1_000);
    }
}
