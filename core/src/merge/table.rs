//! The per-rank table of a job report: which ranks to list and what each row says (its
//! steps, step median, the phase where it stands out most against the other ranks, its
//! utilization, whether it straggles). `gpuwhy diagnose` prints it as text and the browser
//! viewer draws it as HTML; both take the rows from here, so they list the same ranks with
//! the same numbers.
//!
//! Plain data in, plain data out: no formatting (each reader rounds as it prints).

use crate::report::{RankSummary, RanksData};

/// Jobs up to this many ranks get every rank listed.
pub const ALL_RANKS_UP_TO: usize = 32;
/// Larger jobs: the first ranks listed (besides the stragglers).
pub const FIRST_RANKS: usize = 8;
/// Larger jobs: at most this many stragglers listed (the largest excess first).
pub const MAX_STRAGGLER_ROWS: usize = 24;

/// The phase where a rank stands out most against the other ranks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlowPhase<'a> {
    /// Phase name.
    pub name: &'a str,
    /// The rank's p50 of it, seconds.
    pub p50_s: f64,
    /// That p50 over the median of the other ranks' p50 of the same phase.
    pub ratio: f64,
}

/// One listed rank.
#[derive(Debug, Clone, PartialEq)]
pub struct RankRow<'a> {
    /// The rank.
    pub rank: u32,
    /// Host name of its node.
    pub host: &'a str,
    /// Its local rank, when its report recorded one.
    pub local_rank: Option<u32>,
    /// Steps it completed, when it used step markers.
    pub steps: Option<u64>,
    /// Its step time p50, seconds, when it has a finite one.
    pub step_p50_s: Option<f64>,
    /// Its phase that stands out most against the other ranks, when any can be compared.
    pub slowest: Option<SlowPhase<'a>>,
    /// Median `util_gpu` of its GPU, %.
    pub util_p50: Option<f64>,
    /// The phase it straggles in (`step` when no phase explains it); `None` when it does not.
    pub straggler: Option<&'a str>,
}

/// The table: the rows listed and what was left out.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RankTable<'a> {
    /// The rows listed, by rank.
    pub rows: Vec<RankRow<'a>>,
    /// Ranks in the report.
    pub total: usize,
    /// Ranks not listed.
    pub omitted: usize,
    /// Stragglers among the ranks not listed, in the report's order (largest excess first).
    pub hidden_stragglers: Vec<u32>,
}

use crate::stats::median_without;

/// The finite p50 of `phase` on every rank that has one.
fn phase_values(ranks: &[RankSummary], phase: &str) -> Vec<f64> {
    let mut v = Vec::new();
    for r in ranks {
        if let Some(t) = r.steps.as_ref().and_then(|s| s.phases.get(phase)) {
            if t.p50_s.is_finite() {
                v.push(t.p50_s);
            }
        }
    }
    v
}

/// A rank's phase that stands out most against the other ranks (the last one on a tie).
fn slowest_phase<'a>(r: &'a RankSummary, ranks: &[RankSummary]) -> Option<SlowPhase<'a>> {
    let mut best: Option<SlowPhase<'a>> = None;
    for (name, t) in r.steps.iter().flat_map(|s| &s.phases) {
        if !t.p50_s.is_finite() {
            continue;
        }
        let Some(others) = median_without(&phase_values(ranks, name), t.p50_s) else {
            continue;
        };
        let ratio = t.p50_s / others;
        // `>=`: the later of equal ratios, as `max_by` picks.
        if others > 0.0 && best.is_none_or(|b| ratio.total_cmp(&b.ratio).is_ge()) {
            best = Some(SlowPhase {
                name,
                p50_s: t.p50_s,
                ratio,
            });
        }
    }
    best
}

/// Adds `x` to the ascending `set` unless it is there.
fn add(set: &mut Vec<u32>, x: u32) {
    if let Err(at) = set.binary_search(&x) {
        set.insert(at, x);
    }
}

/// Which ranks to list, ascending: all of a small job; of a large one the stragglers
/// (largest excess first, at most [`MAX_STRAGGLER_ROWS`]) and the first [`FIRST_RANKS`]
/// ranks. Built by insertion, not by a sort (see [`median_without`]).
fn shown(r: &RanksData) -> Vec<u32> {
    let small = r.ranks.len() <= ALL_RANKS_UP_TO;
    let limit = if small { ALL_RANKS_UP_TO } else { FIRST_RANKS };
    // The `limit` lowest ranks, a rank given twice counting twice (all of a small job).
    let mut first: Vec<u32> = Vec::with_capacity(limit + 1);
    for x in &r.ranks {
        let at = first.partition_point(|v| *v <= x.rank);
        if at < limit {
            first.insert(at, x.rank);
            first.truncate(limit);
        }
    }
    let mut keep = Vec::new();
    let stragglers = r
        .stragglers
        .iter()
        .take(if small { 0 } else { MAX_STRAGGLER_ROWS });
    stragglers.for_each(|s| add(&mut keep, s.rank));
    first.into_iter().for_each(|x| add(&mut keep, x));
    keep
}

