//! `allocator_stall`: the GPU idles across device-memory allocation and release calls.

use super::traced::*;
use super::{action, confidence, experiment};
use super::{Rule, RuleDoc, RuleMeta};
use crate::report::Cost;
use crate::report::{Finding, Severity};
use crate::signals::Signals;
use crate::trace::TraceSummary;

static META: RuleMeta = RuleMeta {
    id: "allocator_stall",
    title: "GPU waits on memory allocation calls",
    severity: Severity::High,
    doc: RuleDoc {
        detects: "A profiler trace whose GPU gaps under cudaMalloc/cudaFree (hipMalloc/hipFree, cudaHostAlloc/cudaFreeHost, cuMem* driver calls), or after one the gap opened in, cost 5 % or more of the traced span (torch-tb-profiler's 5 % bar for acting on a CPU-side cost; docs/trace-format.md, \"What the CPU was doing\").",
        why: "cudaFree synchronises the device and every allocation call takes the driver's time; PyTorch's caching allocator exists to keep them out of the training loop. Seen every step, they mean the cache is off (PYTORCH_NO_CUDA_MEMORY_CACHING=1), emptied (torch.cuda.empty_cache() in the loop) or defeated by ever-changing sizes.",
        evidence: "GPU idle time across allocator calls over the traced span and over the GPU's idle time; the GPU idle share of the span; the allocator calls by name with their time inside gaps.",
        first: "Keep the caching allocator on (unset PYTORCH_NO_CUDA_MEMORY_CACHING), remove empty_cache() from the loop, set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, reuse buffers and fixed shapes.",
    },
};

/// See the module docs.
pub struct AllocatorStall;

impl Rule for AllocatorStall {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn evaluate(&self, s: &Signals) -> Option<Finding> {
        traced(s.trace.as_ref()?, &META)
    }
}

// Evidence from a profiler trace, tried first when one is attached.

/// `allocator_stall` from a trace: the GPU idles across allocator calls.
fn traced(t: &TraceSummary, meta: &RuleMeta) -> Option<Finding> {
    let (r, share, ev) = costly(
        t,
        "across allocator calls (cudaMalloc/cudaFree, ...)",
        |g| g.allocator_us,
    )?;
    let g = &r.gap_causes;
    let names = named(g, crate::trace::is_allocator_call);
    let mut f = meta.finding(
        confidence(&ev, &[]) * 0.9,
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
