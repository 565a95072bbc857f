//! `data_starvation`: the GPU waits for input.

use super::traced::*;
use super::{action, experiment};
use super::{confidence, evidence, gpus, round, Rule, RuleDoc, RuleMeta, Weight};
use crate::report::Comparator;
use crate::report::FindingSource;
use crate::report::{Action, Cost, DataLoaderInfo, Evidence, Experiment, Finding, Severity};
use crate::signals::{DeviceSignals, Signals, NEAR_ZERO_UTIL};
use crate::trace::TraceSummary;

/// Share of samples near zero utilization at which waiting counts: one sample in ten.
/// XProf calls a job "moderately input-bound" from 5 % of step time spent on input and
/// "highly" from 20 %; samples of utilization are coarser than step phases, so 10 % sits
/// between the two bands (`docs/references.md#xprof`).
pub const MIN_IDLE_SHARE: f64 = 0.10;

/// Share of busy samples (≥ 80 %) that makes the pattern a sawtooth rather than a steadily
/// idle GPU: the guides' "periodic drops to zero" picture has the GPU fully busy in between.
pub const MIN_BUSY_SHARE: f64 = 0.25;

/// Fewest separate near-zero stretches that make a pattern: the guides' picture is
/// utilization dropping to zero "again and again"; one or two long idle stretches (start-up,
/// a pause) are not input starvation.
pub const MIN_DIPS: usize = 3;

/// Autocorrelation at the dominant period above which the dips repeat regularly
/// (a conventional "clear periodicity" level; a random series stays near 0).
pub const MIN_PERIOD_STRENGTH: f64 = 0.3;

/// Correlation of power with utilization above which power drops with the dips, as it does
/// when the GPU really idles (guides: "power far below limit while idle").
pub const MIN_POWER_CORRELATION: f64 = 0.5;

/// Host CPU p95 (%) at which the input pipeline's workers plausibly saturate the CPU
/// (SageMaker's CPUBottleneck rule uses 90 %, `docs/references.md#sagemaker-debugger`).
pub const HOST_CPU_SATURATED: f64 = 90.0;

/// Data-phase share of step time (p50) from which input waits cost a large part of every
/// step. XProf calls 5 % "moderately" and 20 % "highly" input-bound (docs/references.md#xprof) and
/// torch-tb-profiler flags DataLoader time above 5 %; the field guides ask for ~30 %
/// of the step before this is the *main* bottleneck. 15 % sits where the guides' first fixes
/// (workers, pinning, prefetch) clearly pay off.
pub const MIN_DATA_SHARE: f64 = 0.15;

/// Samples alone cannot see the data phase; confidence from samples is capped here.
pub const SAMPLES_ONLY_MAX_CONFIDENCE: f64 = 0.8;

static META: RuleMeta = RuleMeta {
    id: "data_starvation",
    title: "GPU waits for input data",
    severity: Severity::High,
    doc: RuleDoc {
        detects: "Utilization that drops to near zero and comes back, again and again (a sawtooth at the step period), with power following it down.",
        why: "Every dip is time the GPU sits idle waiting for the next batch; the guides find this the most common cause of low utilization.",
        evidence: "Share of samples near 0 % and share busy (≥ 80 %); the dominant period of the utilization series; correlation of power with utilization; host CPU saturation when sampled.",
        first: "Preprocess offline into an mmap-friendly format, raise DataLoader num_workers toward the physical cores with persistent_workers and prefetch_factor 4–8, pin_memory with non_blocking copies.",
    },
};

/// See the module docs.
pub struct DataStarvation;

