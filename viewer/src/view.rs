//! A loaded report and what the page needs to know about it: the GPUs in display order,
//! the time range all charts share, and why a file could not be opened.

use crate::json::{self, Obj};
use crate::read::{self, InMemory, ReadError, Source};
use gpuwhy::report::{
    journal, DeviceInfo, DeviceSeries, Event, Report, SCHEMA, SCHEMA_MAJOR, SCHEMA_PREFIX,
};

/// Why a file could not be shown, for the page's message box.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadError {
    /// `invalid` (not JSON, cut short, empty), `not_report` (JSON but no gpuwhy schema),
    /// `newer_schema` (a later major version), `damaged` (a report whose fields do not fit)
    /// or `journal` (a crash journal, which `gpuwhy view` converts).
    pub kind: &'static str,
    /// One line for a heading.
    pub title: String,
    /// What was wrong and what to do (plain text: the page shows it as text).
    pub message: String,
}

/// One GPU as the page shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Gpu {
    /// Position in [`View::gpus`] (what the page passes back to ask for its charts).
    pub pos: usize,
    /// NVML index.
    pub index: u32,
    /// `GPU 0 · NVIDIA H100` (plain text from the report: escape it before use in HTML).
    pub label: String,
    /// Index into `report.series`.
    pub series: usize,
    /// Index into `report.devices`, when the report has the device's facts.
    pub device: Option<usize>,
}

impl LoadError {
    /// `{kind, title, message}` as JSON, for the page.
    pub fn to_json(&self) -> String {
        Obj::new()
            .str("kind", self.kind)
            .str("title", &self.title)
            .str("message", &self.message)
            .end()
    }
}

/// What the page needs to lay itself out (sent to JavaScript as JSON, [`Info::to_json`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Info {
    /// The GPUs with samples, in index order.
    pub gpus: Vec<Gpu>,
    /// Start of the shared time axis, seconds.
    pub t0: f64,
    /// End of the shared time axis, seconds.
    pub t1: f64,
    /// True when the report has step timings.
    pub has_steps: bool,
    /// True when the report has host samples.
    pub has_host: bool,
    /// Number of findings.
    pub findings: usize,
    /// The verdict's title (plain text).
    pub verdict: String,
}

impl Info {
    /// The facts as JSON: `gpus` (`pos`, `index`, `label`), `t0`, `t1`, `has_steps`,
    /// `has_host`, `findings`, `verdict`.
    pub fn to_json(&self) -> String {
        let gpus = self.gpus.iter().map(|g| {
            Obj::new()
                .num("pos", g.pos as f64)
                .num("index", g.index as f64)
                .str("label", &g.label)
                .end()
        });
        Obj::new()
            .raw("gpus", &json::array(gpus))
            .num("t0", self.t0)
            .num("t1", self.t1)
            .bool("has_steps", self.has_steps)
            .bool("has_host", self.has_host)
            .num("findings", self.findings as f64)
            .str("verdict", &self.verdict)
            .end()
    }
}

/// A report ready to draw.
pub struct View {
    /// The report as read.
    pub report: Report,
    /// GPUs with samples, in index order.
    pub gpus: Vec<Gpu>,
    /// The time range every chart shares, seconds since the start.
    pub t_range: (f64, f64),
}

impl View {
    /// Reads report bytes; `name` is used in messages.
    pub fn load(bytes: &[u8], name: &str) -> Result<View, LoadError> {
        Self::load_from(&InMemory(bytes), name)
    }

    /// Reads a report from `src`, copying only what it reads; `name` is used in messages.
    ///
    /// The document is read once when it is a good report; only a failure reads all of it
    /// again to say what is wrong. Crash journals are not read here (replaying one runs the
    /// rules, which would double the page's WebAssembly): `gpuwhy view` converts them.
    pub fn load_from(src: &dyn Source, name: &str) -> Result<View, LoadError> {
        // Why it is refused: its schema (a message already), or what did not read.
        let refused: Result<LoadError, ReadError> = match read::report(src) {
            Ok(report) => match check_schema(Some(&report.schema), name) {
                Ok(()) => return Ok(View::new(report)),
                Err(e) => Ok(e),
            },
            Err(e) => Err(e),
        };
        // Not a report this viewer reads: saying why takes all of it. Only a file that is no
        // report can be a journal (its first line has the journal schema): checking here,
        // not first, keeps a long report's one line unscanned.
        let bytes = src.to_vec();
        if journal::looks_like_journal(&bytes) {
            return Err(LoadError {
                kind: "journal",
                title: "This is a crash journal, not a report".into(),
                message: format!(
                    "{name} is the journal of a recording that stopped without writing its \
                     report. Turn it into a page with `gpuwhy view {name}` (or read it with \
                     `gpuwhy diagnose {name}`)."
                ),
            });
        }
        Err(refused.unwrap_or_else(|e| explain(&bytes, name, &e)))
    }

    /// Prepares a report for drawing.
    pub fn new(report: Report) -> View {
        // GPUs in device order, series of one device in the report's order.
        let mut order: Vec<usize> = (0..report.series.len()).collect();
        crate::sort::short_by_key(&mut order, |&i| report.series[i].device);
        let mut gpus = Vec::with_capacity(order.len());
        for (pos, series) in order.into_iter().enumerate() {
            let index = report.series[series].device;
            let device = report.devices.iter().position(|d| d.index == index);
            let name = device.and_then(|d| report.devices[d].name.clone());
            let label = match name {
                Some(n) => format!("GPU {index} · {n}"),
                None => format!("GPU {index}"),
            };
            gpus.push(Gpu {
                pos,
                index,
                label,
                series,
                device,
            });
        }
        let t_range = time_range(&report);
        View {
            report,
            gpus,
            t_range,
        }
    }

