//! `cpu_optimizer`: the GPU idles while the optimizer step runs on the CPU.

use super::traced::*;
use super::{action, confidence, experiment};
use super::{Rule, RuleDoc, RuleMeta};
use crate::report::Cost;
use crate::report::{Finding, Severity};
use crate::signals::Signals;
use crate::trace::TraceSummary;

static META: RuleMeta = RuleMeta {
    id: "cpu_optimizer",
    title: "GPU waits while the optimizer or other work runs on the CPU",
    severity: Severity::High,
    doc: RuleDoc {
        detects: "A profiler trace whose GPU gaps over 1 ms under an optimizer step with no GPU work (Optimizer.step#… or DeepSpeed's CPUAdam/CPUAdagrad/CPULion, with the GPU in such gaps for at least half of it) or under aten:: operators of 100 µs or more that start no runtime call (computing on the CPU) cost 5 % or more of the traced span (torch-tb-profiler's 5 % bar for acting on a CPU-side cost; docs/trace-format.md, \"What the CPU was doing\").",
        why: "An optimizer offloaded to the CPU (ZeRO-Offload, CPUAdam) or one that runs Python per parameter between its launches holds the GPU idle for the whole step; with large models that is a large share of every step.",
        evidence: "GPU idle time in long gaps under the optimizer step or CPU operators over the traced span and over the GPU's idle time; the GPU idle share of the span; the ranges by name with their time inside gaps.",
        first: "A fused GPU optimizer (fused=True or foreach=True); keep offloaded optimizer states on the GPU when they fit, or overlap the offloaded step with compute; torch.compile the step.",
    },
};

/// See the module docs.
pub struct CpuOptimizer;

impl Rule for CpuOptimizer {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn evaluate(&self, s: &Signals) -> Option<Finding> {
        traced(s.trace.as_ref()?, &META)
    }
}

// Evidence from a profiler trace, tried first when one is attached.

/// `cpu_optimizer` from a trace: the GPU idles in long gaps under an optimizer step with no
/// GPU work (a CPU optimizer such as DeepSpeed's CPUAdam, ZeRO-Offload, or an optimizer whose
/// host side runs long between its launches) or under `aten::` operators computing on the
/// CPU.
fn traced(t: &TraceSummary, meta: &RuleMeta) -> Option<Finding> {
    let (r, share, ev) = costly(
        t,
        "while the optimizer step or operators run on the CPU with nothing queued on the GPU",
        |g| g.cpu_work_us,
    )?;
    let g = &r.gap_causes;
    let names = named(g, |n| {
        use crate::trace::{classify, CpuKind};
        matches!(
            classify(n, f64::INFINITY),
            Some(CpuKind::Optimizer | CpuKind::CpuOp)
        )
    });
    let mut f = meta.finding(
        confidence(&ev, &[]) * 0.85,
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
