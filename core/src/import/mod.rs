//! Importers: what users already have — `nvidia-smi dmon` logs, `nvidia-smi --query-gpu`
//! CSV logs and `nvidia-smi -q` dumps — read into a [`Recording`], so the same report,
//! signals and rules diagnose them.
//!
//! Everything here is pure: text in, recording out, no files or threads, so the browser
//! viewer imports a dropped log the same way the CLI does. [`detect`] tells the kinds of
//! input apart by content (a report, a recording journal, a profiler trace, a dmon log, a
//! CSV log, an `nvidia-smi -q` dump); profiler traces are read by [`crate::trace`]. A log says less than a
//! recording: metrics it has no column for are unavailable with the reason (and
//! `crate::analysis::diagnose_log` lowers the confidence of a log of few samples). [`load`]
//! turns any file's content into a report, the first half of the path to a diagnosed report
//! (`crate::analysis::diagnose_any`) that the CLI and the browser both take.
//!
//! Not for: reading files (callers pass bytes) or writing anything.

mod any;
pub mod csv;
pub mod dmon;
pub mod smi;
mod table;

pub use any::{load, Input, Loaded};

use std::path::PathBuf;

use crate::recording::Recording;
use crate::{Error, Result};

/// What a file holds, told by its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A gpuwhy report (`"schema": "gpuwhy.report/…"`).
    Report,
    /// A recording journal (`.partial`) of an interrupted recording.
    Journal,
    /// A PyTorch profiler (Kineto) Chrome trace, `.json` or `.json.gz`.
    Trace,
    /// An `nvidia-smi dmon` text log.
    Dmon,
    /// An `nvidia-smi --query-gpu ... --format=csv` log.
    Csv,
    /// An `nvidia-smi -q` dump (whole, `-d` sections, or several from `-l`).
    Smi,
}

impl Kind {
    /// Every kind [`detect`] tells apart, in the order a message lists them: the one list
    /// of what gpuwhy reads, so an error that names the readable files cannot go stale.
    pub const ALL: [Kind; 6] = [
        Kind::Report,
        Kind::Journal,
        Kind::Dmon,
        Kind::Csv,
        Kind::Smi,
        Kind::Trace,
    ];

    /// What a file of this kind is, in a user's words, for messages that list what gpuwhy
    /// reads (see [`readable_kinds`]).
    pub fn description(self) -> &'static str {
        match self {
            Kind::Report => "a gpuwhy report",
            Kind::Journal => "a gpuwhy journal (`.partial`)",
            Kind::Trace => "a PyTorch profiler trace (.json/.json.gz)",
            Kind::Dmon => "an `nvidia-smi dmon` log",
            Kind::Csv => "an `nvidia-smi --query-gpu ... --format=csv` log",
            Kind::Smi => "an `nvidia-smi -q` dump (text or `-x` XML)",
        }
    }

    /// Lower-case name for messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Report => "report",
            Kind::Journal => "journal",
            Kind::Trace => "trace",
            Kind::Dmon => "dmon",
            Kind::Csv => "csv",
            Kind::Smi => "smi",
        }
    }
}

/// Every kind of [`Kind::ALL`] described, as one phrase for a message: "a gpuwhy report,
/// …, or a PyTorch profiler trace (.json/.json.gz)".
pub fn readable_kinds() -> String {
    let all = Kind::ALL.map(Kind::description);
    match all.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{}, or {last}", rest.join(", ")),
        _ => all.join(""),
    }
}

/// How many leading bytes [`detect`] needs at most.
pub const DETECT_BYTES: usize = 64 * 1024;

/// Tells what `head` (the first bytes of a file, decompressed when it was gzip) holds;
/// `None` when it is none of the known kinds. Kineto writes `deviceProperties` and other
/// metadata before `traceEvents`, so a trace is also recognised by those keys.
pub fn detect(head: &[u8]) -> Option<Kind> {
    let head = &head[..head.len().min(DETECT_BYTES)];
    if head.starts_with(&[0x1f, 0x8b]) {
        // A trace (`*.pt.trace.json.gz`), or a report saved as `.json.gz`.
        let plain = crate::report::gunzip_head(head, DETECT_BYTES);
        let report = memchr::memmem::find(&plain, crate::report::SCHEMA_PREFIX.as_bytes());
        return match detect(&plain) {
            Some(Kind::Journal) => Some(Kind::Journal),
            Some(Kind::Report) if report.is_some() => Some(Kind::Report),
            _ => Some(Kind::Trace),
        };
    }
    let text = String::from_utf8_lossy(head);
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        let first_line = trimmed.lines().next().unwrap_or("");
        if first_line.contains(crate::report::journal::JOURNAL_SCHEMA) {
            return Some(Kind::Journal);
        }
        if text.contains(crate::report::SCHEMA_PREFIX) && text.contains("\"schema\"") {
            return Some(Kind::Report);
        }
        let trace_keys = [
            "\"traceEvents\"",
            "\"schemaVersion\"",
            "\"deviceProperties\"",
            "\"ph\"",
        ];
        if trace_keys.iter().any(|k| text.contains(k)) {
            return Some(Kind::Trace);
        }
        // Some other JSON: let the report reader explain what is wrong with it.
        return Some(Kind::Report);
    }
    if smi::is_dump(&text) {
        return Some(Kind::Smi);
    }
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next()?;
    if dmon::is_header(first) {
        return Some(Kind::Dmon);
    }
    if csv::is_header(first) || first.contains(',') {
        return Some(Kind::Csv);
    }
    None
}

/// Options of an import.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// The file's name, used in messages only.
    pub path: PathBuf,
    /// Sample interval, seconds, for logs without timestamps (dmon's `-d`, the CSV's `-l`).
    pub interval_s: Option<f64>,
    /// The `--query-gpu` field list of a CSV written with `noheader`.
    pub fields: Option<Vec<String>>,
}

/// An imported log.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The recording the log amounts to.
    pub recording: Recording,
    /// What was inferred or left out, for the user (one sentence each).
    pub notes: Vec<String>,
    /// Samples of the GPU with the most.
    pub samples: usize,
}

/// Imports a dmon or CSV log or an `nvidia-smi -q` dump.
pub fn import(kind: Kind, bytes: &[u8], opts: &ImportOptions) -> Result<Imported> {
    let text = String::from_utf8_lossy(bytes);
    match kind {
        Kind::Dmon => dmon::parse(&text, opts),
        Kind::Csv => csv::parse(&text, opts),
        Kind::Smi => smi::parse(&text, opts),
        other => Err(Error::InvalidArgument(format!(
            "{} is a {}, not an nvidia-smi log",
            opts.path.display(),
            other.as_str()
        ))),
    }
}

/// The error for malformed input: the file, the line, and what was expected there.
pub(crate) fn bad(opts: &ImportOptions, line: Option<usize>, what: &str) -> Error {
    Error::BadReport {
        path: opts.path.clone(),
        reason: match line {
            Some(n) => format!("line {n}: {what}"),
            None => what.to_string(),
        },
    }
}

#[cfg(test)]
mod tests;
