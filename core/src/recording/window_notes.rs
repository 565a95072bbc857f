//! Why each window was marked, so the report can say why older rows were kept at full
//! resolution (its `windows`; `docs/report-format.md`, "Retention").
//!
//! The streams' buffers keep a window's rows by importance alone; this list keeps the
//! reason beside the marked span. Notes whose spans overlap and share a reason are one note.
//! At report time a note is listed only where some stream still holds full-resolution rows
//! inside its span.

use crate::report::journal::JournalWindow;
use crate::report::KeptWindow;

/// Most notes kept; past this the least important, oldest first, is dropped. Worst case
/// ≈ 128 × (24 B + a reason of up to 64 B) ≈ 11 KB.
pub const MAX_WINDOW_NOTES: usize = 128;

/// Bytes the notes can use at most.
pub const WINDOW_NOTES_BOUND_BYTES: usize = MAX_WINDOW_NOTES * (48 + 64);

/// One marked span and why.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowNote {
    /// Start of the marked span, seconds since start.
    pub t0: f64,
    /// End of the marked span.
    pub t1: f64,
    /// Importance of the window (`PRIO_*`).
    pub prio: u8,
    /// Why (see [`KeptWindow::reason`]).
    pub reason: String,
    /// False while the crash journal has yet to hear of this span (a replay could not mark
    /// it again from the other lines); see [`unjournaled`].
    pub journaled: bool,
}

/// Adds a note for `t0..t1`, merged into an overlapping one with the same reason.
/// `journaled`: whether a replay of the journal marks this span by itself (an event's).
pub(super) fn note(
    notes: &mut Vec<WindowNote>,
    (t0, t1): (f64, f64),
    prio: u8,
    reason: &str,
    journaled: bool,
) {
    if let Some(n) = notes
        .iter_mut()
        .find(|n| t0 <= n.t1 && n.t0 <= t1 && n.reason == reason)
    {
        if t0 < n.t0 || t1 > n.t1 {
            n.journaled &= journaled;
        }
        n.t0 = n.t0.min(t0);
        n.t1 = n.t1.max(t1);
        return;
    }
    if notes.len() >= MAX_WINDOW_NOTES {
        if let Some((_, i)) = notes.iter().enumerate().map(|(i, n)| (n.prio, i)).min() {
            notes.remove(i);
        }
    }
    let mut reason = reason.to_string();
    let mut end = reason.len().min(64);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    reason.truncate(end);
    notes.push(WindowNote {
        t0,
        t1,
        prio,
        reason,
        journaled,
    });
}

/// The notes the crash journal has yet to hear of, marked as heard of now.
pub(super) fn unjournaled(notes: &mut [WindowNote]) -> Vec<JournalWindow> {
    notes
        .iter_mut()
        .filter(|n| !n.journaled)
        .map(|n| {
            n.journaled = true;
            journal_window(n)
        })
        .collect()
}

/// A note as the journal writes it.
pub(super) fn journal_window(n: &WindowNote) -> JournalWindow {
    JournalWindow {
        t0: n.t0,
        t1: n.t1,
        prio: n.prio,
        reason: n.reason.clone(),
    }
}

/// The notes whose spans hold full-resolution rows in one of `streams` (each stream's row
/// times, in order), spanning those rows, in time order.
pub(super) fn kept(notes: &[WindowNote], streams: &[&[f64]]) -> Vec<KeptWindow> {
    let mut out: Vec<KeptWindow> = notes
        .iter()
        .filter_map(|n| {
            let mut span: Option<(f64, f64)> = None;
            for t in streams {
                let a = t.partition_point(|x| *x < n.t0);
                let b = t.partition_point(|x| *x <= n.t1);
                if a < b {
                    let (lo, hi) = span.unwrap_or((t[a], t[b - 1]));
                    span = Some((lo.min(t[a]), hi.max(t[b - 1])));
                }
            }
            span.map(|(t_start, t_end)| KeptWindow {
                t_start,
                t_end,
                reason: n.reason.clone(),
            })
        })
        .collect();
    out.sort_by(|a, b| a.t_start.total_cmp(&b.t_start));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_merge_by_reason_and_stay_bounded() {
        let mut v = Vec::new();
        note(&mut v, (0.0, 60.0), 2, "event", true);
        note(&mut v, (30.0, 90.0), 2, "event", true);
        note(&mut v, (30.0, 90.0), 3, "finding:throttling", false);
        assert_eq!(v.len(), 2);
        assert_eq!((v[0].t0, v[0].t1), (0.0, 90.0));
        for i in 0..2 * MAX_WINDOW_NOTES {
            note(
                &mut v,
                (1e3 * i as f64, 1e3 * i as f64 + 60.0),
                1,
                "nvml_error",
                false,
            );
        }
        assert_eq!(v.len(), MAX_WINDOW_NOTES);
        // The more important notes outlast the transient ones.
        assert!(v.iter().any(|n| n.reason == "finding:throttling"));
        assert!(v.iter().any(|n| n.reason == "event"));
    }

    #[test]
    fn only_windows_with_rows_left_are_listed() {
        let mut v = Vec::new();
        note(&mut v, (100.0, 160.0), 3, "finding:throttling", false);
        note(&mut v, (500.0, 560.0), 2, "event", true);
        note(&mut v, (10.0, 20.0), 4, "fault", true);
        let gpu: Vec<f64> = (1100..1300).map(|i| f64::from(i) * 0.1).collect();
        let host: Vec<f64> = vec![15.0, 16.0];
        let k = kept(&v, &[&gpu, &host]);
        assert_eq!(k.len(), 2, "{k:?}");
        assert_eq!((k[0].t_start, k[0].t_end), (15.0, 16.0));
        assert_eq!(k[0].reason, "fault");
        assert_eq!(k[1].reason, "finding:throttling");
        assert_eq!((k[1].t_start, k[1].t_end), (110.0, 129.9));
    }
}
