//! Which marking thread is the training loop, and the report's `steps` built from it with
//! every marking thread listed (`steps.threads`).
//!
//! Each lane (one per marking thread) folds into a step log of its own. The report's steps —
//! what the signals and rules read — are the training loop's: the thread the caller named
//! ([`crate::session::Session::set_main_thread`]), else the one that marks a data phase
//! (most such steps), else the one whose steps cover the most time. `docs/steps.md` says
//! why.

use crate::report::{StepsData, ThreadSteps};
use crate::steps::{PhaseId, StepLog};

/// Why a lane was taken for the training loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MainBy {
    /// The caller named its thread.
    Named,
    /// It marks the data phase (the most steps with one, of all lanes).
    DataPhase,
    /// No lane marks a data phase: its steps cover the most time.
    MostTime,
}

impl MainBy {
    /// The report's word for it (`steps.threads[].chosen_by`).
    pub fn as_str(self) -> &'static str {
        match self {
            MainBy::Named => "named",
            MainBy::DataPhase => "data_phase",
            MainBy::MostTime => "most_time",
        }
    }
}

/// True when a lane's log has anything to report.
fn used(log: &StepLog) -> bool {
    log.count() > 0 || log.ignored() > 0
}

/// The training loop's lane among `logs` (one per lane), with the reason; `named` is the lane
/// the caller named. Lane 0 when no lane has steps.
pub fn main_lane(logs: &[StepLog], named: Option<usize>) -> (usize, MainBy) {
    if let Some(n) = named.filter(|n| *n < logs.len()) {
        return (n, MainBy::Named);
    }
    let data = PhaseId::DATA.index();
    let by_data = logs
        .iter()
        .enumerate()
        .filter(|(_, l)| l.phase_count(data) > 0)
        .max_by_key(|(i, l)| (l.phase_count(data), std::cmp::Reverse(*i)));
    if let Some((i, _)) = by_data {
        return (i, MainBy::DataPhase);
    }
    let by_time = logs
        .iter()
        .enumerate()
        .filter(|(_, l)| l.count() > 0)
        .max_by(|(i, a), (j, b)| a.total_s().total_cmp(&b.total_s()).then(j.cmp(i)));
    (by_time.map_or(0, |(i, _)| i), MainBy::MostTime)
}

/// The report's steps: the main lane's log in full, the markers and memory of all lanes, and
/// `threads` listing every lane with steps when there is more than one.
pub fn steps_data(logs: &[StepLog], named: Option<usize>, names: &[String]) -> StepsData {
    let (main, by) = main_lane(logs, named);
    let Some(main_log) = logs.get(main) else {
        return StepsData::default();
    };
    let mut d = main_log.to_data(names);
    let in_use: Vec<(usize, &StepLog)> = logs
        .iter()
        .enumerate()
        .filter(|(i, l)| *i == main || used(l))
        .collect();
    d.ignored_markers = in_use.iter().map(|(_, l)| l.ignored()).sum();
    d.memory_bytes = in_use.iter().map(|(_, l)| l.heap_bytes() as u64).sum();
    d.memory_bound_bytes = in_use
        .iter()
        .map(|(_, l)| StepLog::worst_case_bytes(l.exact_capacity()) as u64)
        .sum();
    if in_use.iter().filter(|(_, l)| l.count() > 0).count() > 1 {
        d.threads = in_use
            .iter()
            .map(|&(i, l)| {
                let data = l.to_data(names);
                ThreadSteps {
                    lane: i as u32,
                    main: i == main,
                    chosen_by: (i == main).then(|| by.as_str().to_string()),
                    count: data.count,
                    stats: data.stats,
                    gpu_stats: data.gpu_stats,
                    ignored_markers: data.ignored_markers,
                }
            })
            .collect();
    }
    d
}

#[cfg(test)]
mod tests;
