//! Running the rules over a report: signals → findings → verdict. The one place that
//! orders findings and writes a verdict, for a recorded report, a merged job's
//! ([`job`]), an imported log's and one read with a profiler trace.

mod causes;
mod claims;
mod job;
mod sources;
mod stand_in;

pub use claims::{settle_severity, severity_for, HIGH_CONFIDENCE, MEDIUM_CONFIDENCE};
pub use job::rank_list;
pub use sources::{diagnose_any, diagnose_log, diagnose_traced, temper, Diagnosed, FEW_SAMPLES};
pub use stand_in::SM_ACTIVITY_FOR_UTIL;

use crate::report::{Finding, Report, Verdict};
use crate::rules::{short_log, unexplained_idle, Rule, UnexplainedIdle, RULES};
use crate::signals::Signals;

/// Runs every rule on `report` and replaces its findings (most important first) and verdict.
///
/// A merged job report (one with a `ranks` section) holds per-rank summaries, not samples:
/// its signals and findings are re-derived from those.
pub fn diagnose(report: &mut Report) {
    if job::diagnose_job(report) {
        return;
    }
    let signals = Signals::from_report(report);
    diagnose_with(report, &signals);
}

/// Like [`diagnose`], on signals already derived from `report` and extended (a profiler
/// trace attached to [`Signals::trace`]).
///
/// Findings the samples cannot carry are left out (a pattern over time from a snapshot,
/// [`claims`]); when no GPU worked, only that is said; `unexplained_idle` is kept only for
/// the idle time the other findings leave unexplained; a short log caps every confidence;
/// findings are then ordered by what they cost ([`order`]), each consequence right after
/// its cause, which carries its cost ([`causes`]); severity follows confidence.
pub fn diagnose_with(report: &mut Report, signals: &Signals) {
    let mut findings: Vec<Finding> = Vec::new();
    let mut idle = None;
    for r in RULES {
        match r.evaluate(signals) {
            Some(f) if f.id == UnexplainedIdle.meta().id => idle = Some(f),
            Some(f) => findings.push(f),
            None => {}
        }
    }
    let dropped = claims::within_evidence(&mut findings, signals);
    claims::no_work_alone(&mut findings, signals);
    if let Some(f) = idle.and_then(|f| unexplained_idle::settle(f, &findings, signals)) {
        findings.push(f);
        claims::within_evidence(&mut findings, signals);
    }
    short_log::temper(&mut findings, signals);
    stand_in::name_stand_ins(&mut findings, signals);
    order(&mut findings);
    causes::link(&mut findings);
    order(&mut findings);
    let mut findings = causes::group(findings);
    claims::settle_severity(&mut findings);
    hardware_first(&mut findings);
    report.verdict = verdict(&findings, signals);
    if let Some(thin) = claims::thin(signals, dropped) {
        report.verdict.summary = format!("{} {thin}", report.verdict.summary);
    }
    report.findings = findings;
}

/// Orders findings by what they cost: a failing GPU first (nothing else can be judged on
/// it), then by expected lost share (the estimate × the finding's confidence: a cost that
/// is less certain counts for less), largest first, findings without an estimate after
/// those with one, then by score. Throttling has no precedence: a data wait that costs
/// more than the lower clock is the verdict, and throttling's advice still says to fix
/// power and cooling first.
pub fn order(findings: &mut [Finding]) {
    findings.sort_by(|a, b| {
        precedence(a)
            .cmp(&precedence(b))
            .then_with(|| cost(b).total_cmp(&cost(a)))
            .then_with(|| b.score().total_cmp(&a.score()))
            .then_with(|| a.id.cmp(&b.id))
    });
}

/// Throttling lost its precedence in the order, not its advice: when other causes are
/// reported beside it, its first action says to fix power and cooling before judging them
/// (the guides: every other measurement is taken on slowed hardware).
fn hardware_first(findings: &mut [Finding]) {
    if findings.len() < 2 {
        return;
    }
    if let Some(t) = findings.iter_mut().find(|f| f.id == "throttling") {
        t.actions.insert(
            0,
            crate::report::Action {
                text: "Fix power and cooling first: the other findings were measured on slowed hardware, so re-measure them once the clocks hold".into(),
                cost: crate::report::Cost::Low,
            },
        );
    }
}

/// The expected lost share used to order, to the percent (closer estimates are not told
/// apart); −1 without an estimate.
fn cost(f: &Finding) -> f64 {
    f.lost_share
        .map_or(-1.0, |l| (l * f.confidence.clamp(0.0, 1.0) * 100.0).round())
}

/// Findings that must be fixed before the others can be judged come first, whatever their
/// cost: a failing GPU (an XID, a lost GPU, uncorrected errors, a pending or failed remap —
/// `gpu_fault` at `high` or above). Health counters that only need watching are ordered by
/// cost like everything else.
pub(crate) fn precedence(f: &Finding) -> u8 {
    match f.id.as_str() {
        "gpu_fault" if f.severity >= crate::report::Severity::High => 0,
        _ => 1,
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
                let busy = d
                    .busy
                    .map(|b| {
                        let left = b.lead_idle_s + b.tail_idle_s;
                        let idle = if left > 0.0 {
                            format!(
                                " in use, after leaving out {left:.0} s idle at start-up/shutdown"
                            )
                        } else {
                            String::new()
                        };
                        format!(", busy {:.0}% of the time{idle}", b.util_mean)
                    })
                    .unwrap_or_default();
                format!(
                    "GPU {} util p50 {:.0}%{busy}",
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

#[cfg(test)]
mod tests;
