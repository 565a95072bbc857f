//! `launch_bound` from a profiler trace: the GPU idles while the host runs Python between
//! launches, with small kernels, a storm of them per step, and host waits behind them.

use super::super::traced::*;
use super::super::{action, confidence, evidence, experiment, round, RuleMeta};
use crate::report::{Comparator, Cost, Evidence, Finding};
use crate::trace::{RankSummary, TraceSummary, LAUNCH_GAP_MAX_US};

/// Share of the GPU's idle time that Python between launches (and host work the trace does
/// not name) must hold for `launch_bound`: a majority, as [`MIN_HOST_WAIT_SHARE`].
pub const MIN_LAUNCH_SHARE: f64 = 0.5;

/// Mean kernel duration (µs) below which kernels are "small" (the field guides: < ~20 µs).
pub const SMALL_KERNEL_MEAN_US: f64 = 20.0;

/// Kernels per step from which a step is a small-op storm (the field guides: thousands per step).
pub const STORM_KERNELS_PER_STEP: f64 = 1000.0;

/// Host time between launches over the GPU's idle time: gaps with only launches and Python
/// under them, and long gaps whose host work the trace does not name.
fn between_launches(r: &RankSummary) -> f64 {
    let g = &r.gap_causes;
    g.of_idle(g.launch_us + g.other_host_us)
}

/// `launch_bound` from a trace: the GPU idles while the host runs Python between launches.
pub(super) fn traced(t: &TraceSummary, meta: &RuleMeta) -> Option<Finding> {
    let r = worst(t, |r| r.idle_share * between_launches(r))?;
    let share = between_launches(r);
    let e_idle = evidence(
        "GPU idle share of the traced span",
        r.idle_share,
        Comparator::AtLeast,
        MIN_IDLE_SHARE,
        "fraction",
        None,
    );
    let e_hw = evidence(
        "share of the GPU's idle time that is host time between launches (no DataLoader, allocator call, sync or CPU work under it)",
        share,
        Comparator::AtLeast,
        MIN_LAUNCH_SHARE,
        "fraction",
        None,
    );
    if !(e_idle.agrees && e_hw.agrees) {
        return None;
    }
    // The idle share and the host-wait share fired the finding (both agree by the check
    // above) and weigh most.
    let mut ev = vec![e_idle.weighing(2.0), e_hw.weighing(2.0)];
    storm_evidence(r, &mut ev);
    let k = &r.kernels;
    let g = &r.gap_causes;
    let lost = if r.span_us > 0.0 {
        round((g.launch_us + g.other_host_us) / r.span_us)
    } else {
        0.0
    };
    let mut f = meta.finding(
        confidence(&ev, &[]).max(0.6) * 0.95,
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
    mark_traced(&mut f, t);
    Some(f)
}

/// The storm behind the gaps: short kernels, shorter than their launches, thousands per
/// step, the GPU busy a small part of the CPU's step, the main stream waiting on the host.
fn storm_evidence(r: &RankSummary, ev: &mut Vec<Evidence>) {
    let k = &r.kernels;
    let e = evidence(
        "mean kernel duration",
        k.duration_us.mean,
        Comparator::Below,
        SMALL_KERNEL_MEAN_US,
        "µs",
        None,
    );
    ev.push(e.weighing(1.0));
    if let Some(sh) = k.shorter_than_launch_share {
        let e = evidence(
            "share of kernels shorter than their launch call",
            sh,
            Comparator::AtLeast,
            0.5,
            "fraction",
            None,
        );
        ev.push(e.weighing(1.0));
    }
    if r.step_stats.count > 0 {
        let e = evidence(
            "kernels per step p50",
            r.step_stats.kernels.p50,
            Comparator::AtLeast,
            STORM_KERNELS_PER_STEP,
            "kernels",
            None,
        );
        ev.push(e.weighing(1.0));
        let e = evidence(
            "GPU busy / CPU step time p50",
            r.step_stats.gpu_cpu_ratio.p50,
            Comparator::AtMost,
            0.5,
            "ratio",
            None,
        );
        ev.push(e.weighing(1.0));
    }
    ev.extend(host_wait_evidence(r));
}
