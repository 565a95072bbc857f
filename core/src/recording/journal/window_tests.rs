//! Windows marked while recording survive in the crash journal: the marks a replay cannot
//! make from the other lines (a finding's, a slow step's, an NVML error's) ride on the status
//! lines, and a rewritten journal's checkpoint holds every note.

use super::*;
use crate::recording::{PRIO_FINDING, PRIO_TRANSIENT};
use crate::report::{Column, DeviceInfo, Event, KeptWindow, RunInfo};

/// Three hours at 1 s of one GPU with a ring of about 20 minutes, flushed every 20 s as the
/// sampler does: a finding's window at 1,500 s marked at 2,000 s (as the provisional pass
/// marks it, long after the rows), an NVML error at 4,000 s, an eval at 6,000 s. Returns the
/// recording and its replayed journal.
fn three_hours(checkpoint_min: u64) -> (Recording, Recording, usize) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("run.json.partial");
    let (mut rec, mut w) = one_gpu_journal(&path, checkpoint_min);
    let mut rewrites = 0;
    let mut row = [f32::NAN; GpuMetric::COUNT];
    let (mut ts, mut rows, mut lines) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..3 * 3_600u32 {
        let t = f64::from(i);
        row[GpuMetric::UtilGpu.index()] = (i % 100) as f32;
        rec.push_gpu(0, t, &row);
        ts.push(t);
        rows.push(Column(row.to_vec()));
        match i {
            2_000 => rec.mark_window_because(1_500.0, PRIO_FINDING, "finding:throttling"),
            4_000 => rec.count_fault(Some(0), "nvmlDeviceGetPowerUsage", 15, "GPU_IS_LOST", t),
            6_000 => {
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
            _ => {}
        }
        if ts.len() == 20 {
            let (t, rows) = (std::mem::take(&mut ts), std::mem::take(&mut rows));
            lines.push(JournalLine::Gpu { dev: 0, t, rows });
            lines.push(JournalLine::Status {
                faults: rec.faults.clone(),
                overhead: rec.overhead.clone(),
                duration_s: f64::from(i),
                windows: rec.unjournaled_windows(),
            });
            w.append(&std::mem::take(&mut lines), false)
                .expect("appends");
            if w.checkpoint_due() {
                w.checkpoint(&checkpoint_lines(&rec, f64::from(i)))
                    .expect("rewrites");
                rewrites += 1;
            }
        }
    }
    let bytes = std::fs::read(&path).expect("journal");
    let back = replay(&bytes, &path).expect("replays");
    (rec, back, rewrites)
}

fn windows(rec: &Recording) -> (Vec<f64>, Vec<KeptWindow>) {
    let t = rec.devices[0].series.times();
    let w = rec.kept_windows(&[&t]);
    (t, w)
}

#[test]
fn a_replayed_journal_keeps_the_windows_and_says_why() {
    for (checkpoint_min, rewritten) in [(u64::MAX, false), (64 << 10, true)] {
        let (rec, back, rewrites) = three_hours(checkpoint_min);
        assert_eq!(rewrites > 0, rewritten, "{rewrites} rewrites");
        let (t, kept) = windows(&rec);
        let reasons: Vec<&str> = kept.iter().map(|w| w.reason.as_str()).collect();
        assert_eq!(reasons, ["finding:throttling", "nvml_error", "event"]);
        // The finding's rows left the ring long before the end: only the window kept them.
        let finding = t
            .iter()
            .filter(|x| (1_470.0..=1_530.0).contains(*x))
            .count();
        assert_eq!(finding, 61, "rows of the finding's window");
        let (t_back, kept_back) = windows(&back);
        assert_eq!(kept_back, kept, "rewritten: {rewritten}");
        // Replayed from its lines alone too, the recording has the recorder's capacities
        // (the header carries them), so it keeps the same rows.
        assert_eq!(t_back, t, "the same rows, rewritten: {rewritten}");
    }
}

#[test]
fn marks_are_journaled_once_and_again_when_they_grow() {
    let mut rec = Recording::with_capacity(RunInfo::default(), 1_300, 64);
    rec.add_device(DeviceInfo::default());
    rec.mark_window_because(100.0, PRIO_TRANSIENT, "nvml_error");
    let e = Event {
        t_s: 500.0,
        device: None,
        kind: "checkpoint".into(),
        code: None,
        detail: String::new(),
    };
    rec.push_event(e);
    let first = rec.unjournaled_windows();
    assert_eq!(
        first.len(),
        1,
        "the event's mark is replayed with the event: {first:?}"
    );
    assert_eq!(first[0].reason, "nvml_error");
    assert!(rec.unjournaled_windows().is_empty(), "journaled once");
    // The same error a little later widens the note: the wider span is journaled.
    rec.mark_window_because(110.0, PRIO_TRANSIENT, "nvml_error");
    let grown = rec.unjournaled_windows();
    assert_eq!(grown.len(), 1);
    assert_eq!(
        (grown[0].t0, grown[0].t1),
        (first[0].t0, first[0].t1 + 10.0)
    );
    // Inside the span already: nothing new.
    rec.mark_window_because(105.0, PRIO_TRANSIENT, "nvml_error");
    assert!(rec.unjournaled_windows().is_empty());
}
