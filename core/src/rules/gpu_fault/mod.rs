//! `gpu_fault`: the GPU reported errors, fell off the bus, or its health counters say its
//! memory is failing (uncorrected ECC errors, a pending or failed row remap, pages pending
//! retirement, corrected errors rising: [`health`]).

mod health;

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
        detects: "XID critical-error events; GPUs that stopped answering (GPU_IS_LOST, fallen off the bus); health counters by level: uncorrected ECC errors, a row remap failure or pages pending retirement (drain), a remapped row pending (reset), corrected ECC or NVLink errors rising during the run (watch).",
        why: "A faulting GPU kills or silently slows the job, and every other measurement on it is suspect; no tuning helps until the hardware or driver is fixed.",
        evidence: "XID events with their codes and times; the time a GPU was lost; ECC error counts (volatile and aggregate), remapped rows (pending, failure), retired pages pending and NVLink error counters, at the start, about once a minute and at the stop, or from a dump.",
        first: "Drain and replace at uncorrected errors or a remap failure; reset the GPU when the job ends at a pending remap; watch a rising corrected count. For XIDs, read `dmesg | grep -i xid` and `nvidia-bug-report.sh`.",
    },
};

/// See the module docs.
pub struct GpuFault;

impl Rule for GpuFault {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn needs(&self) -> super::Needs {
        super::Needs::State
    }

    fn evaluate(&self, s: &Signals) -> Option<Finding> {
        let mut seen = Seen::default();
        for d in s.devices.iter().filter(|d| d.job) {
            seen.device(d, s.duration_s);
        }
        (!seen.devices.is_empty()).then(|| seen.finding())
    }
}

/// What the GPUs showed: health counters, XIDs, a lost GPU.
#[derive(Default)]
struct Seen {
    devices: Vec<u32>,
    ev: Vec<Evidence>,
    lost_any: bool,
    xid_any: bool,
    lost_share: f64,
    parts: Vec<String>,
    worst: Option<health::Level>,
    health_actions: Vec<(health::Level, Vec<Action>)>,
}

impl Seen {
    /// Reads one GPU of a run `duration_s` long.
    fn device(&mut self, d: &DeviceSignals, duration_s: f64) {
        let mut hit = false;
        if let Some(h) = health::judge(d, &mut self.ev) {
            hit = true;
            self.worst = self.worst.max(Some(h.level));
            self.parts.push(h.sentence);
            self.health_actions.push((h.level, h.actions));
        }
        if !d.xids.is_empty() {
            hit = true;
            self.xid_any = true;
            self.parts.push(xids(d, &mut self.ev));
        }
        if let Some(t) = d.lost_at_s {
            hit = true;
            self.lost_any = true;
            let mut e = evidence(
                "GPU lost (GPU_IS_LOST) at",
                t,
                Comparator::AtLeast,
                0.0,
                "s",
                Some(d.index),
            );
            e.time_range = Some([t, duration_s.max(t)]);
            self.ev.push(e);
            self.parts
                .push(format!("GPU {} was lost at {t:.1} s", d.index));
            if duration_s > 0.0 {
                let after = ((duration_s - t) / duration_s).clamp(0.0, 1.0);
                self.lost_share = self.lost_share.max(after);
            }
        }
        if hit {
            self.devices.push(d.index);
        }
    }

    /// XIDs and a lost GPU are failures; health counters alone are as serious as their
    /// worst level.
    fn severity(&self) -> Severity {
        match self.worst {
            _ if self.lost_any || self.xid_any => Severity::Critical,
            Some(health::Level::Drain) => Severity::Critical,
            Some(health::Level::Reset) => Severity::High,
            _ => Severity::Low,
        }
    }

    /// The actions of the worst level first, then the XID ones.
    fn actions(&mut self) -> Vec<Action> {
        self.health_actions.sort_by_key(|a| std::cmp::Reverse(a.0));
        let mut actions: Vec<Action> = std::mem::take(&mut self.health_actions)
            .into_iter()
            .flat_map(|a| a.1)
            .collect();
        if self.lost_any || self.xid_any {
            actions.extend([
                Action { text: "Read `dmesg | grep -i xid` and look the codes up in NVIDIA's XID catalogue".into(), cost: Cost::Low },
                Action { text: "Collect `nvidia-bug-report.sh`; check for a driver update or known issue".into(), cost: Cost::Low },
                Action { text: "Drain the node and have the GPU, its power and cooling inspected or replaced".into(), cost: Cost::High },
            ]);
        }
        actions
    }

    fn finding(mut self) -> Finding {
        let severity = self.severity();
        let tail = if severity >= Severity::High {
            format!(
                "fix the hardware or driver before tuning {}",
                gpus(&self.devices)
            )
        } else {
            "correctable so far: watch the rate".to_string()
        };
        let lost = self.lost_share;
        Finding {
            id: META.id.into(),
            title: META.title.into(),
            severity,
            confidence: if self.lost_any { 1.0 } else { 0.9 },
            summary: format!("{}; {tail}.", self.parts.join("; ")),
            lost_share: (lost > 0.0).then_some(super::round(lost)),
            lost_share_basis: Some(if lost > 0.0 {
                "time from the GPU's loss to the end of the run, over the run".into()
            } else {
                "not estimated: an XID or a health counter does not say how much time it cost".into()
            }),
            actions: self.actions(),
            devices: self.devices,
            evidence: self.ev,
            experiment: Experiment {
                change: "Run the same job on another GPU or node (one change)".into(),
                expect: "No XID events, no lost GPU and no new ECC, remap or NVLink errors; the job completes".into(),
                metric: "events of kind xid / gpu_lost; devices[].health counters".into(),
            },
            unseen: Vec::new(),
            source: Some(FindingSource::Samples),
            caused_by: None,
        }
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
