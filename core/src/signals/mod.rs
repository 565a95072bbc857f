//! Signals: the features rules read, derived from a report's samples and events.
//!
//! Rules never look at NVML, files or raw columns; they read these numbers. Everything here
//! is a plain function of the report, so the browser viewer computes the same signals.
//! Long runs: time shares and mean utilization are exact over buckets ([`timeshare`]);
//! distributions (medians, percentiles) take each bucket as one sample at its mean, which
//! keeps medians close but narrows the tails.

pub mod busy;
pub mod cross;
mod device;
mod gpm_activity;
pub mod phase_activity;
pub mod ranks;
pub mod reasons;
pub mod stagger;
pub mod stats;
pub mod steps;
pub mod thresholds;
pub mod timeshare;

pub use device::{
    pcie_lane_mbs, DeviceSignals, BUSY_UTIL, DIP_UTIL, LOAD_UTIL, NEAR_ZERO_UTIL, NO_WORK_UTIL,
    PCIE_BUSY_SHARE,
};

use crate::report::{Event, Report};
use stats::{dist, Dist};

/// Signals across GPUs.
#[derive(Debug, Clone, Default)]
pub struct CrossSignals {
    /// Median utilization of each GPU that has one: (device index, p50).
    pub util_p50_by_device: Vec<(u32, f64)>,
    /// Largest minus smallest per-GPU median utilization, points.
    pub util_p50_spread: Option<f64>,
    /// The GPU furthest from the median of the per-GPU medians, and its distance in points.
    pub util_outlier: Option<(u32, f64)>,
    /// Median SM clock under load per GPU.
    pub clock_p50_by_device: Vec<(u32, f64)>,
    /// Of the sample times at which at least one GPU dips (util < 20 %), the share at which
    /// every GPU dips: near 1 when GPUs wait on each other together.
    pub dip_agreement: Option<f64>,
    /// Number of sample times at which at least one GPU dips.
    pub dip_samples: usize,
    /// Each job GPU's activity over the run, time-weighted (see [`cross`]).
    pub activity: Vec<cross::GpuActivity>,
    /// Name of the clock metric in [`cross::GpuActivity::clock_loaded`] (`sm_clock`, or
    /// `graphics_clock` where only that was recorded, as in `nvidia-smi dmon` logs).
    pub clock_metric: &'static str,
    /// Sample times at which every job GPU has a utilization sample.
    pub aligned_samples: usize,
    /// Of those, the share at which every job GPU idles (utilization below [`DIP_UTIL`]).
    pub all_idle_share: Option<f64>,
    /// Of those, the share at which every job GPU waits (idle, or well below its own level).
    pub all_wait_share: Option<f64>,
    /// The GPU most often working alone while every other job GPU waits (idle, or well below
    /// its own level: see [`cross::GpuActivity::wait_share`]), and the share of aligned sample
    /// times at which it does.
    pub lone_working: Option<(u32, f64)>,
    /// Whether the job GPUs idle together or in turn (see [`stagger`]).
    pub stagger: Option<stagger::Stagger>,
}

