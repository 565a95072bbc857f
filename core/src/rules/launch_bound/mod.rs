//! `launch_bound`: the CPU cannot issue kernels fast enough.

mod traced;

use super::{
    action, confidence, evidence, experiment, round, verb, Rule, RuleDoc, RuleMeta, Weight,
};
use crate::report::Comparator;
use crate::report::Evidence;
use crate::report::{Cost, Severity};
use crate::signals::{DeviceSignals, Signals, StepView};
use traced::traced;

/// GPU-measured forward+backward over CPU-side forward+backward (p50) at or below which the
/// GPU is idle half the time the CPU spends issuing work: kernels are shorter than their
/// launches (HTA's "short GPU kernels" are those with GPU time < CPU launch time).
pub const MAX_GPU_CPU_RATIO: f64 = 0.5;
/// GPU/CPU forward+backward ratio up to which a miss of [`MAX_GPU_CPU_RATIO`] is still
/// reported, with lower confidence: a GPU working only ~60 % of its forward and backward
/// passes loses a third of them to launches, worth naming though less certain.
pub const NEAR_GPU_CPU_RATIO: f64 = 0.7;
/// Confidence scale of such a near-threshold reading.
pub const NEAR_SCALE: f64 = 0.5;
/// Utilization band (%) of a launch-bound job seen from samples: steady mid-level
/// utilization (docs/references.md#field-guides: 40–60 %; widened to 35–80 for noise).
pub const UTIL_BAND: (f64, f64) = (35.0, 80.0);
/// Largest p95 − p5 spread (points) of "steady" utilization.
pub const MAX_SPREAD: f64 = 25.0;
/// Data-phase share p50 below which input is not the cause.
pub const NO_DATA_WAIT_SHARE: f64 = 0.10;
/// CPU of the recorded process (% of one core) from which the launching thread is saturated.
pub const SATURATED_THREAD: f64 = 90.0;

static META: RuleMeta = RuleMeta {
    id: "launch_bound",
    title: "CPU cannot launch kernels fast enough",
    severity: Severity::High,
    doc: RuleDoc {
        detects: "GPU-measured compute time far below the CPU time spent issuing it; or, from samples, steady mid-level utilization with no input wait and a saturated launching thread.",
        why: "A storm of small operations costs more to launch than to run; the GPU idles between kernels however fast it is.",
        evidence: "GPU over CPU forward+backward time (when GPU times are attached); util_gpu p50 and spread; data-phase share; CPU of the recorded process.",
        first: "Remove host syncs (.item(), print of tensors, torch.cuda.synchronize in the loop), then torch.compile, then CUDA Graphs (needs static shapes).",
    },
};

/// See the module docs.
pub struct LaunchBound;

impl Rule for LaunchBound {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn evaluate(&self, s: &Signals) -> Option<crate::report::Finding> {
        // A profiler trace measures this directly: trust it first.
        if let Some(f) = s.trace.as_ref().and_then(|t| traced(t, &META)) {
            return Some(f);
        }
        let steps = s.steps.as_ref();
        let mut g = Gathered::default();
        ratio_evidence(steps, &mut g);
        let data_wait = steps.and_then(|st| st.data_share_p50);
        if let Some(d) = data_wait {
            let e = evidence(
                "data phase share of step p50",
                d,
                Comparator::Below,
                NO_DATA_WAIT_SHARE,
                "fraction",
                None,
            );
            g.ev.push(e.weighing(1.0));
        }
        for d in s.sampled_devices() {
            steady_mid(d, &mut g);
        }
        if g.near {
            g.primary = true;
        } else if !g.primary {
            samples_only(s, data_wait, &mut g)?;
        } else if !g.devices.is_empty() {
            g.others.push(STEADY_MID);
        }
        if g.devices.is_empty() {
            g.devices = s.sampled_devices().map(|d| d.index).collect();
        }
        Some(finding(s, g))
    }
}

/// GPUs held at steady mid-level utilization (their two evidence items together): a prior
/// that agrees, since only such GPUs are gathered.
const STEADY_MID: Weight = Weight::Prior(1.0);

