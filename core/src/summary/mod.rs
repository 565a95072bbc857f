//! A team's runs at once: many reports summarised into per-run figures (the verdict, its
//! lost share, the GPU-hours it cost) and totals by cause, by label, by host and by GPU
//! model, with the changes that were tried and what their comparisons said
//! (`gpuwhy summary`, docs/summary.md).
//!
//! Each report is cut down to a [`RunRow`] of a few hundred bytes as it is read
//! ([`RunRow::from_slice`] parses the run, the verdict, the findings' ids, the devices'
//! names, a job report's rank rows and the `comparison` section, and scans the samples
//! without building them), so summarising ten thousand reports holds ten thousand rows,
//! never ten thousand reports. The verdict is the one the report was written with; only a
//! crash journal, which has none yet, is replayed and diagnosed. Reading files (and doing it
//! on several threads) is the caller's business, which keeps this module plain data.
//!
//! Not for: comparing two runs' samples (that is [`crate::compare`]), or joining a job's
//! ranks (that is [`crate::merge`], whose job reports this reads like any other).

mod fixes;
mod read;
mod totals;

#[cfg(test)]
mod tests;

pub use fixes::{fixes, Fix, FixVia, SAME_SHARE};
pub use read::read_bytes;
pub use totals::{Group, Totals, NO_LABEL};

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::report::Tool;

/// The schema of `gpuwhy summary --json` (docs/summary.md). Fields are only added within
/// a major version, as in the report's own schema.
pub const SUMMARY_SCHEMA: &str = "gpuwhy.summary/1";

/// Seconds in an hour, for GPU-hours.
const HOUR_S: f64 = 3600.0;

/// One run (or one merged job) as the summary counts it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunRow {
    /// The report file, as given.
    pub file: String,
    /// `single` (one process's report), `job` (a merged job report, `gpuwhy merge`) or
    /// `journal` (a crash journal, replayed and diagnosed here).
    pub kind: String,
    /// `run.label`.
    pub label: Option<String>,
    /// `run.host` (a job report names its nodes there).
    pub host: String,
    /// `run.rank` of a rank's own report.
    pub rank: Option<u32>,
    /// Wall-clock start, ms since the Unix epoch, and as RFC 3339 text.
    pub start_unix_ms: i64,
    /// The same instant as text.
    pub start: String,
    /// Seconds from the start to the last sample.
    pub duration_s: f64,
    /// `run.complete`.
    pub complete: bool,
    /// The job's GPUs counted (see [`RunRow::gpus_by_host`]).
    pub gpus: u32,
    /// The job's GPUs per host.
    pub gpus_by_host: BTreeMap<String, u32>,
    /// The job's GPUs per product name (`unknown` when the report does not say).
    pub gpus_by_model: BTreeMap<String, u32>,
    /// The verdict's id (`none` when no bottleneck was found).
    pub verdict: String,
    /// The verdict's title.
    pub title: String,
    /// The verdict's estimated share of the run lost, when it has one.
    pub lost_share: Option<f64>,
    /// The verdict's confidence.
    pub confidence: f64,
    /// GPU-hours of the run: GPUs × duration.
    pub gpu_hours: f64,
    /// GPU-hours lost: lost share × GPUs × duration (0 without a lost share).
    pub gpu_hours_lost: f64,
    /// The findings as `[id, confidence]`, most important first.
    pub findings: Vec<(String, f64)>,
    /// The report's comparison with its baseline, when its session named one.
    pub baseline: Option<BaselineNote>,
    /// The job report (its file) that holds this rank's report: the rank is shown, not
    /// counted in the totals, so the job's GPU-hours are not counted twice.
    pub in_job: Option<String>,
    /// Where this run's own report page is, relative to the summary page (set by whoever
    /// writes the pages).
    pub page: Option<String>,
    /// A job report's ranks as (rank, host, start in ms), to tell its ranks' own reports.
    #[serde(skip)]
    members: Vec<(u32, String, i64)>,
}

/// What a report's `comparison` section says, in brief.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BaselineNote {
    /// The baseline's path, as the session was given it.
    pub path: String,
    /// The comparison's one-line summary, or why there is none.
    pub summary: String,
    /// Whether the runs were compared (false: `summary` says why not).
    pub compared: bool,
    /// Findings of the baseline gone in this run.
    pub resolved: Vec<String>,
    /// Findings new in this run.
    pub new: Vec<String>,
    /// Confirming experiments that held, did not hold, and could not be told.
    pub experiments_held: u32,
    /// Experiments that did not hold.
    pub experiments_not_held: u32,
}

/// A file that could not be summarised, and why.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Unreadable {
    /// The file, as given.
    pub file: String,
    /// The reader's message: what is wrong with it and what to do.
    pub reason: String,
}

/// Everything `gpuwhy summary` prints, and the `--json` form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// [`SUMMARY_SCHEMA`].
    pub schema: String,
    /// The gpuwhy that wrote it.
    #[serde(default)]
    pub tool: Tool,
    /// Every run read, by start time.
    #[serde(default)]
    pub runs: Vec<RunRow>,
    /// Files that could not be read, in the order given.
    #[serde(default)]
    pub unreadable: Vec<Unreadable>,
    /// Sums over the counted runs.
    #[serde(default)]
    pub totals: Totals,
    /// The changes that were tried: runs against their baselines, and runs of one label
    /// whose verdict moved.
    #[serde(default)]
    pub fixes: Vec<Fix>,
}

impl Summary {
    /// The summary of `runs` (in any order) and the files that could not be read: rank
    /// reports held by a job report among them are marked ([`RunRow::in_job`]) and left
    /// out of the totals; runs are ordered by start time, then file.
    pub fn new(mut runs: Vec<RunRow>, unreadable: Vec<Unreadable>) -> Summary {
        runs.sort_by(|a, b| (a.start_unix_ms, &a.file).cmp(&(b.start_unix_ms, &b.file)));
        read::mark_ranks_in_jobs(&mut runs);
        let totals = Totals::of(&runs);
        let fixes = fixes(&runs);
        Summary {
            schema: SUMMARY_SCHEMA.into(),
            tool: Tool::default(),
            runs,
            unreadable,
            totals,
            fixes,
        }
    }

    /// The runs the totals count: all but the ranks of a job report summarised with them.
    pub fn counted(&self) -> impl Iterator<Item = &RunRow> {
        self.runs.iter().filter(|r| r.in_job.is_none())
    }
}

impl RunRow {
    /// Fills the GPU-hours from the duration, the GPUs and the lost share.
    fn settle(&mut self) {
        let hours = self.duration_s.max(0.0) / HOUR_S;
        self.gpu_hours = f64::from(self.gpus) * hours;
        let share = self.lost_share.filter(|s| s.is_finite()).unwrap_or(0.0);
        self.gpu_hours_lost = share.clamp(0.0, 1.0) * self.gpu_hours;
    }
}
