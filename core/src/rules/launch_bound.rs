//! `launch_bound`: the CPU cannot issue kernels fast enough.

use super::traced::*;
use super::{action, confidence, evidence, experiment, round, verb, Rule, RuleDoc, RuleMeta};
use crate::report::Comparator;
use crate::report::Finding;
use crate::report::{Cost, Severity};
use crate::signals::Signals;
use crate::trace::LAUNCH_GAP_MAX_US;
use crate::trace::{RankSummary, TraceSummary};

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
        let mut ev = Vec::new();
        let mut w = Vec::new();
        let mut primary = false;
        let mut near = false;
        if let Some(r) = steps.and_then(|st| st.gpu_cpu_ratio_p50) {
            let e = evidence(
                "GPU-measured / CPU forward+backward time p50",
                r,
                Comparator::AtMost,
                MAX_GPU_CPU_RATIO,
                "ratio",
                None,
            );
            primary = e.agrees;
            near = !primary && r <= NEAR_GPU_CPU_RATIO;
            if primary || near {
                w.push((3.0, true));
            }
            // A ratio near 1 does not clear the CPU: CUDA events recorded around a phase
            // also time the gaps between its kernels, so a launch-starved stream reads as
            // busy. The samples below can still show the storm.
            ev.push(e);
        }
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
            w.push((1.0, e.agrees));
            ev.push(e);
        }
        let mut devices = Vec::new();
        for d in s.sampled_devices() {
            let (Some(u), Some(spread)) = (d.util, d.util_spread) else {
                continue;
            };
            let dev = Some(d.index);
            let steady_mid = (UTIL_BAND.0..UTIL_BAND.1).contains(&u.p50) && spread <= MAX_SPREAD;
            let no_sawtooth = d
                .util_near_zero
                .is_none_or(|z| z < super::data_starvation::MIN_IDLE_SHARE);
            if steady_mid && no_sawtooth {
                devices.push(d.index);
                ev.push(evidence(
                    "util_gpu p50 (steady, mid-level)",
                    u.p50,
                    Comparator::Below,
                    UTIL_BAND.1,
                    "%",
                    dev,
                ));
                ev.push(evidence(
                    "util_gpu p95 − p5",
                    spread,
                    Comparator::AtMost,
                    MAX_SPREAD,
                    "points",
                    dev,
                ));
            }
        }
        if near {
            primary = true;
        } else if !primary {
            // Samples only: needs steady mid utilization and no sign of an input wait.
            if devices.is_empty() || data_wait.is_some_and(|d| d >= NO_DATA_WAIT_SHARE) {
                return None;
            }
            w.push((1.0, true));
            match s.host_proc_cpu {
                Some(cpu) => {
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
                    w.push((1.0, true));
                    ev.push(e);
                }
                None => return None,
            }
        } else if !devices.is_empty() {
            w.push((1.0, true));
        }
        if devices.is_empty() {
            devices = s.sampled_devices().map(|d| d.index).collect();
        }
        // The GPU idles (1 − ratio) of the forward and backward passes; those passes are
        // their share of the step time.
        let ratio = steps
            .and_then(|st| st.gpu_cpu_ratio_p50)
            .filter(|_| primary);
        let fwd_bwd = steps.and_then(|st| st.fwd_bwd_share_total);
        let (lost, basis) = match (ratio, fwd_bwd) {
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
        };
        let (lost, basis) = cap_by_idle(s, &devices, lost, basis);
        let scale = if near {
            0.9 * NEAR_SCALE
        } else if primary {
            0.9
        } else {
            0.55
        };
        let mut f = META.finding(
            confidence(&w) * scale,
            match ratio {
                Some(r) => format!("{} idle for ~{:.0}% of forward/backward{}: the CPU issues kernels more slowly than the GPU runs them{}.", verb(&devices, "sits", "sit"), (1.0 - r) * 100.0, lost.map_or(String::new(), |l| format!(" (~{:.0}% of the run)", l * 100.0)), if near { " (near the threshold: lower confidence)" } else { "" }),
                None => format!("{} a steady mid-level utilization with no input wait while the launching thread is saturated: a small-op storm.", verb(&devices, "holds", "hold")),
            },
            ev,
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
        Some(f)
    }
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

// Evidence from a profiler trace, tried first when one is attached.

/// Share of the GPU's idle time that Python between launches (and host work the trace does
/// not name) must hold for `launch_bound`: a majority, as [`MIN_HOST_WAIT_SHARE`].
pub const MIN_LAUNCH_SHARE: f64 = 0.5;

/// Mean kernel duration (µs) below which kernels are "small" (the field guides: < ~20 µs).
pub const SMALL_KERNEL_MEAN_US: f64 = 20.0;

/// Kernels per step from which a step is a small-op storm (the field guides: thousands per step).
pub const STORM_KERNELS_PER_STEP: f64 = 1000.0;

