//! `cpu_optimizer`: the GPU idles while the optimizer step runs on the CPU.
//!
//! Two ways in: a profiler trace (the optimizer step's ranges over GPU gaps), tried first;
//! else the phases the loop marks — an optimizer phase that takes a large share of the step
//! while the GPU idles through it, with the host busier and the PCIe link carrying bursts
//! meanwhile (an offloaded optimizer moves gradients down and parameters back up).

use super::traced::*;
use super::{action, confidence, evidence, experiment, round, Weight};
use super::{Rule, RuleDoc, RuleMeta};
use crate::report::{Comparator, Cost, FindingSource};
use crate::report::{Evidence, Finding, Severity};
use crate::signals::phase_activity::{InOut, PhaseWindow};
use crate::signals::Signals;
use crate::trace::TraceSummary;

/// Optimizer-phase time over total step time from which the phase is a bottleneck of its
/// own: the bar `data_starvation` sets for the data phase (its `MIN_DATA_SHARE`, 15 %, between XProf's "moderately"
/// 5 % and "highly" 20 % input-bound; docs/references.md#xprof), applied to the other phase
/// that keeps the GPU waiting on the host.
pub const MIN_OPTIMIZER_SHARE: f64 = 0.15;

/// Share of the job GPUs' samples inside the optimizer phase with utilization below 20 %
/// (`DIP_UTIL`) from which the GPU idles through the phase: most of it. An optimizer on the
/// GPU (fused or foreach Adam) keeps utilization high, its kernels stream the parameters.
pub const MIN_IDLE_IN_PHASE: f64 = 0.5;

/// Host CPU during the optimizer phase over the rest of the step from which the host does
/// the work the GPU waits for: a fifth more, well above the few percent a sampler's CPU
/// readings move between ticks.
pub const HOST_BUSIER: f64 = 1.2;

/// PCIe traffic during the optimizer phase over the rest of the step from which the phase
/// moves data between host and GPU, as an offloaded optimizer does (the ratio `comm_sync`
/// asks of traffic in dips, `comm_sync::TRAFFIC_RATIO`).
pub const PCIE_BURST: f64 = 1.5;

/// Lost share from which the finding is `high`: a quarter of every step.
pub const HIGH_LOST_SHARE: f64 = 0.25;

static META: RuleMeta = RuleMeta {
    id: "cpu_optimizer",
    title: "GPU waits while the optimizer or other work runs on the CPU",
    severity: Severity::High,
    doc: RuleDoc {
        detects: "Step markers whose optimizer phase takes 15 % of the step time or more while the job's GPUs idle (utilization under 20 %) for at least half of the phase's samples (the phase is placed at the end of each step, where optimizer.step() runs), the host busier and PCIe traffic in bursts during it as support; or a profiler trace whose GPU gaps over 1 ms under an optimizer step with no GPU work (Optimizer.step#… or DeepSpeed's CPUAdam/CPUAdagrad/CPULion, with the GPU in such gaps for at least half of it) or under aten:: operators of 100 µs or more that start no runtime call (computing on the CPU) cost 5 % or more of the traced span (torch-tb-profiler's 5 % bar for acting on a CPU-side cost; docs/trace-format.md, \"What the CPU was doing\").",
        why: "An optimizer offloaded to the CPU (ZeRO-Offload, CPUAdam) or one that runs Python per parameter between its launches holds the GPU idle for the whole step; with large models that is a large share of every step.",
        evidence: "From steps: the optimizer phase's share of step time, the GPUs' idle share inside it, the host CPU and PCIe traffic inside it against the rest of the step; lost share: the phase's share times the idle share inside it. From a trace: GPU idle time in long gaps under the optimizer step or CPU operators over the traced span and over the GPU's idle time; the GPU idle share of the span; the ranges by name with their time inside gaps.",
        first: "A fused GPU optimizer (fused=True or foreach=True); keep offloaded optimizer states on the GPU when they fit, or overlap the offloaded step with compute; torch.compile the step.",
    },
};

/// See the module docs.
pub struct CpuOptimizer;

impl Rule for CpuOptimizer {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn produces(&self) -> &'static [super::Produces] {
        &[super::Produces {
            id: "host_transfer",
            on: super::Relation::Job,
            how: "the offloaded optimizer moves gradients down and parameters back over PCIe at every step",
            carries: true,
        }]
    }

    fn evaluate(&self, s: &Signals) -> Option<Finding> {
        // A profiler trace measures this directly: trust it first.
        if let Some(f) = s.trace.as_ref().and_then(|t| traced(t, &META)) {
            return Some(f);
        }
        from_steps(s)
    }
}

