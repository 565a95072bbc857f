//! Reading a rank's report for the merge only: the parts a [`RankDigest`] needs, with every
//! other sample column scanned, not parsed.
//!
//! A full [`Report`] read builds every column of every GPU (and buffers them once more for
//! the model's flattened series); the merge needs three columns per GPU, the step statistics
//! and the findings. Anything this reader does not take as a plain report of schema 1 — a
//! journal, a truncated or foreign file, a newer schema, a job report — goes through
//! [`Report::from_slice`] instead, which reads it fully or says exactly what is wrong.

use std::collections::BTreeMap;
use std::path::Path;

use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;

use super::RankDigest;
use crate::metric::GpuMetric;
use crate::report::{
    CoarseColumn, CoarseData, Column, DeviceInfo, DeviceSeries, Event, Finding, Overhead,
    PhaseStats, Report, RunInfo, SeriesData, StepsData, Tool, Verdict, SCHEMA_MAJOR, SCHEMA_PREFIX,
};
use crate::Result;

/// The columns a digest reads.
const KEPT: [GpuMetric; 3] = [GpuMetric::UtilGpu, GpuMetric::SmClock, GpuMetric::Power];

#[derive(Deserialize)]
struct WireRank {
    schema: String,
    #[serde(default)]
    run: RunInfo,
    #[serde(default)]
    devices: Vec<WireDevice>,
    #[serde(default)]
    series: Vec<WireSeries>,
    #[serde(default)]
    steps: Option<WireSteps>,
    #[serde(default)]
    findings: Vec<Finding>,
    #[serde(default)]
    events: Vec<Event>,
    #[serde(default)]
    ranks: Option<IgnoredAny>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireDevice {
    index: u32,
    name: Option<String>,
    uuid: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireSeries {
    device: u32,
    // `columns`: the compact series form (docs/report-format.md).
    #[serde(alias = "columns", deserialize_with = "kept")]
    metrics: BTreeMap<String, Column>,
    coarse: Option<WireCoarse>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireCoarse {
    #[serde(deserialize_with = "kept")]
    metrics: BTreeMap<String, WireMean>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireMean {
    mean: Column,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireSteps {
    phases: Vec<String>,
    count: u64,
    stats: BTreeMap<String, PhaseStats>,
}

/// A column map keeping only the [`KEPT`] columns; the others are scanned, not parsed.
fn kept<'de, D, V>(d: D) -> Result<BTreeMap<String, V>, D::Error>
where
    D: Deserializer<'de>,
    V: Deserialize<'de>,
{
    struct Kept<V>(std::marker::PhantomData<V>);
    impl<'de, V: Deserialize<'de>> Visitor<'de> for Kept<V> {
        type Value = BTreeMap<String, V>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a map of metric columns")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = BTreeMap::new();
            while let Some(k) = map.next_key::<String>()? {
                if KEPT.iter().any(|m| m.name() == k) {
                    let v = map.next_value::<V>()?;
                    out.insert(k, v);
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(out)
        }
    }
    d.deserialize_map(Kept(std::marker::PhantomData))
}

/// True for `gpuwhy.report/1` and `gpuwhy.report/1.x`.
fn readable(schema: &str) -> bool {
    schema
        .strip_prefix(SCHEMA_PREFIX)
        .and_then(|v| v.split('.').next())
        .and_then(|m| m.parse::<u32>().ok())
        .is_some_and(|m| m <= SCHEMA_MAJOR)
}

impl WireRank {
    /// The parts of a report a digest reads, as a report.
    fn into_report(self) -> Report {
        let series = self
            .series
            .into_iter()
            .map(|s| DeviceSeries {
                device: s.device,
                data: SeriesData {
                    t: Vec::new(),
                    metrics: s.metrics,
                    coarse: s.coarse.map(|c| CoarseData {
                        metrics: c
                            .metrics
                            .into_iter()
                            .map(|(k, m)| {
                                let col = CoarseColumn {
                                    mean: m.mean,
                                    ..CoarseColumn::default()
                                };
                                (k, col)
                            })
                            .collect(),
                        ..CoarseData::default()
                    }),
                },
            })
            .collect();
        Report {
            schema: self.schema,
            tool: Tool::default(),
            run: self.run,
            nvml: None,
            gpu_absent_reason: None,
            verdict: Verdict::default(),
            findings: self.findings,
            devices: self
                .devices
                .into_iter()
                .map(|d| DeviceInfo {
                    index: d.index,
                    name: d.name,
                    uuid: d.uuid,
                    ..DeviceInfo::default()
                })
                .collect(),
            series,
            host: None,
            steps: self.steps.map(|s| StepsData {
                phases: s.phases,
                count: s.count,
                stats: s.stats,
                ..StepsData::default()
            }),
            events: self.events,
            faults: Vec::new(),
            overhead: Overhead::default(),
            ranks: None,
            comparison: None,
            windows: Vec::new(),
        }
    }
}

impl RankDigest {
    /// Reads and digests one rank's report from its bytes; `file` names it in messages.
    ///
    /// Takes the findings the report was written with. With `rediagnose`, or for anything
    /// but a plain report (a crash journal, whose replay has no findings yet), it reads the
    /// whole report and runs the rules on it first — several times slower. Errors are
    /// [`Report::from_slice`]'s: what is wrong with the file and what to do.
    pub fn from_slice(bytes: &[u8], file: &str, rediagnose: bool) -> Result<RankDigest> {
        if !rediagnose {
            // A `.json.gz` report, unzipped (a damaged one goes on to the full reader, which
            // says what is wrong with it).
            let plain = crate::report::gunzip_head(bytes, 1 << 30);
            if let Ok(w) = serde_json::from_slice::<WireRank>(&plain) {
                if readable(&w.schema) && w.ranks.is_none() {
                    return RankDigest::of(&w.into_report(), file);
                }
            }
        }
        let mut report = Report::from_slice(bytes, Path::new(file))?;
        crate::analysis::diagnose(&mut report);
        RankDigest::of(&report, file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Column, DeviceSeries, SeriesData};

    #[test]
    fn the_quick_read_takes_the_compact_form_and_gzip_as_the_full_read_does() {
        let json = br#"{"schema": "gpuwhy.report/1", "run": {"rank": 3}}"#;
        let mut r = Report::from_slice(json, Path::new("r.json")).expect("report");
        let util = Column((0..50).map(|i| (i % 7) as f32 * 10.0).collect());
        r.series.push(DeviceSeries {
            device: 0,
            data: SeriesData {
                t: (0..50).map(|i| f64::from(i) / 10.0).collect(),
                metrics: [("util_gpu".to_string(), util)].into(),
                coarse: None,
            },
        });
        let text = r.to_json();
        assert!(text.contains("\"columns\""), "written in the compact form");
        let quick = RankDigest::from_slice(text.as_bytes(), "r.json", false).expect("quick");
        let full = RankDigest::from_slice(text.as_bytes(), "r.json", true).expect("full");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut enc, text.as_bytes()).expect("gzip");
        let gz = enc.finish().expect("gzip");
        let gz = RankDigest::from_slice(&gz, "r.json.gz", false).expect("gzip");
        let p50 = |d: &RankDigest| d.gpus.first().and_then(|g| g.util_p50);
        assert!(p50(&quick).is_some(), "{:?}", quick.gpus);
        assert_eq!(p50(&quick), p50(&full));
        assert_eq!(p50(&gz), p50(&full));
        assert_eq!(gz.run.rank, Some(3));
    }
}
