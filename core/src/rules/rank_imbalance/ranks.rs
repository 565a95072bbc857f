//! `rank_imbalance` on a merged job (the ranks' evidence): its stragglers (the phase
//! responsible named), or, without step markers, its utilization imbalance across GPUs and
//! nodes — as one finding with the measured ratios as evidence. The stragglers and the
//! imbalance are derived in `crate::signals::ranks`, whose thresholds
//! (`PHASE_RATIO`, `STEP_RATIO`, `MAX_UTIL_DISTANCE`, …) say where the numbers come from.

use super::RankImbalance;
use crate::report::Comparator;
use crate::report::FindingSource;
use crate::report::{Action, Cost, Evidence, Experiment, Finding, Imbalance, RanksData, Straggler};
use crate::rules::{ev, round, Rule};
use crate::signals::ranks::{min_excess, thresholds_met, MAX_UTIL_DISTANCE};

/// Ranks named in one sentence before "and N more".
pub const MAX_NAMED: usize = 5;

fn act(cost: Cost, text: String) -> Action {
    Action { text, cost }
}

fn phase_name(s: &Straggler) -> String {
    if s.phase == "step" {
        "step time p50".into()
    } else {
        format!("{} phase p50", s.phase)
    }
}

pub(super) fn straggler_finding(r: &RanksData) -> Option<Finding> {
    let top = r.stragglers.first()?;
    let meta = RankImbalance.meta();
    let who = format!("rank {}", top.rank);
    let what = phase_name(top);
    let summary = straggler_summary(r, top, &who, &what);
    let (evidence, confidence, threshold) = straggler_evidence(r, top, &who, &what);
    let actions = straggler_actions(top, &who);
    Some(Finding {
        id: meta.id.into(),
        // The rule's title speaks of a GPU; a straggler found in the step times is a rank.
        title: "One rank is out of step with the others".into(),
        severity: meta.severity,
        confidence: round(confidence),
        summary,
        lost_share: (top.step_p50_s > 0.0).then(|| round((top.excess_s / top.step_p50_s).clamp(0.0, 1.0))),
        lost_share_basis: None,
        devices: Vec::new(),
        evidence,
        actions,
        experiment: Experiment {
            change: format!("Swap {who}'s node (or its data shard) with another rank's, rerun, and merge again"),
            expect: format!(
                "If the node is the cause, the slow {} follows the node; if the data is, it follows the shard. Once fixed, no rank's {} is {threshold}× the others' median",
                top.phase, what
            ),
            metric: format!("{who} {what} over the other ranks' median"),
        },
        unseen: Vec::new(),
        source: Some(FindingSource::Ranks),
        caused_by: None,
    })
}

pub(super) fn imbalance_finding(r: &RanksData) -> Option<Finding> {
    let im = r.imbalance.as_ref()?;
    if im.outliers.is_empty() && im.node_outliers.is_empty() {
        return None;
    }
    let mut summary = match im.outliers.first() {
        Some(o) => format!(
            "GPU {} of {}{} runs at util_gpu p50 {:.0}%, {:.0} points {} the job's median of {:.0}% (spread {:.0} points across {} GPUs on {} nodes); in synchronous training the others wait for it.",
            o.index,
            o.host,
            o.rank.map(|x| format!(" (rank {x})")).unwrap_or_default(),
            o.util_p50,
            o.distance.abs(),
            if o.distance < 0.0 { "below" } else { "above" },
            im.util_p50_median,
            im.util_p50_spread,
            im.gpus,
            r.nodes.len()
        ),
        None => String::new(),
    };
    if im.outlier_count > 1 {
        summary.push_str(&format!(
            " {} of the {} GPUs are more than {MAX_UTIL_DISTANCE:.0} points from the median.",
            im.outlier_count, im.gpus
        ));
    }
    if !im.node_outliers.is_empty() {
        summary.push_str(&format!(
            " Nodes out of step with the others: {} (node utilization spread {:.0} points).",
            im.node_outliers.join(", "),
            im.node_spread.unwrap_or(0.0)
        ));
    }
    let evidence = imbalance_evidence(im);
    let far = im.outliers.first().map_or(0.0, |o| o.distance.abs());
    let mut f = RankImbalance
        .meta()
        .finding(0.7, summary.trim().to_string(), evidence);
    f.lost_share = Some(round((far / 100.0).min(1.0)));
    f.actions = vec![
        act(Cost::Low, "Check that every rank gets the same batch size and an evenly sized data shard (DistributedSampler, drop_last)".into()),
        act(Cost::Low, "Look for other processes and for throttling on the outlying GPUs (`nvidia-smi`)".into()),
        act(Cost::Medium, "Move the outlying ranks to other GPUs or nodes and merge again".into()),
    ];
    f.experiment = Experiment {
        change: "Swap the work of the outlying GPU with another's (or exclude it), rerun, and merge again".into(),
        expect: "If the GPU is the cause the imbalance follows the GPU; if the data is, it follows the shard. No GPU's util_gpu p50 is more than 10 points from the job's median once fixed".into(),
        metric: "spread of per-GPU util_gpu p50 across the job".into(),
    };
    if r.ranks.iter().all(|x| x.steps.is_none()) {
        f.unseen.push("The ranks recorded no step markers: with them, merge names the phase a straggler spends its extra time in.".into());
    }
    Some(f)
}

