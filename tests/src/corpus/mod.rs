//! The accuracy corpus (`tests/corpus/`, described in `docs/accuracy.md`): real logs and
//! traces from public sources with the cause their source gives, and simulated jobs built
//! outside the bundled scenarios. This module loads the cases, diagnoses each the way a user
//! would get it diagnosed (files through [`gpuwhy::analysis::diagnose_any`], simulated jobs
//! recorded through the simulator as the scenario table does), and [`judge`] tells whether
//! the answer holds; `cargo xtask accuracy` prints the table and keeps the baseline.
//!
//! Not for: the bundled scenarios (`sim/scenarios/`, checked by `cargo xtask scenarios`).

mod judge;
mod run;

pub use judge::{
    judge, silent_fails, summarize, Baseline, Judgement, Summary, IDLE_SHARE_MUST_ANSWER,
};
pub use run::{run, run_named, Brief, Got};

use gpuwhy::report::Severity;

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::Expected;

/// Where a case comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Files from a public source, listed in `tests/corpus/cases.json`.
    Real {
        /// The files, absolute paths.
        files: Vec<PathBuf>,
        /// `dmon`, `csv`, `trace` or `nvidia-smi -q`, as the index says (the files' kind is
        /// told from their content, as `gpuwhy diagnose` does).
        format: String,
        /// The source's address.
        source: String,
        /// The cause the source gives, in our words.
        cause: String,
    },
    /// A simulator scenario under `tests/corpus/sim/`.
    Sim {
        /// The scenario's text.
        text: String,
    },
}

/// One case of the corpus.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// Unique name (a real case's `name`, a simulated case's file stem).
    pub name: String,
    /// What gpuwhy should answer: the expected top finding (`unknown` when the source gives
    /// no cause; `a|b` when either may come first), findings that must also be reported, and
    /// findings that must not be.
    pub expect: Expected,
    /// The range the verdict's lost share must fall in (`expect.lost_share`), when given.
    pub lost_share: Option<(f64, f64)>,
    /// What no finding may claim: a severity ceiling, lost shares, other findings.
    pub limits: Limits,
    /// Files or scenario.
    pub origin: Origin,
}

/// What the findings may not claim, whatever the verdict (docs/accuracy.md): for evidence
/// too thin to carry a pattern over time or a loss, and for healthy or idle controls.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Limits {
    /// `max_severity`: no finding may be more severe than this (`"low"`: nothing above low).
    pub max_severity: Option<Severity>,
    /// `no_lost_share`: these findings must not give a lost share; `["*"]` (written `true`)
    /// means none may.
    pub no_lost_share: Vec<String>,
    /// `nothing_else`: no finding but the expected one(s) and `also`.
    pub nothing_else: bool,
}

impl Limits {
    /// Reads the keys from an `expect` object (a sim case's) or a real case's entry.
    ///
    /// Errors: an unknown severity name, or a `no_lost_share` neither `true` nor a list.
    pub(crate) fn from_json(v: &Value, name: &str) -> Result<Limits, String> {
        let max_severity = match &v["max_severity"] {
            Value::Null => None,
            Value::String(s) => Some(
                serde_json::from_value::<Severity>(Value::String(s.clone()))
                    .map_err(|_| format!("{name}: max_severity {s:?} is not a severity (info, low, medium, high, critical)"))?,
            ),
            other => return Err(format!("{name}: max_severity {other} is not a string")),
        };
        let no_lost_share = match &v["no_lost_share"] {
            Value::Null | Value::Bool(false) => Vec::new(),
            Value::Bool(true) => vec!["*".to_string()],
            Value::Array(_) => strings(&v["no_lost_share"]),
            other => {
                return Err(format!(
                    "{name}: no_lost_share {other} is neither true nor a list of rule ids"
                ))
            }
        };
        Ok(Limits {
            max_severity,
            no_lost_share,
            nothing_else: v["nothing_else"].as_bool().unwrap_or(false),
        })
    }
}

impl Case {
    /// A short label of the source for the table: `owner/repo#N` for a GitHub issue,
    /// `owner/repo` for other GitHub addresses, `sim` for a simulated case.
    pub fn source_label(&self) -> String {
        match &self.origin {
            Origin::Sim { .. } => "sim".into(),
            Origin::Real { source, .. } => short_source(source),
        }
    }
}

