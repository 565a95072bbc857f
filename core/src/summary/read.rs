//! Reading one report for the summary only: the run, the verdict, the findings' ids and
//! confidences, the devices' names, a job report's rank rows and the comparison, with the
//! samples, steps and events scanned, not parsed.
//!
//! Anything this reader does not take as a report of schema 1 — a crash journal, a
//! truncated, damaged or foreign file, a newer schema — goes to the full reader
//! ([`Report::from_slice`]), which reads it or says exactly what is wrong. A journal is
//! diagnosed after its replay, as `gpuwhy diagnose` would, since it has no verdict yet.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;

use super::{BaselineNote, RunRow};
use crate::report::journal::looks_like_journal;
use crate::report::{
    check_schema, read_capped, unpack, BaselineComparison, Outcome, RankSummary, Report, RunInfo,
    Verdict,
};
use crate::Result;

/// A rank report is taken for one of a job report's ranks when its start is this close to
/// the rank's start as the job report has it (the job keeps offsets in seconds).
const SAME_START_MS: i64 = 1_000;

#[derive(Deserialize)]
struct Wire {
    schema: String,
    #[serde(default)]
    run: RunInfo,
    #[serde(default)]
    verdict: Verdict,
    #[serde(default)]
    findings: Vec<WireFinding>,
    #[serde(default)]
    devices: Vec<WireDevice>,
    #[serde(default)]
    ranks: Option<WireRanks>,
    #[serde(default)]
    comparison: Option<BaselineComparison>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireFinding {
    id: String,
    confidence: Option<f64>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireDevice {
    index: u32,
    name: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireRanks {
    ranks: Vec<RankSummary>,
}

/// What a row is made of, from the lean reader or from a full report.
struct Parts<'a> {
    run: &'a RunInfo,
    verdict: &'a Verdict,
    findings: Vec<(String, f64)>,
    devices: Vec<(u32, Option<&'a str>)>,
    ranks: Option<&'a [RankSummary]>,
    comparison: Option<&'a BaselineComparison>,
}

/// A report file's bytes as its readers parse them: refused when larger than any report
/// (1 GiB) before it is read, and decompressed when gzip-compressed, so that the caller can
/// make its row ([`RunRow::from_slice`]) and write its page from one read.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    let bytes = read_capped(path)?;
    Ok(unpack(&bytes, path)?.into_owned())
}

impl RunRow {
    /// Reads one report file's bytes (a `.json`, `.json.gz`, a `.partial` crash journal or
    /// a merged job report) into its row; `file` names it in the row and in messages. The
    /// error is the report reader's: what is wrong with the file and what to do.
    pub fn from_slice(bytes: &[u8], file: &str) -> Result<RunRow> {
        let path = Path::new(file);
        let plain = unpack(bytes, path)?;
        if looks_like_journal(&plain) {
            let mut report = Report::from_slice(&plain, path)?;
            crate::analysis::diagnose(&mut report);
            let mut row = RunRow::of_report(&report, file);
            row.kind = "journal".into();
            return Ok(row);
        }
        match serde_json::from_slice::<Wire>(&plain) {
            Ok(w) => {
                check_schema(Some(serde_json::Value::String(w.schema.clone())), path)?;
                let parts = Parts {
                    run: &w.run,
                    verdict: &w.verdict,
                    findings: w
                        .findings
                        .iter()
                        .map(|f| (f.id.clone(), f.confidence.unwrap_or(f64::NAN)))
                        .collect(),
                    devices: w
                        .devices
                        .iter()
                        .map(|d| (d.index, d.name.as_deref()))
                        .collect(),
                    ranks: w.ranks.as_ref().map(|r| r.ranks.as_slice()),
                    comparison: w.comparison.as_ref(),
                };
                Ok(parts.row(file))
            }
            // The full reader says what is wrong (or reads what the lean one could not).
            Err(_) => Ok(RunRow::of_report(&Report::from_slice(&plain, path)?, file)),
        }
    }

    /// The row of a report already read whole, with its verdict as it stands.
    pub fn of_report(report: &Report, file: &str) -> RunRow {
        Parts {
            run: &report.run,
            verdict: &report.verdict,
            findings: report
                .findings
                .iter()
                .map(|f| (f.id.clone(), f.confidence))
                .collect(),
            devices: report
                .devices
                .iter()
                .map(|d| (d.index, d.name.as_deref()))
                .collect(),
            ranks: report.ranks.as_ref().map(|r| r.ranks.as_slice()),
            comparison: report.comparison.as_ref(),
        }
        .row(file)
    }
}

impl Parts<'_> {
    fn row(&self, file: &str) -> RunRow {
        let run = self.run;
        let mut row = RunRow {
            file: file.into(),
            kind: if self.ranks.is_some() {
                "job"
            } else {
                "single"
            }
            .into(),
            label: run.label.clone(),
            host: run.host.clone(),
            rank: run.rank,
            start_unix_ms: run.start_unix_ms,
            start: run.start.clone(),
            duration_s: if run.duration_s.is_finite() {
                run.duration_s
            } else {
                0.0
            },
            complete: run.complete,
            verdict: self.verdict.id.clone(),
            title: self.verdict.title.clone(),
            lost_share: self.verdict.lost_share.filter(|s| s.is_finite()),
            confidence: self.verdict.confidence,
            findings: self.findings.clone(),
            baseline: self.comparison.map(note),
            ..RunRow::default()
        };
        match self.ranks {
            Some(ranks) => row.count_job_gpus(ranks),
            None => row.count_gpus(run, &self.devices),
        }
        row.members = self
            .ranks
            .unwrap_or_default()
            .iter()
            .map(|r| {
                let start = run.start_unix_ms + (r.offset_s * 1000.0).round() as i64;
                (r.rank, r.host.clone(), start)
            })
            .collect();
        row.settle();
        row
    }
}

impl RunRow {
    /// The job's GPUs of one process's report: `run.job_gpus` when it was decided, else
    /// every GPU the report holds.
    fn count_gpus(&mut self, run: &RunInfo, devices: &[(u32, Option<&str>)]) {
        let job: Option<BTreeSet<u32>> = run
            .job_gpus
            .as_ref()
            .filter(|j| !j.indices.is_empty())
            .map(|j| j.indices.iter().copied().collect());
        for (index, name) in devices {
            if job.as_ref().is_some_and(|j| !j.contains(index)) {
                continue;
            }
            self.add_gpu(&run.host, *name);
        }
    }

