//! `host_transfer`: too much copying between host and GPU.

use super::{action, evidence, experiment, verb, Rule, RuleDoc, RuleMeta};
use crate::report::{Cost, Severity};
use crate::signals::Signals;

/// PCIe throughput p95 over the current link's capacity from which host↔GPU copies
/// occupy the link for a large part of the time (a link past ~60 % of its nominal rate is
/// close to the practical maximum once protocol overhead is counted).
pub const HIGH_LINK_SHARE: f64 = 0.6;

static META: RuleMeta = RuleMeta {
    id: "host_transfer",
    title: "Heavy host↔GPU copying",
    severity: Severity::Medium,
    doc: RuleDoc {
        detects: "PCIe receive or transmit throughput whose p95 reaches 60 % of the current link's capacity.",
        why: "Copies over PCIe are an order of magnitude slower than device memory; CPU offload or per-step transfers of large tensors stall the GPU.",
        evidence: "pcie_rx and pcie_tx p95 against the link capacity (generation × width).",
        first: "Keep tensors on the device, use pinned memory with non_blocking copies, avoid CPU offload in high-frequency training.",
    },
};

/// See the module docs.
pub struct HostTransfer;

impl Rule for HostTransfer {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn evaluate(&self, s: &Signals) -> Option<crate::report::Finding> {
        // A profiler trace measures this directly: trust it first.
        if let Some(f) = s
            .trace
            .as_ref()
            .and_then(|t| crate::trace::findings::host_transfer(t, &META))
        {
            return Some(f);
        }
        let mut devices = Vec::new();
        let mut ev = Vec::new();
        let mut worst: f64 = 0.0;
        for d in s.sampled_devices() {
            let Some(cap) = d.pcie_capacity_mbs.filter(|c| *c > 0.0) else {
                continue;
            };
            let dev = Some(d.index);
            let mut hit = false;
            for (name, dd) in [
                ("pcie_rx p95 / link capacity", d.pcie_rx),
                ("pcie_tx p95 / link capacity", d.pcie_tx),
            ] {
                if let Some(x) = dd {
                    let e = evidence(name, x.p95 / cap, ">=", HIGH_LINK_SHARE, "ratio", dev);
                    if e.agrees {
                        hit = true;
                        worst = worst.max(x.p95 / cap);
                        ev.push(e);
                    }
                }
            }
            if hit {
                devices.push(d.index);
            }
        }
        if devices.is_empty() {
            return None;
        }
        let mut f = META.finding(0.7, format!("{} data over PCIe at up to {:.0}% of the link's capacity: host↔GPU copies compete with compute.", verb(&devices, "moves", "move"), worst * 100.0), ev);
        f.devices = devices;
        f.actions = vec![
            action(
                Cost::Low,
                "Use pin_memory=True and .to(device, non_blocking=True)",
            ),
            action(
                Cost::Medium,
                "Keep tensors on the GPU between steps; avoid .cpu()/.numpy() in the loop",
            ),
            action(
                Cost::High,
                "Avoid CPU/NVMe offload (ZeRO-Offload) in high-frequency training, or overlap it",
            ),
        ];
        f.experiment = experiment(
            "Turn off CPU offload (or move the copied tensor to the GPU) (one change)",
            "pcie_rx/pcie_tx p95 fall well below the link capacity and step time p50 falls",
            "pcie_rx p95; step time p50",
        );
        f.unseen.push("Which tensors are copied is not visible from samples; a profiler trace shows the memcpy calls.".into());
        Some(f)
    }
}
