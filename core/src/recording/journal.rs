//! Writing the recording journal and replaying one into a [`Recording`]. The journal is an
//! append-only JSON-lines file written while recording, so that a run killed before it wrote
//! its report still leaves everything up to the last flush; its format (a [`JournalHeader`],
//! then one [`JournalLine`] a line) is plain data in the model, [`crate::report::journal`].
//! A reader replays the lines into a [`Recording`] and stops at the first line it cannot
//! parse (the tail of a killed writer), so the loss is at most one flush interval.
//!
//! Bounded over any run length: once the lines appended since the last checkpoint outgrow
//! that checkpoint (and [`CHECKPOINT_MIN_BYTES`]), the writer rewrites the journal as its
//! header and one checkpoint of the bounded recording ([`checkpoint_lines`]), to a temporary file
//! renamed over the journal, so a kill at any moment leaves one whole journal.

mod checkpoint;

pub use checkpoint::{checkpoint_lines, CHECKPOINT_MIN_BYTES};

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::step_delta::merge_delta;
use super::{HostRecording, Recording, HOST_COLUMNS};
use crate::metric::GpuMetric;
use crate::report::journal::{JournalHeader, JournalLine};
use crate::report::StepsData;
use crate::{Error, Result};

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
                merge_delta(&mut self.steps, *first, data.clone());
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

/// An empty recording with the journal header's run, NVML facts, devices and host columns.
fn from_header(header: JournalHeader) -> Recording {
    let mut rec = match header.capacity {
        Some((full, buckets)) => Recording::with_capacity(header.run, full, buckets),
        None => Recording::new(header.run),
    };
    rec.nvml = header.nvml;
    rec.gpu_absent_reason = header.gpu_absent_reason;
    for d in header.devices {
        rec.add_device(d);
    }
    if let Some((facts, columns)) = header.host {
        let cores = columns.len().saturating_sub(HOST_COLUMNS.len());
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
            JournalLine::Health { dev, health } => {
                if let Some(d) = rec.devices.get_mut(dev) {
                    d.info.health = Some(health);
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
                windows,
            } => {
                rec.faults = faults;
                rec.overhead = overhead;
                last_t = last_t.max(duration_s);
                for w in &windows {
                    rec.replay_window(w);
                }
            }
            JournalLine::Steps { first, data } => {
                merge_delta(&mut rec.steps, first, data);
            }
            JournalLine::Checkpoint(cp) => checkpoint::apply(&mut rec, *cp),
        }
    }
    rec.run.duration_s = last_t;
    rec.run.complete = false;
    rec.run.ended_by = Some("recording stopped without writing its report (killed or crashed); recovered from the journal".into());
    Ok(rec)
}

#[cfg(test)]
mod window_tests;

/// A recording of one GPU with small capacities (1,300 full rows, 64 buckets) and a journal
/// for it at `path` that is rewritten past `checkpoint_min` appended bytes: the tests' setup.
#[cfg(test)]
fn one_gpu_journal(path: &Path, checkpoint_min: u64) -> (Recording, JournalWriter) {
    use crate::report::{DeviceInfo, RunInfo};
    let mut rec = Recording::with_capacity(RunInfo::default(), 1_300, 64);
    rec.add_device(DeviceInfo::default());
    let header = JournalHeader {
        capacity: Some((rec.full_rows, rec.coarse_buckets)),
        ..JournalHeader::bare(RunInfo::default(), vec![DeviceInfo::default()])
    };
    let w = JournalWriter::create(path, &header)
        .expect("creates")
        .with_checkpoint_min(checkpoint_min);
    (rec, w)
}
