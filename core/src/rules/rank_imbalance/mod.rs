//! `rank_imbalance`: one GPU or rank is a straggler.
//!
//! Read across the job's GPUs (`docs/rules.md`, "Cross-GPU evidence"), three ways, first
//! match wins: the *wait pattern* (the others wait — idle, or at ~100 % utilization but low
//! power inside a collective — a share of the time the straggler does not), the *time-weighted
//! utilization* (one GPU's median or mean far from the others'), and the *power* at equal
//! utilization and equal clocks (one GPU draws much more than the others: it computes while
//! they spin). A profiler trace, when attached, decides first.

mod ranks;
mod traced;
mod ways;

pub use ranks::MAX_NAMED;

use super::{evidence, round, Rule, RuleDoc, RuleMeta};
use crate::report::Comparator;
use crate::report::FindingSource;
use crate::report::{device_set as gpus, Action, Cost, Evidence, Experiment, Finding, Severity};
use crate::signals::cross::GpuActivity;
use crate::signals::stats::median;
use crate::signals::Signals;

/// Spread of per-GPU median utilization (points) above which GPUs are out of balance.
/// DESIGN.md's catalogue: "per-GPU SM util differs > 10 points". Also the distance of one
/// GPU's time-weighted mean utilization from the others' median.
pub const MAX_UTIL_SPREAD: f64 = 10.0;

/// Relative clock difference of the outlier against the others' median that points at the
/// outlier's hardware (throttling) rather than its data.
pub const CLOCK_GAP: f64 = 0.10;

/// How much more of the time (0–1) the other GPUs must wait than the straggler. A straggler
/// costing 10 % of each step must be caught, but 100 ms samples see only part of waits
/// shorter than a sample (a 10 % wait in a 0.7 s step measured 7–10 %, compared way by way
/// in both reading modes, `ways::wait_gap`); identical
/// ranks' wait shares agree within a few points (the simulator's 2–3 % phase jitter), so 6 %
/// is clear of noise and of sampling loss.
pub const MIN_WAIT_GAP: f64 = 0.06;

/// Relative loaded-power gap (1 − low/high) between two groups of GPUs at equal
/// utilization and equal clocks that marks one group as doing more work. Identical GPUs on
/// identical work draw within ~10 % of each other; a rank spinning in a collective a quarter
/// of the time draws ~20 % less (see the module docs).
pub const POWER_GAP: f64 = 0.2;

static META: RuleMeta = RuleMeta {
    id: "rank_imbalance",
    title: "One GPU is out of step with the others",
    severity: Severity::High,
    doc: RuleDoc {
        detects: "A straggler among the GPUs of a job: the others wait (idle, or at high utilization but low power inside a collective) a share of the time it does not; or per-GPU median or time-weighted mean utilization differs by more than 10 points; or one GPU draws far more power than the others at equal utilization and equal clocks.",
        why: "In synchronous data-parallel training every step waits for the slowest rank; one straggler slows all of them.",
        evidence: "Per-GPU time-weighted wait share and mean utilization; how often one GPU works alone while all the others wait; per-GPU utilization medians and their spread; loaded power and clocks across GPUs.",
        first: "Give every rank the same batch size and an even data shard; look for another process on the outlier GPU; check the outlier for throttling.",
    },
};

/// See the module docs.
pub struct RankImbalance;

impl RankImbalance {
    /// The finding on a merged job from its ranks (`report.ranks`, with the signals of
    /// `crate::signals::ranks::derive`): its stragglers, else its utilization imbalance.
    pub fn evaluate_job(&self, r: &crate::report::RanksData) -> Option<Finding> {
        ranks::straggler_finding(r).or_else(|| ranks::imbalance_finding(r))
    }
}

/// What one way of looking found.
struct Straggle {
    devices: Vec<u32>,
    lost: f64,
    /// How `lost` was estimated (the finding's `lost_share_basis`).
    basis: &'static str,
    summary: String,
    evidence: Vec<Evidence>,
    confidence: f64,
}

/// A device set with its verb in agreement: `GPU 0 waits`, `GPUs 0–3 wait`.
fn verb(devs: &[u32], one: &str, many: &str) -> String {
    format!(
        "{} {}",
        gpus(devs),
        if devs.len() == 1 { one } else { many }
    )
}

