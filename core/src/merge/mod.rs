//! Merging the reports of a distributed job's ranks into one job report: ranks lined up by
//! wall clock, per-rank step statistics, stragglers and the phase responsible, utilization
//! imbalance across GPUs and nodes, and a job-level verdict.
//!
//! The job report is a gpuwhy report like any other (`gpuwhy diagnose` and `gpuwhy view`
//! read it) with a `ranks` section of per-rank summaries instead of samples. Each rank's
//! report is cut down to a [`RankDigest`] of a few kilobytes as it is read
//! ([`RankDigest::from_slice`] parses only the columns a digest needs), so merging a
//! thousand ranks holds a thousand digests, never a thousand reports; reading the files (and
//! doing it on several threads) is the caller's business, which keeps this module plain data.
//!
//! Not for: comparing two runs (that is [`crate::compare`]), or lining up the ranks'
//! samples on one timeline (the job report keeps summaries; each rank's report keeps its
//! samples).

mod checks;
mod digest;
mod table;
mod wire;

// The job's signals (stragglers, imbalance) and its finding live with the other signals and
// rules, and its verdict in `crate::analysis`; they stay reachable here as before.
pub use crate::analysis::rank_list;
pub use crate::rules::MAX_NAMED;
pub use crate::signals::ranks::{
    thresholds_met, LARGE_EXCESS_SHARE, LARGE_PHASE_RATIO, MAX_LISTED, MAX_UTIL_DISTANCE,
    MIN_EXCESS_SHARE, PHASE_RATIO, STEP_RATIO,
};
pub use checks::CLOCK_SLACK_S;
pub use digest::{RankDigest, MAX_EVENTS_PER_RANK};
pub use table::{
    rank_table, RankRow, RankTable, SlowPhase, ALL_RANKS_UP_TO, FIRST_RANKS, MAX_STRAGGLER_ROWS,
};

use std::collections::BTreeMap;

use crate::recording::MAX_EVENTS;
use crate::report::{
    rfc3339_utc, Event, Exemplar, Overhead, RankFinding, RankSummary, RanksData, Report, RunInfo,
    Tool, Verdict, SCHEMA,
};
use crate::Result;

/// How to merge.
#[derive(Debug, Clone, Copy, Default)]
pub struct MergeOptions {
    /// Number the reports 0, 1, … in the order given, ignoring the ranks they carry (for
    /// reports recorded without `RANK`).
    pub ranks_by_order: bool,
    /// Merge even when the ranks' recordings do not overlap in wall-clock time.
    pub force: bool,
}

/// Merges the digests of one job's rank reports into a diagnosed job report.
///
/// Errors (each naming the file): a report without a rank (unless
/// [`MergeOptions::ranks_by_order`]), two reports of one rank, ranks that disagree on the
/// world size or exceed it, ranks that never recorded at the same time (unless
/// [`MergeOptions::force`]), no digests at all.
pub fn merge(mut digests: Vec<RankDigest>, opts: &MergeOptions) -> Result<Report> {
    checks::ranks(&mut digests, opts)?;
    checks::one_run(&digests, opts)?;
    let t0 = digests
        .iter()
        .map(|d| d.run.start_unix_ms)
        .min()
        .unwrap_or(0);
    let offset = |d: &RankDigest| (d.run.start_unix_ms - t0) as f64 / 1000.0;
    let rows: Vec<RankSummary> = digests.iter().map(|d| row(d, offset(d))).collect();
    let mut ranks = RanksData {
        world_size: digests.iter().find_map(|d| d.run.world_size),
        start_spread_s: digests.iter().map(offset).fold(0.0, f64::max),
        overlap_s: {
            let start = digests.iter().map(offset).fold(0.0, f64::max);
            let end = digests
                .iter()
                .map(|d| offset(d) + d.run.duration_s)
                .fold(f64::INFINITY, f64::min);
            (end - start).max(0.0)
        },
        ranks: rows,
        exemplars: exemplars(&digests),
        ..RanksData::default()
    };
    if let Some(ws) = ranks.world_size {
        let have: std::collections::BTreeSet<u32> = ranks.ranks.iter().map(|r| r.rank).collect();
        ranks.missing = (0..ws).filter(|r| !have.contains(r)).collect();
    }
    own_gpus(&mut ranks.ranks);
    let mut report = Report {
        schema: SCHEMA.into(),
        tool: Tool::default(),
        run: job_run(&digests, t0, &ranks),
        nvml: None,
        gpu_absent_reason: None,
        verdict: Verdict::default(),
        findings: Vec::new(),
        devices: Vec::new(),
        series: Vec::new(),
        host: None,
        steps: None,
        events: events(&digests, offset),
        faults: Vec::new(),
        overhead: Overhead::default(),
        ranks: Some(ranks),
        comparison: None,
        windows: Vec::new(),
    };
    crate::analysis::diagnose(&mut report);
    Ok(report)
}

