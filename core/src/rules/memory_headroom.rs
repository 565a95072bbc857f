//! `memory_headroom`: memory saved but not used.

use super::{action, evidence, experiment, verb, Rule, RuleDoc, RuleMeta};
use crate::report::Comparator;
use crate::report::{Cost, Severity};
use crate::signals::Signals;

/// Memory used p95 over total below which most of the GPU's memory is idle. The second
/// field guide (docs/references.md#field-guides): after memory savings (checkpointing, ZeRO,
/// offload) spend the headroom on batch or sequence length, keeping 20–30 % free — so under
/// half used is plainly unspent.
pub const LOW_MEM_USED: f64 = 0.5;
/// Utilization p50 (%) below which the GPU is not saturated, so the headroom would help.
pub const NOT_SATURATED_UTIL: f64 = 75.0;

static META: RuleMeta = RuleMeta {
    id: "memory_headroom",
    title: "Memory saved but not spent",
    severity: Severity::Low,
    doc: RuleDoc {
        detects: "Device memory mostly unused (p95 under half of total) while utilization stays below 75 %.",
        why: "Memory freed by activation checkpointing, ZeRO or offload only pays off when it is spent on a larger batch or sequence; otherwise the savings cost time and buy nothing.",
        evidence: "mem_used p95 over total; util_gpu p50.",
        first: "Raise the batch or sequence length until 70–80 % of memory is used; drop memory savings that are no longer needed.",
    },
};

/// See the module docs.
pub struct MemoryHeadroom;

impl Rule for MemoryHeadroom {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn evaluate(&self, s: &Signals) -> Option<crate::report::Finding> {
        let mut devices = Vec::new();
        let mut ev = Vec::new();
        let mut free = Vec::new();
        for d in s.sampled_devices() {
            let (Some(m), Some(u)) = (d.mem_used_ratio, d.util) else {
                continue;
            };
            let dev = Some(d.index);
            let em = evidence(
                "mem_used p95 / memory total",
                m.p95,
                Comparator::Below,
                LOW_MEM_USED,
                "ratio",
                dev,
            );
            let eu = evidence(
                "util_gpu p50",
                u.p50,
                Comparator::Below,
                NOT_SATURATED_UTIL,
                "%",
                dev,
            );
            if em.agrees && eu.agrees {
                devices.push(d.index);
                free.push(1.0 - m.p95);
                ev.push(em);
                ev.push(eu);
            }
        }
        if devices.is_empty() {
            return None;
        }
        let unused = free.iter().sum::<f64>() / free.len() as f64;
        let mut f = META.finding(
            0.6,
            format!("{} {:.0}% of device memory unused while utilization stays low: spend it on a larger batch or sequence.", verb(&devices, "leaves", "leave"), unused * 100.0),
            ev,
        );
        f.lost_share_basis = Some("not estimated: unused memory is an opportunity, not lost time; a batch-size sweep measures what spending it recovers".into());
        f.devices = devices;
        f.actions = vec![
            action(Cost::Low, "Raise the batch size or sequence length until 70–80 % of memory is used"),
            action(Cost::Low, "Turn off activation checkpointing, ZeRO-3 or CPU offload if the memory they free is not used"),
        ];
        f.experiment = experiment(
            "Double the batch size (one change)",
            "mem_used rises toward 70–80 % and samples per second rise; utilization rises",
            "mem_used p95; samples per second",
        );
        Some(f)
    }
}
