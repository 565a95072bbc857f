//! Which of a node's GPUs are the job's: the decision behind `run.job_gpus`.
//!
//! NVML sees every GPU of the node; a job usually uses some of them. The decision, in order
//! (`docs/job-gpus.md`): the GPUs the user named (`--gpus`, the C ABI's `gpus`); else the
//! GPUs whose compute-process list held a process of the recorded process tree; else the
//! GPUs the recorded process's `CUDA_VISIBLE_DEVICES` names; else every GPU, saying so.
//!
//! A pure function of what was seen: the collector gathers the process lists and tells which
//! process is the job's (`collect::procwatch`); `gpuwhy diagnose --gpus` re-decides from a
//! report. Not for judging the GPUs: the rules read the result through
//! [`crate::signals::DeviceSignals::job`].

mod select;

pub use select::{cuda_order, parse_cuda_visible_devices, parse_gpus, resolve, Selector};

use crate::report::{DeviceInfo, ForeignProcess, JobGpus, JobGpusMethod};

/// What the decision needs to know of one GPU.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Gpu {
    /// NVML index.
    pub index: u32,
    /// `GPU-…` UUID (`MIG-…` for a MIG device).
    pub uuid: Option<String>,
    /// PCI bus id.
    pub pci_bus_id: Option<String>,
    /// Product name (GPUs of one name are taken to be equally fast).
    pub name: Option<String>,
    /// Total memory, MiB.
    pub memory_total_mib: Option<f64>,
    /// For a MIG device: the index of the GPU it is a slice of.
    pub parent: Option<u32>,
}

impl From<&DeviceInfo> for Gpu {
    fn from(d: &DeviceInfo) -> Gpu {
        Gpu {
            index: d.index,
            uuid: d.uuid.clone(),
            pci_bus_id: d.pci_bus_id.clone(),
            name: d.name.clone(),
            memory_total_mib: d.memory_total_mib,
            parent: d.mig.as_ref().map(|m| m.parent),
        }
    }
}

/// Whose a process in NVML's list is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// A process of the recorded tree (matched directly or through its `NSpid` ids).
    Job,
    /// A process this machine's `/proc` shows outside the recorded tree.
    Other,
    /// A pid this machine's `/proc` does not show (another PID namespace, or gone).
    Unresolved,
}

/// One process seen in a GPU's compute-process list during the run.
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    /// NVML index of the GPU.
    pub device: u32,
    /// Pid as NVML reported it.
    pub pid: u32,
    /// Whose it is.
    pub owner: Owner,
    /// `/proc/<pid>/comm`, when readable.
    pub name: Option<String>,
    /// Most memory it held, MiB.
    pub used_mib: Option<f64>,
    /// Mean share of the GPU's SM time in the driver's per-process samples, 0–1.
    pub sm_share: Option<f64>,
    /// First and last time seen, seconds.
    pub first_s: f64,
    /// Last time seen, seconds.
    pub last_s: f64,
}

/// The recorded process's CUDA environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobEnv {
    /// `CUDA_VISIBLE_DEVICES`, when set.
    pub cuda_visible_devices: Option<String>,
    /// `CUDA_DEVICE_ORDER`, when set.
    pub cuda_device_order: Option<String>,
}

impl JobEnv {
    /// This process's environment, read now (a Python trainer that sets
    /// `os.environ["CUDA_VISIBLE_DEVICES"]` before importing torch has set it here too).
    pub fn of_this_process() -> JobEnv {
        JobEnv {
            cuda_visible_devices: std::env::var("CUDA_VISIBLE_DEVICES").ok(),
            cuda_device_order: std::env::var("CUDA_DEVICE_ORDER").ok(),
        }
    }
}