/// The evidence gathered so far (the signals checked weighed), the weights that belong to no
/// evidence item, and whether the GPU phase times decide (`primary`) or nearly do (`near`).
#[derive(Default)]
struct Gathered {
    ev: Vec<Evidence>,
    others: Vec<Weight>,
    devices: Vec<u32>,
    primary: bool,
    near: bool,
}

/// The GPU-measured over CPU forward+backward time, when GPU phase times were attached.
fn ratio_evidence(steps: Option<&StepView>, g: &mut Gathered) {
    let Some(r) = steps.and_then(|st| st.gpu_cpu_ratio_p50) else {
        return;
    };
    let e = evidence(
        "GPU-measured / CPU forward+backward time p50",
        r,
        Comparator::AtMost,
        MAX_GPU_CPU_RATIO,
        "ratio",
        None,
    );
    g.primary = e.agrees;
    g.near = !g.primary && r <= NEAR_GPU_CPU_RATIO;
    if g.primary || g.near {
        // The ratio at or near its threshold fired the rule: a prior, since near the
        // threshold it counts for the finding although the comparison does not hold.
        g.others.push(Weight::Prior(3.0));
    }
    // A ratio near 1 does not clear the CPU: CUDA events recorded around a phase also time
    // the gaps between its kernels, so a launch-starved stream reads as busy. The samples
    // can still show the storm.
    g.ev.push(e);
}

/// A GPU held at steady mid-level utilization without a sawtooth (which would be an input
/// wait), from its samples.
fn steady_mid(d: &DeviceSignals, g: &mut Gathered) {
    let (Some(u), Some(spread)) = (d.util, d.util_spread) else {
        return;
    };
    let dev = Some(d.index);
    let steady_mid = (UTIL_BAND.0..UTIL_BAND.1).contains(&u.p50) && spread <= MAX_SPREAD;
    let no_sawtooth = d
        .util_near_zero
        .is_none_or(|z| z < super::data_starvation::MIN_IDLE_SHARE);
    if steady_mid && no_sawtooth {
        g.devices.push(d.index);
        g.ev.push(evidence(
            "util_gpu p50 (steady, mid-level)",
            u.p50,
            Comparator::Below,
            UTIL_BAND.1,
            "%",
            dev,
        ));
        g.ev.push(evidence(
            "util_gpu p95 − p5",
            spread,
            Comparator::AtMost,
            MAX_SPREAD,
            "points",
            dev,
        ));
    }
}

/// Samples only: steady mid utilization, no sign of an input wait, and a saturated
/// launching thread are all needed; `None` when one is missing.
fn samples_only(s: &Signals, data_wait: Option<f64>, g: &mut Gathered) -> Option<()> {
    if g.devices.is_empty() || data_wait.is_some_and(|d| d >= NO_DATA_WAIT_SHARE) {
        return None;
    }
    g.others.push(STEADY_MID);
    let cpu = s.host_proc_cpu?;
    let e = evidence(
        "recorded process CPU p50",
        cpu.p50,
        Comparator::AtLeast,
        SATURATED_THREAD,
        "% of one core",
        None,
    );
    if !e.agrees {
        return None;
    }
    // Agrees by the check above.
    g.ev.push(e.weighing(1.0));
    Some(())
}

/// What the launch gaps cost: the GPU idles (1 − ratio) of the forward and backward passes,
/// which are their share of the step time; from samples, an upper bound.
fn cost(s: &Signals, ratio: Option<f64>, devices: &[u32]) -> (Option<f64>, String) {
    let fwd_bwd = s.steps.as_ref().and_then(|st| st.fwd_bwd_share_total);
    match (ratio, fwd_bwd) {
        (Some(r), Some(fb)) => (
            Some(round(((1.0 - r) * fb).clamp(0.0, 1.0))),
            "time-weighted: (1 − GPU/CPU forward+backward time p50) × forward+backward time over total step time".to_string(),
        ),
        (Some(r), None) => (
            Some(round((1.0 - r).clamp(0.0, 1.0))),
            "upper bound: 1 − GPU/CPU forward+backward time p50 (the phases' share of the step was not measured)".to_string(),
        ),
        _ => {
            let idle: Vec<f64> = s
                .sampled_devices()
                .filter(|d| devices.contains(&d.index))
                .filter_map(|d| d.busy.map(|b| b.idle_share))
                .collect();
            if idle.is_empty() {
                (None, "not estimated: no GPU-measured phase times".to_string())
            } else {
                (
                    Some(round(idle.iter().sum::<f64>() / idle.len() as f64)),
                    "upper bound: time-weighted idle share (1 − mean utilization) of the GPUs concerned".to_string(),
                )
            }
        }
    }
}

