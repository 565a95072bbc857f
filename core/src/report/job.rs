//! `run.job_gpus`: which of the sampled GPUs are the job's, how that was decided, and the
//! processes of others found on the job's GPUs (see `docs/job-gpus.md`).

use serde::{Deserialize, Serialize};

/// How the job's GPUs were told apart from the other GPUs of the node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum JobGpusMethod {
    /// The user named them (`--gpus`, the C ABI's `gpus`).
    Override,
    /// NVML's compute-process lists held a process of the recorded process tree.
    Processes,
    /// The recorded process's `CUDA_VISIBLE_DEVICES`.
    CudaVisibleDevices,
    /// Nothing told them apart: every GPU is taken for the job's.
    #[default]
    All,
}

/// What a MIG device is a slice of (`devices[].mig`; see `docs/job-gpus.md`, "MIG").
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct MigDevice {
    /// Report index of the GPU it is a slice of.
    pub parent: u32,
    /// Its slot on that GPU (`nvmlDeviceGetMigDeviceHandleByIndex`).
    pub slot: u32,
    /// Its GPU instance id (GPM samples per GPU instance).
    pub gpu_instance: Option<u32>,
    /// Its compute instance id.
    pub compute_instance: Option<u32>,
}

/// A process that is not the job's, seen on one of the job's GPUs.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct ForeignProcess {
    /// NVML index of the GPU.
    pub device: u32,
    /// Process id as NVML reports it (the driver's PID namespace: the host's).
    pub pid: u32,
    /// Process name from `/proc/<pid>/comm`, when this machine's `/proc` shows it.
    pub name: Option<String>,
    /// Most GPU memory it held while seen, MiB (`null` where the driver does not say).
    pub used_mib: Option<f64>,
    /// That memory over the GPU's total.
    pub memory_share: Option<f64>,
    /// Its mean share of the GPU's SM time over the driver's per-process samples
    /// (`nvmlDeviceGetProcessUtilization`), 0–1; `null` where the driver gives none (MIG,
    /// older drivers, no sample while it ran).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sm_share: Option<f64>,
    /// First time it was seen, seconds since the run started.
    pub first_s: f64,
    /// Last time it was seen, seconds since the run started.
    pub last_s: f64,
}

/// Which GPUs are the job's (`run.job_gpus`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct JobGpus {
    /// NVML indices of the job's GPUs.
    pub indices: Vec<u32>,
    /// NVML indices of the other GPUs of the node: sampled and shown, never judged or
    /// compared with the job's.
    pub others: Vec<u32>,
    /// How the job's GPUs were decided.
    pub method: JobGpusMethod,
    /// The decision in a sentence (what matched, or why nothing did).
    pub reason: String,
    /// Processes not of the job seen on the job's GPUs (empty when none, or when the job's
    /// own processes could not be told from others').
    pub shared: Vec<ForeignProcess>,
}

impl JobGpus {
    /// Whether GPU `index` is one of the job's (GPUs the decision did not list are).
    pub fn is_job(&self, index: u32) -> bool {
        !self.others.contains(&index)
    }
}
