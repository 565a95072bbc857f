//! Claims the evidence carries. Each rule says what it needs before it can speak
//! ([`Rule::needs`]): a snapshot or a handful of samples supports findings about state, never
//! patterns over time; a lost share is given only where something was measured to lose
//! against; severity follows confidence (docs/rules.md, "The evidence each claim needs").

use crate::report::{Finding, FindingSource, Severity};
use crate::rules::{Needs, MIN_SERIES_SAMPLES, RULES};
use crate::signals::Signals;

/// Confidence below which no finding is `high`: fewer than three in five of the weighted
/// signals it checked agree, so a user reading "high" would read more certainty than there
/// is.
pub const HIGH_CONFIDENCE: f64 = 0.6;

/// Confidence below which no finding is `medium`.
pub const MEDIUM_CONFIDENCE: f64 = 0.35;

/// What settles a verdict on thin evidence: a recording over time, by the two ways a user
/// has at hand.
pub const SETTLE: &str = "record at least two minutes while the job runs: `gpuwhy record --duration 120s` on the machine, or `nvidia-smi dmon -s pucvmet -d 1 -c 120 > dmon.log` and `gpuwhy diagnose dmon.log`";

fn needs(id: &str) -> Needs {
    RULES
        .iter()
        .find(|r| r.meta().id == id)
        .map_or(Needs::Series, |r| r.needs())
}

/// Whether a finding was decided from the GPU samples (not from step markers, a trace or a
/// merged job's ranks, which are series of their own).
fn from_samples(f: &Finding) -> bool {
    matches!(f.source, None | Some(FindingSource::Samples))
}

/// What the samples can carry: drops findings of patterns over time decided from fewer than
/// [`MIN_SERIES_SAMPLES`] samples per GPU, and takes the lost share from state findings read
/// from a one-sample snapshot. Returns how many findings were dropped.
pub(super) fn within_evidence(findings: &mut Vec<Finding>, s: &Signals) -> usize {
    let n = s.samples_per_gpu();
    if s.devices.is_empty() || n >= MIN_SERIES_SAMPLES {
        return 0;
    }
    let before = findings.len();
    findings.retain(|f| !from_samples(f) || needs(&f.id) == Needs::State);
    if n <= 1 {
        for f in findings.iter_mut().filter(|f| from_samples(f)) {
            if f.lost_share.take().is_some() {
                f.lost_share_basis = Some(format!(
                    "not estimated: a snapshot shows the GPU's state, not how long it lasts; needs samples over time ({SETTLE})"
                ));
            }
        }
    }
    before - findings.len()
}

/// When no GPU did any work, the performance rules have nothing to judge: only `idle_gpu`
/// and the GPUs' hardware state are said — a failing GPU, a narrowed link.
pub(super) fn no_work_alone(findings: &mut Vec<Finding>, s: &Signals) {
    let any_work = s.job_devices().next().is_some();
    if !any_work && s.unused_devices().next().is_some() {
        findings.retain(|f| ["idle_gpu", "gpu_fault", "pcie_degraded"].contains(&f.id.as_str()));
    }
}

/// The severity a finding's confidence supports: no `high` below [`HIGH_CONFIDENCE`], no
/// `medium` below [`MEDIUM_CONFIDENCE`]. A failing GPU stays `critical`: its evidence is
/// the driver's own report, not a weighing of signals.
pub fn severity_for(severity: Severity, confidence: f64) -> Severity {
    let cap = if confidence >= HIGH_CONFIDENCE {
        Severity::Critical
    } else if confidence >= MEDIUM_CONFIDENCE {
        Severity::Medium
    } else {
        Severity::Low
    };
    if severity == Severity::Critical {
        severity
    } else {
        severity.min(cap)
    }
}

/// Applies [`severity_for`] to every finding.
pub fn settle_severity(findings: &mut [Finding]) {
    for f in findings {
        f.severity = severity_for(f.severity, f.confidence);
    }
}

/// The sentence a verdict on thin evidence ends with: what the samples show and what would
/// settle it.
pub(super) fn thin(s: &Signals, dropped: usize) -> Option<String> {
    let n = s.samples_per_gpu();
    if s.devices.is_empty() || n >= MIN_SERIES_SAMPLES || n == 0 {
        return None;
    }
    let what = if n == 1 {
        "A one-sample snapshot shows the GPUs' state (clocks, link, errors, memory, processes), not patterns over time".to_string()
    } else {
        format!("Only {n} samples per GPU: they show readings, not patterns over time")
    };
    let left = if dropped > 0 {
        format!(
            " ({dropped} finding{} that would need them left out)",
            if dropped == 1 { "" } else { "s" }
        )
    } else {
        String::new()
    };
    Some(format!("{what}{left}; to settle it, {SETTLE}."))
}
