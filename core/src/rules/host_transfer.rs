//! `host_transfer`: too much copying between host and GPU.

use super::traced::*;
use super::{action, evidence, experiment, verb, Rule, RuleDoc, RuleMeta};
use super::{confidence, round};
use crate::report::Comparator;
use crate::report::{Cost, Severity};
use crate::report::{Evidence, Finding};
use crate::signals::{DeviceSignals, Signals};
use crate::trace::{RankSummary, TraceSummary};

/// PCIe throughput p95 over the current link's capacity from which host↔GPU copies
/// occupy the link for a large part of the time (a link past ~60 % of its nominal rate is
/// close to the practical maximum once protocol overhead is counted).
pub const HIGH_LINK_SHARE: f64 = 0.6;

/// Optimizer-phase share of total step time from which an optimizer running on the CPU
/// (ZeRO-Offload and the like) is a visible part of every step: a fifth of it.
pub const OFFLOAD_OPTIMIZER_SHARE: f64 = 0.2;

/// Load of the link in *both* directions (p95 over capacity) that, beside such an optimizer
/// phase, reads as offload traffic — gradients down, parameters back up — though each
/// direction stays under [`HIGH_LINK_SHARE`]: half of it.
pub const OFFLOAD_LINK_SHARE: f64 = 0.3;

/// Link capacity (MB/s per direction) assumed when neither the current nor the maximum
/// link is known (dmon and CSV logs): PCIe gen 5 x16, the fastest link a GPU has today
/// (PCI-SIG's 3,938 MB/s per lane × 16), so the load read against it is a lower bound and
/// traffic that reaches the threshold on it would on any slower link.
pub const ASSUMED_CAPACITY_MBS: f64 = 3938.0 * 16.0;

/// The capacity traffic is read against: the current link's, else the maximum link's, else
/// [`ASSUMED_CAPACITY_MBS`]; with the name of the comparison.
pub(crate) fn link_capacity(d: &crate::signals::DeviceSignals) -> (f64, &'static str) {
    if let Some(c) = d.pcie_capacity_mbs.filter(|c| *c > 0.0) {
        return (c, "link capacity");
    }
    let max = d
        .pcie_max_gen
        .and_then(|g| crate::signals::pcie_lane_mbs(f64::from(g)))
        .zip(d.pcie_max_width)
        .map(|(lane, w)| lane * f64::from(w))
        .filter(|c| *c > 0.0);
    match max {
        Some(c) => (c, "maximum link capacity"),
        None => (
            ASSUMED_CAPACITY_MBS,
            "PCIe gen5 x16 capacity (link not recorded)",
        ),
    }
}

static META: RuleMeta = RuleMeta {
    id: "host_transfer",
    title: "Heavy host↔GPU copying",
    severity: Severity::Medium,
    doc: RuleDoc {
        detects: "PCIe receive or transmit throughput whose p95 reaches 60 % of the current link's capacity (of the maximum link when the current one was not recorded; of a gen5 x16 link when neither was, as in dmon and CSV logs); or traffic at 30 % of the link in both directions while an optimizer phase takes a fifth of the step time or more (an optimizer offloaded to the CPU).",
        why: "Copies over PCIe are an order of magnitude slower than device memory; CPU offload or per-step transfers of large tensors stall the GPU.",
        evidence: "pcie_rx and pcie_tx p95 against the link capacity (generation × width). The optimizer phase's share of step time when steps were marked. Lost share: the optimizer phase's share for offload, else an upper bound, the time-weighted idle share of the GPUs moving data.",
        first: "Keep tensors on the device, use pinned memory with non_blocking copies, avoid CPU offload in high-frequency training.",
    },
};

/// See the module docs.
pub struct HostTransfer;

impl Rule for HostTransfer {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn produces(&self) -> &'static [super::Produces] {
        &[super::Produces {
            id: "host_sync",
            on: super::Relation::SharedEvidence("pageable"),
            how: "copies from pageable memory block the host until they finish, so the host waits at every one",
            carries: true,
        }]
    }

    fn evaluate(&self, s: &Signals) -> Option<crate::report::Finding> {
        // A profiler trace measures this directly: trust it first.
        if let Some(f) = s.trace.as_ref().and_then(|t| traced(t, &META)) {
            return Some(f);
        }
        let mut devices = Vec::new();
        let mut ev = Vec::new();
        let mut worst: f64 = 0.0;
        let optimizer = s
            .steps
            .as_ref()
            .and_then(|st| st.optimizer_share_total)
            .filter(|o| *o >= OFFLOAD_OPTIMIZER_SHARE);
        let mut offload = false;
        for d in s.sampled_devices() {
            if busy_link(d, optimizer.is_some(), &mut ev, &mut worst, &mut offload) {
                devices.push(d.index);
            }
        }
        if devices.is_empty() {
            return None;
        }
        if let Some(o) = optimizer {
            ev.push(evidence(
                "optimizer phase time / total step time",
                o,
                Comparator::AtLeast,
                OFFLOAD_OPTIMIZER_SHARE,
                "fraction",
                None,
            ));
        }
        let mut f = META.finding(0.7, format!("{} data over PCIe at up to {:.0}% of the link's capacity: host↔GPU copies compete with compute.", verb(&devices, "moves", "move"), worst * 100.0), ev);
        let idle: Vec<f64> = s
            .sampled_devices()
            .filter(|d| devices.contains(&d.index))
            .filter_map(|d| d.busy.map(|b| b.idle_share))
            .collect();
        if let Some(o) = optimizer.filter(|_| offload) {
            f.summary = format!("{} data over PCIe in both directions (up to {:.0}% of the link) while the optimizer phase takes {:.0}% of the step time: an optimizer offloaded to the CPU, with the GPU waiting meanwhile.", verb(&devices, "moves", "move"), worst * 100.0, o * 100.0);
            f.lost_share = Some(super::round(o));
            f.lost_share_basis = Some("time-weighted: optimizer-phase time over total step time (the GPU waits while the CPU runs the offloaded optimizer)".into());
        } else if !idle.is_empty() {
            f.lost_share = Some(super::round(idle.iter().sum::<f64>() / idle.len() as f64));
            f.lost_share_basis = Some("upper bound: time-weighted idle share (1 − mean utilization) of the GPUs moving data; copies that overlap compute cost less".into());
        }
        f.devices = devices;
        f.actions = actions();
        f.experiment = experiment(
            "Turn off CPU offload (or move the copied tensor to the GPU) (one change)",
            "pcie_rx/pcie_tx p95 fall well below the link capacity and step time p50 falls",
            "pcie_rx p95; step time p50",
        );
        f.unseen.push("Which tensors are copied is not visible from samples; a profiler trace shows the memcpy calls.".into());
        Some(f)
    }
}

