//! The per-rank table of a merged job report (`gpuwhy merge`'s `ranks` section), as
//! `gpuwhy diagnose job.json` prints it: one line per rank, sorted by rank, with each rank's
//! slowest phase against the other ranks; for large jobs the stragglers and the first ranks.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use gpuwhy::merge::rank_list;
use gpuwhy::report::{RankSummary, RanksData};

/// Jobs up to this many ranks get every rank listed.
pub const ALL_RANKS_UP_TO: usize = 32;
/// Larger jobs: the first ranks listed (besides the stragglers).
pub const FIRST_RANKS: usize = 8;
/// Larger jobs: at most this many stragglers listed (the largest excess first).
pub const MAX_STRAGGLER_ROWS: usize = 24;

/// The median of `sorted` without one occurrence of `x` (which it holds): what "the other
/// ranks" have. `None` when nothing is left.
fn median_without(sorted: &[f64], x: f64) -> Option<f64> {
    let n = sorted.len().checked_sub(1).filter(|n| *n > 0)?;
    let pos = sorted.partition_point(|v| *v < x);
    let at = |k: usize| if k < pos { sorted[k] } else { sorted[k + 1] };
    Some(if n % 2 == 1 {
        at(n / 2)
    } else {
        (at(n / 2 - 1) + at(n / 2)) / 2.0
    })
}

/// Each phase's p50 on every rank that has it, sorted.
fn phase_values(rows: &[RankSummary]) -> BTreeMap<&str, Vec<f64>> {
    let mut by: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for r in rows {
        for (name, t) in r.steps.iter().flat_map(|s| &s.phases) {
            if t.p50_s.is_finite() {
                by.entry(name.as_str()).or_default().push(t.p50_s);
            }
        }
    }
    for v in by.values_mut() {
        v.sort_by(f64::total_cmp);
    }
    by
}

/// A rank's phase that stands out most against the other ranks: name, its p50, the ratio.
fn slowest_phase<'a>(
    r: &'a RankSummary,
    values: &BTreeMap<&str, Vec<f64>>,
) -> Option<(&'a str, f64, f64)> {
    let steps = r.steps.as_ref()?;
    steps
        .phases
        .iter()
        .filter(|(_, t)| t.p50_s.is_finite())
        .filter_map(|(name, t)| {
            let others = median_without(values.get(name.as_str())?, t.p50_s)?;
            (others > 0.0).then(|| (name.as_str(), t.p50_s, t.p50_s / others))
        })
        .max_by(|a, b| a.2.total_cmp(&b.2))
}

/// Which rows to print: all of a small job; of a large one the stragglers (largest excess
/// first, at most [`MAX_STRAGGLER_ROWS`]) and the first [`FIRST_RANKS`] ranks.
fn shown(r: &RanksData) -> BTreeSet<u32> {
    if r.ranks.len() <= ALL_RANKS_UP_TO {
        return r.ranks.iter().map(|x| x.rank).collect();
    }
    let mut keep: BTreeSet<u32> = r
        .stragglers
        .iter()
        .map(|s| s.rank)
        .take(MAX_STRAGGLER_ROWS)
        .collect();
    let mut ranks: Vec<u32> = r.ranks.iter().map(|x| x.rank).collect();
    ranks.sort_unstable();
    keep.extend(ranks.into_iter().take(FIRST_RANKS));
    keep
}

