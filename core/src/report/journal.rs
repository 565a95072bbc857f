//! The recording journal: an append-only JSON-lines file written while recording, so that a
//! run killed before it wrote its report still leaves everything up to the last flush.
//!
//! Line 1 is a [`JournalHeader`]; every further line is one [`JournalLine`]. A reader replays
//! the lines into a [`Recording`] and stops at the first line it cannot parse (the tail of a
//! killed writer), so the loss is at most one flush interval.
//!
//! Bounded over any run length: once the lines appended since the last checkpoint outgrow
//! that checkpoint (and [`CHECKPOINT_MIN_BYTES`]), the writer rewrites the journal as its
//! header and one checkpoint of the bounded recording ([`checkpoint`]), to a temporary file
//! renamed over the journal, so a kill at any moment leaves one whole journal.

mod checkpoint;

pub use checkpoint::{checkpoint_lines, CHECKPOINT_MIN_BYTES};

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::column::Column;
use super::model::{DeviceInfo, Event, Fault, HostFacts, NvmlInfo, Overhead, RunInfo};
use super::steps::StepsData;
use crate::metric::GpuMetric;
use crate::recording::{HostRecording, Recording};
use crate::{Error, Result};

/// Schema of the first line.
pub const JOURNAL_SCHEMA: &str = "gpuwhy.journal/1";

/// The journal path for a report path: `run.json` → `run.json.partial`.
pub fn journal_path(report: &Path) -> PathBuf {
    let mut s = report.as_os_str().to_owned();
    s.push(".partial");
    PathBuf::from(s)
}

/// The first line: everything known before the first sample.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JournalHeader {
    /// [`JOURNAL_SCHEMA`].
    pub schema: String,
    /// The run.
    pub run: RunInfo,
    /// The NVML library.
    #[serde(default)]
    pub nvml: Option<NvmlInfo>,
    /// Why there are no GPU metrics, if there are none.
    #[serde(default)]
    pub gpu_absent_reason: Option<String>,
    /// The devices as probed.
    pub devices: Vec<DeviceInfo>,
    /// Host facts and column names, when the host is sampled.
    #[serde(default)]
    pub host: Option<(HostFacts, Vec<String>)>,
}

/// One appended line.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "k", rename_all = "snake_case")]
pub enum JournalLine {
    /// GPU rows for the device at position `dev`.
    Gpu {
        /// Device position in the header's list.
        dev: usize,
        /// Sample times.
        t: Vec<f64>,
        /// One row per time, [`GpuMetric::COUNT`] values each.
        rows: Vec<Column>,
    },
    /// Host rows.
    Host {
        /// Sample times.
        t: Vec<f64>,
        /// One row per time.
        rows: Vec<Column>,
    },
    /// An event.
    Event(Event),
    /// A metric became unavailable during the run.
    Unavailable {
        /// Device position.
        dev: usize,
        /// Metric name.
        metric: String,
        /// Why.
        reason: String,
    },
    /// A device was lost.
    Lost {
        /// Device position.
        dev: usize,
        /// When, seconds.
        t: f64,
    },
    /// Fault counts and overhead so far (each line replaces the previous one).
    Status {
        /// Aggregated faults.
        faults: Vec<Fault>,
        /// Overhead so far.
        overhead: Overhead,
        /// Seconds recorded so far.
        duration_s: f64,
    },
    /// The whole bounded recording so far, replacing everything replayed before it (written
    /// when the journal is rewritten; see [`checkpoint`]).
    Checkpoint(Box<checkpoint::Checkpoint>),
    /// Step markers since the previous `steps` line: the kept steps from index `first` on,
    /// and the totals so far (see [`crate::steps::merge_delta`]).
    Steps {
        /// Index of the first step in `data`'s rows.
        first: u64,
        /// The new rows and the totals.
        data: StepsData,
    },
}

/// Appends journal lines to a file.
#[derive(Debug)]
pub struct JournalWriter {
    file: File,
    path: PathBuf,
    /// The header line, written again at the top of each checkpoint.
    header: String,
    /// Bytes of the journal as last rewritten (header and checkpoint), or of the header.
    base_bytes: u64,
    /// Bytes appended since.
    appended: u64,
    /// The step markers journaled so far, merged as a reader merges them, for checkpoints.
    steps: Option<StepsData>,
    /// Appended bytes below which the journal is never rewritten.
    min_bytes: u64,
}

impl JournalWriter {
    /// Creates (truncating) the journal at `path` and writes the header.
    pub fn create(path: &Path, header: &JournalHeader) -> Result<Self> {
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(path)
            .map_err(|source| Error::Io {
                action: "cannot create recording journal",
                path: path.to_path_buf(),
                source,
            })?;
        let header = serde_json::to_string(header).expect("a journal header always serialises");
        let mut w = JournalWriter {
            file,
            path: path.to_path_buf(),
            base_bytes: header.len() as u64 + 1,
            header,
            appended: 0,
            steps: None,
            min_bytes: CHECKPOINT_MIN_BYTES,
        };
        let line = w.header.clone();
        w.write_line(&line)?;
        Ok(w)
    }

