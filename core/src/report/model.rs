//! The report's data types (schema `gpuwhy.report/1`), documented in `docs/report-format.md`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::comparison::BaselineComparison;
use super::finding::{Finding, Verdict};
use super::ranks::RanksData;
use super::series::{DeviceSeries, SeriesData};
use super::steps::StepsData;

/// The tool that wrote a report.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Tool {
    /// Always `gpuwhy`.
    pub name: String,
    /// The crate version that wrote the report.
    pub version: String,
}

impl Default for Tool {
    fn default() -> Self {
        Tool {
            name: "gpuwhy".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// What ran, where and when.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RunInfo {
    /// Wall-clock start, milliseconds since the Unix epoch (for aligning ranks).
    pub start_unix_ms: i64,
    /// The same instant as RFC 3339 UTC text.
    pub start: String,
    /// Seconds from start to the last sample.
    pub duration_s: f64,
    /// Host name of the machine.
    pub host: String,
    /// The command that was recorded, when gpuwhy started it.
    pub command: Option<Vec<String>>,
    /// Exit status of that command, when it exited.
    pub exit_code: Option<i32>,
    /// A free-form label given by the user.
    pub label: Option<String>,
    /// Rank of this process in a distributed job, when known.
    pub rank: Option<u32>,
    /// Number of ranks in the job, when known.
    pub world_size: Option<u32>,
    /// Rank of this process among the ranks on its node (`LOCAL_RANK`), when known.
    pub local_rank: Option<u32>,
    /// The training loop's data loader settings, when its binding reported them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_loader: Option<DataLoaderInfo>,
    /// Profiler traces read into the diagnosis with the samples (paths as given).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub traces: Vec<String>,
    /// Where the GPU data came from: `nvml`, `simulator`, `dmon`, `csv`, `none`.
    pub source: String,
    /// False when the recording was cut short (a partial file recovered after a crash).
    pub complete: bool,
    /// Why it ended: `command exited`, `duration reached`, `interrupted`, `crashed (recovered from journal)`.
    pub ended_by: Option<String>,
    /// Sampling interval, seconds.
    pub interval_s: f64,
    /// Which GPUs are the job's and why (absent: every GPU is taken for the job's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job_gpus: Option<super::job::JobGpus>,
}

/// The settings of the loop's data loader that decide whether it keeps up with the GPU, as
/// the binding read them from the loader (PyTorch's `DataLoader`); each absent when unknown.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct DataLoaderInfo {
    /// Worker processes (0: batches are made in the training process itself).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_workers: Option<u32>,
    /// Whether batches are copied into page-locked memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pin_memory: Option<bool>,
    /// Batches each worker prepares ahead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefetch_factor: Option<u32>,
    /// Whether workers outlive an epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub persistent_workers: Option<bool>,
    /// Samples per batch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch_size: Option<u64>,
}

/// Which NVML library was used.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct NvmlInfo {
    /// Path of the loaded library.
    pub path: String,
    /// `nvmlSystemGetDriverVersion`.
    pub driver_version: Option<String>,
    /// `nvmlSystemGetNVMLVersion`.
    pub nvml_version: Option<String>,
    /// CUDA driver version, e.g. `12.4`.
    pub cuda_driver_version: Option<String>,
    /// Each binding and the symbol it resolved to (`null` when absent).
    pub symbols: BTreeMap<String, Option<String>>,
}

/// Whether a metric works on a device, and why not.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Capability {
    /// True when at least the probe read it successfully.
    pub available: bool,
    /// Why it is not available (`NOT_SUPPORTED from nvmlDeviceGetPcieThroughput`, `symbol absent`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The NVML function that answered it last (`nvmlDeviceGetFieldValues` when it came in
    /// the batched field call); absent for data not read through NVML.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
}

impl Capability {
    /// An available metric.
    pub fn available() -> Self {
        Capability {
            available: true,
            reason: None,
            via: None,
        }
    }

    /// An unavailable metric and why.
    pub fn unavailable(reason: impl Into<String>) -> Self {
        Capability {
            available: false,
            reason: Some(reason.into()),
            via: None,
        }
    }
}