/// Whether `d`'s PCIe link carries much of its capacity in either direction, or, with an
/// offload-sized optimizer phase (`optimizer`), a good share both ways; its evidence goes
/// to `ev`, the highest share to `worst`, and an offload reading to `offload`.
fn busy_link(
    d: &DeviceSignals,
    optimizer: bool,
    ev: &mut Vec<Evidence>,
    worst: &mut f64,
    offload: &mut bool,
) -> bool {
    if d.pcie_rx.is_none() && d.pcie_tx.is_none() {
        return false;
    }
    let (cap, against) = link_capacity(d);
    let dev = Some(d.index);
    let mut hit = false;
    for (name, dd) in [("pcie_rx", d.pcie_rx), ("pcie_tx", d.pcie_tx)] {
        if let Some(x) = dd {
            let name = format!("{name} p95 / {against}");
            let e = evidence(
                &name,
                x.p95 / cap,
                Comparator::AtLeast,
                HIGH_LINK_SHARE,
                "ratio",
                dev,
            );
            if e.agrees {
                hit = true;
                *worst = worst.max(x.p95 / cap);
                ev.push(e);
            }
        }
    }
    let two_way = [d.pcie_rx, d.pcie_tx]
        .iter()
        .all(|x| x.is_some_and(|x| x.p95 / cap >= OFFLOAD_LINK_SHARE));
    if !hit && two_way && optimizer {
        hit = true;
        *offload = true;
        for (name, x) in [("pcie_rx", d.pcie_rx), ("pcie_tx", d.pcie_tx)] {
            let v = x.map_or(0.0, |x| x.p95 / cap);
            *worst = worst.max(v);
            let name = format!("{name} p95 / {against} (both directions)");
            ev.push(evidence(
                &name,
                v,
                Comparator::AtLeast,
                OFFLOAD_LINK_SHARE,
                "ratio",
                dev,
            ));
        }
    }
    hit
}

// Evidence from a profiler trace, tried first when one is attached.

/// Host↔device copy time over the span from which copies cost time (same 10 % bar).
pub const MIN_HOST_COPY_SHARE: f64 = 0.10;

/// `host_transfer` from a trace: host↔device copies take a large share of the GPU timeline.
fn traced(t: &TraceSummary, meta: &RuleMeta) -> Option<Finding> {
    let share = |r: &RankSummary| {
        if r.span_us > 0.0 {
            r.host_copy_us / r.span_us
        } else {
            0.0
        }
    };
    let r = worst(t, share)?;
    let e = evidence(
        "host↔device memcpy time over the span",
        share(r),
        Comparator::AtLeast,
        MIN_HOST_COPY_SHARE,
        "fraction",
        None,
    );
    if !e.agrees {
        return None;
    }
    let pageable = r.syncs.pageable_async_memcpy as f64;
    let e2 = evidence(
        "async copies from/to pageable memory",
        pageable,
        Comparator::Above,
        0.0,
        "calls",
        None,
    );
    // The copy share fired the finding (it agrees by the check above) and weighs most.
    let ev = vec![e.weighing(3.0), e2.weighing(1.0)];
    let mut f = meta.finding(
        confidence(&ev, &[]) * 0.9,
        format!(
            "Host↔device copies occupy {:.0}% of the traced span{}{}.",
            share(r) * 100.0,
            rank_note(t, r),
            if pageable > 0.0 { format!(", {pageable:.0} of them async copies of pageable memory (synchronous in effect)") } else { String::new() }
        ),
        ev,
    );
    f.lost_share = Some(round(share(r)));
    f.actions = actions();
    f.experiment = experiment(
        "Pin the copied host memory (or keep the tensor on the GPU) (one change), profile again",
        "memcpy time share of the span falls",
        "trace memcpy share",
    );
    mark_traced(&mut f, t);
    Some(f)
}

/// What to try against host↔device copies, cheapest first (both the samples' and the trace's
/// findings).
fn actions() -> Vec<crate::report::Action> {
    vec![
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
    ]
}