/// The per-rank table of a job report (empty for one without ranks).
pub fn rank_table(r: &RanksData) -> RankTable<'_> {
    if r.ranks.is_empty() {
        return RankTable::default();
    }
    let keep = shown(r);
    let listed = |rank: &u32| keep.binary_search(rank).is_ok();
    // By rank; a rank given twice keeps the report's order (as a stable sort would).
    let mut rows = Vec::with_capacity(keep.len());
    for k in &keep {
        for x in r.ranks.iter().filter(|x| x.rank == *k) {
            let steps = x.steps.as_ref();
            rows.push(RankRow {
                rank: x.rank,
                host: &x.host,
                local_rank: x.local_rank,
                steps: steps.map(|s| s.count),
                step_p50_s: steps.map(|s| s.step.p50_s).filter(|v| v.is_finite()),
                slowest: slowest_phase(x, &r.ranks),
                util_p50: x.util_p50,
                // A rank listed twice as a straggler: its last entry, as a map would keep.
                straggler: (r.stragglers.iter().rev())
                    .find(|s| s.rank == x.rank)
                    .map(|s| s.phase.as_str()),
            });
        }
    }
    RankTable {
        rows,
        total: r.ranks.len(),
        omitted: r.ranks.len() - keep.len().min(r.ranks.len()),
        hidden_stragglers: (r.stragglers.iter().map(|s| s.rank))
            .filter(|x| !listed(x))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{PhaseTimes, RankSteps, Straggler};

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
            stragglers: (slow.iter())
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
    fn a_small_job_lists_every_rank_by_rank_with_its_slowest_phase_and_the_straggler() {
        let data = job(8, &[5]);
        let t = rank_table(&data);
        assert_eq!((t.total, t.omitted), (8, 0));
        assert!(t.hidden_stragglers.is_empty());
        let ranks: Vec<u32> = t.rows.iter().map(|x| x.rank).collect();
        assert_eq!(ranks, (0..8).collect::<Vec<_>>());
        let five = &t.rows[5];
        assert_eq!(five.host, "node-0");
        assert_eq!(five.local_rank, Some(5));
        assert_eq!(five.steps, Some(100));
        assert_eq!(five.straggler, Some("data"));
        let slow = five.slowest.expect("a phase to compare");
        // 0.2 s of data against the other seven ranks' 0.1 s.
        assert_eq!(slow.name, "data");
        assert!((slow.p50_s - 0.2).abs() < 1e-12 && (slow.ratio - 2.0).abs() < 1e-12);
        assert!((five.step_p50_s.expect("finite") - 0.6).abs() < 1e-12);
        let four = &t.rows[4];
        assert_eq!(four.straggler, None);
        // Rank 4's data phase is 0.1 s against a median of 0.1 s: ×1, as is its forward
        // phase; the later one of a tie is named.
        assert_eq!(four.slowest.map(|s| s.name), Some("forward"));
    }

    #[test]
    fn a_large_job_lists_the_first_ranks_and_the_largest_stragglers() {
        let slow: Vec<u32> = (0..30).map(|i| 100 + 30 * i).collect();
        let data = job(1000, &slow);
        let t = rank_table(&data);
        assert_eq!(t.rows.len(), FIRST_RANKS + MAX_STRAGGLER_ROWS);
        assert_eq!(t.total, 1000);
        assert_eq!(t.omitted, 1000 - t.rows.len());
        assert_eq!(t.hidden_stragglers, slow[MAX_STRAGGLER_ROWS..].to_vec());
        assert!(t.rows.windows(2).all(|w| w[0].rank < w[1].rank));
        assert_eq!(t.rows[FIRST_RANKS].rank, 100);
        assert_eq!(t.rows[FIRST_RANKS].straggler, Some("data"));
    }

    #[test]
    fn ranks_without_steps_or_with_nan_medians_have_no_numbers_to_show() {
        let mut data = job(3, &[]);
        data.ranks[0].steps = None;
        data.ranks[1].steps.as_mut().expect("steps").step.p50_s = f64::NAN;
        let t = rank_table(&data);
        // Ranks were reversed: rank 2 lost its steps, rank 1 its step median.
        assert_eq!((t.rows[2].steps, t.rows[2].slowest), (None, None));
        assert_eq!(t.rows[1].step_p50_s, None);
        assert_eq!(t.rows[1].steps, Some(100));
        assert!(rank_table(&RanksData::default()).rows.is_empty());
    }
}
