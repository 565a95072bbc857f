//! Checkpoints: the journal rewritten as its header and the bounded recording so far, so
//! that it stays bounded over a week-long run (`docs/report-format.md`, "Retention").
//!
//! Worst case on disk: the header, one checkpoint (about the size of the report the bounded
//! recording writes) and the lines appended since, which trigger the next rewrite once they
//! outgrow the checkpoint or [`CHECKPOINT_MIN_BYTES`]: about twice the report plus 16 MiB.
//! Each rewrite serialises the recording on the sampler thread (a few hundred milliseconds
//! for 8 GPUs at the bound), at most once per checkpoint's worth of appended rows.

use std::fs::OpenOptions;
use std::io::Write;

use super::JournalWriter;
use crate::metric::GpuMetric;
use crate::recording::build::series_data;
use crate::recording::{HostRecording, Recording, HOST_COLUMNS};
use crate::report::journal::{Checkpoint, JournalLine};
use crate::{Error, Result};

/// Appended bytes below which the journal is never rewritten.
pub const CHECKPOINT_MIN_BYTES: u64 = 16 << 20;

fn gpu_names() -> Vec<String> {
    GpuMetric::ALL
        .iter()
        .map(|m| m.name().to_string())
        .collect()
}

/// The lines a rewritten journal holds after its header: the recording, then the fault
/// counts and overhead as of `t` seconds (the step markers are added by the writer).
pub fn checkpoint_lines(rec: &Recording, t: f64) -> Vec<JournalLine> {
    let names = gpu_names();
    let cp = Checkpoint {
        devices: rec.devices.iter().map(|d| d.info.clone()).collect(),
        gpu: rec
            .devices
            .iter()
            .map(|d| series_data(&d.series, &names))
            .collect(),
        host: rec
            .host
            .as_ref()
            .map(|h| series_data(&h.series, &h.columns)),
        events: rec.events.clone(),
        events_dropped: rec.events_dropped,
        capacity: Some((rec.full_rows, rec.coarse_buckets)),
        windows: rec
            .window_notes
            .iter()
            .map(super::super::window_notes::journal_window)
            .collect(),
    };
    vec![
        JournalLine::Checkpoint(Box::new(cp)),
        JournalLine::Status {
            faults: rec.faults.clone(),
            overhead: rec.overhead.clone(),
            duration_s: t,
            windows: Vec::new(),
        },
    ]
}

impl JournalWriter {
    /// True once the lines appended since the last rewrite outgrow it (and
    /// [`CHECKPOINT_MIN_BYTES`]).
    pub fn checkpoint_due(&self) -> bool {
        self.appended > self.base_bytes.max(self.min_bytes)
    }

    /// Sets the appended bytes below which the journal is never rewritten (default
    /// [`CHECKPOINT_MIN_BYTES`]; tests use less).
    pub fn with_checkpoint_min(mut self, bytes: u64) -> Self {
        self.min_bytes = bytes;
        self
    }

    /// Rewrites the journal as its header, `lines` (see [`checkpoint_lines`]) and the step
    /// markers so far: written to `<journal>.tmp`, synced and renamed over the journal, so a
    /// kill at any point leaves either the old journal or the new one, each whole.
    pub fn checkpoint(&mut self, lines: &[JournalLine]) -> Result<()> {
        let io = |action: &'static str, path: &std::path::Path| {
            let path = path.to_path_buf();
            move |source| Error::Io {
                action,
                path,
                source,
            }
        };
        let mut tmp = self.path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = std::path::PathBuf::from(tmp);
        let mut buf = String::with_capacity(self.header.len() + 1);
        buf.push_str(&self.header);
        buf.push('\n');
        let steps = self
            .steps
            .clone()
            .map(|data| JournalLine::Steps { first: 0, data });
        for l in lines.iter().chain(steps.as_ref()) {
            buf.push_str(&serde_json::to_string(l).expect("a journal line always serialises"));
            buf.push('\n');
        }
        let mut f = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(&tmp)
            .map_err(io("cannot create the recording journal's checkpoint", &tmp))?;
        f.write_all(buf.as_bytes())
            .map_err(io("cannot write the recording journal's checkpoint", &tmp))?;
        f.sync_data()
            .map_err(io("cannot write the recording journal's checkpoint", &tmp))?;
        std::fs::rename(&tmp, &self.path)
            .map_err(io("cannot replace the recording journal", &self.path))?;
        self.file = OpenOptions::new()
            .append(true)
            .open(&self.path)
            .map_err(io("cannot reopen the recording journal", &self.path))?;
        self.base_bytes = buf.len() as u64;
        self.appended = 0;
        Ok(())
    }

    /// Bytes the journal file holds now.
    pub fn bytes(&self) -> u64 {
        self.base_bytes + self.appended
    }
}

