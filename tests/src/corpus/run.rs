//! Diagnosing one case: a real case's files as `gpuwhy diagnose` reads them, a simulated case
//! recorded through the simulator.

use std::path::Path;

use gpuwhy::analysis;
use gpuwhy::import::{self, ImportOptions, Input};
use gpuwhy::report::{Report, Severity};
use gpuwhy::trace::{self, Choices, ReadOptions, TraceSummary};

use super::{Case, Origin};
use crate::Run;

/// What gpuwhy answered for a case.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Got {
    /// The verdict's id (`none` when no rule fired); empty when the case could not be read.
    pub verdict: String,
    /// The verdict's estimated share of the run lost.
    pub lost_share: Option<f64>,
    /// The verdict's confidence.
    pub confidence: f64,
    /// Every finding's id, in the report's order.
    pub findings: Vec<String>,
    /// Every finding's id, severity and lost share, in the report's order.
    pub briefs: Vec<Brief>,
    /// Share of the time the GPUs were idle, as measured here from the data (1 − the
    /// time-weighted mean utilization over the job's samples, or 1 − the trace's busy
    /// share); `None` when the data has neither.
    pub idle_share: Option<f64>,
    /// Why the case could not be diagnosed (the reader's or the recorder's message).
    pub error: Option<String>,
}

/// What one finding claims: how severe, and how much of the run it says is lost.
#[derive(Debug, Clone, PartialEq)]
pub struct Brief {
    /// The rule id.
    pub id: String,
    /// Its severity.
    pub severity: Severity,
    /// Its estimated lost share, when it gives one.
    pub lost_share: Option<f64>,
}

impl Got {
    fn from_report(report: &Report, trace: Option<&TraceSummary>) -> Got {
        Got {
            verdict: report.verdict.id.clone(),
            lost_share: report.verdict.lost_share,
            confidence: report.verdict.confidence,
            findings: report.findings.iter().map(|f| f.id.clone()).collect(),
            briefs: report
                .findings
                .iter()
                .map(|f| Brief {
                    id: f.id.clone(),
                    severity: f.severity,
                    lost_share: f.lost_share,
                })
                .collect(),
            idle_share: idle_share(report, trace),
            error: None,
        }
    }

    fn failed(error: String) -> Got {
        Got {
            error: Some(error),
            ..Got::default()
        }
    }
}

/// 1 − the mean of every job device's mean sampled utilization (GPUs the recording found
/// not to be the job's are not its idle time); samples of a log or recording are evenly
/// spaced, so the mean of samples is the time-weighted mean. Falls back on the trace's busy
/// share.
fn idle_share(report: &Report, trace: Option<&TraceSummary>) -> Option<f64> {
    let job = |d: u32| report.run.job_gpus.as_ref().is_none_or(|j| j.is_job(d));
    let per_device: Vec<f64> = report
        .series
        .iter()
        .filter(|s| job(s.device))
        .filter_map(|s| {
            let col = s.data.metrics.get("util_gpu")?;
            let (sum, n) = col
                .present()
                .fold((0.0, 0usize), |(s, n), v| (s + f64::from(v), n + 1));
            (n > 0).then(|| sum / n as f64)
        })
        .collect();
    if !per_device.is_empty() {
        let mean = per_device.iter().sum::<f64>() / per_device.len() as f64;
        return Some((1.0 - mean / 100.0).clamp(0.0, 1.0));
    }
    trace
        .and_then(TraceSummary::busy_share)
        .map(|b| (1.0 - b).clamp(0.0, 1.0))
}

/// Diagnoses the case named `name` (see [`run`]).
///
/// Errors: no such case, or the corpus does not load.
pub fn run_named(name: &str) -> Result<(Case, Got), String> {
    let case = super::load()?
        .into_iter()
        .find(|c| c.name == name)
        .ok_or_else(|| format!("no corpus case is named {name}"))?;
    let got = run(&case);
    Ok((case, got))
}

/// Diagnoses one case. A case that cannot be read or recorded is not an error of the
/// harness: its [`Got::error`] says why, and it counts as a miss.
pub fn run(case: &Case) -> Got {
    match &case.origin {
        Origin::Real { files, .. } => run_files(files).unwrap_or_else(Got::failed),
        Origin::Sim { text } => run_sim(text),
    }
}

fn run_sim(text: &str) -> Got {
    let speed = serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| v["speed"].as_f64())
        .unwrap_or(Run::default().speed);
    let run = Run {
        speed,
        ..Run::default()
    };
    match crate::record(text, &run) {
        Ok(report) => Got::from_report(&report, None),
        Err(e) => Got::failed(format!("recording failed: {e}")),
    }
}

/// Profiler traces go together (one per rank); at most one other file (a log or report)
/// goes beside them, as with `gpuwhy diagnose`.
fn run_files(files: &[std::path::PathBuf]) -> Result<Got, String> {
    let mut logs = Vec::new();
    let mut ranks = Vec::new();
    for (i, path) in files.iter().enumerate() {
        let bytes =
            std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        match kind_of(path, &bytes)? {
            import::Kind::Trace => {
                let opts = ReadOptions {
                    choices: Choices::default(),
                    label: path.display().to_string(),
                    position: i as u32,
                };
                ranks.push(trace::read_slice(&bytes, &opts).map_err(|e| e.to_string())?);
            }
            kind => logs.push((path, kind, bytes)),
        }
    }
    if logs.len() > 1 {
        return Err("a case may hold one log or report beside its traces".into());
    }
    let trace = (!ranks.is_empty()).then(|| TraceSummary::from_ranks(ranks, Choices::default()));
    let input = logs.first().map(|(path, kind, bytes)| Input::Bytes {
        kind: *kind,
        bytes,
        opts: ImportOptions {
            path: path.to_path_buf(),
            ..ImportOptions::default()
        },
    });
    let diagnosed = analysis::diagnose_any(input, trace.as_ref()).map_err(|e| e.to_string())?;
    Ok(Got::from_report(&diagnosed.report, trace.as_ref()))
}

/// The file's kind told from its content, as the CLI does; gzip is only ever a trace.
fn kind_of(path: &Path, bytes: &[u8]) -> Result<import::Kind, String> {
    import::detect(bytes).ok_or_else(|| {
        format!(
            "{} is not a file gpuwhy reads (not a report, journal, profiler trace, dmon or CSV log)",
            path.display()
        )
    })
}
