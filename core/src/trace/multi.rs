//! Across ranks: when does each rank reach the step's last collective?
//!
//! Ranks' trace clocks are not aligned (each file counts from its own process start), so
//! times are compared as offsets inside a step: the start of the step's last communication
//! kernel after the step's first GPU operation. In a synchronous all-reduce the rank that
//! reaches it last is the one the others wait for (HTA's straggler analysis uses the same
//! "last collective's normalized start" idea; `docs/references.md#hta-breakdowns`).

use std::collections::BTreeMap;

use super::summary::{RankSummary, SkewSummary};
use crate::stats::percentile_sorted;

pub(crate) fn skew(ranks: &[RankSummary]) -> Option<SkewSummary> {
    if ranks.len() < 2 {
        return None;
    }
    let mut by_step: BTreeMap<i64, Vec<(u32, f64)>> = BTreeMap::new();
    for r in ranks {
        for st in &r.steps {
            if let Some(off) = st.last_comm_offset_us {
                by_step.entry(st.step).or_default().push((r.rank, off));
            }
        }
    }
    let mut spreads = Vec::new();
    let mut latest: BTreeMap<u32, usize> = BTreeMap::new();
    for offs in by_step.values().filter(|v| v.len() == ranks.len()) {
        let lo = offs.iter().map(|o| o.1).fold(f64::INFINITY, f64::min);
        let (who, hi) =
            offs.iter()
                .copied()
                .fold((0, f64::NEG_INFINITY), |a, b| if b.1 > a.1 { b } else { a });
        spreads.push(hi - lo);
        *latest.entry(who).or_default() += 1;
    }
    let step_p50_by_rank: Vec<(u32, f64)> = ranks
        .iter()
        .map(|r| (r.rank, r.step_stats.cpu_us.p50))
        .collect();
    if spreads.is_empty() {
        return Some(SkewSummary {
            step_p50_by_rank,
            ..Default::default()
        });
    }
    spreads.sort_by(f64::total_cmp);
    let p50 = percentile_sorted(&spreads, 0.5);
    let mut steps: Vec<f64> = step_p50_by_rank.iter().map(|x| x.1).collect();
    steps.sort_by(f64::total_cmp);
    let step = percentile_sorted(&steps, 0.5);
    let (straggler, n) = latest
        .iter()
        .max_by_key(|(r, n)| (**n, std::cmp::Reverse(**r)))
        .map(|(r, n)| (*r, *n))
        .unwrap_or((0, 0));
    Some(SkewSummary {
        steps: spreads.len(),
        comm_start_skew_p50_us: p50,
        skew_over_step: if step > 0.0 { p50 / step } else { 0.0 },
        straggler: Some(straggler),
        straggler_share: n as f64 / spreads.len() as f64,
        step_p50_by_rank,
    })
}
