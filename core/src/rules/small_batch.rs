//! `small_batch`: kernels too small to fill the GPU, with nothing else to blame.

use super::{action, confidence, evidence, experiment, verb, Rule, RuleDoc, RuleMeta};
use crate::report::Comparator;
use crate::report::Evidence;
use crate::report::{Cost, Severity};
use crate::signals::{DeviceSignals, Signals};

/// Utilization p50 band (%) of a GPU that works but is not filled.
pub const UTIL_BAND: (f64, f64) = (30.0, 80.0);
/// Power p50 over the limit below which the GPU draws too little to be filled (a filled
/// data-centre GPU draws well over half its limit).
pub const LOW_POWER_RATIO: f64 = 0.5;
/// Memory used p95 over total below which there is room for a larger batch.
pub const ROOM_MEM_USED: f64 = 0.5;
/// Data-phase share p50 below which input is not the cause.
pub const NO_DATA_WAIT_SHARE: f64 = 0.10;

static META: RuleMeta = RuleMeta {
    id: "small_batch",
    title: "Batch too small to fill the GPU",
    severity: Severity::Medium,
    doc: RuleDoc {
        detects: "Moderate utilization (30–80 %) with low power and much free memory, and neither a data wait nor a launch bottleneck to explain it.",
        why: "Small kernels leave SMs idle; the same work in larger batches runs at a higher rate per sample.",
        evidence: "util_gpu p50, power over limit, mem_used over total; the absence of a data-phase share, sawtooth or launch-bound signal.",
        first: "A batch-size sweep (2×, 4×) comparing samples per second; gradient accumulation keeps the optimisation unchanged.",
    },
};

/// See the module docs.
pub struct SmallBatch;

impl Rule for SmallBatch {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn evaluate(&self, s: &Signals) -> Option<crate::report::Finding> {
        if other_cause(s) {
            return None;
        }
        let mut devices = Vec::new();
        let mut ev = Vec::new();
        for d in s.sampled_devices() {
            if let Some(e) = unfilled(d) {
                devices.push(d.index);
                ev.extend(e);
            }
        }
        if devices.is_empty() {
            return None;
        }
        let has_steps = s.steps.is_some();
        let mut f = META.finding(
            confidence(&ev, &[]) * if has_steps { 0.8 } else { 0.6 },
            format!("{} at moderate utilization with low power and most memory free, and no data or launch cause: the batch is too small to fill the GPU.", verb(&devices, "runs", "run")),
            ev,
        );
        let idle: Vec<f64> = s
            .sampled_devices()
            .filter(|d| devices.contains(&d.index))
            .filter_map(|d| d.busy.map(|b| b.idle_share))
            .collect();
        if !idle.is_empty() {
            f.lost_share = Some(super::round(idle.iter().sum::<f64>() / idle.len() as f64));
            f.lost_share_basis = Some("upper bound: time-weighted idle share (1 − mean utilization) of the GPUs concerned, which a batch that fills them would recover at most".into());
        }
        f.devices = devices;
        f.actions = vec![
            action(Cost::Low, "Run a batch-size sweep (2×, 4×) and compare samples per second"),
            action(Cost::Low, "Keep the effective batch with gradient accumulation if the optimisation must not change"),
        ];
        f.experiment = experiment(
            "Double the batch size (one change)",
            "samples per second rise by clearly more than 0 %; power and util_gpu rise",
            "samples per second; power p50",
        );
        if !has_steps {
            f.unseen.push("Step phases were not recorded: a data wait or a CPU launch bottleneck could not be ruled out from phases; add step markers.".into());
        }
        Some(f)
    }
}

/// Whether another cause explains moderate utilization (an input wait, launch-bound phase
/// times, a saturated launching thread): then it is not this rule's call.
fn other_cause(s: &Signals) -> bool {
    if s.steps
        .as_ref()
        .is_some_and(|st| st.data_share_p50.is_some_and(|d| d >= NO_DATA_WAIT_SHARE))
    {
        return true;
    }
    if s.steps
        .as_ref()
        .and_then(|st| st.gpu_cpu_ratio_p50)
        .is_some_and(|r| r < super::launch_bound::MAX_GPU_CPU_RATIO)
    {
        return true;
    }
    // A saturated launching thread is the launch-bound signature: the CPU, not the
    // batch, sets the pace (launch_bound's samples-only path reports it).
    if s.host_proc_cpu
        .is_some_and(|cpu| cpu.p50 >= super::launch_bound::SATURATED_THREAD)
    {
        return true;
    }
    false
}

/// A GPU that works but is not filled, from its samples: moderate utilization without a
/// sawtooth, low power and much free memory; its evidence, the signals checked weighed.
fn unfilled(d: &DeviceSignals) -> Option<Vec<Evidence>> {
    let u = d.util?;
    let dev = Some(d.index);
    if !(UTIL_BAND.0..UTIL_BAND.1).contains(&u.p50) {
        return None;
    }
    // A sawtooth is data starvation, not batch size.
    if d.util_near_zero
        .is_some_and(|z| z >= super::data_starvation::MIN_IDLE_SHARE)
    {
        return None;
    }
    let (Some(p), Some(m)) = (d.power_over_limit, d.mem_used_ratio) else {
        return None;
    };
    let ep = evidence(
        "power p50 / enforced limit",
        p,
        Comparator::Below,
        LOW_POWER_RATIO,
        "ratio",
        dev,
    );
    let em = evidence(
        "mem_used p95 / memory total",
        m.p95,
        Comparator::Below,
        ROOM_MEM_USED,
        "ratio",
        dev,
    );
    if !(ep.agrees && em.agrees) {
        return None;
    }
    let mut ev = vec![evidence(
        "util_gpu p50",
        u.p50,
        Comparator::Below,
        UTIL_BAND.1,
        "%",
        dev,
    )];
    // Low power and free memory both agree (checked above) and weigh 1 each.
    ev.push(ep.weighing(1.0));
    ev.push(em.weighing(1.0));
    if let Some(r) = d.sm_clock_ratio_loaded {
        let e = evidence(
            "sm_clock p50 under load / max",
            r,
            Comparator::AtLeast,
            0.85,
            "ratio",
            dev,
        );
        ev.push(e.weighing(1.0));
    }
    Some(ev)
}