/// Re-derives a job report's nodes, stragglers, imbalance, findings and verdict from its
/// per-rank rows (what [`crate::analysis::diagnose`] does with a job report). Returns false
/// (and changes nothing) for a report that is not a job report.
pub fn diagnose_job(report: &mut Report) -> bool {
    if report.ranks.is_none() {
        return false;
    }
    crate::analysis::diagnose(report);
    true
}

fn row(d: &RankDigest, offset_s: f64) -> RankSummary {
    RankSummary {
        rank: d.run.rank.unwrap_or(0),
        host: d.run.host.clone(),
        local_rank: d.run.local_rank,
        file: d.file.clone(),
        offset_s,
        duration_s: d.run.duration_s,
        complete: d.run.complete,
        gpu: None,
        util_p50: None,
        gpus: d.gpus.clone(),
        steps: d.steps.clone(),
        findings: d
            .findings
            .iter()
            .map(|f| RankFinding {
                id: f.id.clone(),
                confidence: f.confidence,
            })
            .collect(),
    }
}

/// A rank's own GPU: the only one its report holds, else the one whose index is the rank's
/// local rank — the `LOCAL_RANK` it recorded, or else its position among its node's ranks
/// (as torchrun lays ranks out). Its utilization is that GPU's, or the median of all its
/// GPUs' when it cannot be told.
fn own_gpus(rows: &mut [RankSummary]) {
    let mut seen: BTreeMap<String, u32> = BTreeMap::new();
    for r in rows.iter_mut() {
        let position = seen.entry(r.host.clone()).or_insert(0);
        let local = r.local_rank.unwrap_or(*position);
        r.gpu = match r.gpus.as_slice() {
            [one] => Some(one.index),
            gpus => gpus.iter().find(|g| g.index == local).map(|g| g.index),
        };
        *position += 1;
        r.util_p50 = match r.gpu {
            Some(i) => r
                .gpus
                .iter()
                .find(|g| g.index == i)
                .and_then(|g| g.util_p50),
            None => {
                let mut u: Vec<f64> = r.gpus.iter().filter_map(|g| g.util_p50).collect();
                u.sort_by(f64::total_cmp);
                crate::signals::ranks::median(&u)
            }
        };
    }
}

/// For each rule id, the finding from the rank most confident of it (the lowest rank on a tie).
fn exemplars(digests: &[RankDigest]) -> Vec<Exemplar> {
    let mut best: BTreeMap<&str, Exemplar> = BTreeMap::new();
    for d in digests {
        for f in &d.findings {
            let better = best
                .get(f.id.as_str())
                .is_none_or(|e| f.confidence > e.finding.confidence);
            if better {
                best.insert(
                    &f.id,
                    Exemplar {
                        rank: d.run.rank.unwrap_or(0),
                        finding: f.clone(),
                    },
                );
            }
        }
    }
    best.into_values().collect()
}

