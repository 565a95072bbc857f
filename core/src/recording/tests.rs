//! Retention: what a stream keeps over a long run, and that its memory stays in its bound.

use super::*;
use crate::report::Event;

fn small(head: usize, recent: usize, window_rows: usize, buckets: usize) -> SeriesBuf {
    let r = Retention {
        head_rows: head,
        recent_rows: recent,
        window_rows,
        buckets,
    };
    SeriesBuf::with_retention(2, r, &[0])
}

/// Rows and buckets never overlap and are each in time order.
fn assert_disjoint(s: &SeriesBuf) {
    let t = s.times();
    assert!(t.windows(2).all(|w| w[0] < w[1]), "rows in time order");
    let c = s.coarse();
    for i in 0..c.len() {
        assert!(c.t_start[i] <= c.t_end[i]);
        if i > 0 {
            assert!(c.t_end[i - 1] < c.t_start[i], "buckets in order");
        }
        let inside = t
            .iter()
            .filter(|x| **x >= c.t_start[i] && **x <= c.t_end[i]);
        assert_eq!(inside.count(), 0, "bucket {i} spans a kept row");
    }
}

#[test]
fn keeps_the_start_and_the_latest_rows_and_folds_between() {
    let mut s = small(3, 4, 0, 8);
    for i in 0..20 {
        s.push(i as f64, &[i as f32, 1.0]);
    }
    assert_eq!(s.times(), vec![0.0, 1.0, 2.0, 16.0, 17.0, 18.0, 19.0]);
    assert_eq!(s.column(0), vec![0.0, 1.0, 2.0, 16.0, 17.0, 18.0, 19.0]);
    let c = s.coarse();
    let folded: u32 = c.rows.iter().sum();
    assert_eq!(folded, 13, "rows 3..=15 are folded");
    assert_eq!(c.t_start[0], 3.0);
    assert_eq!(*c.t_end.last().expect("buckets"), 15.0);
    assert_disjoint(&s);
}

#[test]
fn a_marked_window_stays_at_full_resolution_after_it_leaves_the_ring() {
    let mut s = small(2, 5, 100, 16);
    for i in 0..100 {
        if i == 40 {
            s.mark(38.0, 42.0, 2);
        }
        s.push(i as f64, &[i as f32, 0.0]);
    }
    let t = s.times();
    assert_eq!(&t[..2], &[0.0, 1.0]);
    assert_eq!(&t[2..7], &[38.0, 39.0, 40.0, 41.0, 42.0]);
    assert_eq!(&t[7..], &[95.0, 96.0, 97.0, 98.0, 99.0]);
    assert_disjoint(&s);
    let c = s.coarse();
    let folded: u32 = c.rows.iter().sum();
    assert_eq!(
        folded as usize + t.len(),
        100,
        "every row is a row or in a bucket"
    );
}

#[test]
fn past_the_window_budget_the_least_important_oldest_window_is_folded() {
    let mut s = small(0, 2, 6, 64);
    s.mark(10.0, 12.0, 3);
    s.mark(20.0, 22.0, 1);
    s.mark(30.0, 32.0, 1);
    for i in 0..50 {
        s.push(i as f64, &[i as f32, 0.0]);
    }
    // Three windows of 3 rows do not fit in 6: the low-importance one at 20 s goes first.
    assert_eq!(
        s.times(),
        vec![10.0, 11.0, 12.0, 30.0, 31.0, 32.0, 48.0, 49.0]
    );
    assert_disjoint(&s);
}

#[test]
fn bucket_counts_and_bands_are_exact_over_any_compaction() {
    let mut s = small(0, 0, 0, 4);
    let mut below_10 = 0;
    for i in 0..1_000u32 {
        let u = (i * 37 % 101) as f32;
        below_10 += u32::from(u < 10.0);
        s.push(f64::from(i), &[u, if i % 3 == 0 { f32::NAN } else { 1.0 }]);
    }
    let c = s.coarse();
    assert!(c.len() <= 4);
    assert_eq!(c.rows.iter().sum::<u32>(), 1_000);
    assert_eq!(
        c.count[1].iter().sum::<u32>(),
        666,
        "missing values are not counted"
    );
    let bands = c.bands[0].as_ref().expect("column 0 is banded");
    assert!(c.bands[1].is_none());
    let low: u32 = bands.iter().map(|b| b[0] + b[1]).sum();
    assert_eq!(low, below_10);
}

