//! Running the rules over a report: signals → findings → verdict.

use crate::report::{Finding, Report, Verdict};
use crate::rules::RULES;
use crate::signals::Signals;

/// Runs every rule on `report` and replaces its findings (most important first) and verdict.
///
/// A merged job report (one with a `ranks` section) holds per-rank summaries, not samples:
/// its findings are re-derived from those (see [`crate::merge::diagnose_job`]).
pub fn diagnose(report: &mut Report) {
    if crate::merge::diagnose_job(report) {
        return;
    }
    let signals = Signals::from_report(report);
    diagnose_with(report, &signals);
}

/// Like [`diagnose`], on signals already derived from `report` and extended (a profiler
/// trace attached to [`Signals::trace`]).
pub fn diagnose_with(report: &mut Report, signals: &Signals) {
    let mut findings: Vec<Finding> = RULES.iter().filter_map(|r| r.evaluate(signals)).collect();
    findings.sort_by(|a, b| {
        precedence(&a.id)
            .cmp(&precedence(&b.id))
            .then_with(|| b.score().total_cmp(&a.score()))
            .then_with(|| a.id.cmp(&b.id))
    });
    report.verdict = verdict(&findings, signals);
    report.findings = findings;
}

/// Findings that must be fixed before the others can be judged come first, whatever their
/// score: a failing GPU (nothing else matters), then a throttled one (the guides: fix power
/// and cooling before touching code — every other measurement is taken on slowed hardware).
pub(crate) fn precedence(id: &str) -> u8 {
    match id {
        "gpu_fault" => 0,
        "throttling" => 1,
        _ => 2,
    }
}

fn verdict(findings: &[Finding], s: &Signals) -> Verdict {
    if let Some(top) = findings.first() {
        let share = top
            .lost_share
            .map(|l| format!(" (~{:.0}% of the run lost)", l * 100.0))
            .unwrap_or_default();
        return Verdict {
            id: top.id.clone(),
            title: top.title.clone(),
            confidence: top.confidence,
            lost_share: top.lost_share,
            summary: format!("{}{share}: {}", top.title, top.summary),
        };
    }
    let summary = if s.devices.is_empty() {
        match &s.gpu_absent_reason {
            Some(why) => format!("No GPU metrics were recorded: {why}."),
            None => "No GPU was recorded.".to_string(),
        }
    } else {
        let parts: Vec<String> = s
            .sampled_devices()
            .map(|d| {
                format!(
                    "GPU {} util p50 {:.0}%",
                    d.index,
                    d.util.map_or(f64::NAN, |u| u.p50)
                )
            })
            .collect();
        if parts.is_empty() {
            "No utilization samples were recorded, so nothing could be checked.".to_string()
        } else {
            format!("No rule fired ({}).", parts.join(", "))
        }
    };
    Verdict {
        summary,
        ..Verdict::default()
    }
}