/// The ranks' events on the job's timeline, rank and GPU named in the detail.
fn events(digests: &[RankDigest], offset: impl Fn(&RankDigest) -> f64) -> Vec<Event> {
    let mut out: Vec<Event> = Vec::new();
    for d in digests {
        let rank = d.run.rank.unwrap_or(0);
        for e in &d.events {
            let gpu = e.device.map(|g| format!(" GPU {g}")).unwrap_or_default();
            let sep = if e.detail.is_empty() { "" } else { ": " };
            out.push(Event {
                t_s: offset(d) + e.t_s,
                device: None,
                kind: e.kind.clone(),
                code: e.code,
                detail: format!("rank {rank}{gpu}{sep}{}", e.detail),
            });
        }
    }
    out.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
    out.truncate(MAX_EVENTS);
    out
}

/// The job's `run`: earliest start, the span of all ranks, the nodes, what they share.
fn job_run(digests: &[RankDigest], t0: i64, ranks: &RanksData) -> RunInfo {
    let n = digests.len();
    let same = |f: &dyn Fn(&RunInfo) -> Option<String>| {
        let first = f(&digests[0].run)?;
        digests
            .iter()
            .all(|d| f(&d.run).as_ref() == Some(&first))
            .then_some(first)
    };
    let hosts: std::collections::BTreeSet<&str> =
        digests.iter().map(|d| d.run.host.as_str()).collect();
    let host = if hosts.len() == 1 {
        digests[0].run.host.clone()
    } else {
        let named: Vec<&str> = hosts.iter().take(4).copied().collect();
        let more = if hosts.len() > 4 { ", …" } else { "" };
        format!("{} nodes: {}{more}", hosts.len(), named.join(", "))
    };
    let label = match same(&|r| r.label.clone()) {
        Some(l) => format!("{l} (merged: {n} ranks)"),
        None => format!("merged: {n} ranks on {} nodes", hosts.len()),
    };
    let command = digests[0]
        .run
        .command
        .clone()
        .filter(|c| digests.iter().all(|d| d.run.command.as_ref() == Some(c)));
    let exit_code = digests
        .iter()
        .map(|d| d.run.exit_code)
        .collect::<Option<Vec<i32>>>()
        .map(|codes| codes.into_iter().find(|c| *c != 0).unwrap_or(0));
    let end = ranks
        .ranks
        .iter()
        .map(|r| r.offset_s + r.duration_s)
        .fold(0.0, f64::max);
    RunInfo {
        start_unix_ms: t0,
        start: rfc3339_utc(t0),
        duration_s: end,
        host,
        command,
        exit_code,
        label: Some(label),
        rank: None,
        world_size: ranks.world_size.or(Some(n as u32)),
        local_rank: None,
        source: "merged".into(),
        complete: digests.iter().all(|d| d.run.complete),
        ended_by: Some(format!("merged from {n} rank reports")),
        interval_s: digests.iter().map(|d| d.run.interval_s).fold(0.0, f64::max),
        job_gpus: None,
        ..RunInfo::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::RankGpu;

    fn every_gpu(rank: u32, local_rank: Option<u32>) -> RankSummary {
        RankSummary {
            rank,
            host: "node-a".into(),
            local_rank,
            gpus: (0..4)
                .map(|i| RankGpu {
                    index: i,
                    util_p50: Some(10.0 * f64::from(i)),
                    ..RankGpu::default()
                })
                .collect(),
            ..RankSummary::default()
        }
    }

    #[test]
    fn a_recorded_local_rank_names_the_own_gpu() {
        // Ranks 0 and 1 of the node were launched on GPUs 2 and 3 (LOCAL_RANK 2 and 3):
        // their position on the node (0, 1) would have picked GPUs 0 and 1.
        let mut rows = vec![
            every_gpu(0, Some(2)),
            every_gpu(1, Some(3)),
            every_gpu(2, None),
        ];
        own_gpus(&mut rows);
        assert_eq!(rows[0].gpu, Some(2));
        assert_eq!(rows[0].util_p50, Some(20.0));
        assert_eq!(rows[1].gpu, Some(3));
        // Without LOCAL_RANK, the position among the node's ranks still decides.
        assert_eq!(rows[2].gpu, Some(2));
    }
}
