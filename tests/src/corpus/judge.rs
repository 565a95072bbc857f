//! Whether an answer holds, and how a run of the corpus compares with the committed baseline.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use super::{Case, Got};

/// GPUs idle at least this share of the time must get an answer, never "No bottleneck
/// found" or an empty verdict (the diagnosis always answers, docs/references.md#field-guides):
/// busy less than 80% of the time is a meaningful loss.
pub const IDLE_SHARE_MUST_ANSWER: f64 = 0.2;

/// The rule id that answers for idle GPUs whose cause is not visible.
const UNEXPLAINED_IDLE: &str = "unexplained_idle";

/// How one case measured up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    /// The answer holds.
    pub matched: bool,
    /// The GPUs idled ≥ [`IDLE_SHARE_MUST_ANSWER`] of the time and gpuwhy said nothing.
    pub silent: bool,
    /// `yes`, or what was wrong.
    pub why: String,
}

/// Judges `got` against the case's expectation. An expected rule id must be the verdict
/// (one of `a|b`), its lost share within `expect.lost_share` when the case gives a range,
/// with every `also` reported and no `absent` one; `none` means no finding at all;
/// `unknown` (the source gives no cause) holds whenever gpuwhy is not silent on idle GPUs
/// and reports nothing `absent` forbids. Whatever the verdict, the findings must keep within
/// the case's limits (`max_severity`, `no_lost_share`, `nothing_else`). Silence on idle GPUs
/// never holds.
pub fn judge(case: &Case, got: &Got) -> Judgement {
    if let Some(e) = &got.error {
        return Judgement {
            matched: false,
            silent: false,
            why: format!("error: {e}"),
        };
    }
    let exp = &case.expect;
    let silent = got.idle_share.is_some_and(|i| i >= IDLE_SHARE_MUST_ANSWER)
        && (got.verdict.is_empty() || got.verdict == "none");
    let mut wrong = Vec::new();
    if silent {
        wrong.push(format!(
            "silent although the GPUs idle {:.0}% of the time",
            got.idle_share.unwrap_or(0.0) * 100.0
        ));
    }
    let has = |id: &str| got.findings.iter().any(|f| f == id);
    match exp.top.as_str() {
        "unknown" => {}
        "none" if !got.findings.is_empty() => {
            wrong.push(format!(
                "expected no finding, got {}",
                got.findings.join(", ")
            ));
        }
        "none" => {}
        top if !top.split('|').any(|t| t == got.verdict) => {
            wrong.push(format!("top {} instead of {top}", got.verdict));
        }
        _ => {
            if let Some((lo, hi)) = case.lost_share {
                if !got.lost_share.is_some_and(|l| (lo..=hi).contains(&l)) {
                    wrong.push(format!(
                        "lost share {} outside {:.0}-{:.0}%",
                        got.lost_share
                            .map_or("unknown".into(), |l| format!("{:.0}%", l * 100.0)),
                        lo * 100.0,
                        hi * 100.0
                    ));
                }
            }
        }
    }
    let missing: Vec<&str> = exp
        .also
        .iter()
        .map(String::as_str)
        .filter(|id| !has(id))
        .collect();
    if !missing.is_empty() {
        wrong.push(format!("missing {}", missing.join(", ")));
    }
    let extra: Vec<&str> = exp
        .absent
        .iter()
        .map(String::as_str)
        .filter(|id| has(id))
        .collect();
    if !extra.is_empty() {
        wrong.push(format!("unexpected {}", extra.join(", ")));
    }
    wrong.extend(beyond_limits(case, got));
    Judgement {
        matched: wrong.is_empty(),
        silent,
        why: if wrong.is_empty() {
            "yes".into()
        } else {
            wrong.join("; ")
        },
    }
}

