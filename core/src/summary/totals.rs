//! The summary's totals: GPU-hours lost over all counted runs, by cause (the verdict), by
//! label, by host and by GPU model. Every total is a sum of the runs' own figures, so the
//! text, the JSON and the page agree with the rows they list.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::RunRow;

/// What a label group is called when runs have no label.
pub const NO_LABEL: &str = "(no label)";

/// Sums over the counted runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Totals {
    /// Runs read (rank reports held by a job report included).
    pub runs: u32,
    /// Runs counted in the sums (all but the ranks of a job report among them).
    pub counted: u32,
    /// GPU-hours of the counted runs.
    pub gpu_hours: f64,
    /// GPU-hours lost in the counted runs.
    pub gpu_hours_lost: f64,
    /// By the verdict's id, most lost first.
    pub by_cause: Vec<Group>,
    /// By `run.label` ([`NO_LABEL`] for none), most lost first.
    pub by_label: Vec<Group>,
    /// By host, each run's GPU-hours shared out by its GPUs on each host.
    pub by_host: Vec<Group>,
    /// By GPU product name, each run's GPU-hours shared out by its GPUs of each model.
    pub by_model: Vec<Group>,
}

/// One line of a total.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Group {
    /// The cause, label, host or model.
    pub key: String,
    /// Runs with a share in it.
    pub runs: u32,
    /// GPU-hours.
    pub gpu_hours: f64,
    /// GPU-hours lost.
    pub gpu_hours_lost: f64,
}

impl Totals {
    /// The totals of `runs`, leaving out those marked as part of a job among them.
    pub fn of(runs: &[RunRow]) -> Totals {
        let mut t = Totals {
            runs: runs.len() as u32,
            ..Totals::default()
        };
        let mut cause = Sums::default();
        let mut label = Sums::default();
        let mut host = Sums::default();
        let mut model = Sums::default();
        for r in runs.iter().filter(|r| r.in_job.is_none()) {
            t.counted += 1;
            t.gpu_hours += r.gpu_hours;
            t.gpu_hours_lost += r.gpu_hours_lost;
            cause.add(&r.verdict, r, 1.0);
            label.add(r.label.as_deref().unwrap_or(NO_LABEL), r, 1.0);
            for (part, shares) in [(&mut host, &r.gpus_by_host), (&mut model, &r.gpus_by_model)] {
                for (k, n) in shares {
                    part.add(k, r, f64::from(*n) / f64::from(r.gpus.max(1)));
                }
            }
        }
        t.by_cause = cause.groups();
        t.by_label = label.groups();
        t.by_host = host.groups();
        t.by_model = model.groups();
        t
    }
}

#[derive(Default)]
struct Sums(BTreeMap<String, Group>);

impl Sums {
    /// Adds `share` of `run`'s GPU-hours to `key`.
    fn add(&mut self, key: &str, run: &RunRow, share: f64) {
        let g = self.0.entry(key.to_string()).or_insert_with(|| Group {
            key: key.to_string(),
            ..Group::default()
        });
        g.runs += 1;
        g.gpu_hours += run.gpu_hours * share;
        g.gpu_hours_lost += run.gpu_hours_lost * share;
    }

    /// The groups, most GPU-hours lost first (then by name).
    fn groups(self) -> Vec<Group> {
        let mut v: Vec<Group> = self.0.into_values().collect();
        v.sort_by(|a, b| {
            b.gpu_hours_lost
                .total_cmp(&a.gpu_hours_lost)
                .then_with(|| a.key.cmp(&b.key))
        });
        v
    }
}
