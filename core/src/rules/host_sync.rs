//! `host_sync`: the training loop synchronizes with the GPU several times per step.

use super::{Rule, RuleDoc, RuleMeta};
use crate::report::{Finding, Severity};
use crate::signals::Signals;

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
        crate::trace::findings::host_sync(s.trace.as_ref()?, &META)
    }
}