/// What the rules read of the step markers (derived from the step signals).
#[derive(Debug, Clone, Default)]
pub struct StepView {
    /// Steps recorded.
    pub count: u64,
    /// Step time p50, seconds.
    pub step_p50_s: f64,
    /// Step time p95, seconds.
    pub step_p95_s: f64,
    /// Data-phase share of step time, p50 over steps.
    pub data_share_p50: Option<f64>,
    /// Data-phase share of step time, p95 over steps.
    pub data_share_p95: Option<f64>,
    /// Backward over forward time, p50 (GPU-measured when attached, else CPU).
    pub bwd_fwd_ratio_p50: Option<f64>,
    /// GPU-measured forward+backward over CPU-side forward+backward, p50 (when attached).
    pub gpu_cpu_ratio_p50: Option<f64>,
    /// Step time interquartile range over p50.
    pub iqr_over_p50: f64,
    /// Step time p95 over p50.
    pub p95_over_p50: f64,
    /// Dominant repeat of the step-time series.
    pub step_period: Option<stats::Period>,
    /// Step-time outliers (far above p50).
    pub outliers: u64,
    /// Typical spacing of outliers, in steps, when they repeat.
    pub outlier_period_steps: Option<f64>,
    /// Coefficient of variation of the outlier spacing (small = regular).
    pub outlier_spacing_cv: Option<f64>,
    /// Share of near-zero-utilization samples that fall inside data phases.
    pub dips_in_data_share: Option<f64>,
    /// Data-phase time over total step time, all steps (0–1): what the data wait costs.
    pub data_share_total: Option<f64>,
    /// Forward plus backward time over total step time, all steps (0–1).
    pub fwd_bwd_share_total: Option<f64>,
    /// Optimizer-phase time over total step time, all steps (0–1).
    pub optimizer_share_total: Option<f64>,
    /// Time the step-time outliers spent above the median cycle, over the total cycle time
    /// (0–1): what the stalls cost.
    pub stall_excess_share: f64,
    /// Every marked phase by name with its total time over the total step time (0–1), for
    /// rules that read a phase the loop names itself (a copy phase, an all-reduce).
    pub phase_totals: Vec<(String, f64)>,
}

impl StepView {
    /// The total share of the first marked phase whose name is one of `names`.
    pub fn phase_total(&self, names: &[&str]) -> Option<(String, f64)> {
        self.phase_totals
            .iter()
            .find(|(n, _)| names.contains(&n.to_ascii_lowercase().as_str()))
            .cloned()
    }
}

impl From<&steps::StepSignals> for StepView {
    fn from(st: &steps::StepSignals) -> StepView {
        let data = st.phases.iter().find(|p| p.name == "data");
        StepView {
            count: st.count,
            step_p50_s: st.step_p50_s,
            step_p95_s: st.step_p95_s,
            data_share_p50: data.map(|p| p.p50),
            data_share_p95: data.map(|p| p.p95),
            // GPU-measured times say what the GPU did; CPU times include launch overhead.
            bwd_fwd_ratio_p50: st.gpu_bwd_fwd_ratio_p50.or(st.bwd_fwd_ratio_p50),
            gpu_cpu_ratio_p50: st.gpu_cpu_ratio_p50,
            iqr_over_p50: st.iqr_over_p50.unwrap_or(0.0),
            p95_over_p50: st.p95_over_p50,
            step_period: st.period,
            outliers: st.outliers.count as u64,
            outlier_period_steps: st.outliers.period_steps,
            outlier_spacing_cv: st.outliers.spacing_cv,
            dips_in_data_share: st.dips_in_data_share,
            data_share_total: data.map(|p| p.total).filter(|t| t.is_finite()),
            fwd_bwd_share_total: fwd_bwd_total(st),
            optimizer_share_total: st
                .phases
                .iter()
                .find(|p| p.name == "optimizer")
                .map(|p| p.total)
                .filter(|t| t.is_finite()),
            stall_excess_share: st.outliers.excess_share,
            phase_totals: st
                .phases
                .iter()
                .filter(|p| p.total.is_finite())
                .map(|p| (p.name.clone(), p.total))
                .collect(),
        }
    }
}

/// Forward plus backward time over total step time, when either phase was marked.
fn fwd_bwd_total(st: &steps::StepSignals) -> Option<f64> {
    let parts: Vec<f64> = st
        .phases
        .iter()
        .filter(|p| p.name == "forward" || p.name == "backward")
        .map(|p| p.total)
        .filter(|t| t.is_finite())
        .collect();
    (!parts.is_empty()).then(|| parts.iter().sum::<f64>().min(1.0))
}