/// Everything the decision reads.
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    /// The node's GPUs.
    pub gpus: &'a [Gpu],
    /// Processes seen in their compute-process lists.
    pub seen: &'a [Seen],
    /// The recorded process's environment.
    pub env: &'a JobEnv,
    /// GPUs the user named, which win.
    pub chosen: Option<&'a [Selector]>,
    /// Whether a recorded process tree was known at all (no command, no session: none).
    pub tree_known: bool,
    /// GPUs whose compute-process list could not be read, and why.
    pub unreadable: &'a [(u32, String)],
}

fn list(v: &[u32]) -> String {
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}

fn named(sel: &[Selector], gpus: &[Gpu], order: Option<&[u32]>) -> (Vec<u32>, Vec<String>) {
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for s in sel {
        let hit = resolve(s, gpus, order);
        if hit.is_empty() {
            missing.push(s.to_string());
        }
        found.extend(hit);
    }
    found.sort_unstable();
    found.dedup();
    (found, missing)
}

/// The job's GPUs by the override, the processes, or `CUDA_VISIBLE_DEVICES`, with the reason;
/// `Err` carries why each step that was tried did not decide.
fn choose(i: &Inputs<'_>) -> Result<(Vec<u32>, JobGpusMethod, String), Vec<String>> {
    let mut why_not = Vec::new();
    if let Some(sel) = i.chosen {
        let (found, missing) = named(sel, i.gpus, None);
        let mut reason = format!("GPU {} named by the user (--gpus)", list(&found));
        if !missing.is_empty() {
            reason += &format!("; not on this node: {}", missing.join(", "));
        }
        if !found.is_empty() {
            return Ok((found, JobGpusMethod::Override, reason));
        }
        why_not.push(format!(
            "--gpus named no GPU of this node ({})",
            missing.join(", ")
        ));
    }
    let mut mine: Vec<u32> = i
        .seen
        .iter()
        .filter(|s| s.owner == Owner::Job)
        .map(|s| s.device)
        .collect();
    mine.sort_unstable();
    mine.dedup();
    // A GPU's process list also shows the processes of its MIG devices: the slice the job
    // runs on is the job's, not the whole GPU.
    let sliced: Vec<u32> = i
        .gpus
        .iter()
        .filter(|g| mine.contains(&g.index))
        .filter_map(|g| g.parent)
        .collect();
    mine.retain(|g| !sliced.contains(g));
    if !mine.is_empty() {
        let pids: Vec<u32> = i
            .seen
            .iter()
            .filter(|s| s.owner == Owner::Job)
            .map(|s| s.pid)
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let reason = format!(
            "GPU {} listed process {} of the recorded process tree",
            list(&mine),
            list(&pids)
        );
        return Ok((mine, JobGpusMethod::Processes, reason));
    }
    why_not.push(if i.tree_known {
        "no GPU's compute-process list held a process of the recorded process tree (inside a container NVML reports host PIDs this /proc may not show)".into()
    } else {
        "no process tree was recorded (no command, no session)".into()
    });
    if !i.unreadable.is_empty() {
        let each: Vec<String> = i
            .unreadable
            .iter()
            .map(|(d, w)| format!("GPU {d}: {w}"))
            .collect();
        why_not.push(format!("process lists unreadable ({})", each.join("; ")));
    }
    match &i.env.cuda_visible_devices {
        None => why_not.push("CUDA_VISIBLE_DEVICES is not set".into()),
        Some(cvd) => match by_cuda_env(i, cvd) {
            Ok(found) => {
                let reason = format!("CUDA_VISIBLE_DEVICES={cvd} names GPU {}", list(&found));
                return Ok((found, JobGpusMethod::CudaVisibleDevices, reason));
            }
            Err(e) => why_not.push(e),
        },
    }
    Err(why_not)
}