impl Rule for DataStarvation {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn evaluate(&self, s: &Signals) -> Option<Finding> {
        // A profiler trace shows the GPU idle while the CPU is in the DataLoader: trust it.
        if let Some(f) = s.trace.as_ref().and_then(|t| traced(t, &META)) {
            return Some(f);
        }
        // The step markers measure the data wait directly: they decide when they exist.
        // Either the typical step or the run's total can show the wait: a few long waits
        // and many short ones leave the median step below the threshold.
        let data_share = s.steps.as_ref().and_then(|st| st.data_share_p50);
        let total = s.steps.as_ref().and_then(|st| st.data_share_total);
        // A serving loop (forward passes only) with no data phase idles between requests:
        // its sawtooth is the arrival of requests, not an input pipeline it waits on.
        let serving = s.phase_activity.as_ref().is_some_and(|p| p.inference_only);
        if serving && data_share.is_none() {
            return None;
        }
        if data_share.is_some_and(|d| d < MIN_DATA_SHARE)
            && total.is_none_or(|t| t < MIN_DATA_SHARE)
        {
            return None;
        }
        let mut g = Gathered::default();
        for d in s.sampled_devices() {
            sawtooth(d, &mut g);
        }
        if let Some(d) = data_share {
            step_evidence(s, d, &mut g);
        } else if g.devices.is_empty() {
            return None;
        }
        host_evidence(s, &mut g);
        let (lost, basis) = cost(data_share, total, &g.idle_shares);
        if let (Some(_), Some(t)) = (data_share, total) {
            g.ev.insert(
                1,
                evidence(
                    "data phase time / total step time",
                    t,
                    Comparator::AtLeast,
                    MIN_DATA_SHARE,
                    "fraction",
                    None,
                ),
            );
        }
        Some(finding(s, g, data_share, lost, basis))
    }
}

/// The evidence gathered so far, with the weight of each signal checked.
#[derive(Default)]
struct Gathered {
    devices: Vec<u32>,
    ev: Vec<Evidence>,
    /// Weights that belong to no evidence item.
    others: Vec<Weight>,
    /// Each sawtooth GPU's time-weighted near-zero share.
    idle_shares: Vec<f64>,
}

/// A GPU's sawtooth from its samples: near-zero and busy shares, enough dips, and how
/// regular the dips are and whether power follows them. Nothing for a GPU without one.
fn sawtooth(d: &DeviceSignals, g: &mut Gathered) {
    let (Some(idle), Some(busy)) = (d.util_near_zero, d.util_busy) else {
        return;
    };
    if idle < MIN_IDLE_SHARE || busy < MIN_BUSY_SHARE || d.util_dips < MIN_DIPS {
        return;
    }
    g.devices.push(d.index);
    g.idle_shares
        .push(d.busy.map_or(idle, |b| b.near_zero_share));
    let dev = Some(d.index);
    g.ev.push(evidence(
        &format!("share of samples with util_gpu < {NEAR_ZERO_UTIL}%"),
        idle,
        Comparator::AtLeast,
        MIN_IDLE_SHARE,
        "fraction",
        dev,
    ));
    g.ev.push(evidence(
        "share of samples with util_gpu >= 80%",
        busy,
        Comparator::AtLeast,
        MIN_BUSY_SHARE,
        "fraction",
        dev,
    ));
    // The sawtooth fired this path: the two shares above agree by construction.
    g.others.push(Weight::Prior(2.0));
    match d.util_period {
        Some(p) => {
            let mut e = evidence(
                "util_gpu autocorrelation at its dominant period",
                p.strength,
                Comparator::AtLeast,
                MIN_PERIOD_STRENGTH,
                "r",
                dev,
            );
            if let Some(ps) = d.util_period_s {
                e.metric = format!(
                    "util_gpu autocorrelation at its dominant period ({:.2} s)",
                    ps
                );
            }
            g.ev.push(e.weighing(1.0));
        }
        None => g.others.push(Weight::Unmeasured(1.0)),
    }
    if let Some(c) = d.power_util_corr {
        let e = evidence(
            "correlation of power with util_gpu",
            c,
            Comparator::AtLeast,
            MIN_POWER_CORRELATION,
            "r",
            dev,
        );
        g.ev.push(e.weighing(1.0));
    }
}

