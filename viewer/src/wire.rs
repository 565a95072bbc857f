//! Reading a report in one pass. Core's model flattens each stream's samples into its
//! parent object (`#[serde(flatten)]`), which makes serde buffer every sample of a stream
//! before it can deserialize it: for a day of eight GPUs that is tens of millions of
//! buffered values and most of the page's load time. These mirror types have the same JSON
//! shape without `flatten`, and convert into core's types.
//!
//! GPU columns the page does not draw (clocks other than SM, P-state, link generation,
//! NVLink, …) are skipped while reading rather than parsed: number parsing is the bulk of
//! the work.

use std::collections::BTreeMap;

use gpuwhy::report::{
    CoarseColumn, CoarseData, Column, DeviceInfo, DeviceSeries, Event, Fault, Finding, HostData,
    HostFacts, NvmlInfo, Overhead, Report, RunInfo, SeriesData, StepsData, Tool, Verdict,
};
use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use crate::chart::timeline::PANELS;

#[derive(Deserialize)]
pub(crate) struct WireReport {
    schema: String,
    #[serde(default)]
    tool: Tool,
    #[serde(default)]
    run: RunInfo,
    #[serde(default)]
    nvml: Option<NvmlInfo>,
    #[serde(default)]
    gpu_absent_reason: Option<String>,
    #[serde(default)]
    verdict: Verdict,
    #[serde(default)]
    findings: Vec<Finding>,
    #[serde(default)]
    devices: Vec<DeviceInfo>,
    #[serde(default)]
    series: Vec<WireSeries>,
    #[serde(default)]
    host: Option<WireHost>,
    #[serde(default)]
    steps: Option<StepsData>,
    #[serde(default)]
    events: Vec<Event>,
    #[serde(default)]
    faults: Vec<Fault>,
    #[serde(default)]
    overhead: Overhead,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireSeries {
    device: u32,
    t: Vec<f64>,
    #[serde(deserialize_with = "drawn")]
    metrics: BTreeMap<String, Column>,
    coarse: Option<WireCoarse>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireCoarse {
    rows_per_bucket: usize,
    t_start: Vec<f64>,
    t_end: Vec<f64>,
    #[serde(deserialize_with = "drawn")]
    metrics: BTreeMap<String, CoarseColumn>,
}

impl From<WireCoarse> for CoarseData {
    fn from(c: WireCoarse) -> CoarseData {
        CoarseData {
            rows_per_bucket: c.rows_per_bucket,
            t_start: c.t_start,
            t_end: c.t_end,
            metrics: c.metrics,
        }
    }
}

/// True for the GPU columns some timeline panel draws.
fn is_drawn(metric: &str) -> bool {
    PANELS
        .iter()
        .any(|p| p.metrics.iter().any(|(m, _)| *m == metric))
}

/// A column map keeping only the drawn columns; the others are scanned, not parsed.
fn drawn<'de, D, V>(d: D) -> Result<BTreeMap<String, V>, D::Error>
where
    D: Deserializer<'de>,
    V: Deserialize<'de>,
{
    struct Drawn<V>(std::marker::PhantomData<V>);
    impl<'de, V: Deserialize<'de>> Visitor<'de> for Drawn<V> {
        type Value = BTreeMap<String, V>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a map of metric columns")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = BTreeMap::new();
            while let Some(k) = map.next_key::<String>()? {
                if is_drawn(&k) {
                    let v = map.next_value::<V>()?;
                    out.insert(k, v);
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(out)
        }
    }
    d.deserialize_map(Drawn(std::marker::PhantomData))
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireHost {
    facts: HostFacts,
    units: BTreeMap<String, String>,
    t: Vec<f64>,
    metrics: BTreeMap<String, Column>,
    coarse: Option<CoarseData>,
    unavailable: BTreeMap<String, String>,
}

impl From<WireReport> for Report {
    fn from(w: WireReport) -> Report {
        Report {
            schema: w.schema,
            tool: w.tool,
            run: w.run,
            nvml: w.nvml,
            gpu_absent_reason: w.gpu_absent_reason,
            verdict: w.verdict,
            findings: w.findings,
            devices: w.devices,
            series: w
                .series
                .into_iter()
                .map(|s| DeviceSeries {
                    device: s.device,
                    data: SeriesData {
                        t: s.t,
                        metrics: s.metrics,
                        coarse: s.coarse.map(CoarseData::from),
                    },
                })
                .collect(),
            host: w.host.map(|h| HostData {
                facts: h.facts,
                units: h.units,
                data: SeriesData {
                    t: h.t,
                    metrics: h.metrics,
                    coarse: h.coarse,
                },
                unavailable: h.unavailable,
            }),
            steps: w.steps,
            events: w.events,
            faults: w.faults,
            overhead: w.overhead,
            // The page draws no per-rank section of a merged job report (yet).
            ranks: None,
        }
    }
}
