//! Fixes that held: the changes a team tried, each as the run before and the run after
//! with what the comparison said.
//!
//! Two kinds. A run whose session named a baseline (`gpuwhy record --baseline`) carries
//! its comparison (`comparison` in the report): that comparison's summary and verdict diff
//! are shown, with the baseline's own row when the baseline is among the reports. Runs of
//! one label, in start order, whose verdict moved from one to the next are a change too:
//! their verdict diff comes from the findings both reports list ([`verdict_diff`]),
//! without the step-time test, which needs the samples (`gpuwhy compare` has it).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::RunRow;
use crate::compare::{summary, verdict_diff};
use crate::report::{Report, SCHEMA};

/// A lost share that moved less than this between two runs is called unchanged. A lost
/// share is an estimate; three points is a choice, not a measured noise level (the JSON
/// form gives both shares for a reader who wants another line).
pub const SAME_SHARE: f64 = 0.03;

/// How the two runs of a change were paired.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FixVia {
    /// The later run's report names the earlier one as its baseline.
    #[default]
    Baseline,
    /// Consecutive runs of one label whose verdict moved.
    Label,
}

/// One change tried: before, after, and what the comparison said.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Fix {
    /// How the runs were paired.
    pub via: FixVia,
    /// The later run's label.
    pub label: Option<String>,
    /// The earlier run's report among the summarised ones, when it is among them.
    pub before: Option<String>,
    /// The baseline's path as the later run's session named it (for `label`, `before`).
    pub before_path: String,
    /// The later run's report.
    pub after: String,
    /// The earlier run's verdict and lost share, when it is among the summarised runs.
    pub before_verdict: Option<String>,
    /// The earlier run's lost share.
    pub before_lost_share: Option<f64>,
    /// The later run's verdict.
    pub after_verdict: String,
    /// The later run's lost share.
    pub after_lost_share: Option<f64>,
    /// Whether the runs were compared (false: `summary` says why not).
    pub compared: bool,
    /// The comparison's one line (`gpuwhy compare`'s), or why there is none.
    pub summary: String,
    /// Findings of the earlier run gone in the later one.
    pub resolved: Vec<String>,
    /// Findings new in the later run.
    pub new: Vec<String>,
    /// The earlier run's confirming experiments that held in the later run (baseline only).
    pub experiments_held: u32,
    /// Those that did not.
    pub experiments_not_held: u32,
    /// `better`, `worse` or `same` (lost share down, up or within [`SAME_SHARE`]), or
    /// `unknown` when a lost share is missing.
    pub outcome: String,
}

/// The changes among `runs` (sorted by start), in the later run's order.
pub fn fixes(runs: &[RunRow]) -> Vec<Fix> {
    let mut out = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        if let Some(b) = &r.baseline {
            let before = baseline_row(runs, i, &b.path);
            let mut f = Fix {
                via: FixVia::Baseline,
                before_path: b.path.clone(),
                compared: b.compared,
                summary: b.summary.clone(),
                resolved: b.resolved.clone(),
                new: b.new.clone(),
                experiments_held: b.experiments_held,
                experiments_not_held: b.experiments_not_held,
                ..Fix::default()
            };
            f.pair(before, r);
            out.push(f);
        } else if let Some(before) = previous_of_label(runs, i) {
            let v = verdict_diff(&stand_in(before), &stand_in(r));
            let mut f = Fix {
                via: FixVia::Label,
                before_path: before.file.clone(),
                compared: true,
                summary: summary(None, &v),
                resolved: v.resolved,
                new: v.new,
                ..Fix::default()
            };
            f.pair(Some(before), r);
            out.push(f);
        }
    }
    out
}

impl Fix {
    fn pair(&mut self, before: Option<&RunRow>, after: &RunRow) {
        self.label = after.label.clone();
        self.after = after.file.clone();
        self.after_verdict = after.verdict.clone();
        self.after_lost_share = after.lost_share;
        if let Some(b) = before {
            self.before = Some(b.file.clone());
            self.before_verdict = Some(b.verdict.clone());
            self.before_lost_share = b.lost_share;
        }
        let lost = |s: Option<f64>, v: Option<&str>| s.or((v == Some("none")).then_some(0.0));
        let a = lost(self.before_lost_share, self.before_verdict.as_deref());
        let b = lost(self.after_lost_share, Some(&self.after_verdict));
        self.outcome = match (a, b) {
            (Some(a), Some(b)) if b < a - SAME_SHARE => "better",
            (Some(a), Some(b)) if b > a + SAME_SHARE => "worse",
            (Some(_), Some(_)) => "same",
            _ => "unknown",
        }
        .into();
    }
}

/// A report of `row`'s verdict and findings (ids and confidences) alone: what
/// [`verdict_diff`] reads, so that the summary's diff is `gpuwhy compare`'s own. Made from
/// JSON, so that a field added to the report model later is defaulted here.
fn stand_in(row: &RunRow) -> Report {
    let finding = |(id, confidence): &(String, f64)| {
        serde_json::json!({
            "id": id, "title": id, "severity": "info", "confidence": confidence, "summary": "",
            "evidence": [], "actions": [], "experiment": { "change": "", "expect": "" }
        })
    };
    let doc = serde_json::json!({
        "schema": SCHEMA,
        "verdict": { "id": row.verdict, "title": row.title, "confidence": row.confidence,
                     "summary": "" },
        "findings": row.findings.iter().map(finding).collect::<Vec<_>>(),
    });
    serde_json::from_value(doc).expect("a verdict and findings with every required field read")
}

/// The run among `runs` that the baseline path of run `i` names: the same path, else the
/// latest run before it with the same file name.
fn baseline_row<'a>(runs: &'a [RunRow], i: usize, path: &str) -> Option<&'a RunRow> {
    if let Some(r) = runs.iter().find(|r| r.file == path) {
        return Some(r);
    }
    let name = Path::new(path).file_name()?;
    runs[..i]
        .iter()
        .rev()
        .find(|r| Path::new(&r.file).file_name() == Some(name))
}

/// The run of the same label just before run `i`, when the verdict moved between them.
fn previous_of_label(runs: &[RunRow], i: usize) -> Option<&RunRow> {
    let r = &runs[i];
    let label = r.label.as_ref()?;
    if r.in_job.is_some() {
        return None;
    }
    let before = runs[..i]
        .iter()
        .rev()
        .find(|p| p.in_job.is_none() && p.label.as_ref() == Some(label))?;
    (before.verdict != r.verdict).then_some(before)
}
