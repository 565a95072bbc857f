//! Rebuilding a report's `steps` from journal deltas (a run killed before its report).

use std::collections::BTreeMap;

use super::STEP_KEY;
use crate::report::{Column, PhaseStats, StepsData};
use crate::stats::percentile_sorted;

/// Exact statistics of the present values of a column.
fn column_stats(c: &Column) -> Option<PhaseStats> {
    let mut v: Vec<f64> = c.present().map(f64::from).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(PhaseStats {
        count: v.len() as u64,
        sum_s: v.iter().sum(),
        min_s: v[0],
        max_s: v[v.len() - 1],
        p50_s: percentile_sorted(&v, 0.5),
        p95_s: percentile_sorted(&v, 0.95),
        p99_s: percentile_sorted(&v, 0.99),
    })
}

/// Recomputes `stats`, `gpu_stats` and `count` exactly from the kept rows, for steps data
/// in which every step is kept (a journal that was still within the exact window).
pub fn stats_from_rows(d: &mut StepsData) {
    d.count = d.t.len() as u64;
    d.exact_steps = d.count;
    d.quantile_error = 0.0;
    d.stats.clear();
    d.gpu_stats.clear();
    if let Some(s) = column_stats(&d.duration) {
        d.stats.insert(STEP_KEY.into(), s);
    }
    for (name, c) in &d.phase_durations {
        if let Some(s) = column_stats(c) {
            d.stats.insert(name.clone(), s);
        }
    }
    for (name, c) in &d.gpu_phase_durations {
        if let Some(s) = column_stats(c) {
            d.gpu_stats.insert(name.clone(), s);
        }
    }
}

/// Appends `extra` rows to every column of `into` (NaN-padding columns either side lacks).
fn append_columns(
    into: &mut BTreeMap<String, Column>,
    extra: BTreeMap<String, Column>,
    old_rows: usize,
    new_rows: usize,
) {
    for (name, c) in extra {
        into.entry(name)
            .or_insert_with(|| Column(vec![f32::NAN; old_rows]))
            .0
            .extend(c.0);
    }
    for c in into.values_mut() {
        c.0.resize(old_rows + new_rows, f32::NAN);
    }
}

/// Merges one journal delta (rows starting at step `first`, plus the totals so far) into
/// `acc`. Rows from step 0 start `acc` afresh; rows that do not continue the kept ones (a
/// gap) are dropped; the totals of the
/// latest delta replace the earlier ones. While the delta's steps are all kept exactly
/// (`quantile_error` 0) the statistics are recomputed from the rows.
pub fn merge_delta(acc: &mut Option<StepsData>, first: u64, delta: StepsData) {
    if first == 0 {
        // Rows from the start again: the recording took another thread for the training loop
        // (see `docs/steps.md`), and its steps replace the ones journaled before.
        *acc = None;
    }
    let d = acc.get_or_insert_with(StepsData::default);
    let old = d.t.len();
    let rows = if first == old as u64 {
        delta.t.len()
    } else {
        0
    };
    if rows > 0 {
        d.t.extend(&delta.t);
        d.duration.0.extend(&delta.duration.0);
        append_columns(&mut d.phase_durations, delta.phase_durations, old, rows);
        append_columns(
            &mut d.gpu_phase_durations,
            delta.gpu_phase_durations,
            old,
            rows,
        );
    }
    d.phases = delta.phases;
    d.ignored_markers = delta.ignored_markers;
    d.memory_bytes = delta.memory_bytes;
    d.memory_bound_bytes = delta.memory_bound_bytes;
    d.threads = delta.threads;
    if delta.quantile_error > 0.0 {
        d.count = delta.count;
        d.stats = delta.stats;
        d.gpu_stats = delta.gpu_stats;
        d.exact_steps = d.t.len() as u64;
        d.quantile_error = delta.quantile_error;
    } else {
        stats_from_rows(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::steps::{StepLog, MAX_PHASES};

    fn phases(data: f64, fwd: f64) -> [f64; MAX_PHASES] {
        let mut p = [f64::NAN; MAX_PHASES];
        p[0] = data;
        p[1] = fwd;
        p
    }

    #[test]
    fn deltas_rebuild_the_kept_steps_and_exact_stats() {
        let names: Vec<String> = ["data", "forward"].map(String::from).to_vec();
        let mut log = StepLog::new(1000);
        let mut merged = None;
        let mut sent = 0;
        for i in 0..10u32 {
            let d = f64::from(i) * 0.01;
            log.push(f64::from(i), 0.1 + d, &phases(d, 0.05));
            if i == 3 || i == 9 {
                merge_delta(
                    &mut merged,
                    sent as u64,
                    log.delta(&names, sent, log.kept()),
                );
                sent = log.kept();
            }
        }
        let mut gpu = [f64::NAN; MAX_PHASES];
        gpu[1] = 0.04;
        log.set_gpu(9, &gpu);
        let got = merged.expect("merged");
        let want = log.to_data(&names);
        assert_eq!(got.t, want.t);
        assert_eq!(got.count, 10);
        assert_eq!(got.phase_durations, want.phase_durations);
        for (k, s) in &want.stats {
            let g = &got.stats[k];
            // The rows are f32; the log's totals are f64.
            assert_eq!(g.count, s.count, "{k}");
            assert!((g.min_s - s.min_s).abs() < 1e-6 && (g.max_s - s.max_s).abs() < 1e-6);
            assert!((g.p50_s - s.p50_s).abs() < 1e-6, "{k}");
            assert!((g.sum_s - s.sum_s).abs() < 1e-6, "{k}");
        }
        // A gap (a lost delta) keeps the rows that were continuous.
        let mut gappy = None;
        merge_delta(&mut gappy, 0, log.delta(&names, 0, 2));
        merge_delta(&mut gappy, 5, log.delta(&names, 5, 10));
        assert_eq!(gappy.expect("merged").t.len(), 2);
    }

    #[test]
    fn past_the_exact_window_the_totals_come_from_the_latest_delta() {
        let names: Vec<String> = vec!["data".into()];
        let mut log = StepLog::new(4);
        for i in 0..20u32 {
            log.push(f64::from(i), 1.0 + f64::from(i), &phases(0.5, f64::NAN));
        }
        let mut merged = None;
        merge_delta(&mut merged, 0, log.delta(&names, 0, log.kept()));
        let d = merged.expect("merged");
        assert_eq!(d.t.len(), 4);
        assert_eq!(d.count, 20);
        assert_eq!(d.stats[STEP_KEY].max_s, 20.0);
        assert!(d.quantile_error > 0.0);
    }
}
