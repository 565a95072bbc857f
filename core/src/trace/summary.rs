//! The trace summary: what the rules and the user read of a profiler trace. Times are µs.

use serde::Serialize;

/// The inclusion choices that change the numbers (HTA makes different ones by default;
/// `docs/references.md#hta-defaults`). Every summary states them.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Choices {
    /// Drop the last `ProfilerStep` (HTA does by default: it is often cut by the profiler's
    /// stop). gpuwhy keeps it by default.
    pub drop_last_step: bool,
    /// Count CUPTI synchronization records (`cuda_sync`, e.g. "Stream Wait Event") as GPU
    /// busy time, as HTA does. gpuwhy does not by default: they are waits, not work.
    pub sync_events_as_kernels: bool,
    /// Drop GPU operations whose correlation id matches no runtime call, as HTA does.
    /// gpuwhy keeps them by default (they ran on the GPU all the same).
    pub drop_unmatched: bool,
    /// Gap (µs) below which an idle gap that is not a host wait counts as kernel wait:
    /// HTA's `consecutive_kernel_delay` as it applies it (30, on µs timestamps).
    pub kernel_wait_us: f64,
    /// Round every event to whole µs as HTA's trace parser does on traces with fractional
    /// timestamps: the start up (`ceil(ts)`), the end down (`floor(ts + dur)`), the duration
    /// their difference (negative for an event under 1 µs that holds no whole µs; HTA
    /// keeps it so, and so does gpuwhy under this choice). gpuwhy keeps the written values
    /// by default. `docs/trace-format.md`, "Inclusion choices".
    pub round_timestamps: bool,
}

impl Default for Choices {
    fn default() -> Self {
        Choices {
            drop_last_step: false,
            sync_events_as_kernels: false,
            drop_unmatched: false,
            kernel_wait_us: 30.0,
            round_timestamps: false,
        }
    }
}

impl Choices {
    /// HTA 0.5's defaults, for comparing numbers with it.
    pub fn hta() -> Self {
        Choices {
            drop_last_step: true,
            sync_events_as_kernels: true,
            drop_unmatched: true,
            kernel_wait_us: 30.0,
            round_timestamps: true,
        }
    }

    /// The choices as sentences, for the summary.
    pub fn sentences(&self) -> Vec<String> {
        let yes = |b: bool| if b { "dropped" } else { "kept" };
        vec![
            format!("last ProfilerStep {}", yes(self.drop_last_step)),
            format!(
                "CUDA sync records (cuda_sync) {} GPU busy time",
                if self.sync_events_as_kernels {
                    "counted as"
                } else {
                    "not counted as"
                }
            ),
            format!(
                "GPU operations without a matching runtime call {}",
                yes(self.drop_unmatched)
            ),
            format!(
                "gaps shorter than {} µs that are not host waits are kernel waits",
                self.kernel_wait_us
            ),
            if self.round_timestamps {
                "timestamps rounded to whole µs as HTA does (start up, end down)".into()
            } else {
                "timestamps used as written (fractional µs), not rounded".into()
            },
        ]
    }
}

/// A distribution: percentiles and mean.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Spread {
    /// How many values.
    pub n: usize,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// Mean.
    pub mean: f64,
}

/// HTA's idle-time breakdown (definitions in `docs/references.md#hta-breakdowns`).
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct IdleBreakdown {
    /// Gaps where the runtime call launching the next operation started after the previous
    /// one ended: the CPU did not enqueue work fast enough.
    pub host_wait_us: f64,
    /// Other gaps shorter than [`Choices::kernel_wait_us`]: launch overhead between kernels.
    pub kernel_wait_us: f64,
    /// The rest: cross-stream waits, long launch delays, unknown.
    pub other_us: f64,
}

impl IdleBreakdown {
    /// Total idle.
    pub fn total_us(&self) -> f64 {
        self.host_wait_us + self.kernel_wait_us + self.other_us
    }

    /// Host wait over total idle (`None` without idle time).
    pub fn host_wait_share(&self) -> Option<f64> {
        let t = self.total_us();
        (t > 0.0).then(|| self.host_wait_us / t)
    }
}

/// One CUDA stream.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct StreamSummary {
    /// Device index.
    pub device: i32,
    /// Stream id.
    pub stream: i32,
    /// GPU operations on it.
    pub ops: u64,
    /// First start to last end.
    pub span_us: f64,
    /// Union of its operations.
    pub busy_us: f64,
    /// Idle gaps between its operations, broken down.
    pub idle: IdleBreakdown,
}

/// Kernel counts and durations.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct KernelStats {
    /// Kernels (compute and communication).
    pub count: u64,
    /// Kernel duration distribution, µs.
    pub duration_us: Spread,
    /// Share of kernels shorter than [`super::SHORT_KERNEL_US`].
    pub short_share: f64,
    /// Share of launched kernels whose GPU time is shorter than the runtime call that launched
    /// them (HTA's "short GPU kernels").
    pub shorter_than_launch_share: Option<f64>,
}

/// CUDA launch statistics (through correlation ids).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct LaunchStats {
    /// GPU operations matched to a runtime call.
    pub matched: u64,
    /// GPU operations whose correlation id matches no runtime call.
    pub unmatched: u64,
    /// Runtime launch call duration, µs.
    pub runtime_us: Spread,
    /// Launch delay: GPU start minus runtime call start, µs.
    pub delay_us: Spread,
    /// Runtime calls longer than 50 µs (HTA's `runtime_cutoff`).
    pub runtime_outliers: u64,
    /// Launch delays longer than 100 µs (HTA's `launch_delay_cutoff`).
    pub delay_outliers: u64,
}

