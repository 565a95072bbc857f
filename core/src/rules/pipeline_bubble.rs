//! `pipeline_bubble`: pipeline-parallel stages idle in turn (the pipeline bubble).
//!
//! In a pipeline-parallel schedule (GPipe, 1F1B) with `p` stages and `m` micro-batches per
//! batch, every stage idles `(p − 1)` micro-batch slots of each `(m + p − 1)` (Huang et al.
//! 2019, GPipe; Narayanan et al. 2021, Megatron-LM PTD-P): stage `k` waits `k` slots while
//! the pipe fills and `p − 1 − k` while it drains. From the samples: the GPUs idle about the
//! same share of the time, their idle windows rarely meet (the first and the last stage's
//! never do), and each GPU's dips lag its neighbour's by about one slot.

use super::{action, evidence, experiment, gpus, round, Rule, RuleDoc, RuleMeta};
use crate::report::Comparator;
use crate::report::{Cost, Evidence, Finding, Severity};
use crate::signals::stagger::Stagger;
use crate::signals::Signals;

/// Fewest GPUs from which idling in turn reads as a pipeline: with two, a stagger is
/// indistinguishable from two unrelated jobs out of step.
pub const MIN_STAGES: usize = 3;

/// Mean share of time each GPU dips from which the bubble is worth acting on: a tenth,
/// the idle share `data_starvation` asks before input waits count (its `MIN_IDLE_SHARE`).
/// GPipe calls the bubble negligible once `m ≥ 4p`, which is still ~16–19 % for 4–8 stages.
pub const MIN_BUBBLE: f64 = 0.10;

/// Share of time all GPUs dip at once, over the mean share each dips, below which they idle
/// in turn rather than together. Waiting on one collective or on input keeps it near 1
/// (`comm_sync` asks 0.7 of its dip agreement); a pipeline keeps it near 0, since the first
/// and last stages never idle together.
pub const MAX_COINCIDENCE: f64 = 0.3;

/// Least idle GPU's dip share over the most idle one's from which the GPUs idle alike, as
/// every stage of a pipeline does; one GPU idling much less is a straggler the others wait
/// for (`rank_imbalance`).
pub const MIN_EVENNESS: f64 = 0.5;

/// Largest span of the neighbour lags over each GPU's idle time per period: a later stage
/// cannot start more than the time it idles after the first, so a span well beyond the
/// idle time (GPUs of unrelated jobs out of step) is not a pipeline; the half on top allows
/// for lags read to one sample.
pub const MAX_LAG_SPAN: f64 = 1.5;

/// Gain in correlation of two neighbours' dip series at their best lag over lag 0 below
/// which the lag is not resolved: a correlation over a few hundred samples moves by about
/// 1/√n ≈ 0.05–0.07 with sampling jitter alone. GPUs of one pattern shifted in time gain
/// 0.3 or more; GPipe stages, whose idle stretches differ in shape rather than shift, gain
/// about 0.01 and count as unresolved.
pub const MIN_LAG_GAIN: f64 = 0.05;

/// Relative tolerance within which every GPU's utilization period is a whole multiple of
/// the shortest: all stages of a pipeline repeat at the batch period (the autocorrelation
/// may pick a multiple of it on some), while GPUs of unrelated jobs need not.
pub const PERIOD_TOLERANCE: f64 = 0.1;

/// Bubble below which the finding is `low`: GPipe calls the bubble negligible once there are
/// four micro-batches per stage (`m ≥ 4p`), which leaves 16–18 % for 4–8 stages.
pub const LOW_BUBBLE: f64 = 0.2;

/// Bubble (mean dip share) from which the finding is `high`: GPipe's bubble with as many
/// micro-batches as stages, `(p − 1)/(2p − 1)`, is over 40 % for 4 stages and more.
pub const HIGH_BUBBLE: f64 = 0.4;

static META: RuleMeta = RuleMeta {
    id: "pipeline_bubble",
    title: "Pipeline stages idle in turn (pipeline bubble)",
    severity: Severity::Medium,
    doc: RuleDoc {
        detects: "Three or more GPUs that each dip (utilization under 20 %) for 10 % of the time or more, about equally (the least idle at least half the most idle), while all dip at once for under 0.3 of that share: they idle in turn, not together; every GPU repeats at one period; neighbouring GPUs' dips lag each other the same way where a lag is resolved, and the lags from the first GPU to the last span at most 1.5 times each GPU's idle time per period (the loop's step where it marks steps, else the GPUs' utilization period), as the fill of a pipeline does.",
        why: "With p pipeline stages and m micro-batches per batch every stage idles (p − 1)/(m + p − 1) of the time while the pipe fills and drains; with few micro-batches that is most of the run.",
        evidence: "Each GPU's dip share; the share of time all dip at once over the mean dip share; the evenness of the dip shares; the lag between neighbouring GPUs' dips and their span against the idle time per period. Lost share: the mean dip share (the bubble).",
        first: "More micro-batches per batch (gradient accumulation steps in Megatron/DeepSpeed), an interleaved 1F1B schedule (virtual pipeline stages), or fewer pipeline stages (more tensor or data parallelism instead).",
    },
};

/// See the module docs.
pub struct PipelineBubble;