/// The step markers' data phase (`share`, of the median step), first in the evidence and
/// the heaviest weight; the finding then concerns every sampled GPU if no sawtooth named one.
fn step_evidence(s: &Signals, share: f64, g: &mut Gathered) {
    // The data phase (p50 or all steps) fired this path.
    g.others.push(Weight::Prior(3.0));
    g.ev.insert(
        0,
        evidence(
            "data phase share of step time p50",
            share,
            Comparator::AtLeast,
            MIN_DATA_SHARE,
            "fraction",
            None,
        ),
    );
    if let Some(p95) = s.steps.as_ref().and_then(|st| st.data_share_p95) {
        g.ev.insert(
            1,
            evidence(
                "data phase share of step time p95",
                p95,
                Comparator::AtLeast,
                MIN_DATA_SHARE,
                "fraction",
                None,
            ),
        );
    }
    if g.devices.is_empty() {
        g.devices = s.sampled_devices().map(|d| d.index).collect();
    }
}

/// The host CPU, supporting only: a saturated CPU explains the wait, an idle one does not
/// rule it out (slow storage, a single-process loader).
fn host_evidence(s: &Signals, g: &mut Gathered) {
    if let Some(cpu) = s.host_cpu {
        let e = evidence(
            "host CPU busy p95",
            cpu.p95,
            Comparator::AtLeast,
            HOST_CPU_SATURATED,
            "%",
            None,
        );
        // Supporting only: it counts when it agrees.
        g.ev.push(if e.agrees { e.weighing(1.0) } else { e });
    }
}

/// What the wait costs, and how that was estimated: its share of the run's time (a few long
/// waits can be most of it while the median step never sees them).
fn cost(data_share: Option<f64>, total: Option<f64>, idle_shares: &[f64]) -> (f64, String) {
    match (data_share, total) {
        (Some(_), Some(t)) => (
            round(t),
            "time-weighted: data-phase time over total step time, all steps".to_string(),
        ),
        (Some(d), None) => (
            round(d),
            "data-phase share of the median step (the phase's total time was not kept)".to_string(),
        ),
        _ => (
            round(idle_shares.iter().sum::<f64>() / idle_shares.len() as f64),
            "time-weighted: share of the time utilization was near zero (< 10%), over the span the GPUs were in use".to_string(),
        ),
    }
}

/// The finding from what was gathered: confidence capped without step markers (samples
/// cannot see the data phase), the summary in the terms of what decided it.
fn finding(s: &Signals, g: Gathered, data_share: Option<f64>, lost: f64, basis: String) -> Finding {
    let cap = if data_share.is_some() {
        1.0
    } else {
        SAMPLES_ONLY_MAX_CONFIDENCE
    };
    let unseen = if data_share.is_some() {
        Vec::new()
    } else {
        vec!["Step phases were not recorded: the data-wait share of each step is estimated from utilization samples. Add step markers (the library or Python binding) to measure it exactly.".into()]
    };
    let devices = g.devices;
    Finding {
        id: META.id.into(),
        title: META.title.into(),
        severity: META.severity,
        confidence: round(confidence(&g.ev, &g.others) * cap),
        summary: match data_share {
            Some(d) => format!("The data phase takes ~{:.0}% of the run's step time ({:.0}% of the median step): the GPU waits for input.", lost * 100.0, d * 100.0),
            None => format!(
                "{} {} to near-zero utilization ~{:.0}% of the time and {} to full load in between: the GPU is waiting for input.",
                gpus(&devices),
                if devices.len() == 1 { "drops" } else { "drop" },
                lost * 100.0,
                if devices.len() == 1 { "returns" } else { "return" }
            ),
        },
        lost_share: Some(lost),
        lost_share_basis: Some(basis),
        devices,
        evidence: g.ev,
        actions: loader_actions(s.data_loader.as_ref()),
        experiment: Experiment {
            change: match s.data_loader.as_ref().and_then(|l| l.num_workers) {
                Some(0) => "Set DataLoader num_workers to 4 (from 0; one variable), keep everything else fixed".into(),
                Some(n) => format!("Double DataLoader num_workers ({n} → {}; one variable), keep everything else fixed", n * 2),
                None => "Double DataLoader num_workers (one variable), keep everything else fixed".into(),
            },
            expect: "The share of near-zero utilization samples and the data phase p50 fall; step time p50 falls by up to the lost share".into(),
            metric: "util_gpu near-zero share; step time p50".into(),
        },
        unseen,
        // The step markers' data phase decides when it was recorded.
        source: Some(if data_share.is_some() {
            FindingSource::Steps
        } else {
            FindingSource::Samples
        }),
        caused_by: None,
    }
}