/// Host synchronizations.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct SyncStats {
    /// All synchronizing calls.
    pub total: u64,
    /// `cudaDeviceSynchronize` (and context syncs).
    pub device_sync: u64,
    /// `cudaStreamSynchronize`.
    pub stream_sync: u64,
    /// `cudaEventSynchronize`.
    pub event_sync: u64,
    /// Synchronous `cudaMemcpy*` (not `Async`).
    pub sync_memcpy: u64,
    /// `cudaMemcpyAsync` from or to pageable memory (synchronous in effect).
    pub pageable_async_memcpy: u64,
    /// Where the counts come from: `cuda_runtime` calls or `cuda_sync` records.
    pub source: String,
}

/// One profiler step.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct StepSummary {
    /// `ProfilerStep#N`'s N.
    pub step: i64,
    /// CPU (wall) duration of the step's range, µs.
    pub cpu_us: f64,
    /// Union of the step's GPU operations, µs.
    pub gpu_busy_us: f64,
    /// First start to last end of the step's GPU operations, µs.
    pub gpu_span_us: f64,
    /// Communication kernel time (union), µs.
    pub comm_us: f64,
    /// Kernels launched in the step.
    pub kernels: u64,
    /// Synchronizing calls in the step.
    pub syncs: u64,
    /// Start of the step's last communication kernel, µs after the step's first GPU operation.
    pub last_comm_offset_us: Option<f64>,
}

/// Step statistics.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct StepStats {
    /// Steps analysed.
    pub count: usize,
    /// CPU step time, µs.
    pub cpu_us: Spread,
    /// GPU busy per step over CPU step time.
    pub gpu_cpu_ratio: Spread,
    /// Kernels per step.
    pub kernels: Spread,
    /// Synchronizing calls per step.
    pub syncs: Spread,
    /// CPU step time interquartile range over its median.
    pub iqr_over_p50: f64,
    /// CPU step time p95 over p50.
    pub p95_over_p50: f64,
}

/// A kernel name's total.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct TopKernel {
    /// Kernel name.
    pub name: String,
    /// Launches.
    pub count: u64,
    /// Total GPU time, µs.
    pub total_us: f64,
    /// Mean duration, µs.
    pub mean_us: f64,
    /// Share of all kernel time.
    pub share: f64,
}

/// One rank (one trace file).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct RankSummary {
    /// The file it came from (for messages).
    pub source: String,
    /// `distributedInfo.rank`, else the file's position.
    pub rank: u32,
    /// `distributedInfo.world_size`.
    pub world_size: Option<u32>,
    /// `deviceProperties` names.
    pub devices: Vec<String>,
    /// Events read.
    pub events: u64,
    /// First GPU start to last GPU end, µs.
    pub span_us: f64,
    /// Union of all GPU operations (per [`Choices`]), µs.
    pub busy_us: f64,
    /// `1 − busy / span`.
    pub idle_share: f64,
    /// Union of compute kernels, µs.
    pub compute_us: f64,
    /// Union of communication (NCCL) kernels, µs.
    pub comm_us: f64,
    /// Union of memcpy and memset, µs.
    pub memory_us: f64,
    /// Union of host↔device copies (memcpy HtoD/DtoH, pageable or pinned), µs.
    pub host_copy_us: f64,
    /// Communication time during which compute also ran, µs.
    pub comm_overlap_us: f64,
    /// `comm_overlap / comm` (HTA's comm/comp overlap); `None` without communication.
    pub comm_overlap_share: Option<f64>,
    /// Per stream.
    pub streams: Vec<StreamSummary>,
    /// Idle breakdown summed over streams.
    pub idle: IdleBreakdown,
    /// Idle breakdown of the busiest stream (the main compute stream).
    pub main_stream_idle: IdleBreakdown,
    /// Kernels.
    pub kernels: KernelStats,
    /// Launches.
    pub launch: LaunchStats,
    /// Synchronizations.
    pub syncs: SyncStats,
    /// Per step.
    pub steps: Vec<StepSummary>,
    /// Over steps.
    pub step_stats: StepStats,
    /// Top kernels by total time.
    pub top_kernels: Vec<TopKernel>,
    /// The GPU idle time by what the CPU was doing across each gap.
    pub gap_causes: super::gaps::GapCauses,
}

/// Across ranks: communication start skew and the likely straggler.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct SkewSummary {
    /// Steps present in every rank.
    pub steps: usize,
    /// Per step, the spread (max − min over ranks) of the last communication kernel's start
    /// offset in the step; median over steps, µs.
    pub comm_start_skew_p50_us: f64,
    /// That skew over the median step time.
    pub skew_over_step: f64,
    /// The rank that starts the last collective latest most often (the others wait for it).
    pub straggler: Option<u32>,
    /// Share of steps in which it was the latest.
    pub straggler_share: f64,
    /// Per rank, median CPU step time, µs.
    pub step_p50_by_rank: Vec<(u32, f64)>,
}

/// Everything read from one or more trace files of one run.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct TraceSummary {
    /// Inclusion choices in force.
    pub choices: Option<Choices>,
    /// The choices as sentences.
    pub choices_text: Vec<String>,
    /// One per file.
    pub ranks: Vec<RankSummary>,
    /// For two or more ranks.
    pub skew: Option<SkewSummary>,
}
