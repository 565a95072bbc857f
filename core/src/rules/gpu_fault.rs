//! `gpu_fault`: the GPU reported errors or fell off the bus.

use super::{evidence, gpus, Rule, RuleDoc, RuleMeta};
use crate::report::Comparator;
use crate::report::FindingSource;
use crate::report::{Action, Cost, Evidence, Experiment, Finding, Severity};
use crate::signals::{DeviceSignals, Signals};

/// XID 79: "GPU has fallen off the bus".
pub(crate) const XID_FALLEN_OFF_BUS: u64 = 79;

static META: RuleMeta = RuleMeta {
    id: "gpu_fault",
    title: "GPU reported errors or was lost",
    severity: Severity::Critical,
    doc: RuleDoc {
        detects: "XID critical-error events, and GPUs that stopped answering (GPU_IS_LOST, fallen off the bus).",
        why: "A faulting GPU kills or silently slows the job; no tuning helps until the hardware or driver is fixed.",
        evidence: "XID events with their codes and times; the time a GPU was lost.",
        first: "Read the kernel log (`dmesg | grep -i xid`) and the driver's bug report (`nvidia-bug-report.sh`); drain the node and have the GPU checked.",
    },
};

/// See the module docs.
pub struct GpuFault;

impl Rule for GpuFault {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn evaluate(&self, s: &Signals) -> Option<Finding> {
        let mut devices = Vec::new();
        let mut ev = Vec::new();
        let mut lost_any = false;
        let mut lost_share: f64 = 0.0;
        let mut parts = Vec::new();
        for d in s.devices.iter().filter(|d| d.job) {
            let dev = Some(d.index);
            let mut hit = false;
            if !d.xids.is_empty() {
                hit = true;
                parts.push(xids(d, &mut ev));
            }
            if let Some(t) = d.lost_at_s {
                hit = true;
                lost_any = true;
                let mut e = evidence(
                    "GPU lost (GPU_IS_LOST) at",
                    t,
                    Comparator::AtLeast,
                    0.0,
                    "s",
                    dev,
                );
                e.time_range = Some([t, s.duration_s.max(t)]);
                ev.push(e);
                parts.push(format!("GPU {} was lost at {t:.1} s", d.index));
                if s.duration_s > 0.0 {
                    lost_share =
                        lost_share.max(((s.duration_s - t) / s.duration_s).clamp(0.0, 1.0));
                }
            }
            if hit {
                devices.push(d.index);
            }
        }
        if devices.is_empty() {
            return None;
        }
        Some(Finding {
            id: META.id.into(),
            title: META.title.into(),
            severity: META.severity,
            confidence: if lost_any { 1.0 } else { 0.9 },
            summary: format!("{}; fix the hardware or driver before tuning {}.", parts.join("; "), gpus(&devices)),
            lost_share: (lost_share > 0.0).then_some(super::round(lost_share)),
            lost_share_basis: Some(if lost_share > 0.0 {
                "time from the GPU's loss to the end of the run, over the run".into()
            } else {
                "not estimated: an XID does not say how much time it cost".into()
            }),
            devices,
            evidence: ev,
            actions: vec![
                Action { text: "Read `dmesg | grep -i xid` and look the codes up in NVIDIA's XID catalogue".into(), cost: Cost::Low },
                Action { text: "Collect `nvidia-bug-report.sh`; check for a driver update or known issue".into(), cost: Cost::Low },
                Action { text: "Drain the node and have the GPU, its power and cooling inspected or replaced".into(), cost: Cost::High },
            ],
            experiment: Experiment {
                change: "Run the same job on another GPU or node (one change)".into(),
                expect: "No XID events and no lost GPU; the job completes".into(),
                metric: "events of kind xid / gpu_lost".into(),
            },
            unseen: Vec::new(),
            source: Some(FindingSource::Samples),
            caused_by: None,
        })
    }
}

/// `d`'s XID events as evidence (the first 20, each at its time), and the sentence that
/// names them.
fn xids(d: &DeviceSignals, ev: &mut Vec<Evidence>) -> String {
    let dev = Some(d.index);
    for (t, code) in d.xids.iter().take(20) {
        let mut e = evidence(
            &format!("XID {code}"),
            *code as f64,
            Comparator::Above,
            0.0,
            "xid",
            dev,
        );
        e.time_range = Some([*t, *t]);
        ev.push(e);
    }
    let codes: Vec<String> = d.xids.iter().map(|x| x.1.to_string()).collect();
    let off_bus = if d.xids.iter().any(|x| x.1 == XID_FALLEN_OFF_BUS) {
        " (79: fallen off the bus)"
    } else {
        ""
    };
    format!("GPU {} reported XID {}{off_bus}", d.index, codes.join(", "))
}