fn short_source(url: &str) -> String {
    let rest = url
        .trim_start_matches("https://")
        .trim_start_matches("github.com/");
    let parts: Vec<&str> = rest.split('/').collect();
    match parts.as_slice() {
        [owner, repo, "issues" | "pull", n, ..] => format!("{owner}/{repo}#{n}"),
        [owner, repo, ..] => format!("{owner}/{repo}"),
        _ => rest.to_string(),
    }
}

/// The corpus folder, `tests/corpus/`.
pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

/// The committed baseline, `tests/corpus/accuracy-baseline.json`.
pub fn baseline_path() -> PathBuf {
    corpus_dir().join("accuracy-baseline.json")
}

/// Every case: the real ones in index order, then the simulated ones by file name.
///
/// Errors: an unreadable index or scenario, a case without a name, files, source or cause,
/// and duplicate names.
pub fn load() -> Result<Vec<Case>, String> {
    load_from(&corpus_dir())
}

/// [`load`] from another corpus folder (tests use a temporary one).
pub fn load_from(dir: &Path) -> Result<Vec<Case>, String> {
    let mut cases = real_cases(dir)?;
    cases.extend(sim_cases(&dir.join("sim"))?);
    let mut names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("two corpus cases are named {}", w[0]));
    }
    Ok(cases)
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{} is not valid JSON: {e}", path.display()))
}

/// `[lo, hi]` as a range.
fn range(v: &Value) -> Option<(f64, f64)> {
    match v.as_array()?.as_slice() {
        [lo, hi] => Some((lo.as_f64()?, hi.as_f64()?)),
        _ => None,
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn real_cases(dir: &Path) -> Result<Vec<Case>, String> {
    let index = dir.join("cases.json");
    let v = read_json(&index)?;
    let list = v["cases"]
        .as_array()
        .ok_or_else(|| format!("{} has no \"cases\" list", index.display()))?;
    list.iter().map(|c| real_case(dir, c)).collect()
}

fn real_case(dir: &Path, c: &Value) -> Result<Case, String> {
    let text = |key: &str| -> Result<String, String> {
        c[key]
            .as_str()
            .filter(|s| !s.trim().is_empty())
            .map(str::to_string)
            .ok_or_else(|| format!("a real case ({}) lacks \"{key}\"", c["name"]))
    };
    let name = text("name")?;
    let files: Vec<PathBuf> = strings(&c["files"]).iter().map(|f| dir.join(f)).collect();
    if files.is_empty() {
        return Err(format!("real case {name} lists no files"));
    }
    Ok(Case {
        expect: Expected {
            top: text("expect")?,
            also: strings(&c["also"]),
            absent: strings(&c["absent"]),
        },
        lost_share: range(&c["lost_share"]),
        limits: Limits::from_json(c, &name)?,
        origin: Origin::Real {
            files,
            format: text("format")?,
            source: text("source")?,
            cause: text("cause")?,
        },
        name,
    })
}

fn sim_cases(dir: &Path) -> Result<Vec<Case>, String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p)
                .map_err(|e| format!("cannot read {}: {e}", p.display()))?;
            let expect = crate::expected(&text)
                .ok_or_else(|| format!("{} has no expect.top_finding", p.display()))?;
            let name = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let v: Value = serde_json::from_str(&text)
                .map_err(|e| format!("{} is not valid JSON: {e}", p.display()))?;
            let limits = Limits::from_json(&v["expect"], &name)?;
            Ok(Case {
                name,
                expect,
                lost_share: range(&v["expect"]["lost_share"]),
                limits,
                origin: Origin::Sim { text },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_shortened_to_repository_and_issue() {
        assert_eq!(
            short_source("https://github.com/mozilla/DeepSpeech/issues/178"),
            "mozilla/DeepSpeech#178"
        );
        assert_eq!(
            short_source("https://github.com/pytorch/kineto/tree/abc/tb_plugin/samples"),
            "pytorch/kineto"
        );
    }

    #[test]
    fn the_committed_corpus_loads_with_unique_names_and_existing_files() {
        let cases = load().expect("corpus loads");
        let real = cases
            .iter()
            .filter(|c| matches!(c.origin, Origin::Real { .. }))
            .count();
        assert!(real >= 10, "only {real} real cases");
        for c in &cases {
            if let Origin::Real { files, .. } = &c.origin {
                for f in files {
                    assert!(f.is_file(), "{}: {} is missing", c.name, f.display());
                }
            }
        }
    }
}