/// Everything the rules read.
#[derive(Debug, Clone, Default)]
pub struct Signals {
    /// Per GPU.
    pub devices: Vec<DeviceSignals>,
    /// Across GPUs.
    pub cross: CrossSignals,
    /// Run length, seconds.
    pub duration_s: f64,
    /// Sample interval, seconds.
    pub interval_s: f64,
    /// Events of the run.
    pub events: Vec<Event>,
    /// Why there are no GPU metrics, when there are none.
    pub gpu_absent_reason: Option<String>,
    /// Where the samples came from (`run.source`: `nvml`, `dmon`, `csv`, …).
    pub source: String,
    /// Host CPU busy (all cores), when sampled.
    pub host_cpu: Option<Dist>,
    /// Host disk read throughput, B/s, when sampled.
    pub host_disk_read: Option<Dist>,
    /// CPU of the recorded process tree, % of one core, when sampled.
    pub host_proc_cpu: Option<Dist>,
    /// Step-marker signals, when steps were recorded.
    pub steps: Option<StepView>,
    /// What the samples show during the marked phases, when steps were recorded.
    pub phase_activity: Option<phase_activity::PhaseActivity>,
    /// Profiler-trace summary, when a trace of the run was read (see [`crate::trace`]).
    pub trace: Option<crate::trace::TraceSummary>,
    /// Which GPUs are the job's and the other processes on them (`run.job_gpus`), when the
    /// report says.
    pub job_gpus: Option<crate::report::JobGpus>,
    /// The loop's data loader settings (`run.data_loader`), when its binding reported them.
    pub data_loader: Option<crate::report::DataLoaderInfo>,
}

impl Signals {
    /// Derives the signals of a report.
    pub fn from_report(report: &Report) -> Signals {
        let devices: Vec<DeviceSignals> = report
            .devices
            .iter()
            .map(|info| {
                let series = report.series.iter().find(|s| s.device == info.index);
                let mut d = DeviceSignals::compute(
                    info,
                    series.map(|s| &s.data),
                    &report.events,
                    report.run.interval_s,
                );
                d.job = report
                    .run
                    .job_gpus
                    .as_ref()
                    .is_none_or(|j| j.is_job(info.index));
                d
            })
            .collect();
        // A GPU with no work is unused, not waiting: it is compared with no other.
        let job: Vec<DeviceSignals> = devices
            .iter()
            .filter(|d| d.job && !d.no_work)
            .cloned()
            .collect();
        let mut cross = cross_signals(&job);
        cross::extend(report, &job, &mut cross);
        let host_col = |name: &str| {
            report
                .host
                .as_ref()
                .and_then(|h| h.data.metrics.get(name))
                .and_then(|c| dist(c.present().map(f64::from)))
        };
        Signals {
            cross,
            duration_s: report.run.duration_s,
            interval_s: report.run.interval_s,
            events: report.events.clone(),
            // The verdict says why in one line; the places tried stay in the report.
            gpu_absent_reason: report
                .gpu_absent_reason
                .as_deref()
                .map(|r| crate::headline(r).to_string()),
            source: report.run.source.clone(),
            host_cpu: host_col("cpu_total"),
            host_disk_read: host_col("disk_read"),
            host_proc_cpu: host_col("proc_cpu"),
            steps: steps::StepSignals::from_report(report).map(|st| StepView::from(&st)),
            phase_activity: phase_activity::PhaseActivity::from_report(report),
            trace: None,
            job_gpus: report.run.job_gpus.clone(),
            data_loader: report.run.data_loader.clone(),
            devices,
        }
    }

    /// The job's devices that have utilization samples: [`Signals::job_devices`], under the
    /// name the rules have always read. A GPU the report marks as not the job's is judged by
    /// no rule.
    pub fn sampled_devices(&self) -> impl Iterator<Item = &DeviceSignals> {
        self.job_devices()
    }