impl Rule for PipelineBubble {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn evaluate(&self, s: &Signals) -> Option<Finding> {
        let st = s.cross.stagger.as_ref()?;
        let n = st.idle_shares.len();
        if n < MIN_STAGES {
            return None;
        }
        let mean = st.mean_idle();
        let most = st.idle_shares.iter().map(|x| x.1).fold(0.0, f64::max);
        let least = st.idle_shares.iter().map(|x| x.1).fold(1.0, f64::min);
        let coincidence = if mean > 0.0 { st.all_idle / mean } else { 1.0 };
        let mut ev = vec![
            evidence(
                "mean share of time each GPU dips (util_gpu < 20%)",
                mean,
                Comparator::AtLeast,
                MIN_BUBBLE,
                "fraction",
                None,
            ),
            evidence(
                "share of time all GPUs dip at once / mean dip share",
                coincidence,
                Comparator::Below,
                MAX_COINCIDENCE,
                "ratio",
                None,
            ),
            evidence(
                "least / most idle GPU's dip share",
                if most > 0.0 { least / most } else { 0.0 },
                Comparator::AtLeast,
                MIN_EVENNESS,
                "ratio",
                None,
            ),
        ];
        if !ev.iter().all(|e| e.agrees) {
            return None;
        }
        // The batch period: the loop's own steps where it marks them, else the GPUs'
        // utilization period.
        let period = s
            .steps
            .as_ref()
            .map(|x| x.step_p50_s)
            .filter(|p| *p > 0.0)
            .or(st.period_s);
        lags(st, mean, period, &mut ev)?;
        Some(finding(st, mean, ev))
    }
}

/// Confidence of the finding: every signal it checks must agree for it to fire, but the
/// schedule itself (stages, micro-batches) is not recorded and the stage order is assumed
/// to follow the GPU index.
const CONFIDENCE: f64 = 0.8;

/// Adds the neighbour lags' and periods' evidence: every GPU repeats at the batch period
/// (a whole multiple of the shortest GPU period, within [`PERIOD_TOLERANCE`]), the resolved
/// lags (a gain of [`MIN_LAG_GAIN`] or more) all point the same way, as stages in index
/// order do, and their span stays within [`MAX_LAG_SPAN`] of each GPU's idle time per period
/// (`period_s`, a batch). `None` when they say it is not a pipeline. A lag may be
/// unresolved: where the backward pass is longer than the forward one, a GPipe stage's
/// idle stretch is its neighbour's shrunk at both ends rather than shifted.
fn lags(st: &Stagger, mean_idle: f64, period_s: Option<f64>, ev: &mut Vec<Evidence>) -> Option<()> {
    let periods = st.periods_s.as_ref()?;
    let shortest = st.period_s.filter(|p| *p > 0.0)?;
    let off = periods
        .iter()
        .map(|p| ((p / shortest) - (p / shortest).round()).abs())
        .fold(0.0, f64::max);
    let e = evidence(
        "GPU periods off a whole multiple of the shortest",
        off,
        Comparator::Below,
        PERIOD_TOLERANCE,
        "fraction",
        None,
    );
    let same_period = e.agrees;
    ev.push(e);
    let resolved: Vec<f64> = st
        .neighbour_lags_s
        .iter()
        .zip(&st.lag_gains)
        .filter(|(_, g)| **g >= MIN_LAG_GAIN)
        .map(|(l, _)| *l)
        .collect();
    let ahead = resolved.iter().filter(|x| **x > 0.0).count();
    let behind = resolved.iter().filter(|x| **x < 0.0).count();
    if !same_period || ahead.min(behind) > 0 {
        return None;
    }
    let span = resolved.iter().sum::<f64>().abs();
    let idle = mean_idle * period_s?;
    let ratio = if idle > 0.0 {
        span / idle
    } else {
        f64::INFINITY
    };
    let e = evidence(
        "span of resolved neighbour lags / each GPU's idle time per period",
        ratio,
        Comparator::Below,
        MAX_LAG_SPAN,
        "ratio",
        None,
    );
    let agrees = e.agrees;
    ev.push(e);
    agrees.then_some(())
}

/// The finding once the GPUs idle in turn: the bubble is the mean dip share.
fn finding(st: &Stagger, mean: f64, ev: Vec<Evidence>) -> Finding {
    let lost = round(mean);
    let devices: Vec<u32> = st.idle_shares.iter().map(|x| x.0).collect();
    let mut f = META.finding(
        CONFIDENCE,
        format!(
            "{} each idle ~{:.0}% of the time, in turn rather than together (all at once only {:.0}% of the time), each one's idle lagging its neighbour's: the stages of a pipeline-parallel schedule waiting while the pipe fills and drains, ~{:.0}% of the run lost.",
            gpus(&devices),
            mean * 100.0,
            st.all_idle * 100.0,
            lost * 100.0
        ),
        ev,
    );
    f.severity = if lost >= HIGH_BUBBLE {
        Severity::High
    } else if lost < LOW_BUBBLE {
        Severity::Low
    } else {
        Severity::Medium
    };
    f.lost_share = Some(lost);
    f.lost_share_basis = Some("time-weighted: the mean share of time each GPU dips below 20% utilization (the bubble each stage sits in)".into());
    f.devices = devices;
    f.actions = vec![
        action(Cost::Low, "Raise the number of micro-batches per batch (gradient accumulation steps / num_microbatches): the bubble is (p − 1)/(m + p − 1) of the time"),
        action(Cost::Medium, "Use an interleaved 1F1B schedule (Megatron's virtual pipeline stages, --num-layers-per-virtual-pipeline-stage): the bubble shrinks by the number of model chunks per GPU"),
        action(Cost::High, "Use fewer pipeline stages (more tensor or data parallelism) when the model fits"),
    ];
    f.experiment = experiment(
        "Double the micro-batches per batch (one change)",
        "each GPU's idle share falls toward (p − 1)/(2m + p − 1); samples per second rise",
        "mean dip share per GPU; samples per second",
    );
    f.unseen.push("The schedule itself (stages, micro-batches) is not recorded; the stage order is assumed to follow the GPU index.".into());
    f
}
