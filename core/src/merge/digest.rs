//! What the merge keeps of one rank's report: a few kilobytes instead of its samples, so
//! that a thousand ranks can be merged without holding a thousand reports in memory.

use std::collections::BTreeMap;

use crate::metric::GpuMetric;
use crate::report::{Event, Finding, PhaseTimes, RankGpu, RankSteps, Report, RunInfo, SeriesData};
use crate::signals::{stats::dist, LOAD_UTIL};
use crate::{Error, Result};

/// Events kept per rank: the job's timeline needs a rank's faults and markers, not a
/// training loop's ten thousand `log` events.
pub const MAX_EVENTS_PER_RANK: usize = 64;

/// One rank's report, summarised for [`super::merge`].
#[derive(Debug, Clone)]
pub struct RankDigest {
    /// The report file, as named in messages and in the job report.
    pub file: String,
    /// The rank's run: rank, world size, host, wall-clock start.
    pub run: RunInfo,
    /// Each GPU's medians.
    pub gpus: Vec<RankGpu>,
    /// Step and phase medians, when the rank used step markers.
    pub steps: Option<RankSteps>,
    /// The rank's findings as its report (or a re-diagnosis) has them.
    pub findings: Vec<Finding>,
    /// Its first [`MAX_EVENTS_PER_RANK`] events.
    pub events: Vec<Event>,
}

/// The column's values, the coarse part's bucket means after the full-resolution ones (as
/// the signals read them). Every column of a stream has one value per sample, so two
/// columns line up index by index.
fn column(data: &SeriesData, m: GpuMetric) -> Vec<f64> {
    let mut out: Vec<f64> = data
        .metrics
        .get(m.name())
        .map(|c| c.0.iter().map(|v| f64::from(*v)).collect())
        .unwrap_or_default();
    if let Some(cc) = data.coarse.as_ref().and_then(|c| c.metrics.get(m.name())) {
        out.extend(cc.mean.0.iter().map(|v| f64::from(*v)));
    }
    out
}

fn gpu(report: &Report, index: u32) -> RankGpu {
    let info = report.devices.iter().find(|d| d.index == index);
    let mut g = RankGpu {
        index,
        name: info.and_then(|d| d.name.clone()),
        uuid: info.and_then(|d| d.uuid.clone()),
        ..RankGpu::default()
    };
    if let Some(s) = report.series.iter().find(|s| s.device == index) {
        let util = column(&s.data, GpuMetric::UtilGpu);
        let clock = column(&s.data, GpuMetric::SmClock);
        g.util_p50 = dist(util.iter().copied()).map(|d| d.p50);
        g.power_p50_w = dist(column(&s.data, GpuMetric::Power)).map(|d| d.p50);
        g.sm_clock_p50_mhz = dist(
            util.iter()
                .zip(&clock)
                .filter(|(u, _)| u.is_finite() && **u >= LOAD_UTIL)
                .map(|(_, c)| *c),
        )
        .map(|d| d.p50);
    }
    g
}

fn steps(report: &Report) -> Option<RankSteps> {
    let st = report.steps.as_ref().filter(|s| s.count > 0)?;
    let times = |name: &str| {
        st.stats
            .get(name)
            .filter(|s| s.count > 0)
            .map(|s| PhaseTimes {
                p50_s: s.p50_s,
                p95_s: s.p95_s,
            })
    };
    let phases: BTreeMap<String, PhaseTimes> = st
        .phases
        .iter()
        .filter_map(|p| times(p).map(|t| (p.clone(), t)))
        .collect();
    Some(RankSteps {
        count: st.count,
        step: times("step")?,
        phases,
    })
}

impl RankDigest {
    /// Summarises `report`, read from `file`. Refuses a report that is itself a merged job.
    pub fn of(report: &Report, file: &str) -> Result<RankDigest> {
        if let Some(r) = &report.ranks {
            return Err(Error::BadReport {
                path: file.into(),
                reason: format!(
                    "this is already a merged job report ({} ranks); merge the per-rank reports it was made from",
                    r.ranks.len()
                ),
            });
        }
        let mut indices: Vec<u32> = report.devices.iter().map(|d| d.index).collect();
        indices.extend(report.series.iter().map(|s| s.device));
        indices.sort_unstable();
        indices.dedup();
        // GPUs the rank's recording decided are not the job's (`run.job_gpus`) are another
        // job's: they are never compared across ranks (docs/job-gpus.md).
        if let Some(job) = &report.run.job_gpus {
            indices.retain(|i| job.is_job(*i));
        }
        Ok(RankDigest {
            file: file.to_string(),
            run: report.run.clone(),
            gpus: indices.into_iter().map(|i| gpu(report, i)).collect(),
            steps: steps(report),
            findings: report.findings.clone(),
            events: report
                .events
                .iter()
                .take(MAX_EVENTS_PER_RANK)
                .cloned()
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{DeviceInfo, JobGpus, JobGpusMethod};

    #[test]
    fn gpus_not_of_the_job_are_left_out_of_the_digest() {
        let mut report =
            Report::from_recording(&crate::recording::Recording::new(Default::default()));
        report.devices = (0..4)
            .map(|index| DeviceInfo {
                index,
                ..DeviceInfo::default()
            })
            .collect();
        let all = RankDigest::of(&report, "r0.json").expect("a rank report");
        assert_eq!(all.gpus.len(), 4, "no decision recorded: every GPU");
        report.run.job_gpus = Some(JobGpus {
            indices: vec![2],
            others: vec![0, 1, 3],
            method: JobGpusMethod::CudaVisibleDevices,
            ..JobGpus::default()
        });
        let d = RankDigest::of(&report, "r0.json").expect("a rank report");
        let kept: Vec<u32> = d.gpus.iter().map(|g| g.index).collect();
        assert_eq!(kept, [2]);
    }
}