/// What the findings claim beyond the case's [`Limits`](super::Limits): a severity above
/// `max_severity`, a lost share `no_lost_share` forbids, a finding `nothing_else` forbids.
fn beyond_limits(case: &Case, got: &Got) -> Vec<String> {
    let limits = &case.limits;
    let mut wrong = Vec::new();
    if let Some(max) = limits.max_severity {
        let over: Vec<String> = got
            .briefs
            .iter()
            .filter(|b| b.severity > max)
            .map(|b| format!("{} {}", b.id, b.severity.as_str()))
            .collect();
        if !over.is_empty() {
            wrong.push(format!(
                "above {} severity: {}",
                max.as_str(),
                over.join(", ")
            ));
        }
    }
    let all = limits.no_lost_share.iter().any(|id| id == "*");
    let lost: Vec<String> = got
        .briefs
        .iter()
        .filter(|b| all || limits.no_lost_share.contains(&b.id))
        .filter_map(|b| b.lost_share.map(|l| format!("{} ~{:.0}%", b.id, l * 100.0)))
        .collect();
    if !lost.is_empty() {
        wrong.push(format!("lost share claimed: {}", lost.join(", ")));
    }
    if limits.nothing_else {
        let allowed = |id: &str| {
            case.expect.top.split('|').any(|t| t == id) || case.expect.also.iter().any(|a| a == id)
        };
        let others: Vec<&str> = got
            .findings
            .iter()
            .map(String::as_str)
            .filter(|id| !allowed(id))
            .collect();
        if !others.is_empty() {
            wrong.push(format!("nothing else expected, got {}", others.join(", ")));
        }
    }
    wrong
}

/// Whether silence on idle GPUs fails the run regardless of the baseline: once the rule
/// that answers for unexplained idle time exists. Before, such cases are reported as misses.
pub fn silent_fails() -> bool {
    gpuwhy::rules::RULES
        .iter()
        .any(|r| r.meta().id == UNEXPLAINED_IDLE)
}

/// The names of the cases that matched when the baseline was last accepted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Baseline {
    /// Matched case names.
    pub matched: BTreeSet<String>,
}

impl Baseline {
    /// Reads the baseline; a missing file is an empty baseline (nothing can regress yet).
    pub fn load(path: &Path) -> Result<Baseline, String> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Baseline::default()),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let v: Value = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not valid JSON: {e}", path.display()))?;
        let matched = v["matched"]
            .as_array()
            .ok_or_else(|| format!("{} has no \"matched\" list", path.display()))?
            .iter()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect();
        Ok(Baseline { matched })
    }

    /// The baseline's file text: the matched names, sorted, with a sentence on its use.
    pub fn to_json(&self) -> String {
        let v = serde_json::json!({
            "about": "Corpus cases that matched when this baseline was accepted (cargo xtask accuracy --update, run only to accept improvements; docs/accuracy.md). cargo xtask accuracy fails when one of them no longer matches.",
            "matched": self.matched.iter().collect::<Vec<_>>(),
        });
        let mut s = serde_json::to_string_pretty(&v).expect("a JSON value serializes");
        s.push('\n');
        s
    }
}

/// A run of the corpus against the baseline.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Cases judged.
    pub total: usize,
    /// Matched before (in the baseline), not now.
    pub regressions: Vec<String>,
    /// Silent on idle GPUs.
    pub silent: Vec<String>,
    /// Not matched, not in the baseline, and not failing the run: known misses.
    pub misses: Vec<String>,
    /// Matched now, not in the baseline: accept with `--update`.
    pub improved: Vec<String>,
    /// Cases that fail the run: regressions, plus silent ones when `silent_fail`.
    pub failed: Vec<String>,
}

impl Summary {
    /// Cases that matched (neither failed nor a known miss).
    pub fn passed(&self) -> usize {
        self.total - self.failed.len() - self.misses.len()
    }
}

/// Compares judged cases with the baseline. Silence on idle GPUs fails a case whatever the
/// baseline says when `silent_fail` ([`silent_fails`]).
pub fn summarize(
    results: &[(String, Judgement)],
    baseline: &Baseline,
    silent_fail: bool,
) -> Summary {
    let mut s = Summary {
        total: results.len(),
        ..Summary::default()
    };
    for (name, j) in results {
        let before = baseline.matched.contains(name);
        if j.silent {
            s.silent.push(name.clone());
        }
        let fails = (before && !j.matched) || (silent_fail && j.silent);
        match (before, j.matched) {
            (true, false) => s.regressions.push(name.clone()),
            (false, false) if !fails => s.misses.push(name.clone()),
            (false, true) => s.improved.push(name.clone()),
            _ => {}
        }
        if fails {
            s.failed.push(name.clone());
        }
    }
    s
}

#[cfg(test)]
mod tests;
