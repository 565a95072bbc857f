//! `rank_imbalance` from a profiler trace of several ranks: one rank reaches the collectives
//! last, step after step, by a share of the step that matters.

use super::super::traced::*;
use super::super::{action, evidence, experiment, round, RuleMeta};
use crate::report::Comparator;
use crate::report::{Cost, Finding};
use crate::trace::TraceSummary;

/// Communication start skew over the step time from which one rank holds the others up.
pub const MIN_SKEW_OVER_STEP: f64 = 0.05;

/// Share of steps in which the same rank reaches the collective last.
pub const MIN_STRAGGLER_SHARE: f64 = 0.5;

/// `rank_imbalance` from traces of several ranks: one rank reaches the collectives late.
pub(super) fn traced(t: &TraceSummary, meta: &RuleMeta) -> Option<Finding> {
    let sk = t.skew.as_ref()?;
    let straggler = sk.straggler?;
    let e1 = evidence(
        "communication start skew over step time (p50)",
        sk.skew_over_step,
        Comparator::AtLeast,
        MIN_SKEW_OVER_STEP,
        "fraction",
        None,
    );
    let e2 = evidence(
        "share of steps in which the same rank is last",
        sk.straggler_share,
        Comparator::AtLeast,
        MIN_STRAGGLER_SHARE,
        "fraction",
        None,
    );
    if !(e1.agrees && e2.agrees) {
        return None;
    }
    let mut f = meta.finding(
        0.9,
        format!(
            "Rank {straggler} reaches the step's last collective last in {:.0}% of steps, {:.0} µs (p50) after the first rank: the others wait for it.",
            sk.straggler_share * 100.0,
            sk.comm_start_skew_p50_us
        ),
        vec![e1, e2],
    );
    f.lost_share = Some(round(sk.skew_over_step.min(1.0)));
    f.actions = vec![
        action(Cost::Low, "Check that every rank gets the same batch size and an evenly sized data shard (DistributedSampler, drop_last)"),
        action(Cost::Low, &format!("Compare rank {straggler}'s trace with the others: its compute per step, its host syncs, other processes on its GPU")),
        action(Cost::Medium, "Move the straggling rank to another GPU or node"),
    ];
    f.experiment = experiment(
        &format!("Swap rank {straggler}'s GPU with another rank's (one change), profile again"),
        "If the GPU is the cause the lateness follows the GPU; if the data is, it stays with the rank",
        "trace communication start skew",
    );
    mark_traced(&mut f, t);
    Some(f)
}