    /// Layout facts for the page.
    pub fn info(&self) -> Info {
        Info {
            gpus: self.gpus.clone(),
            t0: self.t_range.0,
            t1: self.t_range.1,
            has_steps: self
                .report
                .steps
                .as_ref()
                .is_some_and(|s| !s.duration.is_empty() || !s.stats.is_empty()),
            has_host: self.report.host.is_some(),
            findings: self.report.findings.len(),
            verdict: self.report.verdict.title.clone(),
        }
    }

    /// The samples of the GPU at `pos`.
    pub fn series(&self, pos: usize) -> Option<&DeviceSeries> {
        self.report.series.get(self.gpus.get(pos)?.series)
    }

    /// The static facts of the GPU at `pos`, when the report has them.
    pub fn device(&self, pos: usize) -> Option<&DeviceInfo> {
        self.report.devices.get(self.gpus.get(pos)?.device?)
    }

    /// Events that concern the GPU at `pos`: its own and those of no device.
    pub fn events_for(&self, pos: usize) -> Vec<&Event> {
        let index = self.gpus.get(pos).map(|g| g.index);
        let mut out = Vec::new();
        for e in &self.report.events {
            if e.device.is_none() || e.device == index {
                out.push(e);
            }
        }
        out
    }

    /// Clamps a requested range to the report's, keeping it at least a millisecond wide.
    pub fn clamp_range(&self, t0: f64, t1: f64) -> (f64, f64) {
        let (a, b) = self.t_range;
        if !(t0.is_finite() && t1.is_finite()) || t1 <= t0 {
            return (a, b);
        }
        let t0 = t0.clamp(a, b);
        let t1 = t1.clamp(a, b);
        if t1 - t0 < 1e-3 {
            (t0, (t0 + 1e-3).min(b))
        } else {
            (t0, t1)
        }
    }
}

/// Refuses anything but a `gpuwhy.report/1[.x]` schema, with the message core gives.
fn check_schema(schema: Option<&str>, name: &str) -> Result<(), LoadError> {
    let not_report = |msg: String| LoadError {
        kind: "not_report",
        title: "This file is not a gpuwhy report".into(),
        message: msg,
    };
    let Some(schema) = schema else {
        return Err(not_report(format!(
            "{name}: this JSON is not a gpuwhy report (no \"schema\": \"gpuwhy.report/…\" \
             field); the viewer reads reports written by `gpuwhy record` or `gpuwhy demo`"
        )));
    };
    let Some(version) = schema.strip_prefix(SCHEMA_PREFIX) else {
        return Err(not_report(format!(
            "{name}: this JSON has schema \"{schema}\", not a gpuwhy report ({SCHEMA})"
        )));
    };
    let major: Option<u32> = version.split('.').next().and_then(|m| m.parse().ok());
    match major {
        None => Err(not_report(format!(
            "{name}: unreadable schema version \"{schema}\""
        ))),
        Some(m) if m > SCHEMA_MAJOR => Err(LoadError {
            kind: "newer_schema",
            title: "This report needs a newer viewer".into(),
            message: format!(
                "{name}: report schema {schema} is newer than this viewer understands \
                 ({SCHEMA}); open it with the gpuwhy that wrote it (`gpuwhy view {name}`) \
                 or a newer viewer"
            ),
        }),
        Some(_) => Ok(()),
    }
}

/// Why `bytes` did not read as a report: not JSON, not a report, a newer schema, or a
/// report whose fields do not fit (`e` says which).
fn explain(bytes: &[u8], name: &str, e: &ReadError) -> LoadError {
    use serde_json::error::Category;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return LoadError {
            kind: "invalid",
            title: "This file is empty".into(),
            message: format!(
                "{name} is empty; was the recording interrupted before it wrote anything? \
                 Look for a `.partial` journal next to it"
            ),
        };
    }
    let invalid = |message: String| LoadError {
        kind: "invalid",
        title: "This file is not valid JSON".into(),
        message,
    };
    if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(bytes) {
        if e.classify() == Category::Eof {
            return invalid(format!(
                "{name} ends in the middle of the JSON document (line {}, column {}): it was \
                 cut short. If a recording was interrupted, open its `.partial` journal with \
                 `gpuwhy view` instead",
                e.line(),
                e.column()
            ));
        }
        return invalid(format!(
            "{name} is not JSON (syntax error at line {}, column {}): is this a gpuwhy report?",
            e.line(),
            e.column()
        ));
    }
    if let Err(refused) = check_schema(read::schema(bytes).as_deref(), name) {
        return refused;
    }
    LoadError {
        kind: "damaged",
        title: "This report is damaged".into(),
        message: format!("{name}: not a valid {SCHEMA} report: {}", e.0),
    }
}

fn time_range(r: &Report) -> (f64, f64) {
    let mut end = if r.run.duration_s.is_finite() {
        r.run.duration_s
    } else {
        0.0
    };
    let mut consider = |t: Option<&f64>| {
        if let Some(&t) = t {
            if t.is_finite() && t > end {
                end = t;
            }
        }
    };
    for s in &r.series {
        consider(s.data.t.last());
        consider(s.data.coarse.as_ref().and_then(|c| c.t_end.last()));
    }
    if let Some(h) = &r.host {
        consider(h.data.t.last());
        consider(h.data.coarse.as_ref().and_then(|c| c.t_end.last()));
    }
    if let Some(s) = &r.steps {
        consider(s.t.last());
    }
    for e in &r.events {
        consider(Some(&e.t_s));
    }
    // Times are seconds since the start; a report whose samples end before they begin (or
    // has none) still gets a one-second axis.
    (0.0, if end > 0.0 { end } else { 1.0 })
}
