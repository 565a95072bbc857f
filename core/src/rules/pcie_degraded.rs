//! `pcie_degraded`: the PCIe link runs below its capability.

use super::{evidence, gpus, Rule, RuleDoc, RuleMeta};
use crate::report::Comparator;
use crate::report::FindingSource;
use crate::report::{Action, Cost, Experiment, Finding, Severity};
use crate::signals::{Signals, PCIE_BUSY_SHARE};

static META: RuleMeta = RuleMeta {
    id: "pcie_degraded",
    title: "PCIe link runs below its capability",
    severity: Severity::Medium,
    doc: RuleDoc {
        detects: "The current PCIe generation or width under load is below the maximum the GPU and slot support.",
        why: "A degraded link (a Gen1 x4 link where Gen4 x16 is possible) cuts host↔GPU bandwidth many times over and stalls input and offload traffic.",
        evidence: "Median current link generation while the GPU is loaded, and width (under load where there is load, else over every sample: width does not drop to save power), against the maximum of device and slot. Idle GPUs legitimately drop link generation to save power, so a lower generation counts only under load.",
        first: "Reseat the card or move it to another slot; check BIOS PCIe settings and risers.",
    },
};

/// Names of a phase in which the loop copies between host and GPU, as loops mark it.
pub const COPY_PHASES: &[&str] = &[
    "h2d",
    "d2h",
    "copy",
    "memcpy",
    "transfer",
    "to_device",
    "to_gpu",
    "upload",
];

/// See the module docs.
pub struct PcieDegraded;

/// What a copy phase the loop marks says the narrow link costs: the phase's share of the
/// step time × (1 − `ratio`), the copy time the full link would save; with the basis and
/// the phase's evidence.
fn copy_phase(s: &Signals, ratio: f64) -> Option<(f64, String, crate::report::Evidence)> {
    let (name, share) = s
        .steps
        .as_ref()
        .and_then(|st| st.phase_total(COPY_PHASES))
        .filter(|p| p.1 > 0.0)?;
    let e = evidence(
        &format!("`{name}` phase time / total step time"),
        share,
        Comparator::Above,
        0.0,
        "fraction",
        None,
    );
    let basis = format!("time-weighted: the `{name}` phase's share of the step time × (1 − the narrow link's bandwidth / the full link's): the copy time the full link would save");
    Some((share * (1.0 - ratio), basis, e))
}

/// Whether `d`'s link runs below its maximum — generation under load, width under load or
/// (without load) over every sample: width does not drop to save power — with its evidence
/// in `ev`; the link's bandwidth over the full link's when it does.
fn narrowed(
    d: &crate::signals::DeviceSignals,
    ev: &mut Vec<crate::report::Evidence>,
) -> Option<f64> {
    let dev = Some(d.index);
    let mut hit = false;
    let mut ratio = 1.0;
    if let (Some(cur), Some(max)) = (d.pcie_gen_loaded, d.pcie_max_gen) {
        let e = evidence(
            "pcie_gen p50 under load",
            cur,
            Comparator::Below,
            f64::from(max),
            "gen",
            dev,
        );
        hit |= e.agrees;
        // Per-lane bandwidth roughly doubles per generation.
        ratio *= 2f64.powf(cur - f64::from(max)).min(1.0);
        ev.push(e);
    }
    let (width, under) = match d.pcie_width_loaded {
        Some(w) => (Some(w), "pcie_width p50 under load"),
        None => (d.pcie_width_p50, "pcie_width p50"),
    };
    if let (Some(cur), Some(max)) = (width, d.pcie_max_width) {
        let e = evidence(under, cur, Comparator::Below, f64::from(max), "lanes", dev);
        hit |= e.agrees;
        ratio *= (cur / f64::from(max).max(1.0)).min(1.0);
        ev.push(e);
    }
    hit.then_some(ratio)
}

impl Rule for PcieDegraded {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn needs(&self) -> super::Needs {
        // The link's current generation and width against its maximum are state.
        super::Needs::State
    }

    fn produces(&self) -> &'static [super::Produces] {
        &[
            super::Produces {
                id: "host_transfer",
                on: super::Relation::SameGpus,
                how: "its host↔device copies take longer on the slower link, which then reads as heavy traffic",
                carries: true,
            },
            super::Produces {
                id: "comm_sync",
                on: super::Relation::SameGpus,
                how: "the collectives wait for its longer copies, so the GPUs dip together",
                carries: false,
            },
        ]
    }

    fn evaluate(&self, s: &Signals) -> Option<Finding> {
        let mut devices = Vec::new();
        let mut ev = Vec::new();
        let mut worst: f64 = 1.0;
        let mut extra: f64 = 0.0;
        // A link's width is state: judged on a GPU with no work too.
        for d in s.state_devices() {
            let mut dev_ev = Vec::new();
            if let Some(ratio) = narrowed(d, &mut dev_ev) {
                devices.push(d.index);
                worst = worst.min(ratio);
                ev.append(&mut dev_ev);
                // The copies on the narrow link take 1 / ratio as long as on the full one:
                // of the time the link is busy, (1 − ratio) is extra.
                if let Some(b) = d.pcie_busy_share {
                    ev.push(evidence(
                        &format!(
                            "share of samples with the link busy copying (at {:.0}% of its capacity or more)",
                            PCIE_BUSY_SHARE * 100.0
                        ),
                        b,
                        Comparator::Above,
                        0.0,
                        "fraction",
                        Some(d.index),
                    ));
                    extra = extra.max(b * (1.0 - ratio));
                }
            }
        }
        if devices.is_empty() {
            return None;
        }
        // A copy phase the loop marks measures the copy time directly: on the full link it
        // would take `worst` of it.
        let mut basis = "the share of samples with the narrow link busy copying × (1 − its bandwidth / the full link's): the time its copies would not take on the full link, for the worst GPU; exact when the copies hold up the step, an upper bound when they overlap compute".to_string();
        if let Some((cost, why, e)) = copy_phase(s, worst) {
            ev.push(e);
            extra = cost;
            basis = why;
        }
        Some(Finding {
            id: META.id.into(),
            title: META.title.into(),
            severity: META.severity,
            confidence: 0.9,
            summary: format!(
                "{}: link at {:.0}% of the possible PCIe bandwidth: host↔GPU copies are slower than the hardware allows.",
                gpus(&devices),
                worst * 100.0
            ),
            lost_share: (extra > 0.0).then(|| super::round(extra)),
            lost_share_basis: Some(if extra > 0.0 {
                basis
            } else {
                "not estimated: no PCIe traffic was recorded to measure the copies by; a profiler trace's memcpy time measures it".into()
            }),
            devices,
            evidence: ev,
            actions: vec![
                Action { text: "Check `nvidia-smi -q -d PCIE` under load and the BIOS PCIe generation setting".into(), cost: Cost::Low },
                Action { text: "Reseat the GPU or move it to another x16 slot; remove risers/extenders".into(), cost: Cost::High },
            ],
            experiment: Experiment {
                change: "Move the GPU to a slot that negotiates the full link (one change)".into(),
                expect: "pcie_gen and pcie_width under load equal their maxima; pcie_rx peaks rise; step time falls if the job copies much data".into(),
                metric: "pcie_gen, pcie_width under load".into(),
            },
            unseen: vec!["How much of the step time PCIe transfers take is not measured from samples; a profiler trace shows memcpy time.".into()],
            source: Some(FindingSource::Samples),
            caused_by: None,
        })
    }
}
