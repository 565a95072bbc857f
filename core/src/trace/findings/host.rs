//! Findings whose cause is on the host or in the step's shape: launches, syncs, copies, shapes.

use super::{choices_unseen, rank_note, worst, *};
use crate::report::{Cost, Finding};
use crate::rules::{action, confidence, evidence, experiment, round, RuleMeta};
use crate::trace::summary::{RankSummary, TraceSummary};
use crate::trace::LAUNCH_GAP_MAX_US;

/// Host time between launches over the GPU's idle time: gaps with only launches and Python
/// under them, and long gaps whose host work the trace does not name.
fn between_launches(r: &RankSummary) -> f64 {
    let g = &r.gap_causes;
    g.of_idle(g.launch_us + g.other_host_us)
}

/// `launch_bound` from a trace: the GPU idles while the host runs Python between launches.
pub fn launch_bound(t: &TraceSummary, meta: &RuleMeta) -> Option<Finding> {
    let r = worst(t, |r| r.idle_share * between_launches(r))?;
    let share = between_launches(r);
    let e_idle = evidence(
        "GPU idle share of the traced span",
        r.idle_share,
        ">=",
        MIN_IDLE_SHARE,
        "fraction",
        None,
    );
    let e_hw = evidence(
        "share of the GPU's idle time that is host time between launches (no DataLoader, allocator call, sync or CPU work under it)",
        share,
        ">=",
        MIN_LAUNCH_SHARE,
        "fraction",
        None,
    );
    if !(e_idle.agrees && e_hw.agrees) {
        return None;
    }
    let mut w = vec![(2.0, true), (2.0, true)];
    let mut ev = vec![e_idle, e_hw];
    let k = &r.kernels;
    let e = evidence(
        "mean kernel duration",
        k.duration_us.mean,
        "<",
        SMALL_KERNEL_MEAN_US,
        "µs",
        None,
    );
    w.push((1.0, e.agrees));
    ev.push(e);
    if let Some(sh) = k.shorter_than_launch_share {
        let e = evidence(
            "share of kernels shorter than their launch call",
            sh,
            ">=",
            0.5,
            "fraction",
            None,
        );
        w.push((1.0, e.agrees));
        ev.push(e);
    }
    if r.step_stats.count > 0 {
        let e = evidence(
            "kernels per step p50",
            r.step_stats.kernels.p50,
            ">=",
            STORM_KERNELS_PER_STEP,
            "kernels",
            None,
        );
        w.push((1.0, e.agrees));
        ev.push(e);
        let e = evidence(
            "GPU busy / CPU step time p50",
            r.step_stats.gpu_cpu_ratio.p50,
            "<=",
            0.5,
            "ratio",
            None,
        );
        w.push((1.0, e.agrees));
        ev.push(e);
    }
    if let Some(hw) = r.main_stream_idle.host_wait_share() {
        let e = evidence(
            "host-wait share of the main stream's idle time",
            hw,
            ">=",
            MIN_HOST_WAIT_SHARE,
            "fraction",
            None,
        );
        w.push((1.0, e.agrees));
        ev.push(e);
    }
    let g = &r.gap_causes;
    let lost = if r.span_us > 0.0 {
        round((g.launch_us + g.other_host_us) / r.span_us)
    } else {
        0.0
    };
    let mut f = meta.finding(
        confidence(&w).max(0.6) * 0.95,
        format!(
            "The GPU{} is idle {:.0}% of the traced span and {:.0}% of that is the host between launches ({:.0}% Python in gaps under {:.0} ms, {:.0}% longer host work the trace does not name): kernels (mean {:.1} µs) finish before the CPU launches the next ones.",
            rank_note(t, r),
            r.idle_share * 100.0,
            share * 100.0,
            g.of_idle(g.launch_us) * 100.0,
            LAUNCH_GAP_MAX_US / 1e3,
            g.of_idle(g.other_host_us) * 100.0,
            k.duration_us.mean
        ),
        ev,
    );
    f.lost_share = Some(lost);
    f.actions = vec![
        action(Cost::Low, "Remove host syncs in the loop: .item(), printing tensors, torch.cuda.synchronize(), .cpu() of metrics every step"),
        action(Cost::Medium, "torch.compile the model to fuse small ops"),
        action(Cost::Medium, "Capture the step with CUDA Graphs (needs static shapes: pad or bucket first)"),
    ];
    if g.other_host_us > g.launch_us {
        f.actions.insert(0, action(Cost::Low, "Profile again with with_stack=True (or py-spy) to see which Python runs in the long gaps between launches, and move it out of the step"));
    }
    if !g.cpu_events {
        f.unseen.push("The trace has no CPU operator events (cpu_op, user_annotation), so DataLoader waits and a CPU optimizer cannot be told apart from Python between launches; profile with ProfilerActivity.CPU as well as CUDA.".into());
    }
    f.experiment = experiment(
        "torch.compile the model (one change), profile again",
        "host-wait idle falls and kernels per step drop; GPU idle share of the span falls",
        "trace idle share; host-wait share",
    );
    f.unseen.push(choices_unseen(t));
    Some(f)
}

/// GPU idle time across or after synchronizing calls over the span.
fn sync_share(r: &RankSummary) -> f64 {
    if r.span_us > 0.0 {
        r.gap_causes.sync_us / r.span_us
    } else {
        0.0
    }
}

