//! A merged job's signals: what its per-rank rows say once lined up — the nodes, how
//! evenly the GPUs and nodes were used, and the stragglers. Derived from the `ranks`
//! section of a job report (so re-diagnosing an old job report applies today's
//! thresholds), then judged by `rank_imbalance` (`crate::rules`) and ordered by
//! `crate::analysis`.

mod imbalance;
mod stragglers;

pub use imbalance::{imbalance, nodes, MAX_LISTED, MAX_UTIL_DISTANCE};
pub use stragglers::{
    median, min_excess, stragglers, thresholds_met, LARGE_EXCESS_SHARE, LARGE_PHASE_RATIO,
    MIN_EXCESS_SHARE, PHASE_RATIO, STEP_RATIO,
};

use crate::report::RanksData;

/// Re-derives `r`'s nodes, imbalance and stragglers from its per-rank rows.
pub fn derive(r: &mut RanksData) {
    r.nodes = nodes(&r.ranks);
    r.imbalance = imbalance(&r.ranks, &r.nodes);
    r.stragglers = stragglers(&r.ranks);
}