/// The fixes, cheapest first, read against the loader's settings where the binding reported
/// them (`run.data_loader`): the setting that is off is named first ("num_workers=0 → …").
fn loader_actions(loader: Option<&DataLoaderInfo>) -> Vec<Action> {
    let low = |t: String| Action {
        text: t,
        cost: Cost::Low,
    };
    let mut first = Vec::new();
    let mut rest = Vec::new();
    match loader.and_then(|l| l.num_workers) {
        Some(0) => first.push(low("num_workers=0 → every batch is made in the training process while the GPU waits: set num_workers toward the number of physical cores, with persistent_workers=True and prefetch_factor=4–8".into())),
        Some(n) => rest.push(low(format!("num_workers={n} → raise it toward the number of physical cores; set persistent_workers=True and prefetch_factor=4–8"))),
        None => rest.push(low("Raise DataLoader num_workers toward the number of physical cores; set persistent_workers=True and prefetch_factor=4–8".into())),
    }
    let l = loader.cloned().unwrap_or_default();
    if l.num_workers.is_some_and(|n| n > 0) && l.persistent_workers == Some(false) {
        first.push(low(
            "persistent_workers=False → workers restart every epoch: set persistent_workers=True"
                .into(),
        ));
    }
    if l.num_workers.is_some_and(|n| n > 0) && l.prefetch_factor.is_some_and(|p| p < 4) {
        first.push(low(format!(
            "prefetch_factor={} → raise it to 4–8 so workers stay ahead",
            l.prefetch_factor.unwrap_or(0)
        )));
    }
    rest.push(low(match l.pin_memory {
        Some(false) => "pin_memory=False → set pin_memory=True and use .to(device, non_blocking=True) for batches".into(),
        _ => "Use pin_memory=True and .to(device, non_blocking=True) for batches".into(),
    }));
    first.extend(rest);
    first.extend([
        Action { text: "Move decoding/augmentation to the GPU (e.g. DALI or torchvision v2 on CUDA tensors)".into(), cost: Cost::Medium },
        Action { text: "Preprocess/tokenize offline into an mmap-friendly format (memory-mapped arrays, WebDataset shards); bucket by length".into(), cost: Cost::Medium },
        Action { text: "Faster storage or a local cache of the dataset".into(), cost: Cost::High },
    ]);
    first
}

// Evidence from a profiler trace, tried first when one is attached.

/// `data_starvation` from a trace: the GPU idles while the CPU is inside the DataLoader.
fn traced(t: &TraceSummary, meta: &RuleMeta) -> Option<Finding> {
    let (r, share, ev) = costly(t, "while the CPU is in the DataLoader", |g| g.data_us)?;
    let g = &r.gap_causes;
    let names = named(g, |n| n.to_ascii_lowercase().contains("dataloader"));
    let mut f = meta.finding(
        confidence(&ev, &[]) * 0.95,
        format!(
            "The GPU{} is idle {:.0}% of the traced span; {:.0}% of the span ({:.0}% of the idle time) passes while the CPU waits in the DataLoader ({}): the input pipeline does not keep up.",
            rank_note(t, r),
            r.idle_share * 100.0,
            share * 100.0,
            g.of_idle(g.data_us) * 100.0,
            if names.is_empty() { "__next__".into() } else { names },
        ),
        ev,
    );
    f.actions = vec![
        action(Cost::Low, "Raise DataLoader num_workers toward the physical cores (a loader with num_workers=0 runs in the training loop), with persistent_workers=True and prefetch_factor 4–8"),
        action(Cost::Low, "pin_memory=True and .to(device, non_blocking=True)"),
        action(Cost::Medium, "Move decoding and augmentation off the loop: preprocess offline into an mmap-able format, or run the transforms on the GPU (DALI, torchvision v2 on tensors)"),
    ];
    f.experiment = experiment(
        "Double the DataLoader's num_workers (one change), profile again",
        "GPU idle time under the DataLoader falls and steps get shorter",
        "trace: idle time under the DataLoader over the span",
    );
    finish(&mut f, t, share);
    Some(f)
}
