//! Buffering journal lines between flushes, and the flush itself.

use std::sync::Mutex;

use super::cost::CallStats;
use super::hook::SamplerHook;
use super::sampler::lock;
use crate::recording::journal::{checkpoint_lines, JournalWriter};
use crate::recording::Recording;
use crate::report::journal::JournalLine;

/// Journal lines and rows buffered between flushes.
pub(super) struct Journal {
    pub(super) writer: Option<JournalWriter>,
    pub(super) pending: Vec<JournalLine>,
    pub(super) gpu_rows: Vec<(Vec<f64>, Vec<crate::report::Column>)>,
    pub(super) host_rows: (Vec<f64>, Vec<crate::report::Column>),
}

impl Journal {
    /// An empty buffer for `gpus` GPUs.
    pub(super) fn new(gpus: usize) -> Self {
        Journal {
            writer: None,
            pending: Vec::new(),
            gpu_rows: vec![(Vec::new(), Vec::new()); gpus],
            host_rows: (Vec::new(), Vec::new()),
        }
    }

    /// Whether what a tick read is buffered for a flush: only while a journal is open, or
    /// on the first tick (`first`), which creates the one asked for (`wanted`). Without one
    /// nothing ever flushes, so buffering would grow the heap by every row of the run,
    /// outside the recording's memory bound.
    pub(super) fn keeps(&self, first: bool, wanted: bool) -> bool {
        self.writer.is_some() || (first && wanted)
    }

    /// Drops everything buffered, once no journal will take it.
    pub(super) fn discard(&mut self) {
        self.pending = Vec::new();
        for (t, rows) in &mut self.gpu_rows {
            *t = Vec::new();
            *rows = Vec::new();
        }
        self.host_rows = (Vec::new(), Vec::new());
    }
}

/// Appends everything buffered since the last flush to the journal; a write error is
/// reported once through `error` and ends journaling, never the recording.
pub(super) fn flush(
    rec: &Mutex<Recording>,
    error: &Mutex<Option<String>>,
    j: &mut Journal,
    stats: &CallStats,
    t: f64,
    hook: Option<&dyn SamplerHook>,
) {
    let mut lines = std::mem::take(&mut j.pending);
    if let Some(h) = hook {
        h.journal(&mut lines);
    }
    for (dev, (ts, rows)) in j.gpu_rows.iter_mut().enumerate() {
        if !ts.is_empty() {
            lines.push(JournalLine::Gpu {
                dev,
                t: std::mem::take(ts),
                rows: std::mem::take(rows),
            });
        }
    }
    if !j.host_rows.0.is_empty() {
        lines.push(JournalLine::Host {
            t: std::mem::take(&mut j.host_rows.0),
            rows: std::mem::take(&mut j.host_rows.1),
        });
    }
    {
        let mut rec = lock(rec);
        let mut overhead = rec.overhead.clone();
        overhead.nvml_calls = stats.calls;
        lines.push(JournalLine::Status {
            faults: rec.faults.clone(),
            overhead,
            duration_s: t,
            windows: rec.unjournaled_windows(),
        });
    }
    if let Some(w) = j.writer.as_mut() {
        let mut written = w.append(&lines, false);
        if written.is_ok() && w.checkpoint_due() {
            // Keep the journal bounded: rewrite it as the bounded recording so far.
            let cp = checkpoint_lines(&lock(rec), t);
            written = w.checkpoint(&cp);
        }
        if let Err(e) = written {
            *lock(error) = Some(e.to_string());
            // Stop journaling; the in-memory recording and the final report are unaffected.
            j.writer = None;
            j.discard();
        }
    }
}