/// `cpu_optimizer` from the phases the loop marks: the optimizer phase is long and the GPU
/// idles through it.
fn from_steps(s: &Signals) -> Option<Finding> {
    let share = s.steps.as_ref()?.optimizer_share_total?;
    let w = s.phase_activity.as_ref()?.optimizer.as_ref()?;
    let idle = w.idle_share?;
    let mut ev = vec![
        evidence(
            "optimizer phase time / total step time",
            share,
            Comparator::AtLeast,
            MIN_OPTIMIZER_SHARE,
            "fraction",
            None,
        ),
        evidence(
            "share of GPU samples in the optimizer phase with util_gpu < 20%",
            idle,
            Comparator::AtLeast,
            MIN_IDLE_IN_PHASE,
            "fraction",
            None,
        ),
    ];
    if !ev.iter().all(|e| e.agrees) {
        return None;
    }
    let mut others = vec![PHASE];
    support(w, &mut ev, &mut others);
    let lost = round(share * idle);
    let mut f = META.finding(
        confidence(&ev, &others) * STEPS_ONLY,
        format!(
            "The optimizer phase takes {:.0}% of the step time and the GPU idles through {:.0}% of it: the optimizer runs on the CPU (offloaded, or Python between few launches), ~{:.0}% of the run lost.",
            share * 100.0,
            idle * 100.0,
            lost * 100.0
        ),
        ev,
    );
    f.severity = if lost >= HIGH_LOST_SHARE {
        Severity::High
    } else {
        Severity::Medium
    };
    f.source = Some(FindingSource::Steps);
    f.lost_share = Some(lost);
    f.lost_share_basis = Some("time-weighted: optimizer-phase time over total step time, times the share of the phase the GPUs idle (the phase placed at the end of each step)".into());
    f.devices = s.job_devices().map(|d| d.index).collect();
    f.actions = actions();
    f.experiment = experiment(
        "Run with the optimizer on the GPU (offload off, or fused=True; smaller batch if memory requires) — one change",
        "the optimizer phase's share of step time falls below 15% and GPU utilization rises by about the lost share",
        "optimizer phase time / total step time; util_gpu time-weighted mean",
    );
    f.unseen.push("Whether the optimizer is offloaded or runs Python per parameter is not visible from samples; a profiler trace of a few steps shows its ranges (`gpuwhy diagnose run.json --trace trace.json`).".into());
    Some(f)
}

/// The phase and the GPU's idling in it fired the finding: measured, they weigh 2.
const PHASE: Weight = Weight::Prior(2.0);

/// Placing the optimizer phase at the end of each step is an assumption the markers do not
/// check; the confidence of the steps reading is scaled by this.
const STEPS_ONLY: f64 = 0.9;

/// What supports a CPU-side optimizer besides the idle phase: the host busier and PCIe
/// bursts inside the phase, each weighing 1; the host view counts against when it was not
/// recorded.
fn support(w: &PhaseWindow, ev: &mut Vec<Evidence>, others: &mut Vec<Weight>) {
    let ratio = |x: InOut| {
        if x.outside > 0.0 {
            x.inside / x.outside
        } else {
            f64::INFINITY
        }
    };
    match w.proc_cpu.or(w.host_cpu) {
        Some(h) => {
            let name = if w.proc_cpu.is_some() {
                "job's CPU in the optimizer phase / rest of the step"
            } else {
                "host CPU busy in the optimizer phase / rest of the step"
            };
            let e = evidence(
                name,
                ratio(h).min(99.0),
                Comparator::AtLeast,
                HOST_BUSIER,
                "ratio",
                None,
            );
            ev.push(e.weighing(1.0));
        }
        None => others.push(Weight::Unmeasured(1.0)),
    }
    if let Some(p) = w.pcie {
        let e = evidence(
            "PCIe traffic in the optimizer phase / rest of the step",
            ratio(p).min(99.0),
            Comparator::AtLeast,
            PCIE_BURST,
            "ratio",
            None,
        );
        ev.push(e.weighing(1.0));
    }
}

fn actions() -> Vec<crate::report::Action> {
    vec![
        action(Cost::Low, "Use a fused optimizer on the GPU (torch.optim.AdamW(fused=True), or foreach=True): one launch for all parameters instead of Python per parameter"),
        action(Cost::Medium, "If the optimizer is offloaded to the CPU for memory (DeepSpeed CPUAdam, ZeRO-Offload), keep it on the GPU when its state fits, or overlap the offloaded step with the next step's compute"),
        action(Cost::Medium, "torch.compile the optimizer step to cut its host time; move other CPU-side tensor work (metrics, masks, numpy) onto the GPU or out of the step"),
    ]
}

// Evidence from a profiler trace, tried first when one is attached.

/// `cpu_optimizer` from a trace: the GPU idles in long gaps under an optimizer step with no
/// GPU work (a CPU optimizer such as DeepSpeed's CPUAdam, ZeRO-Offload, or an optimizer whose
/// host side runs long between its launches) or under `aten::` operators computing on the
/// CPU.
fn traced(t: &TraceSummary, meta: &RuleMeta) -> Option<Finding> {
    let (r, share, ev) = costly(
        t,
        "while the optimizer step or operators run on the CPU with nothing queued on the GPU",
        |g| g.cpu_work_us,
    )?;
    let g = &r.gap_causes;
    let names = named(g, |n| {
        use crate::trace::{classify, CpuKind};
        matches!(
            classify(n, f64::INFINITY),
            Some(CpuKind::Optimizer | CpuKind::CpuOp)
        )
    });
    let mut f = meta.finding(
        confidence(&ev, &[]) * 0.85,
        format!(
            "The GPU{} is idle {:.0}% of the traced span; {:.0}% of the span ({:.0}% of the idle time) passes in gaps over 1 ms while the CPU runs the optimizer step or operators with nothing queued on the GPU{}: the optimizer (or other work) runs on the CPU, offloaded or as Python between few launches.",
            rank_note(t, r),
            r.idle_share * 100.0,
            share * 100.0,
            g.of_idle(g.cpu_work_us) * 100.0,
            if names.is_empty() { String::new() } else { format!(" ({names})") },
        ),
        ev,
    );
    f.actions = actions();
    f.experiment = experiment(
        "Run one step configuration with the optimizer on the GPU (offload off, smaller batch if memory requires) and profile again",
        "the GPU idle time under the optimizer step disappears",
        "trace: idle time under the optimizer step and CPU operators over the span",
    );
    finish(&mut f, t, share);
    Some(f)
}
