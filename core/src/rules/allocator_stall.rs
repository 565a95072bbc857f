//! `allocator_stall`: the GPU idles across device-memory allocation and release calls.

use super::{Rule, RuleDoc, RuleMeta};
use crate::report::{Finding, Severity};
use crate::signals::Signals;

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
        crate::trace::findings::allocator_stall(s.trace.as_ref()?, &META)
    }
}
