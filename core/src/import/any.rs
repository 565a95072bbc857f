//! Any file `gpuwhy diagnose` reads, as a report: a report or crash journal parsed, a dmon or
//! CSV log imported, a profiler trace's report built — the first half of the one path
//! (`crate::analysis::diagnose_any` runs the rules on it) that the CLI (`cli/src/import.rs`,
//! from files) and the browser's analysis module (`viewer/analyze`, from a dropped file's
//! bytes) both take, so they cannot drift apart.
//!
//! Not for: telling a file's kind ([`super::detect`]), reading files, or reading profiler
//! traces ([`crate::trace::read_rank`] streams a file, [`crate::trace::read_slice`] reads
//! bytes): callers do those their own way and pass the result here.

use crate::report::Report;
use crate::trace::{self, TraceSummary};
use crate::{Error, Result};

use super::{ImportOptions, Kind};

/// The report or log a diagnosis starts from.
#[derive(Debug)]
pub enum Input<'a> {
    /// A file's bytes, of the kind [`super::detect`] told: a report or journal is parsed
    /// ([`Report::from_slice`]), a dmon or CSV log imported ([`super::import`]). `opts.path`
    /// names the file in messages and its file name labels a log's report.
    Bytes {
        /// What the file holds; [`Kind::Trace`] is refused (a trace goes beside, as
        /// `trace`).
        kind: Kind,
        /// The whole file.
        bytes: &'a [u8],
        /// The file's name, and a log's interval and fields.
        opts: ImportOptions,
    },
    /// A report or journal its caller has parsed already — the CLI's [`Report::load`],
    /// which refuses a file larger than any report before reading it.
    Report(Box<Report>),
}

/// An input read as a report, not diagnosed yet.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The report, its findings and verdict as the file had them (none for a log or a
    /// trace).
    pub report: Report,
    /// What the log importer inferred or left out, one sentence each (none for a report, a
    /// journal or a trace alone).
    pub notes: Vec<String>,
    /// Samples of the GPU with the most, for an imported log.
    pub samples: Option<usize>,
}

/// Reads `input` into a report — or, without one, builds the report of `trace` alone
/// ([`trace::report`]).
///
/// Errors: the reader's message for a damaged file (naming it and, where known, the line);
/// [`Error::InvalidArgument`] for bytes of a trace, and when there is neither an input nor
/// a trace.
pub fn load(input: Option<Input<'_>>, trace: Option<&TraceSummary>) -> Result<Loaded> {
    let mut notes = Vec::new();
    let mut samples = None;
    let report = match input {
        Some(Input::Report(report)) => *report,
        Some(Input::Bytes {
            kind: Kind::Report | Kind::Journal,
            bytes,
            opts,
        }) => Report::from_slice(bytes, &opts.path)?,
        Some(Input::Bytes { kind, bytes, opts }) => {
            // A trace's bytes are refused here, by the importer, with its message.
            let imported = super::import(kind, bytes, &opts)?;
            notes = imported.notes;
            samples = Some(imported.samples);
            let mut r = Report::from_recording(&imported.recording);
            r.run.label = opts
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned());
            r
        }
        None => match trace {
            Some(t) => trace::report(t),
            None => {
                return Err(Error::InvalidArgument(
                    "nothing to diagnose: give a report, a log or a profiler trace".into(),
                ))
            }
        },
    };
    Ok(Loaded {
        report,
        notes,
        samples,
    })
}
