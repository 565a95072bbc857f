//! `memory_bound`: kernels limited by memory bandwidth.

use super::{action, confidence, evidence, experiment, verb, Rule, RuleDoc, RuleMeta};
use crate::report::Comparator;
use crate::report::{Cost, Severity};
use crate::signals::Signals;

/// GPM DRAM bandwidth p50 (% of peak) from which kernels are bandwidth-limited; XProf's
/// suggestion engine uses 70 % HBM utilization for "memory bound" (`docs/references.md#xprof`).
pub const HIGH_DRAM_BW: f64 = 70.0;
/// Tensor activity p50 (%) below which matrix units are not what limits the kernels
/// (XProf pairs high HBM with MXU < 50 %; tensor pipes are rarely above 30 % when starved).
pub const LOW_TENSOR: f64 = 30.0;
/// Without GPM: memory-controller busy p50 (%) that signals bandwidth pressure.
pub const HIGH_UTIL_MEM: f64 = 70.0;

static META: RuleMeta = RuleMeta {
    id: "memory_bound",
    title: "Kernels limited by memory bandwidth",
    severity: Severity::Medium,
    doc: RuleDoc {
        detects: "DRAM bandwidth near its peak while tensor units are mostly idle (GPM), or — without GPM — the memory controller busy most of the time while the GPU is loaded.",
        why: "Elementwise and normalisation kernels move more bytes than they compute; the GPU waits on memory, not on math.",
        evidence: "GPM DRAM bandwidth and tensor activity p50; util_mem p50 with util_gpu p50.",
        first: "Fuse elementwise chains (torch.compile), use lower precision to halve bytes moved, remove redundant passes over activations.",
    },
};

/// See the module docs.
pub struct MemoryBound;

impl Rule for MemoryBound {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn evaluate(&self, s: &Signals) -> Option<crate::report::Finding> {
        let mut devices = Vec::new();
        let mut ev = Vec::new();
        let mut gpm = false;
        for d in s.sampled_devices() {
            let dev = Some(d.index);
            if let Some(bw) = d.gpm_dram_bw {
                gpm = true;
                let e = evidence(
                    "GPM DRAM bandwidth p50",
                    bw.p50,
                    Comparator::AtLeast,
                    HIGH_DRAM_BW,
                    "% of peak",
                    dev,
                );
                if !e.agrees {
                    continue;
                }
                devices.push(d.index);
                ev.push(e.weighing(2.0));
                if let Some(t) = d.gpm_tensor {
                    let e = evidence(
                        "GPM tensor activity p50",
                        t.p50,
                        Comparator::Below,
                        LOW_TENSOR,
                        "%",
                        dev,
                    );
                    ev.push(e.weighing(1.0));
                }
            } else if let (Some(um), Some(u)) = (d.util_mem, d.util) {
                if um.p50 >= HIGH_UTIL_MEM && u.p50 >= 80.0 {
                    devices.push(d.index);
                    // Agrees: its threshold is the condition just checked.
                    ev.push(
                        evidence(
                            "util_mem p50 (memory controller busy)",
                            um.p50,
                            Comparator::AtLeast,
                            HIGH_UTIL_MEM,
                            "%",
                            dev,
                        )
                        .weighing(1.0),
                    );
                }
            }
        }
        if devices.is_empty() {
            return None;
        }
        let conf = confidence(&ev, &[]) * if gpm { 0.9 } else { 0.5 };
        let mut f = META.finding(
            conf,
            format!(
                "{} time moving memory, not computing: DRAM bandwidth is near its peak.",
                verb(&devices, "spends its", "spend their")
            ),
            ev,
        );
        f.lost_share_basis = Some("not estimated: a memory-bound kernel keeps the GPU busy; what fusion or lower precision would save shows in a compare".into());
        f.devices = devices;
        f.actions = vec![
            action(Cost::Low, "Use bf16/fp16 activations to halve the bytes moved"),
            action(Cost::Medium, "Fuse elementwise and normalisation chains (torch.compile, fused optimizers such as foreach/fused Adam)"),
            action(Cost::Medium, "Remove redundant passes over activations (extra casts, copies, .contiguous())"),
        ];
        f.experiment = experiment(
            "Compile the model with torch.compile (one change)",
            "DRAM bandwidth share per step falls and step time p50 falls",
            "gpm_dram_bw p50; step time p50",
        );
        if !gpm {
            f.unseen.push(super::NO_GPM.into());
        }
        Some(f)
    }
}
