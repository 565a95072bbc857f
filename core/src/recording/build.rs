//! Turning a [`Recording`] into a [`Report`] (and back, for journals and re-analysis).

use std::collections::BTreeMap;

use super::reasons::ReasonCounts;
use super::{Coarse, Recording, SeriesBuf, BANDS, BAND_EDGES, HOST_COLUMNS, HOST_UNITS};
use crate::metric::reasons::THROTTLING_BITS;
use crate::metric::GpuMetric;
use crate::report::{
    CoarseColumn, CoarseData, Column, DeviceSeries, HostData, ReasonBuckets, Report, SeriesData,
    Tool, Verdict, SCHEMA,
};

/// One stream as the report writes it: the kept rows, then the buckets.
pub(crate) fn series_data(buf: &SeriesBuf, names: &[String]) -> SeriesData {
    let mut metrics = BTreeMap::new();
    for (i, name) in names.iter().enumerate() {
        metrics.insert(name.clone(), Column(buf.column(i)));
    }
    let c = buf.coarse();
    SeriesData {
        t: buf.times(),
        metrics,
        coarse: (!c.is_empty()).then(|| coarse_data(c, names)),
    }
}

/// The buckets as the report writes them: one column of each statistic per metric, bands
/// transposed to one array of counts per band.
fn coarse_data(c: Coarse, names: &[String]) -> CoarseData {
    let Coarse {
        rows_per_bucket,
        t_start,
        t_end,
        rows,
        min,
        mean,
        max,
        count,
        bands,
        reasons,
    } = c;
    let mut cm = BTreeMap::new();
    let mut any_bands = false;
    let stats = min.into_iter().zip(mean).zip(max).zip(count).zip(bands);
    for (name, ((((mn, me), mx), n), b)) in names.iter().zip(stats) {
        let bands: Vec<Vec<u32>> = b
            .map(|per_bucket| {
                (0..BANDS)
                    .map(|k| per_bucket.iter().map(|x| x[k]).collect())
                    .collect()
            })
            .unwrap_or_default();
        any_bands |= !bands.is_empty();
        let col = CoarseColumn {
            min: Column(mn),
            mean: Column(me),
            max: Column(mx),
            count: n,
            bands,
        };
        cm.insert(name.clone(), col);
    }
    CoarseData {
        rows_per_bucket,
        t_start,
        t_end,
        metrics: cm,
        rows,
        band_edges: if any_bands {
            BAND_EDGES.to_vec()
        } else {
            Vec::new()
        },
        reasons: reason_buckets(&reasons),
    }
}

/// The buckets' loaded samples by clock-event reason as the report writes them
/// (`recording::reasons`); `None` for a stream that does not count them.
fn reason_buckets(reasons: &[ReasonCounts]) -> Option<ReasonBuckets> {
    (!reasons.is_empty()).then(|| ReasonBuckets {
        loaded: reasons.iter().map(|r| r.loaded).collect(),
        throttled: reasons.iter().map(|r| r.throttled).collect(),
        bits: THROTTLING_BITS.to_vec(),
        loaded_bits: (0..THROTTLING_BITS.len())
            .map(|k| reasons.iter().map(|r| r.bits[k]).collect())
            .collect(),
    })
}

impl Report {
    /// A report of `rec` with no findings yet (see [`crate::analysis::diagnose`]).
    pub fn from_recording(rec: &Recording) -> Report {
        let gpu_names: Vec<String> = GpuMetric::ALL
            .iter()
            .map(|m| m.name().to_string())
            .collect();
        let series: Vec<DeviceSeries> = rec
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
        let streams: Vec<&[f64]> = series
            .iter()
            .map(|s: &DeviceSeries| s.data.t.as_slice())
            .chain(host.iter().map(|h| h.data.t.as_slice()))
            .collect();
        let windows = rec.kept_windows(&streams);
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
            windows,
        }
    }
}
