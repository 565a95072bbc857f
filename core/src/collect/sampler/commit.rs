//! One tick's commit: what the tick read goes into the recording and the journal's buffer
//! under one lock; the first tick also settles the devices' capabilities and starts the
//! journal with its header.

use super::tick::Reading;
use super::{lock, Shared};
use crate::collect::gpu::{Gpu, Outcome};
use crate::collect::journal_buf::Journal;
use crate::collect::RecorderConfig;
use crate::recording::journal::JournalWriter;
use crate::recording::Recording;
use crate::report::journal::{JournalHeader, JournalLine, JOURNAL_SCHEMA};
use crate::report::{Column, Event};

/// The sampler's tick counts, as the report's overhead shows them.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct TickCounts {
    pub tick: u64,
    pub late: u64,
    pub skipped: u64,
    /// Ticks the thread woke for (the others were slept through).
    pub wakeups: u64,
}

/// Stores `r` into the recording and the journal's buffer.
pub(super) fn commit(
    shared: &Shared,
    cfg: &RecorderConfig,
    journal: &mut Journal,
    gpus: &[Gpu],
    r: Reading,
    counts: TickCounts,
) {
    let t = r.t;
    let keep = journal.keeps(counts.tick == 0, cfg.journal.is_some());
    let mut rec = lock(&shared.rec);
    for (pos, index, outs) in r.outcomes {
        for o in outs {
            store_outcome(
                &mut rec,
                keep.then_some(&mut journal.pending),
                pos,
                index,
                o,
                t,
            );
        }
    }
    for ev in r.events {
        if keep {
            journal.pending.push(JournalLine::Event(ev.clone()));
        }
        rec.push_event(ev);
    }
    for w in r.windows {
        rec.mark_window_because(w, crate::recording::PRIO_EVENT, "slow_step");
    }
    for (pos, row_t, row) in &r.rows {
        rec.push_gpu(*pos, *row_t, row);
        if let Some(j) = journal.gpu_rows.get_mut(*pos).filter(|_| keep) {
            j.0.push(*row_t);
            j.1.push(Column(row.to_vec()));
        }
    }
    for (pos, health) in r.health {
        if keep {
            journal.pending.push(JournalLine::Health {
                dev: pos,
                health: health.clone(),
            });
        }
        if let Some(d) = rec.devices.get_mut(pos) {
            d.info.health = Some(health);
        }
    }
    if let (Some(h), Some(row)) = (rec.host.as_mut(), r.host) {
        h.series.push(t, &row);
        if keep {
            journal.host_rows.0.push(t);
            journal.host_rows.1.push(Column(row));
        }
    }
    rec.run.duration_s = t;
    rec.overhead.ticks = counts.tick + 1;
    rec.overhead.late_ticks = counts.late;
    rec.overhead.skipped_ticks = counts.skipped;
    rec.overhead.wakeups = Some(counts.wakeups);
    if counts.tick == 0 {
        for g in gpus {
            if let Some(d) = rec.devices.get_mut(g.pos) {
                d.info.capabilities = g.capabilities();
            }
        }
        if let Some(path) = &cfg.journal {
            match JournalWriter::create(path, &header(&rec)) {
                Ok(w) => journal.writer = Some(w),
                Err(e) => *lock(&shared.journal_error) = Some(e.to_string()),
            }
        }
        if journal.writer.is_none() {
            journal.discard();
        }
    }
}