/// How often a straggler must be seen working while every other GPU waits, for a wait gap
/// of `gap`: in lockstep the others' extra waiting all falls while it works (the share is
/// about the gap); GPUs that wait independently rarely all wait at once. Half the gap, and
/// at least half of [`MIN_WAIT_GAP`], leaves room for sampling jitter.
fn lined_up_needed(gap: f64) -> f64 {
    (gap / 2.0).max(MIN_WAIT_GAP / 2.0)
}

/// Whether the straggler's own waits (a data phase every rank has) are everyone's, as in
/// lockstep, with the evidence; independent jobs' waits coincide only by chance, which is
/// what tells them apart on two GPUs. Holds trivially for a GPU that barely waits.
fn waits_coincide(s: &Signals, own_wait: f64) -> (bool, Option<Evidence>) {
    let Some(all) = s
        .cross
        .all_wait_share
        .filter(|_| own_wait >= MIN_WAIT_GAP / 2.0)
    else {
        return (true, None);
    };
    let e = evidence(
        "share of sample times every GPU waits, over the straggler's wait share",
        all / own_wait,
        Comparator::AtLeast,
        0.5,
        "ratio",
        None,
    );
    (e.agrees, Some(e))
}

/// The median of `f` over every GPU but `skip`.
fn others(acts: &[GpuActivity], skip: &[u32], f: impl Fn(&GpuActivity) -> f64) -> Option<f64> {
    median(
        acts.iter()
            .filter(|a| !skip.contains(&a.index))
            .map(f)
            .collect(),
    )
}

/// The outlier's SM clock against the others': a slower clock points at its hardware.
fn clock_check(s: &Signals, outlier: u32) -> Option<(Evidence, String)> {
    let acts = &s.cross.activity;
    let mine = acts.iter().find(|a| a.index == outlier)?.clock_loaded?;
    let med =
        others(acts, &[outlier], |a| a.clock_loaded.unwrap_or(f64::NAN)).filter(|m| *m > 0.0)?;
    let gap = (med - mine) / med;
    let e = evidence(
        "outlier clock under load below the others' median",
        gap,
        Comparator::AtLeast,
        CLOCK_GAP,
        "fraction",
        Some(outlier),
    );
    let cause = format!(
        " Its clock is {:.0}% below the others': look at its cooling and power.",
        gap * 100.0
    );
    Some((e, cause))
}

impl Rule for RankImbalance {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn evaluate(&self, s: &Signals) -> Option<Finding> {
        // A profiler trace measures this directly: trust it first.
        if let Some(f) = s.trace.as_ref().and_then(|t| traced::traced(t, &META)) {
            return Some(f);
        }
        let mut st = ways::by_wait(s)
            .or_else(|| ways::by_util(s))
            .or_else(|| ways::by_power(s))?;
        let first = st.devices[0];
        if let Some((e, cause)) = clock_check(s, first) {
            if e.agrees {
                st.confidence += 0.15;
                st.summary.push_str(&cause);
            }
            st.evidence.push(e);
        }
        let who = gpus(&st.devices);
        Some(Finding {
            id: META.id.into(),
            title: META.title.into(),
            severity: META.severity,
            confidence: round(st.confidence.min(1.0)),
            summary: st.summary,
            lost_share: Some(round(st.lost.clamp(0.0, 1.0))),
            lost_share_basis: Some(st.basis.into()),
            devices: st.devices,
            evidence: st.evidence,
            actions: vec![
                Action { text: "Check that every rank gets the same batch size and an evenly sized data shard (DistributedSampler, drop_last)".into(), cost: Cost::Low },
                Action { text: format!("Look for other processes on {who} (`nvidia-smi`) and for throttling on it"), cost: Cost::Low },
                Action { text: "Move the straggling rank to another GPU or node".into(), cost: Cost::Medium },
            ],
            experiment: Experiment {
                change: format!("Swap the work of {who} with another GPU (or exclude it) and rerun"),
                expect: "If the GPU is the cause, the imbalance follows the GPU; if the data is, it follows the shard. The other GPUs' wait share and the spread of util_gpu p50 fall below 10 points once fixed".into(),
                metric: "per-GPU wait share; spread of per-GPU util_gpu p50".into(),
            },
            unseen: vec![if s.steps.is_some() {
                "Only one process's step times are in this report; merge every rank's report (`gpuwhy merge`) to see which phase the straggler spends longer in.".into()
            } else {
                "Per-rank step times were not recorded; merge per-rank reports (or add step markers) to see which phase the straggler spends longer in.".into()
            }],
            source: Some(FindingSource::Samples),
            caused_by: None,
        })
    }
}
