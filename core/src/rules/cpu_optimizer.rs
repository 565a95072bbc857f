//! `cpu_optimizer`: the GPU idles while the optimizer step runs on the CPU.

use super::{Rule, RuleDoc, RuleMeta};
use crate::report::{Finding, Severity};
use crate::signals::Signals;

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
        crate::trace::findings::cpu_optimizer(s.trace.as_ref()?, &META)
    }
}