/// What a GPU's read said beyond its row: a metric gone for good, a transient fault, or
/// the GPU lost; the lines for the journal go to `lines` while it is kept.
fn store_outcome(
    rec: &mut Recording,
    lines: Option<&mut Vec<JournalLine>>,
    pos: usize,
    index: u32,
    o: Outcome,
    t: f64,
) {
    match o {
        Outcome::Unavailable(m, why) => {
            rec.mark_unavailable(pos, m, why.clone());
            if let Some(l) = lines {
                l.push(JournalLine::Unavailable {
                    dev: pos,
                    metric: m.name().into(),
                    reason: why,
                });
            }
        }
        Outcome::Transient(e) => rec.count_fault(Some(index), e.function, e.code, e.code_name(), t),
        Outcome::Lost(e) => {
            let ev = Event {
                t_s: t,
                device: Some(index),
                kind: "gpu_lost".into(),
                code: Some(u64::from(e.code)),
                detail: format!(
                    "{} returned GPU_IS_LOST: the GPU fell off the bus; its series stop here",
                    e.function
                ),
            };
            if let Some(d) = rec.devices.get_mut(pos) {
                d.info.lost_at_s = Some(t);
            }
            if let Some(l) = lines {
                l.push(JournalLine::Lost { dev: pos, t });
                l.push(JournalLine::Event(ev.clone()));
            }
            rec.push_event(ev);
        }
    }
}

/// The journal's first line: the run, NVML and the devices as the first tick left them.
fn header(rec: &Recording) -> JournalHeader {
    JournalHeader {
        schema: JOURNAL_SCHEMA.into(),
        run: rec.run.clone(),
        nvml: rec.nvml.clone(),
        gpu_absent_reason: rec.gpu_absent_reason.clone(),
        devices: rec.devices.iter().map(|d| d.info.clone()).collect(),
        host: rec
            .host
            .as_ref()
            .map(|h| (h.facts.clone(), h.columns.clone())),
        capacity: Some((rec.full_rows, rec.coarse_buckets)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::GpuMetric;
    use crate::report::{DeviceInfo, RunInfo};

    fn shared() -> Shared {
        let mut rec = Recording::new(RunInfo::default());
        rec.add_device(DeviceInfo::default());
        Shared::new(rec)
    }

    /// Commits `ticks` ticks of one GPU row and one event each; returns the rows buffered
    /// for the journal and the rows the recording holds.
    fn run(cfg: &RecorderConfig, ticks: u64) -> (usize, usize, usize) {
        let shared = shared();
        let mut journal = Journal::new(1);
        for tick in 0..ticks {
            let t = tick as f64 * 0.1;
            let reading = Reading {
                t,
                rows: vec![(0, t, [1.0_f32; GpuMetric::COUNT])],
                outcomes: Vec::new(),
                events: vec![Event {
                    t_s: t,
                    device: Some(0),
                    kind: "xid".into(),
                    code: Some(79),
                    detail: String::new(),
                }],
                windows: Vec::new(),
                host: None,
                health: Vec::new(),
            };
            let counts = TickCounts {
                tick,
                ..TickCounts::default()
            };
            commit(&shared, cfg, &mut journal, &[], reading, counts);
        }
        let held = lock(&shared.rec).devices[0].series.total_rows() as usize;
        (journal.gpu_rows[0].0.len(), journal.pending.len(), held)
    }

    #[test]
    fn without_a_journal_nothing_is_buffered_for_one() {
        let (rows, lines, held) = run(&RecorderConfig::default(), 50);
        assert_eq!(
            (rows, lines),
            (0, 0),
            "buffered for a journal that never flushes"
        );
        assert_eq!(held, 50);
    }

    #[test]
    fn with_a_journal_every_row_waits_for_the_flush() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = RecorderConfig {
            journal: Some(dir.path().join("run.journal")),
            ..RecorderConfig::default()
        };
        assert_eq!(run(&cfg, 50), (50, 50, 50));
    }

    #[test]
    fn a_journal_that_cannot_be_created_buffers_nothing() {
        let cfg = RecorderConfig {
            journal: Some("/nonexistent-dir/gpuwhy/run.journal".into()),
            ..RecorderConfig::default()
        };
        let (rows, lines, held) = run(&cfg, 20);
        assert_eq!((rows, lines, held), (0, 0, 20));
    }
}
