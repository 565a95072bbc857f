//! Findings from what the CPU was doing across the GPU's gaps ([`crate::trace::GapCauses`]):
//! the DataLoader, allocator calls, and the optimizer or operators running on the CPU. Each
//! states its share of the traced span (the time it cost) and of the GPU's idle time.

use super::{choices_unseen, rank_note, worst, MIN_CAUSE_SHARE, MIN_IDLE_SHARE};
use crate::report::{Cost, Evidence, Finding};
use crate::rules::{action, confidence, evidence, experiment, round, RuleMeta};
use crate::trace::summary::{RankSummary, TraceSummary};
use crate::trace::GapCauses;

/// `part(causes)` over the rank's span (0 without a span).
fn of_span(r: &RankSummary, part: impl Fn(&GapCauses) -> f64) -> f64 {
    if r.span_us > 0.0 {
        part(&r.gap_causes) / r.span_us
    } else {
        0.0
    }
}

/// The rank where `part` costs most, its share of the span, and the evidence that it is worth
/// a finding; `None` when it costs less than [`MIN_CAUSE_SHARE`] everywhere.
fn costly<'a>(
    t: &'a TraceSummary,
    what: &str,
    part: impl Fn(&GapCauses) -> f64 + Copy,
) -> Option<(&'a RankSummary, f64, Vec<Evidence>)> {
    let r = worst(t, |r| of_span(r, part))?;
    let share = of_span(r, part);
    let e = evidence(
        &format!("GPU idle time {what}, over the traced span"),
        share,
        ">=",
        MIN_CAUSE_SHARE,
        "fraction",
        None,
    );
    if !e.agrees {
        return None;
    }
    let g = &r.gap_causes;
    let e_idle = evidence(
        &format!("share of the GPU's idle time {what}"),
        g.of_idle(part(g)),
        ">=",
        0.0,
        "fraction",
        None,
    );
    let e_all = evidence(
        "GPU idle share of the traced span",
        r.idle_share,
        ">=",
        MIN_IDLE_SHARE,
        "fraction",
        None,
    );
    Some((r, share, vec![e, e_idle, e_all]))
}

/// The CPU ranges under the gaps whose names `keep` accepts, as "name (N ms)" text.
fn named(g: &GapCauses, keep: impl Fn(&str) -> bool) -> String {
    let v: Vec<String> = g
        .top_ranges
        .iter()
        .filter(|(n, _)| keep(n))
        .take(3)
        .map(|(n, us)| format!("{n} ({:.1} ms)", us / 1e3))
        .collect();
    v.join(", ")
}

fn finish(f: &mut Finding, t: &TraceSummary, share: f64) {
    f.lost_share = Some(round(share));
    f.unseen.push(choices_unseen(t));
}

/// `data_starvation` from a trace: the GPU idles while the CPU is inside the DataLoader.
pub fn data_starvation(t: &TraceSummary, meta: &RuleMeta) -> Option<Finding> {
    let (r, share, ev) = costly(t, "while the CPU is in the DataLoader", |g| g.data_us)?;
    let g = &r.gap_causes;
    let names = named(g, |n| n.to_ascii_lowercase().contains("dataloader"));
    let w = [(3.0, true), (1.0, ev[2].agrees)];
    let mut f = meta.finding(
        confidence(&w) * 0.95,
        format!(
            "The GPU{} is idle {:.0}% of the traced span; {:.0}% of the span ({:.0}% of the idle time) passes while the CPU waits in the DataLoader ({}): the input pipeline does not keep up.",
            rank_note(t, r),
            r.idle_share * 100.0,
            share * 100.0,
            g.of_idle(g.data_us) * 100.0,
            if names.is_empty() { "__next__".into() } else { names },
        ),
        ev,
    );
    f.actions = vec![
        action(Cost::Low, "Raise DataLoader num_workers toward the physical cores (a loader with num_workers=0 runs in the training loop), with persistent_workers=True and prefetch_factor 4–8"),
        action(Cost::Low, "pin_memory=True and .to(device, non_blocking=True)"),
        action(Cost::Medium, "Move decoding and augmentation off the loop: preprocess offline into an mmap-able format, or run the transforms on the GPU (DALI, torchvision v2 on tensors)"),
    ];
    f.experiment = experiment(
        "Double the DataLoader's num_workers (one change), profile again",
        "GPU idle time under the DataLoader falls and steps get shorter",
        "trace: idle time under the DataLoader over the span",
    );
    finish(&mut f, t, share);
    Some(f)
}