/// The finding from what was gathered, its confidence scaled by how directly it was seen.
fn finding(s: &Signals, g: Gathered) -> crate::report::Finding {
    let steps = s.steps.as_ref();
    let ratio = steps
        .and_then(|st| st.gpu_cpu_ratio_p50)
        .filter(|_| g.primary);
    let (lost, basis) = cost(s, ratio, &g.devices);
    let (lost, basis) = cap_by_idle(s, &g.devices, lost, basis);
    let (primary, near, devices) = (g.primary, g.near, g.devices);
    let scale = if near {
        0.9 * NEAR_SCALE
    } else if primary {
        0.9
    } else {
        0.55
    };
    let mut f = META.finding(
        confidence(&g.ev, &g.others) * scale,
        match ratio {
            Some(r) => format!("{} idle for ~{:.0}% of forward/backward{}: the CPU issues kernels more slowly than the GPU runs them{}.", verb(&devices, "sits", "sit"), (1.0 - r) * 100.0, lost.map_or(String::new(), |l| format!(" (~{:.0}% of the run)", l * 100.0)), if near { " (near the threshold: lower confidence)" } else { "" }),
            None => format!("{} a steady mid-level utilization with no input wait while the launching thread is saturated: a small-op storm.", verb(&devices, "holds", "hold")),
        },
        g.ev,
    );
    f.lost_share = lost;
    f.lost_share_basis = Some(basis);
    f.devices = devices;
    f.actions = vec![
        action(Cost::Low, "Remove host syncs in the loop: .item(), printing tensors, torch.cuda.synchronize(), .cpu() of metrics every step"),
        action(Cost::Medium, "torch.compile the model to fuse small ops"),
        action(Cost::Medium, "Capture the step with CUDA Graphs (needs static shapes: pad or bucket first)"),
    ];
    f.experiment = experiment(
        "torch.compile the model (one change)",
        "GPU/CPU forward+backward ratio rises toward 1 and step time p50 falls",
        "GPU/CPU phase ratio; step time p50",
    );
    if !primary {
        f.unseen.push(if steps.and_then(|st| st.gpu_cpu_ratio_p50).is_some() {
            "The attached GPU phase times are close to the CPU's: CUDA events around a phase include the gaps between its kernels, so they cannot show launch gaps. A profiler trace (gpuwhy diagnose --trace) measures kernel time itself.".into()
        } else {
            "No GPU-measured phase times were attached: attach CUDA-event durations (attach_gpu_phase) or read a profiler trace to confirm kernels are shorter than their launches.".into()
        });
    }
    f
}

/// A launch-bound GPU idles between kernels, so the loss cannot exceed the time the GPU
/// was measured idle outside the data phase (whose wait is data starvation's): the ratio
/// estimate grows when a contended CPU stretches the phases, the samples do not.
fn cap_by_idle(
    s: &Signals,
    devices: &[u32],
    lost: Option<f64>,
    basis: String,
) -> (Option<f64>, String) {
    let idle: Vec<f64> = s
        .sampled_devices()
        .filter(|d| devices.contains(&d.index))
        .filter_map(|d| d.busy.map(|b| b.idle_share))
        .collect();
    let (Some(l), false) = (lost, idle.is_empty()) else {
        return (lost, basis);
    };
    let data = s
        .steps
        .as_ref()
        .and_then(|st| st.data_share_total)
        .unwrap_or(0.0);
    let cap = (idle.iter().sum::<f64>() / idle.len() as f64 - data).max(0.0);
    if l <= cap {
        return (lost, basis);
    }
    (
        Some(round(cap)),
        format!("{basis}, capped at the GPUs' time-weighted idle share outside the data phase"),
    )
}