/// Host time between launches over the GPU's idle time: gaps with only launches and Python
/// under them, and long gaps whose host work the trace does not name.
fn between_launches(r: &RankSummary) -> f64 {
    let g = &r.gap_causes;
    g.of_idle(g.launch_us + g.other_host_us)
}

/// `launch_bound` from a trace: the GPU idles while the host runs Python between launches.
fn traced(t: &TraceSummary, meta: &RuleMeta) -> Option<Finding> {
    let r = worst(t, |r| r.idle_share * between_launches(r))?;
    let share = between_launches(r);
    let e_idle = evidence(
        "GPU idle share of the traced span",
        r.idle_share,
        Comparator::AtLeast,
        MIN_IDLE_SHARE,
        "fraction",
        None,
    );
    let e_hw = evidence(
        "share of the GPU's idle time that is host time between launches (no DataLoader, allocator call, sync or CPU work under it)",
        share,
        Comparator::AtLeast,
        MIN_LAUNCH_SHARE,
        "fraction",
        None,
    );
    if !(e_idle.agrees && e_hw.agrees) {
        return None;
    }
    let mut w = vec![(2.0, true), (2.0, true)];
    let mut ev = vec![e_idle, e_hw];
    let k = &r.kernels;
    let e = evidence(
        "mean kernel duration",
        k.duration_us.mean,
        Comparator::Below,
        SMALL_KERNEL_MEAN_US,
        "µs",
        None,
    );
    w.push((1.0, e.agrees));
    ev.push(e);
    if let Some(sh) = k.shorter_than_launch_share {
        let e = evidence(
            "share of kernels shorter than their launch call",
            sh,
            Comparator::AtLeast,
            0.5,
            "fraction",
            None,
        );
        w.push((1.0, e.agrees));
        ev.push(e);
    }
    if r.step_stats.count > 0 {
        let e = evidence(
            "kernels per step p50",
            r.step_stats.kernels.p50,
            Comparator::AtLeast,
            STORM_KERNELS_PER_STEP,
            "kernels",
            None,
        );
        w.push((1.0, e.agrees));
        ev.push(e);
        let e = evidence(
            "GPU busy / CPU step time p50",
            r.step_stats.gpu_cpu_ratio.p50,
            Comparator::AtMost,
            0.5,
            "ratio",
            None,
        );
        w.push((1.0, e.agrees));
        ev.push(e);
    }
    if let Some(hw) = r.main_stream_idle.host_wait_share() {
        let e = evidence(
            "host-wait share of the main stream's idle time",
            hw,
            Comparator::AtLeast,
            MIN_HOST_WAIT_SHARE,
            "fraction",
            None,
        );
        w.push((1.0, e.agrees));
        ev.push(e);
    }
    let g = &r.gap_causes;
    let lost = if r.span_us > 0.0 {
        round((g.launch_us + g.other_host_us) / r.span_us)
    } else {
        0.0
    };
    let mut f = meta.finding(
        confidence(&w).max(0.6) * 0.95,
        format!(
            "The GPU{} is idle {:.0}% of the traced span and {:.0}% of that is the host between launches ({:.0}% Python in gaps under {:.0} ms, {:.0}% longer host work the trace does not name): kernels (mean {:.1} µs) finish before the CPU launches the next ones.",
            rank_note(t, r),
            r.idle_share * 100.0,
            share * 100.0,
            g.of_idle(g.launch_us) * 100.0,
            LAUNCH_GAP_MAX_US / 1e3,
            g.of_idle(g.other_host_us) * 100.0,
            k.duration_us.mean
        ),
        ev,
    );
    f.lost_share = Some(lost);
    f.actions = vec![
        action(Cost::Low, "Remove host syncs in the loop: .item(), printing tensors, torch.cuda.synchronize(), .cpu() of metrics every step"),
        action(Cost::Medium, "torch.compile the model to fuse small ops"),
        action(Cost::Medium, "Capture the step with CUDA Graphs (needs static shapes: pad or bucket first)"),
    ];
    if g.other_host_us > g.launch_us {
        f.actions.insert(0, action(Cost::Low, "Profile again with with_stack=True (or py-spy) to see which Python runs in the long gaps between launches, and move it out of the step"));
    }
    if !g.cpu_events {
        f.unseen.push("The trace has no CPU operator events (cpu_op, user_annotation), so DataLoader waits and a CPU optimizer cannot be told apart from Python between launches; profile with ProfilerActivity.CPU as well as CUDA.".into());
    }
    f.experiment = experiment(
        "torch.compile the model (one change), profile again",
        "host-wait idle falls and kernels per step drop; GPU idle share of the span falls",
        "trace idle share; host-wait share",
    );
    mark_traced(&mut f, t);
    Some(f)
}
