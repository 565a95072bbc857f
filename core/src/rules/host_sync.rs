//! `host_sync`: the training loop synchronizes with the GPU several times per step.

use super::traced::*;
use super::{action, confidence, evidence, experiment, round};
use super::{Rule, RuleDoc, RuleMeta};
use crate::report::Comparator;
use crate::report::Cost;
use crate::report::{Evidence, Finding, Severity};
use crate::signals::Signals;
use crate::trace::{RankSummary, SyncStats, TraceSummary};

static META: RuleMeta = RuleMeta {
    id: "host_sync",
    title: "Host syncs every step stall the GPU",
    severity: Severity::Medium,
    doc: RuleDoc {
        detects: "A profiler trace whose GPU gaps across or after synchronizing calls (cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize, synchronous cudaMemcpy, aten::item) cost 5 % or more of the traced span; in a trace whose GPU operations have no runtime calls to measure that by, two or more synchronizing calls per step (p50, counted from cuda_sync records).",
        why: "Each sync stops the CPU until the GPU has drained its queue; the kernels after it start only once the CPU has launched them again, so the GPU idles at every sync. `.item()`, printing a tensor and `.cpu()` of a metric all sync.",
        evidence: "Synchronizing calls per step from the trace's cuda_runtime calls (or cuda_sync records), by kind; the GPU idle share of the traced span; the host-wait share of the main stream's idle time.",
        first: "Remove .item()/print/.cpu() of tensors and torch.cuda.synchronize() from the step, or do them every N steps; copy from pinned memory with non_blocking=True.",
    },
};

/// See the module docs.
pub struct HostSync;

impl Rule for HostSync {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn evaluate(&self, s: &Signals) -> Option<Finding> {
        traced(s.trace.as_ref()?, &META)
    }
}

// Evidence from a profiler trace, tried first when one is attached.

/// Synchronizing calls per step (p50) from which host syncs stall the launch queue: one per
/// step (logging a loss) drains the queue once; several per step are the `.item()`/print
/// pattern the guides name as the first fix for launch-bound jobs.
pub const MIN_SYNCS_PER_STEP: f64 = 2.0;

/// GPU idle time across or after synchronizing calls over the span.
fn sync_share(r: &RankSummary) -> f64 {
    if r.span_us > 0.0 {
        r.gap_causes.sync_us / r.span_us
    } else {
        0.0
    }
}

/// `host_sync` from a trace: synchronizing calls every step, or GPU gaps after syncs.
fn traced(t: &TraceSummary, meta: &RuleMeta) -> Option<Finding> {
    // Either syncs every step, or GPU gaps after syncs that cost time (a sync every few
    // steps can cost as much as several per step).
    let by_time = worst(t, sync_share).filter(|r| sync_share(r) >= MIN_CAUSE_SHARE);
    let r = match by_time {
        Some(r) => r,
        None => worst(t, |r| r.step_stats.syncs.p50)?,
    };
    let per = r.step_stats.syncs.p50;
    let e_per = evidence(
        "synchronizing calls per step p50",
        per,
        Comparator::AtLeast,
        MIN_SYNCS_PER_STEP,
        "calls",
        None,
    );
    let e_time = evidence(
        "GPU idle time across or after synchronizing calls, over the traced span",
        sync_share(r),
        Comparator::AtLeast,
        MIN_CAUSE_SHARE,
        "fraction",
        None,
    );
    let steps = r.step_stats.count > 0;
    // When the gaps after syncs can be measured (the GPU operations have their runtime
    // calls), their time decides: syncs that cost no GPU time are not a bottleneck, however
    // many there are. Without runtime calls only the count per step is left.
    let g = &r.gap_causes;
    let measured = g.idle_us > g.unmatched_us;
    if !(e_time.agrees || (steps && e_per.agrees && !measured)) {
        return None;
    }
    let mut ev = Vec::new();
    if steps {
        ev.push(e_per.weighing(2.0));
    }
    ev.push(e_time.weighing(2.0));
    idle_evidence(r, &mut ev);
    let kinds = sync_kinds(&r.syncs);
    let how_often = if steps {
        format!("{per:.0} synchronizing calls per step")
    } else {
        format!("{} synchronizing calls", r.syncs.total)
    };
    let mut f = meta.finding(
        confidence(&ev, &[]) * 0.9,
        format!(
            "{how_often}{} ({}); the GPU sits idle across or after them {:.0}% of the traced span ({:.0}% of its idle time): each one stops the CPU until the GPU drains its queue, so the next kernels start late.",
            rank_note(t, r),
            kinds.join(", "),
            sync_share(r) * 100.0,
            g.of_idle(g.sync_us) * 100.0,
        ),
        ev,
    );
    f.lost_share = Some(round(sync_share(r)));
    f.actions = vec![
        action(Cost::Low, "Find the .item(), print(tensor), .cpu()/.numpy() and torch.cuda.synchronize() calls in the step (the trace's cuda_runtime sync calls show where) and remove them or do them every N steps"),
        action(Cost::Low, "Copy with pin_memory=True and non_blocking=True instead of pageable memory"),
        action(Cost::Medium, "Keep metrics on the GPU and reduce them once per logging interval"),
    ];
    f.experiment = experiment(
        "Log the loss every 50 steps instead of every step (one change), profile again",
        "synchronizing calls per step fall toward 0 and host-wait idle falls",
        "trace syncs per step; idle share",
    );
    mark_traced(&mut f, t);
    Some(f)
}

/// How idle the GPU is, and how much of the main stream's idle time is a wait on the host.
fn idle_evidence(r: &RankSummary, ev: &mut Vec<Evidence>) {
    let e = evidence(
        "GPU idle share of the traced span",
        r.idle_share,
        Comparator::AtLeast,
        MIN_IDLE_SHARE,
        "fraction",
        None,
    );
    ev.push(e.weighing(1.0));
    ev.extend(host_wait_evidence(r));
}

/// The synchronizing calls seen, by kind: `cudaStreamSynchronize ×40`.
fn sync_kinds(s: &SyncStats) -> Vec<String> {
    [
        ("cudaDeviceSynchronize", s.device_sync),
        ("cudaStreamSynchronize", s.stream_sync),
        ("cudaEventSynchronize", s.event_sync),
        ("synchronous cudaMemcpy", s.sync_memcpy),
        (
            "cudaMemcpyAsync of pageable memory",
            s.pageable_async_memcpy,
        ),
    ]
    .iter()
    .filter(|(_, n)| *n > 0)
    .map(|(k, n)| format!("{k} ×{n}"))
    .collect()
}