    /// Sampled devices the job uses (`job` true) and that did some work: the only ones the
    /// performance rules judge or compare. A GPU with no work in the whole recording
    /// ([`DeviceSignals::no_work`]) is unused, not waiting; `idle_gpu` names it.
    pub fn job_devices(&self) -> impl Iterator<Item = &DeviceSignals> {
        self.devices
            .iter()
            .filter(|d| d.util.is_some() && d.job && !d.no_work)
    }

    /// The job's sampled devices, those with no work included: for rules about a GPU's
    /// state (its link, its errors), which holds whether it works or not.
    pub fn state_devices(&self) -> impl Iterator<Item = &DeviceSignals> {
        self.devices.iter().filter(|d| d.util.is_some() && d.job)
    }

    /// The job's sampled devices that did no work in the whole recording. A GPU the
    /// recording found not to be the job's (no process of it there, `--gpus`,
    /// `CUDA_VISIBLE_DEVICES`) is shown and never judged, idle or not.
    pub fn unused_devices(&self) -> impl Iterator<Item = &DeviceSignals> {
        self.devices
            .iter()
            .filter(|d| d.util.is_some() && d.no_work && d.job)
    }

    /// Utilization samples of the GPU with the most: 1 for a snapshot (`nvidia-smi -q`),
    /// a handful for a short log.
    pub fn samples_per_gpu(&self) -> usize {
        self.devices
            .iter()
            .filter_map(|d| d.util.map(|u| u.n))
            .max()
            .unwrap_or(0)
    }
}

/// Aligns the GPUs' dip flags by sample time (the sampler reads every GPU in the same tick,
/// so times match exactly) and measures how often a dip on one is a dip on all.
fn dip_agreement(devices: &[DeviceSignals], out: &mut CrossSignals) {
    let live: Vec<&DeviceSignals> = devices
        .iter()
        .filter(|d| d.dips.iter().any(|x| x.1.is_some()))
        .collect();
    if live.len() < 2 {
        return;
    }
    let mut by_t: std::collections::BTreeMap<u64, (usize, usize)> =
        std::collections::BTreeMap::new();
    for d in &live {
        for (t, dip) in &d.dips {
            if let Some(dip) = dip {
                let e = by_t.entry((t * 1e4).round() as u64).or_default();
                e.0 += 1;
                e.1 += usize::from(*dip);
            }
        }
    }
    let n = live.len();
    let (mut any, mut all) = (0usize, 0usize);
    for (seen, dipping) in by_t.values() {
        if *seen == n && *dipping > 0 {
            any += 1;
            all += usize::from(*dipping == n);
        }
    }
    out.dip_samples = any;
    if any > 0 {
        out.dip_agreement = Some(all as f64 / any as f64);
    }
}

fn cross_signals(devices: &[DeviceSignals]) -> CrossSignals {
    let util: Vec<(u32, f64)> = devices
        .iter()
        .filter_map(|d| d.util.map(|u| (d.index, u.p50)))
        .collect();
    let clocks: Vec<(u32, f64)> = devices
        .iter()
        .filter_map(|d| d.sm_clock_loaded.map(|c| (d.index, c.p50)))
        .collect();
    let mut out = CrossSignals {
        util_p50_by_device: util.clone(),
        clock_p50_by_device: clocks,
        ..Default::default()
    };
    dip_agreement(devices, &mut out);
    out.stagger = stagger::Stagger::compute(devices);
    if util.len() >= 2 {
        let lo = util.iter().map(|u| u.1).fold(f64::INFINITY, f64::min);
        let hi = util.iter().map(|u| u.1).fold(f64::NEG_INFINITY, f64::max);
        out.util_p50_spread = Some(hi - lo);
        let mut sorted: Vec<f64> = util.iter().map(|u| u.1).collect();
        sorted.sort_by(f64::total_cmp);
        let med = stats::percentile_sorted(&sorted, 0.5);
        out.util_outlier = util
            .iter()
            .map(|(d, v)| (*d, (v - med).abs()))
            .max_by(|a, b| a.1.total_cmp(&b.1));
    }
    out
}
