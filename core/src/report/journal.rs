//! The recording journal's format: an append-only JSON-lines file written while recording, so
//! that a run killed before it wrote its report still leaves everything up to the last flush.
//!
//! Line 1 is a [`JournalHeader`]; every further line is one [`JournalLine`]. This module is
//! the format alone, plain data like the report's; writing a journal and replaying one into
//! a recording is `crate::recording::journal`, above the model (`docs/architecture.md`,
//! "Layers"). A reader stops at the first line it cannot parse (the tail of a killed
//! writer), so the loss is at most one flush interval.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::column::Column;
use super::health::DeviceHealth;
use super::model::{DeviceInfo, Event, Fault, HostFacts, NvmlInfo, Overhead, RunInfo};
use super::steps::StepsData;
use super::SeriesData;

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
    /// The recording's capacities (full-resolution rows, coarse buckets), so that a replay
    /// without a checkpoint keeps what the recorder kept; absent in journals written before
    /// it (the defaults).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<(usize, usize)>,
}

/// A header of `run` and `devices` with nothing else known: the tests' journals.
#[cfg(test)]
impl JournalHeader {
    pub(crate) fn bare(run: RunInfo, devices: Vec<DeviceInfo>) -> Self {
        JournalHeader {
            schema: JOURNAL_SCHEMA.into(),
            run,
            nvml: None,
            gpu_absent_reason: None,
            devices,
            host: None,
            capacity: None,
        }
    }
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
        /// One row per time, one value per GPU metric in `crate::metric::GpuMetric` order.
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
    /// A GPU's health counters so far (`collect::health`): each line replaces the device's
    /// previous health, so a killed run keeps the readings up to its last flush.
    Health {
        /// Device position.
        dev: usize,
        /// Its health: ECC mode, the readings so far, what could not be read.
        health: DeviceHealth,
    },
    /// Fault counts and overhead so far (each line replaces the previous one).
    Status {
        /// Aggregated faults.
        faults: Vec<Fault>,
        /// Overhead so far.
        overhead: Overhead,
        /// Seconds recorded so far.
        duration_s: f64,
        /// Windows marked since the previous line that a replay cannot mark again from the
        /// other lines (findings of the provisional diagnosis, slow steps, NVML errors;
        /// events mark theirs as they replay). Absent when there are none, and in journals
        /// written before it.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        windows: Vec<JournalWindow>,
    },
    /// The whole bounded recording so far, replacing everything replayed before it (written
    /// when the journal is rewritten).
    Checkpoint(Box<Checkpoint>),
    /// Step markers since the previous `steps` line: the kept steps from index `first` on,
    /// and the totals so far (merged as `crate::recording::merge_delta` merges them).
    Steps {
        /// Index of the first step in `data`'s rows.
        first: u64,
        /// The new rows and the totals.
        data: StepsData,
    },
}

/// True when `bytes` start like a journal (its first line carries [`JOURNAL_SCHEMA`]).
pub fn looks_like_journal(bytes: &[u8]) -> bool {
    let first = bytes.split(|b| *b == b'\n').next().unwrap_or(&[]);
    std::str::from_utf8(first).is_ok_and(|s| s.contains(JOURNAL_SCHEMA))
}

/// The bounded recording as a journal line: the journal rewritten as its header and one
/// checkpoint stays bounded over any run length (`docs/report-format.md`, "Retention").
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The devices as they stand (capabilities lost during the run, lost GPUs).
    pub devices: Vec<DeviceInfo>,
    /// Each device's kept samples, in the order of `devices`.
    pub gpu: Vec<SeriesData>,
    /// The host's kept samples.
    #[serde(default)]
    pub host: Option<SeriesData>,
    /// The events kept.
    #[serde(default)]
    pub events: Vec<Event>,
    /// Events not kept.
    #[serde(default)]
    pub events_dropped: u64,
    /// The recording's capacities (full-resolution rows, coarse buckets), so that the
    /// replay goes on keeping what the recorder kept.
    #[serde(default)]
    pub capacity: Option<(usize, usize)>,
    /// Why each window was marked (the report's `windows`); empty in journals written before
    /// it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub windows: Vec<JournalWindow>,
}

/// A marked window as the journal keeps it: a replay marks it again, so that the report of
/// a killed run keeps its rows and says why (`docs/report-format.md`, "Retention").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalWindow {
    /// Start of the marked span, seconds since start.
    pub t0: f64,
    /// End of the marked span.
    pub t1: f64,
    /// Importance (which windows fold first when the window budget is spent).
    pub prio: u8,
    /// Why, as the report's `windows[].reason`.
    pub reason: String,
}
