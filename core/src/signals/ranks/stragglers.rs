//! Straggler detection: a rank whose phase median is well above the median of the *other*
//! ranks' medians of the same phase, by enough time to matter.
//!
//! Medians of medians, never means: one slow step does not make a straggler, and one
//! straggler does not move the yardstick it is measured against (leaving the rank out of its
//! own comparison matters for small jobs). In synchronous training the others' wait for a
//! straggler lands in their communication or backward phase, which makes that phase *longer*
//! on them and shorter on the straggler; looking only for phases that are longer than the
//! others' median names the phase the straggler spends its extra time in.

use std::collections::BTreeMap;

use crate::report::{RankSummary, Straggler};

/// A phase median this many times the other ranks' median marks a straggler. Identical
/// ranks differ by a few percent run to run (the simulated jitter is 1–2 %; real jobs'
/// ranks within ~10 %); 1.5× is far outside that and still catches the 2× stragglers the
/// issue describes ("rank 5: data phase p50 2.1× the median of other ranks").
pub const PHASE_RATIO: f64 = 1.5;

/// The extra time must be at least this share of the job's median step time, so that a
/// phase of a few microseconds doubling is not a straggler: 5 % of a step is what the
/// `data_starvation` rule's own thresholds treat as the smallest loss worth a finding.
pub const MIN_EXCESS_SHARE: f64 = 0.05;

/// A phase whose extra time is at least this share of the job's median step time is a
/// straggler's at a smaller ratio ([`LARGE_PHASE_RATIO`]): a rank 10 % of a step late costs
/// every rank 10 % (the least straggler the diagnosis must catch), however long the phase is
/// — a long backward phase 1.2× the others' is such a case, and far from [`PHASE_RATIO`].
pub const LARGE_EXCESS_SHARE: f64 = 0.10;

/// The ratio a phase needs when its excess reaches [`LARGE_EXCESS_SHARE`] of a step: just
/// outside the ~10 % by which identical ranks' phase medians differ.
pub const LARGE_PHASE_RATIO: f64 = 1.1;

/// Whole steps this many times the others' median mark a straggler when no phase explains
/// it (no phases marked, or the extra time spread over several): lower than
/// [`PHASE_RATIO`] because whole-step medians of identical ranks agree more closely.
pub const STEP_RATIO: f64 = 1.2;

pub use crate::stats::median_sorted as median;
use crate::stats::median_without_sorted as median_without;

/// One comparison: the rank's value against the others'.
struct Against {
    p50: f64,
    others: f64,
}

/// For each rank (by position in `values`), its value and the median of the others'.
fn against_others(values: &[(usize, f64)]) -> Vec<(usize, Against)> {
    let mut sorted: Vec<f64> = values.iter().map(|v| v.1).collect();
    sorted.sort_by(f64::total_cmp);
    values
        .iter()
        .filter_map(|(i, v)| {
            median_without(&sorted, *v).map(|others| (*i, Against { p50: *v, others }))
        })
        .collect()
}

/// The least extra time per step that makes a straggler: [`MIN_EXCESS_SHARE`] of the median
/// of the ranks' step time p50s.
pub fn min_excess(ranks: &[RankSummary]) -> f64 {
    let mut steps: Vec<f64> = ranks
        .iter()
        .filter_map(|r| r.steps.as_ref().map(|s| s.step.p50_s))
        .filter(|t| t.is_finite() && *t > 0.0)
        .collect();
    steps.sort_by(f64::total_cmp);
    median(&steps).unwrap_or(0.0) * MIN_EXCESS_SHARE
}

/// The thresholds a straggler met: (ratio, least extra seconds per step), given the job's
/// `min_excess` — whole steps against [`STEP_RATIO`], phases against [`PHASE_RATIO`], or
/// against [`LARGE_PHASE_RATIO`] when the ratio is smaller and the excess large.
pub fn thresholds_met(s: &Straggler, min_excess: f64) -> (f64, f64) {
    if s.phase == "step" {
        (STEP_RATIO, min_excess)
    } else if s.ratio >= PHASE_RATIO {
        (PHASE_RATIO, min_excess)
    } else {
        (
            LARGE_PHASE_RATIO,
            min_excess * LARGE_EXCESS_SHARE / MIN_EXCESS_SHARE,
        )
    }
}

