//! `busy_not_working`: "100 % utilization" while the compute units are mostly idle.

use super::{action, confidence, evidence, experiment, verb, Rule, RuleDoc, RuleMeta};
use crate::report::{Comparator, Evidence};
use crate::report::{Cost, Severity};
use crate::signals::{DeviceSignals, Signals};

/// Utilization p50 (%) from which the GPU "looks busy".
pub const BUSY_UTIL_P50: f64 = 90.0;
/// GPM SM utilization p50 (%) below which under half the SMs do the work. DCGM's profiling
/// guide reads SM activity under ~50 % as a GPU not filled by the workload.
pub const LOW_SM_UTIL: f64 = 50.0;
/// GPM SM occupancy p50 (%) below which few warps are resident (small grids or heavy
/// register/shared-memory use).
pub const LOW_SM_OCCUPANCY: f64 = 30.0;
/// Power p50 over the enforced limit below which a "busy" GPU cannot be doing much work:
/// dense compute on a data-centre GPU draws well over half its limit.
pub const LOW_POWER_RATIO: f64 = 0.5;

static META: RuleMeta = RuleMeta {
    id: "busy_not_working",
    title: "Utilization high but compute units idle",
    severity: Severity::Medium,
    doc: RuleDoc {
        detects: "Utilization at 90 % or more while GPM shows few SMs busy or few warps resident, or — without GPM — power far below the limit.",
        why: "NVML utilization counts time with any kernel running; one small kernel on one SM reads 100 %. The GPU can be 'busy' and still mostly idle.",
        evidence: "util_gpu p50 against GPM SM utilization, SM occupancy and tensor activity (Hopper+), or against power over the enforced limit.",
        first: "Larger batches, mixed precision (bf16/fp16 to use tensor cores), fused kernels (torch.compile); confirm with Nsight Compute.",
    },
};

/// See the module docs.
pub struct BusyNotWorking;

impl Rule for BusyNotWorking {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn evaluate(&self, s: &Signals) -> Option<crate::report::Finding> {
        let mut devices = Vec::new();
        let mut ev = Vec::new();
        let mut any_gpm = false;
        for d in s.sampled_devices() {
            // GPM counts where a GPU was busy enough to be judged.
            if d.util.is_some_and(|u| u.p50 >= BUSY_UTIL_P50) {
                any_gpm |= d.gpm_sm_util.is_some();
            }
            if let Some(local) = idle_inside(s, d) {
                devices.push(d.index);
                ev.extend(local);
            }
        }
        if devices.is_empty() {
            return None;
        }
        let conf = confidence(&ev, &[]) * if any_gpm { 1.0 } else { 0.6 };
        let mut f = META.finding(
            conf,
            format!("{} high utilization, but the compute units are mostly idle: kernels are too small or too few to fill the GPU.", verb(&devices, "reports", "report")),
            ev,
        );
        f.lost_share_basis = Some("not estimated: the GPU reports itself busy; how much of its compute stands idle is measured by Nsight Compute (SM throughput of the main kernels)".into());
        f.devices = devices;
        f.actions = vec![
            action(
                Cost::Low,
                "Raise the batch size (or micro-batch) as far as memory allows",
            ),
            action(
                Cost::Low,
                "Use mixed precision (bf16/fp16 autocast) so matrix work runs on tensor cores",
            ),
            action(
                Cost::Medium,
                "Fuse small kernels (torch.compile) and avoid many tiny ops",
            ),
        ];
        f.experiment = experiment(
            "Double the batch size (one change)",
            "GPM SM utilization and power rise while util_gpu stays high; throughput per step rises more than step time",
            "gpm_sm_util p50; samples per second",
        );
        if !any_gpm {
            f.unseen.push(super::NO_GPM.into());
        }
        Some(f)
    }
}

/// A GPU that reports itself busy while its compute units are mostly idle: GPM SM
/// utilization and occupancy low, or (weaker, without GPM) power low with the clocks not
/// held down; its evidence, the signals checked weighed (the busy utilization that let it be
/// judged is context, unweighed).
fn idle_inside(s: &Signals, d: &DeviceSignals) -> Option<Vec<Evidence>> {
    let u = d.util?;
    if u.p50 < BUSY_UTIL_P50 {
        return None;
    }
    let dev = Some(d.index);
    let mut local = vec![evidence(
        "util_gpu p50",
        u.p50,
        Comparator::AtLeast,
        BUSY_UTIL_P50,
        "%",
        dev,
    )];
    if let Some(sm) = d.gpm_sm_util {
        let e = evidence(
            "GPM SM utilization p50",
            sm.p50,
            Comparator::Below,
            LOW_SM_UTIL,
            "%",
            dev,
        );
        local.push(e.weighing(2.0));
    }
    if let Some(occ) = d.gpm_sm_occupancy {
        let e = evidence(
            "GPM SM occupancy p50",
            occ.p50,
            Comparator::Below,
            LOW_SM_OCCUPANCY,
            "%",
            dev,
        );
        local.push(e.weighing(1.0));
    }
    // Without GPM, low power is the sign; a clock held far below its maximum (or
    // below an identical peer's at equal utilization) explains low power by itself:
    // that GPU is slowed, which `throttling` reports, not idle inside its kernels.
    let held_down = d
        .sm_clock_ratio_loaded
        .or_else(|| super::throttling::peer_ratio(s, d.index))
        .is_some_and(|r| r < super::throttling::PEER_CLOCK_RATIO);
    if let Some(p) = d.power_over_limit.filter(|_| !held_down) {
        let e = evidence(
            "power p50 / enforced limit",
            p,
            Comparator::Below,
            LOW_POWER_RATIO,
            "ratio",
            dev,
        );
        local.push(e.weighing(1.0));
    }
    // GPM is the direct measure; without it, low power alone is the (weaker) sign.
    let mut hits = local.iter().filter(|e| e.weight.is_some());
    let primary = if d.gpm_sm_util.is_some() {
        hits.next().is_some_and(|e| e.agrees)
    } else {
        hits.any(|e| e.agrees)
    };
    primary.then_some(local)
}