/// One GPU's static facts and capabilities.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct DeviceInfo {
    /// NVML index.
    pub index: u32,
    /// Product name.
    pub name: Option<String>,
    /// `GPU-…` UUID (`MIG-…` for a MIG device).
    pub uuid: Option<String>,
    /// PCI bus id.
    pub pci_bus_id: Option<String>,
    /// PCI device id (device << 16 | vendor).
    pub pci_device_id: Option<u32>,
    /// Architecture name (`hopper`, `ampere`, ...).
    pub architecture: Option<String>,
    /// CUDA compute capability, e.g. `9.0`.
    pub compute_capability: Option<String>,
    /// Total device memory, MiB.
    pub memory_total_mib: Option<f64>,
    /// Device memory reserved by the driver and firmware, MiB (`nvmlDeviceGetMemoryInfo_v2`;
    /// absent when only the v1 call answered). Part of `mem_used`, which is total − free.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_reserved_mib: Option<f64>,
    /// Enforced power limit, W.
    pub power_limit_w: Option<f64>,
    /// Maximum SM clock, MHz.
    pub max_sm_clock_mhz: Option<f64>,
    /// Maximum memory clock, MHz.
    pub max_mem_clock_mhz: Option<f64>,
    /// Maximum graphics clock, MHz.
    pub max_graphics_clock_mhz: Option<f64>,
    /// Maximum PCIe generation of device and slot.
    pub pcie_max_gen: Option<u32>,
    /// Maximum PCIe width of device and slot.
    pub pcie_max_width: Option<u32>,
    /// Temperature at which the GPU slows down, °C.
    pub temp_slowdown_c: Option<f64>,
    /// Temperature at which the GPU shuts down, °C.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temp_shutdown_c: Option<f64>,
    /// Maximum PCIe generation of the GPU alone (`pcie_max_gen` is that of GPU and slot
    /// together, the lower of the two).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie_device_max_gen: Option<u32>,
    /// Maximum PCIe width of the GPU alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie_device_max_width: Option<u32>,
    /// Number of NVLinks.
    pub nvlink_links: Option<u32>,
    /// Whether GPM metrics were collected.
    pub gpm: bool,
    /// Per metric name: available or why not.
    pub capabilities: BTreeMap<String, Capability>,
    /// Seconds into the run when the GPU was lost (fell off the bus), if it was.
    pub lost_at_s: Option<f64>,
    /// For a MIG device: the GPU it is a slice of and its instance (absent for a GPU).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mig: Option<super::job::MigDevice>,
    /// Health counters (ECC, remapped rows, retired pages, NVLink errors), when read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<super::health::DeviceHealth>,
}

/// Static facts about the host: what the machine is, enough to tell reports from different
/// hosts apart and to size advice such as "data-loader workers up to the number of physical
/// cores". The sampler reads them once per recording (`host::host_facts`).
///
/// A string that could not be read is empty.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct HostFacts {
    /// The host's name (`/proc/sys/kernel/hostname`).
    pub hostname: String,
    /// The kernel release (`/proc/sys/kernel/osrelease`), e.g. `6.8.0-45-generic`.
    pub kernel: String,
    /// The CPU model (`model name` of `/proc/cpuinfo`).
    pub cpu_model: String,
    /// Logical CPUs online, as `host::cpu_count_logical` counts them.
    pub logical_cpus: usize,
    /// Physical cores: distinct (physical id, core id) pairs of `/proc/cpuinfo`. `None` where
    /// the kernel does not say (most ARM machines, some virtual machines).
    pub physical_cores: Option<usize>,
    /// Installed memory (`MemTotal`), in bytes; 0 when `/proc/meminfo` could not be read.
    pub mem_total_bytes: u64,
}

/// Host facts and samples.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct HostData {
    /// Static facts.
    pub facts: HostFacts,
    /// Unit of each column.
    pub units: BTreeMap<String, String>,
    /// The samples.
    #[serde(flatten)]
    pub data: SeriesData,
    /// Metrics the host could not provide, and why.
    pub unavailable: BTreeMap<String, String>,
}

