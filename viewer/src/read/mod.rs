//! Reading a report from its bytes, fast enough for a day of eight GPUs in the browser.
//!
//! Nearly all of a long report's bytes are its sample columns, and serde_json inside
//! WebAssembly reads them at a few MB/s. This walk reads the JSON itself ([`scan`]): the
//! columns in one tight loop ([`number`]: each number as serde_json would read it), the
//! small parts field by field as core declares them ([`parts`], [`finding`]), with
//! serde_json at hand for strings with escapes, values to skip and exact error messages.
//! The result is the [`Report`] core would read (the tests compare the two).
//!
//! A merged job report's `ranks` section is read as far as the page's per-rank table
//! needs ([`ranks`]); its other fields keep their defaults. A session's `comparison` with
//! its baseline is read as far as the page shows it ([`baseline`]).
//!
//! GPU columns no chart draws (clocks other than SM, P-state, link generation, NVLink, …)
//! are skipped to their closing bracket, not parsed. Keys this walk does not know are
//! skipped, as serde skips unknown fields; every reader names all the fields of core's
//! type, so a field core adds does not compile here until it is read.

mod baseline;
mod finding;
mod number;
mod packed;
mod parts;
mod ranks;
mod scan;
mod source;
mod value;

use std::collections::BTreeMap;

use gpuwhy::report::{
    CoarseColumn, CoarseData, Column, DeviceSeries, HostData, Report, SeriesData, StepsData,
};

use crate::chart::timeline::PANELS;
pub use scan::ReadError;
use scan::Scan;
pub use source::{InMemory, Source};

/// Which columns of a stream to parse.
type Keep = fn(&str) -> bool;

/// True for the GPU columns some timeline panel draws.
fn drawn(metric: &str) -> bool {
    PANELS
        .iter()
        .any(|p| p.metrics.iter().any(|(m, _)| *m == metric))
}

fn every(_: &str) -> bool {
    true
}

/// Reads a report. A document without a `schema` is refused here too (the caller finds out
/// why: not JSON, not a report, or a newer one).
pub fn report(src: &dyn Source) -> Result<Report, ReadError> {
    let mut s = Scan::new(src);
    let mut schema = None;
    let mut r = Report {
        schema: String::new(),
        tool: Default::default(),
        run: Default::default(),
        nvml: None,
        gpu_absent_reason: None,
        verdict: Default::default(),
        findings: Vec::new(),
        devices: Vec::new(),
        series: Vec::new(),
        host: None,
        steps: None,
        events: Vec::new(),
        faults: Vec::new(),
        overhead: Default::default(),
        // A merged job report's per-rank table: the fields it shows ([`ranks`]).
        ranks: None,
        // A session's comparison with its baseline: what the page shows of it ([`baseline`]).
        comparison: None,
        windows: Vec::new(),
    };
    s.object(&mut |s, key| {
        match key {
            "schema" => schema = Some(s.string()?),
            "tool" => r.tool = parts::tool(s)?,
            "run" => r.run = parts::run(s)?,
            "nvml" => r.nvml = s.nullable(parts::nvml)?,
            "gpu_absent_reason" => r.gpu_absent_reason = s.opt_string()?,
            "verdict" => r.verdict = finding::verdict(s)?,
            "findings" => r.findings = s.list(&mut finding::finding)?,
            "devices" => r.devices = s.list(&mut parts::device)?,
            "series" => s.array(&mut |s| {
                let mut d = DeviceSeries::default();
                s.object(&mut |s, key| match key {
                    "device" => s.int().map(|v| d.device = v),
                    _ => stream_field(s, key, &mut d.data, drawn),
                })?;
                let DeviceSeries {
                    device: _,
                    data:
                        SeriesData {
                            t: _,
                            metrics: _,
                            coarse: _,
                        },
                } = &d;
                r.series.push(d);
                Ok(())
            })?,
            "host" => r.host = s.nullable(host)?,
            "steps" => r.steps = s.nullable(steps)?,
            "events" => r.events = s.list(&mut parts::event)?,
            "faults" => r.faults = s.list(&mut parts::fault)?,
            "overhead" => r.overhead = parts::overhead(s)?,
            "ranks" => r.ranks = s.nullable(ranks::ranks)?,
            "comparison" => r.comparison = s.nullable(baseline::comparison)?,
            _ => s.skip()?,
        }
        Ok(())
    })?;
    if !s.at_end() {
        return Err(ReadError("trailing characters after the report".into()));
    }
    r.schema = schema.ok_or_else(|| ReadError("missing field `schema`".into()))?;
    Ok(r)
}

/// The `schema` string of a JSON object, if it has one (to say why a file that is valid JSON
/// is not a report this viewer reads).
pub fn schema(bytes: &[u8]) -> Option<String> {
    let src = InMemory(bytes);
    let mut s = Scan::new(&src);
    let mut schema = None;
    s.object(&mut |s, key| match key {
        "schema" => s.string().map(|v| schema = Some(v)),
        _ => s.skip(),
    })
    .ok()?;
    schema
}

