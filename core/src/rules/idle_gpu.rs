//! `idle_gpu`: a GPU that did no work for the whole recording.
//!
//! No work is not waiting. A GPU whose utilization stays below
//! [`NO_WORK_UTIL`](crate::signals::NO_WORK_UTIL) in every sample is unused: it is not the
//! job's, the job asked for more GPUs than it uses, or a framework created a context (and
//! memory) on every visible GPU. It is named here and left out of every comparison between
//! GPUs (`Signals::job_devices`), so it is never taken for a GPU that waits for the others
//! or for a straggler's peer. A recording where no GPU works gets this finding alone.

use super::{action, evidence, experiment, gpus, Needs, Rule, RuleDoc, RuleMeta};
use crate::report::{Comparator, Cost, Finding, Severity};
use crate::signals::{DeviceSignals, Signals, NO_WORK_UTIL};

/// Memory used (MiB) above which an unused GPU holds an allocation: a CUDA context alone
/// takes a few hundred MiB (PyTorch's is ~300–500 MiB), while a GPU no process opened reads
/// a few MiB at most (the driver's own reservation is counted in `mem_used` on newer drivers,
/// `docs/report-format.md`, so it is measured against what an untouched GPU shows).
pub const HOLDS_MEMORY_MIB: f64 = 100.0;

static META: RuleMeta = RuleMeta {
    id: "idle_gpu",
    title: "GPU with no work",
    severity: Severity::Low,
    doc: RuleDoc {
        detects: "A GPU whose utilization stays below 5 % in every sample of the recording: it did no work at all, and is left out of every comparison between GPUs.",
        why: "A GPU with no work is unused, not waiting: either it is not the job's, the job was given more GPUs than it uses, or a framework allocates on every visible GPU. Treating it as a member of the job that waits would name a busy GPU as the straggler.",
        evidence: "Highest utilization sample against 5 %; memory held (a context or an allocation) and the processes seen on it.",
        first: "Hide GPUs the job does not use (`CUDA_VISIBLE_DEVICES`), or make the job use them (`torchrun --nproc_per_node`, the framework's device count); set the device before the first CUDA call so a framework does not allocate on every visible GPU.",
    },
};

/// See the module docs.
pub struct IdleGpu;

/// What an unused GPU holds, in words: memory and the processes seen on it.
fn holds(s: &Signals, d: &DeviceSignals) -> String {
    let procs = s.job_gpus.as_ref().map_or(0, |j| {
        j.shared.iter().filter(|p| p.device == d.index).count()
    });
    let mem = d.mem_used_max_mib.filter(|m| *m >= HOLDS_MEMORY_MIB);
    match (mem, procs) {
        (Some(m), 0) => format!("GPU {} holds {m:.0} MiB of memory", d.index),
        (Some(m), n) => format!(
            "GPU {} holds {m:.0} MiB of memory and {n} process{}",
            d.index,
            if n == 1 { "" } else { "es" }
        ),
        (None, 0) => format!("GPU {} holds no memory", d.index),
        (None, n) => format!(
            "GPU {} holds {n} process{} but no memory",
            d.index,
            if n == 1 { "" } else { "es" }
        ),
    }
}

impl Rule for IdleGpu {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn needs(&self) -> Needs {
        Needs::State
    }

    fn evaluate(&self, s: &Signals) -> Option<Finding> {
        let unused: Vec<&DeviceSignals> = s.unused_devices().collect();
        if unused.is_empty() {
            return None;
        }
        let devices: Vec<u32> = unused.iter().map(|d| d.index).collect();
        let all = s.job_devices().next().is_none();
        let mut ev = Vec::new();
        for d in &unused {
            ev.push(evidence(
                "util_gpu max",
                d.util_max.unwrap_or(f64::NAN),
                Comparator::Below,
                NO_WORK_UTIL,
                "%",
                Some(d.index),
            ));
            if let Some(m) = d.mem_used_max_mib {
                ev.push(evidence(
                    "mem_used max",
                    m,
                    Comparator::AtLeast,
                    HOLDS_MEMORY_MIB,
                    "MiB",
                    Some(d.index),
                ));
            }
        }
        let n = s.samples_per_gpu();
        let over = if n <= 1 {
            "in this snapshot".to_string()
        } else {
            format!("in any of its {n} samples over {:.0} s", s.duration_s)
        };
        let holding: Vec<String> = unused.iter().map(|d| holds(s, d)).collect();
        let summary = if all {
            format!(
                "No work on these GPUs: {} ran no kernel {over} (utilization below {NO_WORK_UTIL:.0}%), so there is no busy time to explain. {}.",
                gpus(&devices),
                holding.join("; ")
            )
        } else {
            format!(
                "{} did no work {over} (utilization below {NO_WORK_UTIL:.0}%) while the others worked: unused, not waiting, so it is left out of the comparison between GPUs. {}.",
                gpus(&devices),
                holding.join("; ")
            )
        };
        let mut f = META.finding(1.0, summary, ev);
        f.lost_share_basis = Some(if all {
            "not estimated: no GPU worked, so no busy time was lost; record while the job runs"
                .into()
        } else {
            "not estimated: whether the job was meant to use this GPU is not in the data; if it was, its whole share of the GPU-hours is unused".into()
        });
        f.devices = devices;
        f.actions = vec![
            action(Cost::Low, "If the job is not meant to use it, hide it: `CUDA_VISIBLE_DEVICES` lists only the GPUs the job uses"),
            action(Cost::Low, "If it is, check the launcher's device count (`torchrun --nproc_per_node`, `accelerate --num_processes`, the framework's `devices`/`gpus` setting) against the GPUs given"),
            action(Cost::Low, "If it holds memory but no work, a framework created a context on every visible GPU: call `torch.cuda.set_device(local_rank)` (or set `CUDA_VISIBLE_DEVICES` per rank) before the first CUDA call"),
        ];
        f.experiment = experiment(
            "Set CUDA_VISIBLE_DEVICES to the GPUs the job uses (one change)",
            "The unused GPU disappears from the recording and the job's throughput is unchanged; if the launcher's device count was wrong, raising it makes this GPU work",
            "util_gpu of each GPU; samples per second",
        );
        Some(f)
    }
}