/// The stragglers among `ranks`, largest excess first.
pub fn stragglers(ranks: &[RankSummary]) -> Vec<Straggler> {
    let with_steps: Vec<(usize, &crate::report::RankSteps)> = ranks
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.steps.as_ref().map(|s| (i, s)))
        .filter(|(_, s)| s.step.p50_s.is_finite() && s.step.p50_s > 0.0)
        .collect();
    if with_steps.len() < 2 {
        return Vec::new();
    }
    let min_excess = min_excess(ranks);

    let mut by_phase: BTreeMap<&str, Vec<(usize, f64)>> = BTreeMap::new();
    for (i, s) in &with_steps {
        for (name, t) in &s.phases {
            if t.p50_s.is_finite() {
                by_phase.entry(name).or_default().push((*i, t.p50_s));
            }
        }
    }
    // Per rank, the phase with the largest excess among those past both thresholds.
    let mut worst: BTreeMap<usize, (String, Against)> = BTreeMap::new();
    for (name, values) in &by_phase {
        for (i, a) in against_others(values) {
            let excess = a.p50 - a.others;
            let by_ratio = a.p50 >= PHASE_RATIO * a.others && excess >= min_excess;
            let by_excess = a.p50 >= LARGE_PHASE_RATIO * a.others
                && excess >= min_excess * LARGE_EXCESS_SHARE / MIN_EXCESS_SHARE;
            if a.others <= 0.0 || !(by_ratio || by_excess) {
                continue;
            }
            if worst.get(&i).is_none_or(|(_, w)| excess > w.p50 - w.others) {
                worst.insert(i, (name.to_string(), a));
            }
        }
    }
    let whole: Vec<(usize, f64)> = with_steps.iter().map(|(i, s)| (*i, s.step.p50_s)).collect();
    for (i, a) in against_others(&whole) {
        let excess = a.p50 - a.others;
        if !worst.contains_key(&i) && a.p50 >= STEP_RATIO * a.others && excess >= min_excess {
            worst.insert(i, ("step".into(), a));
        }
    }
    let mut out: Vec<Straggler> = worst
        .into_iter()
        .map(|(i, (phase, a))| {
            let r = &ranks[i];
            Straggler {
                rank: r.rank,
                host: r.host.clone(),
                phase,
                p50_s: a.p50,
                others_p50_s: a.others,
                ratio: a.p50 / a.others,
                excess_s: a.p50 - a.others,
                step_p50_s: r.steps.as_ref().map_or(f64::NAN, |s| s.step.p50_s),
            }
        })
        .collect();
    out.sort_by(|a, b| b.excess_s.total_cmp(&a.excess_s).then(a.rank.cmp(&b.rank)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{PhaseTimes, RankSteps};

    fn rank(rank: u32, data: f64, fwd: f64) -> RankSummary {
        let t = |p50_s| PhaseTimes {
            p50_s,
            p95_s: p50_s,
        };
        RankSummary {
            rank,
            host: format!("node-{}", rank / 4),
            steps: Some(RankSteps {
                count: 100,
                step: t(data + fwd),
                phases: [("data".into(), t(data)), ("forward".into(), t(fwd))]
                    .into_iter()
                    .collect(),
            }),
            ..RankSummary::default()
        }
    }

    #[test]
    fn the_slow_rank_and_its_phase_are_named_and_nobody_else() {
        let mut ranks: Vec<RankSummary> = (0..8).map(|r| rank(r, 0.030, 0.400)).collect();
        ranks[5] = rank(5, 0.063, 0.400);
        let s = stragglers(&ranks);
        assert_eq!(s.len(), 1, "{s:?}");
        assert_eq!((s[0].rank, s[0].phase.as_str()), (5, "data"));
        assert!((s[0].ratio - 2.1).abs() < 1e-9, "{}", s[0].ratio);
        assert!((s[0].excess_s - 0.033).abs() < 1e-9);
    }

    #[test]
    fn a_doubled_tiny_phase_is_not_a_straggler() {
        let mut ranks: Vec<RankSummary> = (0..8).map(|r| rank(r, 0.001, 0.400)).collect();
        ranks[2] = rank(2, 0.003, 0.400);
        assert!(stragglers(&ranks).is_empty());
    }

    #[test]
    fn a_rank_a_tenth_of_a_step_late_in_a_long_phase_is_a_straggler() {
        // Steps of 0.33 s; rank 3's forward is 0.035 s (~11 % of a step) longer: 1.12×.
        let mut ranks: Vec<RankSummary> = (0..8).map(|r| rank(r, 0.030, 0.300)).collect();
        ranks[3] = rank(3, 0.030, 0.335);
        let s = stragglers(&ranks);
        assert_eq!((s.len(), s[0].rank, s[0].phase.as_str()), (1, 3, "forward"));
        let min = min_excess(&ranks);
        assert_eq!(thresholds_met(&s[0], min).0, LARGE_PHASE_RATIO);
        // 4 % of a step late is within what identical ranks differ by.
        ranks[3] = rank(3, 0.030, 0.313);
        assert!(stragglers(&ranks).is_empty());
    }

    #[test]
    fn a_slow_rank_without_phases_is_a_whole_step_straggler() {
        let mut ranks: Vec<RankSummary> = (0..4).map(|r| rank(r, 0.0, 0.5)).collect();
        for r in &mut ranks {
            r.steps.as_mut().expect("steps").phases.clear();
        }
        ranks[1].steps.as_mut().expect("steps").step.p50_s = 0.7;
        let s = stragglers(&ranks);
        assert_eq!((s.len(), s[0].rank, s[0].phase.as_str()), (1, 1, "step"));
    }
}