/// Something that happened at one instant.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Event {
    /// Seconds since the run started.
    pub t_s: f64,
    /// NVML index of the device, for device events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<u32>,
    /// `xid`, `gpu_lost`, `eval`, `checkpoint`, ...
    pub kind: String,
    /// Numeric detail (the XID number).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<u64>,
    /// Human-readable detail.
    #[serde(default)]
    pub detail: String,
}

/// A transient NVML error, counted.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Fault {
    /// NVML index of the device, when the call was about one.
    pub device: Option<u32>,
    /// The NVML function.
    pub function: String,
    /// The `nvmlReturn_t` code.
    pub code: u32,
    /// The code's name.
    pub name: String,
    /// How many calls failed this way.
    pub count: u64,
    /// First failure, seconds since start.
    pub first_s: f64,
    /// Last failure, seconds since start.
    pub last_s: f64,
}

/// The recorder's own cost.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Overhead {
    /// Sampler ticks run.
    pub ticks: u64,
    /// Ticks that started later than one interval after they were due (the sampler fell behind).
    pub late_ticks: u64,
    /// Ticks skipped to catch up after falling behind.
    pub skipped_ticks: u64,
    /// Times the sampler thread woke to sample: fewer than `ticks` where ticks with nothing
    /// to read were slept through (`null` in reports from before it was counted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wakeups: Option<u64>,
    /// CPU time of the sampler thread, seconds (`null` where the OS does not say).
    pub sampler_cpu_s: Option<f64>,
    /// Sampler CPU time per tick, µs.
    pub cpu_per_tick_us: Option<f64>,
    /// Sampler CPU time per GPU per tick, µs (the library-side cost of watching one GPU);
    /// `null` without GPUs.
    pub cpu_per_gpu_tick_us: Option<f64>,
    /// NVML calls made.
    pub nvml_calls: u64,
    /// Mean wall time of one NVML call, µs.
    pub nvml_call_mean_us: f64,
    /// Slowest NVML call, µs.
    pub nvml_call_max_us: f64,
    /// Name of the slowest NVML call.
    pub nvml_call_max_function: Option<String>,
    /// Heap bytes of the sample storage at the end.
    pub memory_bytes: u64,
    /// Upper bound of the sample storage, bytes.
    pub memory_bound_bytes: u64,
    /// Events not kept because the event store was full.
    pub events_dropped: u64,
}

/// A whole report.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Report {
    /// `gpuwhy.report/1`.
    pub schema: String,
    /// The writer.
    #[serde(default)]
    pub tool: Tool,
    /// What ran.
    #[serde(default)]
    pub run: RunInfo,
    /// The NVML library used, when one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvml: Option<NvmlInfo>,
    /// Why there are no GPU metrics, when there are none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_absent_reason: Option<String>,
    /// The top finding in one line.
    #[serde(default)]
    pub verdict: Verdict,
    /// Findings, most important first.
    #[serde(default)]
    pub findings: Vec<Finding>,
    /// GPUs: static facts and capabilities.
    #[serde(default)]
    pub devices: Vec<DeviceInfo>,
    /// Per-GPU samples.
    #[serde(default)]
    pub series: Vec<DeviceSeries>,
    /// Host facts and samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<HostData>,
    /// Step and phase timings, when step markers were used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<StepsData>,
    /// Events in time order.
    #[serde(default)]
    pub events: Vec<Event>,
    /// Transient NVML errors, counted.
    #[serde(default)]
    pub faults: Vec<Fault>,
    /// The recorder's own cost.
    #[serde(default)]
    pub overhead: Overhead,
    /// Per-rank summaries, in a job report written by `gpuwhy merge` (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<RanksData>,
    /// The comparison with a baseline report, when the session named one (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<BaselineComparison>,
    /// The windows of older rows kept at full resolution, with why (absent when none, and in
    /// reports written before windows were listed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub windows: Vec<super::KeptWindow>,
}