fn by_cuda_env(i: &Inputs<'_>, cvd: &str) -> Result<Vec<u32>, String> {
    let sel = parse_cuda_visible_devices(cvd);
    let has_ordinal = sel.iter().any(|s| matches!(s, Selector::Index(_)));
    let order = if has_ordinal {
        match cuda_order(i.gpus, i.env.cuda_device_order.as_deref()) {
            Ok(o) => Some(o),
            Err(e) => return Err(format!("CUDA_VISIBLE_DEVICES={cvd} cannot be mapped: {e}")),
        }
    } else {
        None
    };
    // UUIDs resolve without an order; ordinals through CUDA's.
    let mut found = Vec::new();
    for s in &sel {
        found.extend(resolve(s, i.gpus, order.as_deref()));
    }
    found.sort_unstable();
    found.dedup();
    if found.is_empty() {
        let mig = if sel.iter().any(|s| matches!(s, Selector::Mig(_))) {
            " (no MIG device of this node has that UUID)"
        } else {
            ""
        };
        return Err(format!(
            "CUDA_VISIBLE_DEVICES={cvd} names no GPU of this node{mig}"
        ));
    }
    Ok(found)
}

/// Decides which GPUs are the job's, and lists the other processes on them.
pub fn decide(i: &Inputs<'_>) -> JobGpus {
    let all: Vec<u32> = i.gpus.iter().map(|g| g.index).collect();
    // A MIG-enabled GPU's work is its slices': with the slices taken, the GPU itself would
    // be counted twice (and it reports no utilization to compare).
    let sliced: Vec<u32> = i.gpus.iter().filter_map(|g| g.parent).collect();
    let (indices, method, reason) = match choose(i) {
        Ok(c) => c,
        Err(why_not) => (
            all.iter()
                .copied()
                .filter(|g| !sliced.contains(g))
                .collect(),
            JobGpusMethod::All,
            format!(
                "every GPU is taken for the job's{}: {}; name them with --gpus",
                if sliced.is_empty() {
                    ""
                } else {
                    " (the MIG slices, not their GPUs)"
                },
                why_not.join("; ")
            ),
        ),
    };
    let others: Vec<u32> = all.into_iter().filter(|g| !indices.contains(g)).collect();
    JobGpus {
        shared: foreign(i, &indices),
        indices,
        others,
        method,
        reason,
    }
}

/// Processes not of the job on the job's GPUs. Only said when a process of the job was found
/// in NVML's lists: then NVML's pids are this `/proc`'s, and a pid outside the tree is
/// another's; otherwise the job's own processes could be among the unmatched ones.
fn foreign(i: &Inputs<'_>, job: &[u32]) -> Vec<ForeignProcess> {
    if !i.seen.iter().any(|s| s.owner == Owner::Job) {
        return Vec::new();
    }
    i.seen
        .iter()
        .filter(|s| s.owner != Owner::Job && job.contains(&s.device))
        .map(|s| {
            let total = i
                .gpus
                .iter()
                .find(|g| g.index == s.device)
                .and_then(|g| g.memory_total_mib)
                .filter(|t| *t > 0.0);
            ForeignProcess {
                device: s.device,
                pid: s.pid,
                name: s.name.clone(),
                used_mib: s.used_mib,
                memory_share: s.used_mib.zip(total).map(|(u, t)| u / t),
                sm_share: s.sm_share,
                first_s: s.first_s,
                last_s: s.last_s,
            }
        })
        .collect()
}

/// `job` re-decided with GPUs the user names after the recording (`gpuwhy diagnose
/// --gpus`): the recorded other processes are kept for the GPUs that stay the job's.
pub fn override_report(devices: &[DeviceInfo], job: Option<&JobGpus>, sel: &[Selector]) -> JobGpus {
    let gpus: Vec<Gpu> = devices.iter().map(Gpu::from).collect();
    let env = JobEnv::default();
    let mut out = decide(&Inputs {
        gpus: &gpus,
        seen: &[],
        env: &env,
        chosen: Some(sel),
        tree_known: false,
        unreadable: &[],
    });
    if let Some(j) = job {
        out.shared = j
            .shared
            .iter()
            .filter(|p| out.indices.contains(&p.device))
            .cloned()
            .collect();
    }
    out
}

#[cfg(test)]
mod tests;