/// `allocator_stall` from a trace: the GPU idles across allocator calls.
pub fn allocator_stall(t: &TraceSummary, meta: &RuleMeta) -> Option<Finding> {
    let (r, share, ev) = costly(
        t,
        "across allocator calls (cudaMalloc/cudaFree, ...)",
        |g| g.allocator_us,
    )?;
    let g = &r.gap_causes;
    let names = named(g, crate::trace::activity::is_allocator_call);
    let w = [(3.0, true), (1.0, ev[2].agrees)];
    let mut f = meta.finding(
        confidence(&w) * 0.9,
        format!(
            "The GPU{} is idle {:.0}% of the traced span; {:.0}% of the span ({:.0}% of the idle time) is spent across device-memory allocation and release calls{}: each cudaFree waits for the GPU to drain, so the memory is not being reused from PyTorch's cache.",
            rank_note(t, r),
            r.idle_share * 100.0,
            share * 100.0,
            g.of_idle(g.allocator_us) * 100.0,
            if names.is_empty() { String::new() } else { format!(" ({names})") },
        ),
        ev,
    );
    f.actions = vec![
        action(Cost::Low, "Keep PyTorch's caching allocator on: unset PYTORCH_NO_CUDA_MEMORY_CACHING (and on ROCm the same variable)"),
        action(Cost::Low, "Remove torch.cuda.empty_cache() (and gc-driven frees) from the training loop"),
        action(Cost::Low, "Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True so varying sizes reuse one growing segment instead of new cudaMalloc/cudaFree pairs"),
        action(Cost::Medium, "Allocate buffers once and reuse them; pad or bucket shapes so sizes repeat"),
    ];
    f.experiment = experiment(
        "Run with the caching allocator on and without empty_cache in the loop (one change), profile again",
        "cudaMalloc/cudaFree calls per step fall to near 0 and the idle time across them disappears",
        "trace: idle time across allocator calls over the span",
    );
    finish(&mut f, t, share);
    Some(f)
}

/// `cpu_optimizer` from a trace: the GPU idles in long gaps under an optimizer step with no
/// GPU work (a CPU optimizer such as DeepSpeed's CPUAdam, ZeRO-Offload, or an optimizer whose
/// host side runs long between its launches) or under `aten::` operators computing on the
/// CPU.
pub fn cpu_optimizer(t: &TraceSummary, meta: &RuleMeta) -> Option<Finding> {
    let (r, share, ev) = costly(
        t,
        "while the optimizer step or operators run on the CPU with nothing queued on the GPU",
        |g| g.cpu_work_us,
    )?;
    let g = &r.gap_causes;
    let names = named(g, |n| {
        use crate::trace::activity::{classify, CpuKind};
        matches!(
            classify(n, f64::INFINITY),
            Some(CpuKind::Optimizer | CpuKind::CpuOp)
        )
    });
    let w = [(3.0, true), (1.0, ev[2].agrees)];
    let mut f = meta.finding(
        confidence(&w) * 0.85,
        format!(
            "The GPU{} is idle {:.0}% of the traced span; {:.0}% of the span ({:.0}% of the idle time) passes in gaps over 1 ms while the CPU runs the optimizer step or operators with nothing queued on the GPU{}: the optimizer (or other work) runs on the CPU, offloaded or as Python between few launches.",
            rank_note(t, r),
            r.idle_share * 100.0,
            share * 100.0,
            g.of_idle(g.cpu_work_us) * 100.0,
            if names.is_empty() { String::new() } else { format!(" ({names})") },
        ),
        ev,
    );
    f.actions = vec![
        action(Cost::Low, "Use a fused optimizer on the GPU (torch.optim.AdamW(fused=True), or foreach=True): one launch for all parameters instead of Python per parameter"),
        action(Cost::Medium, "If the optimizer is offloaded to the CPU for memory (DeepSpeed CPUAdam, ZeRO-Offload), keep it on the GPU when its state fits, or overlap the offloaded step with the next step's compute"),
        action(Cost::Medium, "torch.compile the optimizer step to cut its host time; move other CPU-side tensor work (metrics, masks, numpy) onto the GPU or out of the step"),
    ];
    f.experiment = experiment(
        "Run one step configuration with the optimizer on the GPU (offload off, smaller batch if memory requires) and profile again",
        "the GPU idle time under the optimizer step disappears",
        "trace: idle time under the optimizer step and CPU operators over the span",
    );
    finish(&mut f, t, share);
    Some(f)
}