    /// Appends lines and hands them to the OS in one write (the page cache survives a killed
    /// process; `sync` additionally waits for the disk).
    pub fn append(&mut self, lines: &[JournalLine], sync: bool) -> Result<()> {
        let mut buf = String::new();
        for l in lines {
            buf.push_str(&serde_json::to_string(l).expect("a journal line always serialises"));
            buf.push('\n');
            if let JournalLine::Steps { first, data } = l {
                crate::steps::merge_delta(&mut self.steps, *first, data.clone());
            }
        }
        self.appended += buf.len() as u64;
        self.file
            .write_all(buf.as_bytes())
            .map_err(|source| Error::Io {
                action: "cannot append to recording journal",
                path: self.path.clone(),
                source,
            })?;
        if sync {
            let _ = self.file.sync_data();
        }
        Ok(())
    }

    fn write_line(&mut self, line: &str) -> Result<()> {
        let mut s = String::with_capacity(line.len() + 1);
        s.push_str(line);
        s.push('\n');
        self.file
            .write_all(s.as_bytes())
            .map_err(|source| Error::Io {
                action: "cannot write recording journal",
                path: self.path.clone(),
                source,
            })
    }

    /// The journal's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// True when `bytes` start like a journal (its first line carries [`JOURNAL_SCHEMA`]).
pub fn looks_like_journal(bytes: &[u8]) -> bool {
    let first = bytes.split(|b| *b == b'\n').next().unwrap_or(&[]);
    std::str::from_utf8(first).is_ok_and(|s| s.contains(JOURNAL_SCHEMA))
}

/// An empty recording with the journal header's run, NVML facts, devices and host columns.
fn from_header(header: JournalHeader) -> Recording {
    let mut rec = Recording::new(header.run);
    rec.nvml = header.nvml;
    rec.gpu_absent_reason = header.gpu_absent_reason;
    for d in header.devices {
        rec.add_device(d);
    }
    if let Some((facts, columns)) = header.host {
        let cores = columns
            .len()
            .saturating_sub(crate::recording::HOST_COLUMNS.len());
        rec.host = Some(HostRecording::new(facts, cores));
    }
    rec
}

/// Replays a journal into a recording. Stops quietly at a damaged tail; fails only when the
/// header itself is unreadable.
pub fn replay(bytes: &[u8], path: &Path) -> Result<Recording> {
    let mut lines = bytes.split(|b| *b == b'\n');
    let header: JournalHeader =
        serde_json::from_slice(lines.next().unwrap_or(&[])).map_err(|e| Error::BadReport {
            path: path.to_path_buf(),
            reason: format!(
                "the recording journal's header is damaged ({e}); nothing can be recovered from it"
            ),
        })?;
    let mut rec = from_header(header);
    let mut last_t: f64 = 0.0;
    for raw in lines {
        if raw.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        let Ok(line) = serde_json::from_slice::<JournalLine>(raw) else {
            break;
        };
        match line {
            JournalLine::Gpu { dev, t, rows } => {
                for (ti, row) in t.iter().zip(rows) {
                    let mut r = [f32::NAN; GpuMetric::COUNT];
                    for (dst, src) in r.iter_mut().zip(row.0) {
                        *dst = src;
                    }
                    rec.push_gpu(dev, *ti, &r);
                    last_t = last_t.max(*ti);
                }
            }
            JournalLine::Host { t, rows } => {
                if let Some(h) = rec.host.as_mut() {
                    for (ti, row) in t.iter().zip(rows) {
                        h.series.push(*ti, &row.0);
                    }
                }
            }
            JournalLine::Event(e) => rec.push_event(e),
            JournalLine::Unavailable {
                dev,
                metric,
                reason,
            } => {
                if let Some(m) = GpuMetric::from_name(&metric) {
                    rec.mark_unavailable(dev, m, reason);
                }
            }
            JournalLine::Lost { dev, t } => {
                if let Some(d) = rec.devices.get_mut(dev) {
                    d.info.lost_at_s = Some(t);
                }
            }
            JournalLine::Status {
                faults,
                overhead,
                duration_s,
            } => {
                rec.faults = faults;
                rec.overhead = overhead;
                last_t = last_t.max(duration_s);
            }
            JournalLine::Steps { first, data } => {
                crate::steps::merge_delta(&mut rec.steps, first, data);
            }
            JournalLine::Checkpoint(cp) => checkpoint::apply(&mut rec, *cp),
        }
    }
    rec.run.duration_s = last_t;
    rec.run.complete = false;
    rec.run.ended_by = Some("recording stopped without writing its report (killed or crashed); recovered from the journal".into());
    Ok(rec)
}
