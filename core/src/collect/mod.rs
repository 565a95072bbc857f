//! Recording a live run: NVML and `/proc` sampled by a background thread into a
//! [`Recording`], with a journal flushed to disk so a killed run loses at most one flush
//! interval.
//!
//! Not for analysis: stop the [`Recorder`], turn the recording into a
//! [`crate::report::Report`] and run [`crate::analysis::diagnose`].

mod buffered;
mod clock;
mod cost;
mod facts;
mod fields;
mod gpu;
mod health;
mod hook;
mod host_rows;
mod init;
mod journal_buf;
mod live;
mod mig;
mod nsmap;
mod probe;
mod procwatch;
mod ready;
mod reasons;
mod sampler;
mod slow;
mod smshare;

pub use buffered::{ENV_SAMPLES, RECHECK_EVERY, STEADY_RATIO, TICK_TRAFFIC_MBS};
pub use clock::{Clock, ManualClock, ScaledClock, Stopper};
pub use cost::{thread_cpu_seconds, CallStats};
pub use facts::nvml_info;
pub use fields::ENV_FIELDS;
pub use gpu::SLOW_PERIOD_S;
pub use health::{counter as health_counter, HealthWatch, HEALTH_PERIOD_S, MAX_HEALTH_READINGS};
pub use hook::SamplerHook;
pub use init::SLOW_INIT_S;
pub use live::LiveGpu;
pub use probe::{probe, Probe};
pub use procwatch::{classify, parse_nspid, ProcWatch, MAX_SEEN};
pub use sampler::{Recorder, RecordingAccess};

use std::path::PathBuf;

use crate::report::RunInfo;

/// Shortest sampling interval accepted, seconds.
pub const MIN_INTERVAL_S: f64 = 0.01;
/// Longest sampling interval accepted, seconds.
pub const MAX_INTERVAL_S: f64 = 10.0;
/// Default sampling interval, seconds.
///
/// NVML's utilization counter covers a window of 1/6 s to 1 s depending on the product
/// (`docs/references.md#nvml-utilization-period`). Sampling every 100 ms reads each new
/// window at least once even on the fastest products (≥ 1.6 samples per 1/6 s window), so
/// short dips are not aliased away,
/// while costing a handful of cheap calls per GPU per tick. Faster sampling only re-reads
/// the same window.
pub const DEFAULT_INTERVAL_S: f64 = 0.1;
/// Default seconds between journal flushes: the most a killed recording can lose.
pub const DEFAULT_FLUSH_S: f64 = 2.0;
/// Host metrics are read at most this often, seconds (`/proc` reads cost ~100 µs).
pub const HOST_PERIOD_S: f64 = 0.5;

/// How to record.
#[derive(Debug, Clone)]
pub struct RecorderConfig {
    /// Seconds between samples, [`MIN_INTERVAL_S`]..=[`MAX_INTERVAL_S`].
    pub interval_s: f64,
    /// Explicit NVML path (else `GPUWHY_NVML_PATH`, else the system's).
    pub nvml_path: Option<PathBuf>,
    /// Do not load NVML at all (step timings and host only).
    pub no_gpu: bool,
    /// Read GPM metrics on GPUs that have them. Off for users who run Nsight or DCGM
    /// profiling at the same time (they contend for the same counters).
    pub gpm: bool,
    /// Sample the host from `/proc`.
    pub host: bool,
    /// Process whose tree's CPU use is recorded.
    pub target_pid: Option<u32>,
    /// Journal file for crash recovery.
    pub journal: Option<PathBuf>,
    /// Seconds between journal flushes.
    pub flush_s: f64,
    /// Clock speed factor (simulated GPUs only; 1 for real runs).
    pub time_scale: f64,
    /// Run facts to start from (label, command, rank, world size, source).
    pub run: RunInfo,
    /// Full-resolution rows kept per GPU ([`crate::recording::FULL_ROWS_DEFAULT`]).
    pub full_rows: usize,
    /// Coarse buckets kept per GPU afterwards ([`crate::recording::COARSE_BUCKETS_DEFAULT`]).
    pub coarse_buckets: usize,
    /// How the job's GPUs are told apart from the node's others (`run.job_gpus`).
    pub job: JobConfig,
    /// Buffered mode: utilization and the SM clock read once a second from the driver's
    /// sample buffers, one call per GPU per tick between (`docs/nvml-loading.md`, "Buffered
    /// mode"). Default: on, unless `GPUWHY_NVML_SAMPLES=0`.
    pub nvml_samples: bool,
}

/// What tells the job's GPUs apart (`docs/job-gpus.md`).
#[derive(Debug, Clone, Default)]
pub struct JobConfig {
    /// GPUs the user names (`--gpus`, the C ABI's `gpus`): NVML indices, `GPU-` or `MIG-` UUIDs,
    /// comma-separated. Wins over everything else.
    pub gpus: Option<String>,
    /// The job's root process when it is not `target_pid` (an in-process session: its own
    /// process, whose CPU is not sampled as a tree).
    pub pid: Option<u32>,
    /// The job's `CUDA_VISIBLE_DEVICES` and `CUDA_DEVICE_ORDER`; `None`: this process's
    /// environment when the recording stops.
    pub env: Option<crate::jobgpus::JobEnv>,
    /// The `/proc` of the PID namespace NVML reports pids in, when it is not this
    /// process's (inside a container: the host's, mounted e.g. at `/host/proc`); NVML's
    /// pids are mapped through its `NSpid` lines (`docs/job-gpus.md`).
    pub host_proc: Option<std::path::PathBuf>,
}

impl Default for RecorderConfig {
    fn default() -> Self {
        RecorderConfig {
            interval_s: DEFAULT_INTERVAL_S,
            nvml_path: None,
            no_gpu: false,
            gpm: true,
            host: true,
            target_pid: None,
            journal: None,
            flush_s: DEFAULT_FLUSH_S,
            time_scale: 1.0,
            run: RunInfo::default(),
            full_rows: crate::recording::FULL_ROWS_DEFAULT,
            coarse_buckets: crate::recording::COARSE_BUCKETS_DEFAULT,
            job: JobConfig::default(),
            nvml_samples: buffered::samples_enabled(),
        }
    }
}

impl RecorderConfig {
    /// Checks the ranges.
    pub fn validate(&self) -> crate::Result<()> {
        if !(MIN_INTERVAL_S..=MAX_INTERVAL_S).contains(&self.interval_s) {
            return Err(crate::Error::InvalidArgument(format!(
                "sampling interval {} s is outside {MIN_INTERVAL_S}–{MAX_INTERVAL_S} s",
                self.interval_s
            )));
        }
        if let Some(g) = &self.job.gpus {
            crate::jobgpus::parse_gpus(g).map_err(crate::Error::InvalidArgument)?;
        }
        Ok(())
    }
}