/// `host_sync` from a trace: synchronizing calls every step, or GPU gaps after syncs.
pub fn host_sync(t: &TraceSummary, meta: &RuleMeta) -> Option<Finding> {
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
        ">=",
        MIN_SYNCS_PER_STEP,
        "calls",
        None,
    );
    let e_time = evidence(
        "GPU idle time across or after synchronizing calls, over the traced span",
        sync_share(r),
        ">=",
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
    let s = &r.syncs;
    let (mut w, mut ev) = (Vec::new(), Vec::new());
    if steps {
        w.push((2.0, e_per.agrees));
        ev.push(e_per);
    }
    w.push((2.0, e_time.agrees));
    ev.push(e_time);
    let e = evidence(
        "GPU idle share of the traced span",
        r.idle_share,
        ">=",
        MIN_IDLE_SHARE,
        "fraction",
        None,
    );
    w.push((1.0, e.agrees));
    ev.push(e);
    if let Some(hw) = r.main_stream_idle.host_wait_share() {
        let e = evidence(
            "host-wait share of the main stream's idle time",
            hw,
            ">=",
            MIN_HOST_WAIT_SHARE,
            "fraction",
            None,
        );
        w.push((1.0, e.agrees));
        ev.push(e);
    }
    let kinds: Vec<String> = [
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
    .collect();
    let how_often = if steps {
        format!("{per:.0} synchronizing calls per step")
    } else {
        format!("{} synchronizing calls", s.total)
    };
    let mut f = meta.finding(
        confidence(&w) * 0.9,
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
    f.unseen.push(choices_unseen(t));
    Some(f)
}

/// `host_transfer` from a trace: host↔device copies take a large share of the GPU timeline.
pub fn host_transfer(t: &TraceSummary, meta: &RuleMeta) -> Option<Finding> {
    let share = |r: &RankSummary| {
        if r.span_us > 0.0 {
            r.host_copy_us / r.span_us
        } else {
            0.0
        }
    };
    let r = worst(t, share)?;
    let e = evidence(
        "host↔device memcpy time over the span",
        share(r),
        ">=",
        MIN_HOST_COPY_SHARE,
        "fraction",
        None,
    );
    if !e.agrees {
        return None;
    }
    let pageable = r.syncs.pageable_async_memcpy as f64;
    let e2 = evidence(
        "async copies from/to pageable memory",
        pageable,
        ">",
        0.0,
        "calls",
        None,
    );
    let w = [(3.0, true), (1.0, e2.agrees)];
    let mut f = meta.finding(
        confidence(&w) * 0.9,
        format!(
            "Host↔device copies occupy {:.0}% of the traced span{}{}.",
            share(r) * 100.0,
            rank_note(t, r),
            if pageable > 0.0 { format!(", {pageable:.0} of them async copies of pageable memory (synchronous in effect)") } else { String::new() }
        ),
        vec![e, e2],
    );
    f.lost_share = Some(round(share(r)));
    f.actions = vec![
        action(
            Cost::Low,
            "Use pin_memory=True and .to(device, non_blocking=True)",
        ),
        action(
            Cost::Medium,
            "Keep tensors on the GPU between steps; avoid .cpu()/.numpy() in the loop",
        ),
        action(
            Cost::High,
            "Avoid CPU/NVMe offload (ZeRO-Offload) in high-frequency training, or overlap it",
        ),
    ];
    f.experiment = experiment(
        "Pin the copied host memory (or keep the tensor on the GPU) (one change), profile again",
        "memcpy time share of the span falls",
        "trace memcpy share",
    );
    f.unseen.push(choices_unseen(t));
    Some(f)
}

/// `dynamic_shapes` from a trace: step times and the launched work change step to step.
pub fn dynamic_shapes(t: &TraceSummary, meta: &RuleMeta) -> Option<Finding> {
    let r = worst(t, |r| r.step_stats.iqr_over_p50)?;
    let st = &r.step_stats;
    if st.count < MIN_STEPS {
        return None;
    }
    let e1 = evidence(
        "step time IQR / p50 (trace)",
        st.iqr_over_p50,
        ">=",
        MIN_STEP_IQR,
        "ratio",
        None,
    );
    let swing = if st.kernels.p50 > 0.0 {
        st.kernels.p95 / st.kernels.p50
    } else {
        1.0
    };
    let e2 = evidence(
        "kernels per step p95 / p50",
        swing,
        ">=",
        KERNEL_COUNT_SWING,
        "ratio",
        None,
    );
    if !(e1.agrees && e2.agrees) {
        return None;
    }
    let mut f = meta.finding(
        0.85,
        format!(
            "Step times vary widely (IQR {:.0}% of the median){} and so does the launched work (kernels per step p95 {:.1}× p50): shapes change from step to step.",
            st.iqr_over_p50 * 100.0,
            rank_note(t, r),
            swing
        ),
        vec![e1, e2],
    );
    f.actions = vec![
        action(
            Cost::Low,
            "Bucket sequences by length (a length-grouped sampler) to cut padding and shape churn",
        ),
        action(
            Cost::Medium,
            "Pad to a few fixed shapes, then torch.compile (dynamic=False) or CUDA Graphs",
        ),
    ];
    f.experiment = experiment(
        "Pad every batch to a fixed length (one change), profile again",
        "step time IQR/p50 falls below 0.1 and kernels per step become constant",
        "trace step time IQR/p50",
    );
    f.unseen.push(choices_unseen(t));
    Some(f)
}