/// What the straggler costs the others, its own top finding, the other slow ranks and a
/// node whose every rank is slow.
fn straggler_summary(r: &RanksData, top: &Straggler, who: &str, what: &str) -> String {
    let mut summary = format!(
        "{who} ({}): {what} {:.1}× the median of the other ranks ({:.3} s against {:.3} s), {:.3} s more every step; in synchronous training every other rank waits for it.",
        top.host, top.ratio, top.p50_s, top.others_p50_s, top.excess_s
    );
    if let Some(own) = r
        .ranks
        .iter()
        .find(|x| x.rank == top.rank)
        .and_then(|x| x.findings.first())
    {
        summary.push_str(&format!(
            " Its own report's top finding: {} (confidence {:.2}).",
            own.id, own.confidence
        ));
    }
    let more: Vec<String> = r.stragglers[1..]
        .iter()
        .take(MAX_NAMED)
        .map(|s| format!("rank {} ({} {:.1}×)", s.rank, s.phase, s.ratio))
        .collect();
    if !more.is_empty() {
        let rest = r.stragglers.len().saturating_sub(1 + MAX_NAMED);
        let tail = if rest > 0 {
            format!(" and {rest} more")
        } else {
            String::new()
        };
        summary.push_str(&format!(" Also slower: {}{tail}.", more.join(", ")));
    }
    // A whole node of stragglers points at the node, not at a rank.
    for n in &r.nodes {
        let slow = n
            .ranks
            .iter()
            .filter(|x| r.stragglers.iter().any(|s| s.rank == **x))
            .count();
        if n.ranks.len() > 1 && slow == n.ranks.len() {
            summary.push_str(&format!(
                " Every rank on {} is slow: look at that node.",
                n.host
            ));
        }
    }
    summary
}

/// The straggler's ratio and excess against what it needed, the other slow ranks', and its
/// utilization's distance from the job's median (which adds confidence); with the
/// confidence and the ratio threshold the top straggler met.
fn straggler_evidence(
    r: &RanksData,
    top: &Straggler,
    who: &str,
    what: &str,
) -> (Vec<Evidence>, f64, f64) {
    let min_excess = min_excess(&r.ranks);
    let (threshold, excess_needed) = thresholds_met(top, min_excess);
    let mut evidence = vec![
        ev(
            format!("{who} {what} over the other ranks' median"),
            top.ratio,
            Comparator::AtLeast,
            threshold,
            "×",
            true,
        ),
        ev(
            format!("{who} {what} minus the other ranks' median"),
            top.excess_s,
            Comparator::AtLeast,
            round(excess_needed),
            "s",
            true,
        ),
    ];
    for s in r.stragglers[1..].iter().take(MAX_NAMED) {
        evidence.push(ev(
            format!(
                "rank {} {} over the other ranks' median",
                s.rank,
                phase_name(s)
            ),
            s.ratio,
            Comparator::AtLeast,
            thresholds_met(s, min_excess).0,
            "×",
            true,
        ));
    }
    let mut confidence: f64 = 0.8;
    let util = r
        .ranks
        .iter()
        .find(|x| x.rank == top.rank)
        .and_then(|x| x.util_p50);
    if let (Some(u), Some(im)) = (util, &r.imbalance) {
        let d = (u - im.util_p50_median).abs();
        let agrees = d > MAX_UTIL_DISTANCE;
        if agrees {
            confidence += 0.1;
        }
        evidence.push(ev(
            format!("{who} util_gpu p50 distance from the job's median"),
            d,
            Comparator::Above,
            MAX_UTIL_DISTANCE,
            "points",
            agrees,
        ));
    }
    (evidence, confidence, threshold)
}

/// The fixes for a straggling rank, cheapest first: its input pipeline when its data phase
/// is the slow one.
fn straggler_actions(top: &Straggler, who: &str) -> Vec<Action> {
    let mut actions = Vec::new();
    if top.phase == "data" {
        actions.push(act(Cost::Low, format!(
            "Compare {who}'s input pipeline with the others': DataLoader workers, its node's CPU load and disk ({})",
            top.host
        )));
    }
    actions.push(act(Cost::Low, format!(
        "Check that {who} gets the same batch size and an evenly sized data shard as the others (DistributedSampler, drop_last)"
    )));
    actions.push(act(Cost::Low, format!(
        "Look for other processes on {who}'s GPU and node (`nvidia-smi`, `top`) and for throttling on its GPU"
    )));
    actions.push(act(
        Cost::Medium,
        format!(
            "Move {who} to another node (or leave {} out) and merge again",
            top.host
        ),
    ));
    actions
}

/// The spread of per-GPU utilization medians across the job, and each outlier's distance
/// from the job's median.
fn imbalance_evidence(im: &Imbalance) -> Vec<Evidence> {
    let mut evidence = vec![ev(
        "spread of per-GPU util_gpu p50 across the job".into(),
        im.util_p50_spread,
        Comparator::Above,
        MAX_UTIL_DISTANCE,
        "points",
        im.util_p50_spread > MAX_UTIL_DISTANCE,
    )];
    for o in im.outliers.iter().take(MAX_NAMED) {
        evidence.push(ev(
            format!(
                "util_gpu p50 of GPU {} on {} minus the job's median",
                o.index, o.host
            ),
            o.distance,
            if o.distance < 0.0 {
                Comparator::Below
            } else {
                Comparator::Above
            },
            if o.distance < 0.0 {
                -MAX_UTIL_DISTANCE
            } else {
                MAX_UTIL_DISTANCE
            },
            "points",
            true,
        ));
    }
    evidence
}
