//! Findings across GPUs: exposed communication and the straggling rank.

use super::{choices_unseen, rank_note, worst, *};
use crate::report::{Cost, Finding};
use crate::rules::{action, confidence, evidence, experiment, round, RuleMeta};
use crate::trace::summary::{RankSummary, TraceSummary};

/// `comm_sync` from a trace: communication kernels not hidden under compute.
pub fn comm_sync(t: &TraceSummary, meta: &RuleMeta) -> Option<Finding> {
    let exposed = |r: &RankSummary| {
        if r.span_us > 0.0 {
            (r.comm_us - r.comm_overlap_us) / r.span_us
        } else {
            0.0
        }
    };
    let r = worst(t, exposed)?;
    let x = exposed(r);
    let e = evidence(
        "exposed communication (NCCL not overlapped with compute) over the span",
        x,
        ">=",
        MIN_EXPOSED_COMM_SHARE,
        "fraction",
        None,
    );
    if !e.agrees {
        return None;
    }
    let mut ev = vec![e];
    ev.push(evidence(
        "communication over the span",
        r.comm_us / r.span_us,
        ">=",
        MIN_EXPOSED_COMM_SHARE,
        "fraction",
        None,
    ));
    let overlap = r.comm_overlap_share.unwrap_or(0.0);
    let e = evidence(
        "communication overlapped with compute",
        overlap,
        "<",
        0.5,
        "fraction",
        None,
    );
    let w = [(3.0, true), (1.0, e.agrees)];
    ev.push(e);
    let mut f = meta.finding(
        confidence(&w) * 0.95,
        format!(
            "NCCL kernels take {:.0}% of the traced span{} and only {:.0}% of that runs under compute: {:.0}% of the span is exposed communication.",
            r.comm_us / r.span_us * 100.0,
            rank_note(t, r),
            overlap * 100.0,
            x * 100.0
        ),
        ev,
    );
    f.lost_share = Some(round(x));
    f.actions = vec![
        action(Cost::Low, "Raise the per-GPU batch or use gradient accumulation so each all-reduce amortises over more compute"),
        action(Cost::Low, "Raise DDP bucket_cap_mb (25 → 50–100 MB) and keep gradient_as_bucket_view=True"),
        action(Cost::Medium, "Overlap communication with backward (DDP does by default; check no_sync/hooks); prefer ZeRO-1/2 over ZeRO-3 on slow links"),
        action(Cost::High, "Check the interconnect: NVLink/P2P enabled (`nvidia-smi topo -m`), NIC and NCCL settings across nodes"),
    ];
    f.experiment = experiment(
        "Double gradient accumulation steps (one change), profile again",
        "exposed communication share of the span falls by about half",
        "trace exposed communication share",
    );
    f.unseen.push(choices_unseen(t));
    Some(f)
}

/// `rank_imbalance` from traces of several ranks: one rank reaches the collectives late.
pub fn rank_imbalance(t: &TraceSummary, meta: &RuleMeta) -> Option<Finding> {
    let sk = t.skew.as_ref()?;
    let straggler = sk.straggler?;
    let e1 = evidence(
        "communication start skew over step time (p50)",
        sk.skew_over_step,
        ">=",
        MIN_SKEW_OVER_STEP,
        "fraction",
        None,
    );
    let e2 = evidence(
        "share of steps in which the same rank is last",
        sk.straggler_share,
        ">=",
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
    f.unseen.push(choices_unseen(t));
    Some(f)
}
