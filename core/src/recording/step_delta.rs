//! Rebuilding a report's `steps` from journal deltas (a run killed before its report): the
//! journal's writer and its replay merge them here, below the step markers that produce
//! them (`crate::steps`, whose tests exercise this with a real step log).

use std::collections::BTreeMap;

use crate::report::{Column, PhaseStats, StepsData, STEP_KEY};
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