    /// The GPUs of a job report: each rank's own GPU where the merge could tell it, else
    /// every GPU the rank's report held, each (host, index) once.
    fn count_job_gpus(&mut self, ranks: &[RankSummary]) {
        let mut seen = BTreeSet::new();
        for r in ranks {
            let own: Vec<_> = r.gpus.iter().filter(|g| Some(g.index) == r.gpu).collect();
            let gpus = if own.is_empty() {
                r.gpus.iter().collect()
            } else {
                own
            };
            for g in gpus {
                if seen.insert((r.host.clone(), g.index)) {
                    self.add_gpu(&r.host, g.name.as_deref());
                }
            }
        }
    }

    fn add_gpu(&mut self, host: &str, name: Option<&str>) {
        self.gpus += 1;
        *self.gpus_by_host.entry(host.to_string()).or_default() += 1;
        let model = name.filter(|n| !n.is_empty()).unwrap_or("unknown");
        *self.gpus_by_model.entry(model.to_string()).or_default() += 1;
    }
}

/// The comparison section in brief.
fn note(c: &BaselineComparison) -> BaselineNote {
    let mut n = BaselineNote {
        path: c.baseline.clone(),
        ..BaselineNote::default()
    };
    match (&c.result, &c.error) {
        (Some(r), _) => {
            n.compared = true;
            n.summary = r.summary.clone();
            n.resolved = r.verdict.resolved.clone();
            n.new = r.verdict.new.clone();
            for e in &r.experiments {
                match e.outcome {
                    Outcome::Held => n.experiments_held += 1,
                    Outcome::NotHeld => n.experiments_not_held += 1,
                    _ => {}
                }
            }
        }
        (None, Some(e)) => n.summary = e.clone(),
        (None, None) => n.summary = "no comparison recorded".into(),
    }
    n
}

/// Marks each rank report that one of the job reports among `runs` holds (same rank, host
/// and start), so that it is shown but not counted twice.
pub(super) fn mark_ranks_in_jobs(runs: &mut [RunRow]) {
    let mut members: BTreeMap<(u32, &str), Vec<(i64, &str)>> = BTreeMap::new();
    for job in runs.iter().filter(|r| r.kind == "job") {
        for (rank, host, start) in &job.members {
            members
                .entry((*rank, host.as_str()))
                .or_default()
                .push((*start, job.file.as_str()));
        }
    }
    let marks: Vec<Option<String>> = runs
        .iter()
        .map(|r| {
            let rank = r.rank.filter(|_| r.kind != "job")?;
            let starts = members.get(&(rank, r.host.as_str()))?;
            starts
                .iter()
                .find(|(s, _)| (s - r.start_unix_ms).abs() <= SAME_START_MS)
                .map(|(_, f)| (*f).to_string())
        })
        .collect();
    for (r, m) in runs.iter_mut().zip(marks) {
        r.in_job = m;
    }
}