#[test]
fn a_simulated_week_stays_within_the_documented_bound() {
    // A week at 1 s with the default retention, an eval every 10 minutes, an XID a day and a
    // transient fault every hour: windows churn through the budget all week.
    let mut rec = Recording::new(crate::report::RunInfo::default());
    rec.add_device(crate::report::DeviceInfo::default());
    let mut row = [f32::NAN; GpuMetric::COUNT];
    let week = 7 * 86_400;
    let mut peak = 0;
    for i in 0..week {
        let t = f64::from(i);
        row[GpuMetric::UtilGpu.index()] = if i % 10 < 3 { 0.0 } else { 97.0 };
        row[GpuMetric::Power.index()] = 300.0;
        if i % 600 == 0 {
            rec.push_event(Event {
                t_s: t,
                device: None,
                kind: "eval".into(),
                code: None,
                detail: String::new(),
            });
        }
        if i % 86_400 == 50_000 {
            rec.push_event(Event {
                t_s: t,
                device: Some(0),
                kind: "xid".into(),
                code: Some(79),
                detail: String::new(),
            });
        }
        if i % 3_600 == 1_000 {
            rec.count_fault(Some(0), "nvmlDeviceGetPowerUsage", 10, "TIMEOUT", t);
        }
        rec.push_gpu(0, t, &row);
        if i % 50_000 == 0 {
            peak = peak.max(rec.heap_bytes());
        }
    }
    peak = peak.max(rec.heap_bytes());
    assert!(
        peak <= rec.worst_case_bytes(),
        "{peak} > {}",
        rec.worst_case_bytes()
    );
    let s = &rec.devices[0].series;
    assert_disjoint(s);
    let t = s.times();
    let c = s.coarse();
    assert!(c.len() <= COARSE_BUCKETS_DEFAULT);
    assert_eq!(
        c.rows.iter().map(|r| *r as usize).sum::<usize>() + t.len(),
        week as usize
    );
    // The XID windows of every day survive (they outrank the evals and faults).
    for day in 0..6 {
        let x = f64::from(day * 86_400 + 50_000);
        assert!(t.contains(&x), "the XID of day {day} is at full resolution");
    }
}

#[test]
fn a_restored_stream_writes_what_it_was_restored_from_and_goes_on() {
    use crate::report::{Report, RunInfo};
    let fill = |rec: &mut Recording, from: u32, to: u32| {
        let mut row = [f32::NAN; GpuMetric::COUNT];
        for i in from..to {
            if i == 700 {
                rec.mark_window(f64::from(i), PRIO_FAULT);
            }
            row[GpuMetric::UtilGpu.index()] = (i % 13 * 8) as f32;
            row[GpuMetric::Power.index()] = (i % 7) as f32 * 50.0;
            rec.push_gpu(0, f64::from(i), &row);
        }
    };
    let mut rec = Recording::with_capacity(RunInfo::default(), 130, 16);
    rec.add_device(crate::report::DeviceInfo::default());
    fill(&mut rec, 0, 3_000);
    let written = Report::from_recording(&rec).series.remove(0).data;
    assert!(written.coarse.is_some());
    assert!(written.t.contains(&700.0), "the window is kept");

    let names: Vec<String> = GpuMetric::ALL
        .iter()
        .map(|m| m.name().to_string())
        .collect();
    let mut back = Recording::with_capacity(RunInfo::default(), 130, 16);
    back.add_device(crate::report::DeviceInfo::default());
    back.devices[0].series.restore(&written, &names);
    let again = Report::from_recording(&back).series.remove(0).data;
    // Compared as written (a missing value is NaN, which equals nothing).
    let json = |d: &crate::report::SeriesData| serde_json::to_string(d).expect("serialises");
    assert!(
        json(&again) == json(&written),
        "the restored stream writes the same"
    );
    assert_eq!(back.devices[0].series.total_rows(), 3_000);

    // Both go on keeping the same rows after the restore.
    fill(&mut rec, 3_000, 4_000);
    fill(&mut back, 3_000, 4_000);
    let a = Report::from_recording(&rec).series.remove(0).data;
    let b = Report::from_recording(&back).series.remove(0).data;
    assert_eq!(a.t, b.t);
    let (ca, cb) = (a.coarse.expect("buckets"), b.coarse.expect("buckets"));
    // The bucket that was being filled comes back finished, so later buckets start apart;
    // the same rows are folded.
    let folded = |c: &crate::report::CoarseData| c.rows.iter().sum::<u32>();
    assert_eq!(folded(&ca), folded(&cb));
    assert_eq!(ca.t_start[..11], cb.t_start[..11]);
}

#[test]
fn the_documented_bound_is_the_computed_one() {
    // docs/report-format.md, "Memory bound of a recording".
    let mut rec = Recording::new(crate::report::RunInfo::default());
    rec.add_device(crate::report::DeviceInfo::default());
    assert_eq!(rec.devices[0].series.worst_case_bytes(), 5_312_588);
    assert_eq!(
        rec.worst_case_bytes(),
        5_312_588 + MAX_EVENTS * 256 + WINDOW_NOTES_BOUND_BYTES
    );
    let host: Vec<usize> = [4, 16, 64]
        .iter()
        .map(|n| SeriesBuf::new(12 + n).worst_case_bytes())
        .collect();
    assert_eq!(host, vec![3_231_616, 5_079_520, 12_471_136]);
}