/// One field of a sample stream (`t` or `times`, `metrics` or `columns`, `coarse`); other
/// keys are skipped.
fn stream_field(
    s: &mut Scan,
    key: &str,
    data: &mut SeriesData,
    keep: Keep,
) -> Result<(), ReadError> {
    match key {
        // The plain form's keys, and the compact form's (docs/report-format.md).
        "t" | "times" => data.t = s.times()?,
        "metrics" | "columns" => data.metrics = columns(s, keep, data.t.len())?,
        "coarse" => data.coarse = s.nullable(|s| coarse(s, keep))?,
        _ => s.skip()?,
    }
    Ok(())
}

/// A map of column name → column, parsing the columns `keep` wants (of about `rows` values:
/// the stream's times come before its columns).
fn columns(s: &mut Scan, keep: Keep, rows: usize) -> Result<BTreeMap<String, Column>, ReadError> {
    let mut out = BTreeMap::new();
    s.object(&mut |s, name| {
        if keep(name) {
            out.insert(name.to_string(), s.column(rows)?);
            Ok(())
        } else {
            s.skip_column()
        }
    })?;
    Ok(out)
}

fn coarse(s: &mut Scan, keep: Keep) -> Result<CoarseData, ReadError> {
    let mut c = CoarseData::default();
    s.object(&mut |s, key| {
        match key {
            "rows_per_bucket" => c.rows_per_bucket = s.int()?,
            "t_start" => c.t_start = s.times()?,
            "t_end" => c.t_end = s.times()?,
            "metrics" => s.object(&mut |s, name| {
                if !keep(name) {
                    return s.object(&mut |s, _| s.skip_column());
                }
                let mut col = CoarseColumn::default();
                let rows = c.t_start.len();
                s.object(&mut |s, key| match key {
                    "min" => s.column(rows).map(|v| col.min = v),
                    "mean" => s.column(rows).map(|v| col.mean = v),
                    "max" => s.column(rows).map(|v| col.max = v),
                    _ => s.skip(),
                })?;
                c.metrics.insert(name.to_string(), col);
                Ok(())
            })?,
            _ => s.skip()?,
        }
        Ok(())
    })?;
    // `rows`, `band_edges`, `reasons` and the columns' `count`/`bands` are for core's signals
    // over buckets; the viewer draws min/mean/max only.
    let CoarseData {
        rows_per_bucket: _,
        t_start: _,
        t_end: _,
        metrics: _,
        rows: _,
        band_edges: _,
        reasons: _,
    } = &c;
    Ok(c)
}

fn host(s: &mut Scan) -> Result<HostData, ReadError> {
    let mut h = HostData::default();
    s.object(&mut |s, key| match key {
        "facts" => parts::host_facts(s).map(|v| h.facts = v),
        "units" => s.map(&mut Scan::string).map(|v| h.units = v),
        "unavailable" => s.map(&mut Scan::string).map(|v| h.unavailable = v),
        _ => stream_field(s, key, &mut h.data, every),
    })?;
    let HostData {
        facts: _,
        units: _,
        data:
            SeriesData {
                t: _,
                metrics: _,
                coarse: _,
            },
        unavailable: _,
    } = &h;
    Ok(h)
}

fn steps(s: &mut Scan) -> Result<StepsData, ReadError> {
    let mut st = StepsData::default();
    s.object(&mut |s, key| {
        match key {
            "phases" => st.phases = s.list(&mut Scan::string)?,
            "count" => st.count = s.int()?,
            "t" => st.t = s.times()?,
            "duration" => st.duration = s.column(st.t.len())?,
            "phase_durations" => st.phase_durations = columns(s, every, st.t.len())?,
            "gpu_phase_durations" => st.gpu_phase_durations = columns(s, every, st.t.len())?,
            "stats" => st.stats = s.map(&mut parts::phase_stats)?,
            "gpu_stats" => st.gpu_stats = s.map(&mut parts::phase_stats)?,
            "exact_steps" => st.exact_steps = s.int()?,
            "quantile_error" => st.quantile_error = s.f64()?,
            "ignored_markers" => st.ignored_markers = s.int()?,
            "memory_bytes" => st.memory_bytes = s.int()?,
            "memory_bound_bytes" => st.memory_bound_bytes = s.int()?,
            _ => s.skip()?,
        }
        Ok(())
    })?;
    let StepsData {
        phases: _,
        count: _,
        t: _,
        duration: _,
        phase_durations: _,
        gpu_phase_durations: _,
        stats: _,
        gpu_stats: _,
        exact_steps: _,
        quantile_error: _,
        ignored_markers: _,
        memory_bytes: _,
        memory_bound_bytes: _,
        // Each marking thread's summary: the page does not show it yet (skipped above).
        threads: _,
    } = &st;
    Ok(st)
}