/// Replaces what `rec` holds with a checkpoint (replaying a rewritten journal).
pub(super) fn apply(rec: &mut Recording, cp: Checkpoint) {
    let names = gpu_names();
    rec.devices.clear();
    rec.events.clear();
    if let Some((full, buckets)) = cp.capacity {
        (rec.full_rows, rec.coarse_buckets) = (full, buckets);
    }
    for (info, data) in cp.devices.into_iter().zip(cp.gpu) {
        let pos = rec.add_device(info);
        rec.devices[pos].series.restore(&data, &names);
    }
    if let (Some(h), Some(data)) = (rec.host.as_mut(), cp.host) {
        let cores = h.columns.len() - HOST_COLUMNS.len();
        let mut fresh = HostRecording::new(h.facts.clone(), cores);
        fresh.series.restore(&data, &fresh.columns);
        *h = fresh;
    }
    for e in cp.events {
        rec.push_event(e);
    }
    rec.events_dropped = cp.events_dropped;
    // The rows are back; the notes say why (the events above noted theirs again).
    for w in &cp.windows {
        rec.replay_window(w);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recording::journal::replay;
    use crate::recording::SeriesBuf;
    use crate::report::{Column, Event};

    /// A week at 1 s of one GPU with small capacities, flushed every 20 s as the sampler
    /// does, with an eval every hour: the journal stays bounded and, cut anywhere, replays.
    #[test]
    fn a_week_long_journal_stays_bounded_and_replays_after_a_kill() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("run.json.partial");
        let (mut rec, mut w) = super::super::one_gpu_journal(&path, 64 << 10);
        let (mut peak, mut rewrites, mut last_base) = (0u64, 0, 0u64);
        let mut row = [f32::NAN; GpuMetric::COUNT];
        let (mut ts, mut rows) = (Vec::new(), Vec::new());
        for i in 0..7 * 86_400u32 {
            let t = f64::from(i);
            row[GpuMetric::UtilGpu.index()] = if i % 10 < 3 { 0.0 } else { 97.0 };
            rec.push_gpu(0, t, &row);
            ts.push(t);
            rows.push(Column(row.to_vec()));
            let mut lines = Vec::new();
            if i % 3_600 == 1_800 {
                let e = Event {
                    t_s: t,
                    device: None,
                    kind: "eval".into(),
                    code: None,
                    detail: String::new(),
                };
                rec.push_event(e.clone());
                lines.push(JournalLine::Event(e));
            }
            if ts.len() == 20 {
                let (t, rows) = (std::mem::take(&mut ts), std::mem::take(&mut rows));
                lines.push(JournalLine::Gpu { dev: 0, t, rows });
            }
            if !lines.is_empty() {
                w.append(&lines, false).expect("appends");
                if w.checkpoint_due() {
                    w.checkpoint(&checkpoint_lines(&rec, t)).expect("rewrites");
                    rewrites += 1;
                    last_base = w.bytes();
                }
                peak = peak.max(std::fs::metadata(&path).expect("journal").len());
            }
        }
        assert!(rewrites > 10, "{rewrites} rewrites");
        // Header + checkpoint, plus at most as much again (or the minimum) before the next
        // rewrite, plus one flush.
        let bound = 2 * last_base.max(64 << 10) + (64 << 10);
        assert!(peak <= bound, "journal peaked at {peak} B, bound {bound} B");

        let bytes = std::fs::read(&path).expect("journal");
        let back = replay(&bytes, &path).expect("replays");
        let (a, b) = (&rec.devices[0].series, &back.devices[0].series);
        let written = rec.devices[0].series.total_rows();
        assert!(
            b.total_rows() + 20 >= written,
            "{} of {written}",
            b.total_rows()
        );
        assert_eq!(b.coarse().len(), b.coarse().rows.len());
        let kept = |s: &SeriesBuf| {
            s.times()
                .into_iter()
                .filter(|t| *t < 600_000.0)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            kept(a),
            kept(b),
            "the same rows are kept at full resolution"
        );
        assert_eq!(back.events.len(), rec.events.len());

        // Killed in the middle of a line: everything before it replays, read as
        // `gpuwhy diagnose run.json.partial` reads it.
        let killed = dir.path().join("killed.json.partial");
        std::fs::write(&killed, &bytes[..bytes.len() - 37]).expect("writes");
        let report = crate::report::Report::load(&killed).expect("reads a cut journal");
        assert!(!report.run.complete);
        let s = &report.series[0].data;
        let folded: u32 = s.coarse.as_ref().map_or(0, |c| c.rows.iter().sum());
        assert!(s.t.len() as u64 + u64::from(folded) + 40 >= written);
    }
}