/// The table, with a heading line; empty for a report without ranks.
pub fn table(r: &RanksData) -> String {
    let mut out = String::new();
    if r.ranks.is_empty() {
        return out;
    }
    let values = phase_values(&r.ranks);
    let straggling: BTreeMap<u32, &str> = r
        .stragglers
        .iter()
        .map(|s| (s.rank, s.phase.as_str()))
        .collect();
    let keep = shown(r);
    let mut rows: Vec<&RankSummary> = r.ranks.iter().filter(|x| keep.contains(&x.rank)).collect();
    rows.sort_by_key(|x| x.rank);
    let _ = writeln!(
        out,
        "\nRanks ({} of {}, by rank; slowest phase: its p50 against the other ranks' median):",
        rows.len(),
        r.ranks.len()
    );
    let host_w = rows
        .iter()
        .map(|x| x.host.len())
        .max()
        .unwrap_or(4)
        .clamp(4, 24);
    let _ = writeln!(
        out,
        "  {:>5}  {:<host_w$}  {:>5}  {:>6}  {:>9}  {:<26}  {:>5}  straggler",
        "rank", "host", "local", "steps", "step p50", "slowest phase p50", "util"
    );
    let dash = || "-".to_string();
    for x in rows {
        let host: String = x.host.chars().take(host_w).collect();
        let local = x.local_rank.map_or_else(dash, |l| l.to_string());
        let count = x.steps.as_ref().map_or_else(dash, |s| s.count.to_string());
        let step = x
            .steps
            .as_ref()
            .filter(|s| s.step.p50_s.is_finite())
            .map_or_else(dash, |s| format!("{:.3} s", s.step.p50_s));
        let slow = slowest_phase(x, &values).map_or_else(dash, |(name, p50, ratio)| {
            format!("{name} {p50:.3} s ×{ratio:.2}")
        });
        let util = x.util_p50.map_or_else(dash, |u| format!("{u:.0}%"));
        let flag = straggling
            .get(&x.rank)
            .map_or_else(String::new, |phase| format!("yes ({phase})"));
        let _ = writeln!(
            out,
            "  {:>5}  {:<host_w$}  {:>5}  {:>6}  {:>9}  {:<26}  {:>5}  {flag}",
            x.rank, host, local, count, step, slow, util
        );
    }
    let omitted = r.ranks.len() - keep.len().min(r.ranks.len());
    if omitted > 0 {
        let hidden: Vec<u32> = r
            .stragglers
            .iter()
            .map(|s| s.rank)
            .filter(|x| !keep.contains(x))
            .collect();
        let more = if hidden.is_empty() {
            String::new()
        } else {
            format!(
                ", {} of them stragglers ({})",
                hidden.len(),
                rank_list(&hidden)
            )
        };
        let _ = writeln!(
            out,
            "  … {omitted} more ranks not listed{more}; `gpuwhy diagnose --json` lists every rank"
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuwhy::report::{PhaseTimes, RankSteps, Straggler};

    fn row(rank: u32, data_s: f64) -> RankSummary {
        let t = |p50_s| PhaseTimes {
            p50_s,
            p95_s: p50_s,
        };
        RankSummary {
            rank,
            host: format!("node-{}", rank / 8),
            local_rank: Some(rank % 8),
            util_p50: Some(90.0),
            steps: Some(RankSteps {
                count: 100,
                step: t(0.4 + data_s),
                phases: [("data".into(), t(data_s)), ("forward".into(), t(0.4))]
                    .into_iter()
                    .collect(),
            }),
            ..RankSummary::default()
        }
    }

    fn job(n: u32, slow: &[u32]) -> RanksData {
        let mut ranks: Vec<RankSummary> = (0..n)
            .map(|r| row(r, if slow.contains(&r) { 0.2 } else { 0.1 }))
            .collect();
        ranks.reverse(); // the table sorts
        RanksData {
            stragglers: slow
                .iter()
                .map(|&rank| Straggler {
                    rank,
                    phase: "data".into(),
                    ..Straggler::default()
                })
                .collect(),
            ranks,
            ..RanksData::default()
        }
    }

    #[test]
    fn the_median_of_the_others_leaves_one_value_out() {
        let v = [1.0, 2.0, 3.0, 10.0];
        assert_eq!(median_without(&v, 10.0), Some(2.0));
        assert_eq!(median_without(&v, 1.0), Some(3.0));
        assert_eq!(median_without(&v, 2.0), Some(3.0));
        assert_eq!(median_without(&[5.0], 5.0), None);
        assert_eq!(median_without(&[1.0, 1.0, 4.0], 1.0), Some(2.5));
    }

    #[test]
    fn a_small_job_lists_every_rank_in_order_with_the_straggler_flagged() {
        let t = table(&job(8, &[5]));
        let lines: Vec<&str> = t.lines().filter(|l| l.contains("node-")).collect();
        assert_eq!(lines.len(), 8, "{t}");
        let first: Vec<&str> = lines[0].split_whitespace().collect();
        assert_eq!(&first[..5], ["0", "node-0", "0", "100", "0.500"], "{t}");
        let five = lines[5];
        assert!(five.trim_start().starts_with("5 "), "{t}");
        assert!(
            five.contains("data 0.200 s ×2.00") && five.contains("yes (data)"),
            "{t}"
        );
        assert!(!lines[4].contains("yes"), "{t}");
        assert!(!t.contains("not listed"), "{t}");
    }

    #[test]
    fn a_thousand_ranks_show_the_stragglers_and_the_first_few_and_say_how_many_are_left() {
        let slow: Vec<u32> = (0..30).map(|i| 100 + 30 * i).collect();
        let t = table(&job(1000, &slow));
        let rows = t.lines().filter(|l| l.contains("node-")).count();
        assert_eq!(rows, FIRST_RANKS + MAX_STRAGGLER_ROWS, "{t}");
        assert!(t.contains(&format!("Ranks ({rows} of 1000")), "{t}");
        let omitted = 1000 - rows;
        assert!(
            t.contains(&format!(
                "… {omitted} more ranks not listed, 6 of them stragglers"
            )),
            "{t}"
        );
        // The stragglers listed are the first ones (largest excess), in rank order.
        assert!(t.contains("\n    100  node-12"), "{t}");
        assert!(
            t.lines().count() < 40,
            "compact: {} lines",
            t.lines().count()
        );
    }
}
