//! `unexplained_idle`: the GPUs idle a meaningful share of the time and no rule explains it.
//!
//! The verdict always answers "why is my GPU not busy?": when no other finding accounts for
//! the idle time, this one says how much time is idle, what was seen (and what came close to
//! a rule's threshold), what could not be seen, and the next measurement on the guides'
//! ladder with the command that takes it. The rule proposes; [`settle`] keeps it only for
//! the idle time the other findings leave unexplained.

use super::{action, evidence, experiment, gpus, near_miss, round, Rule, RuleDoc, RuleMeta};
use crate::report::Comparator;
use crate::report::{Cost, Evidence, Finding, Severity};
use crate::signals::Signals;

/// Time-weighted idle share (1 − mean utilization) from which the GPUs count as not busy:
/// the product's line between "busy" (≥ 80 % utilization, [`crate::signals::BUSY_UTIL`])
/// and a GPU worth a diagnosis.
pub const MIN_IDLE_SHARE: f64 = 0.20;

/// Idle share from which the finding is `high` rather than `medium`: half the time idle.
pub const HIGH_IDLE_SHARE: f64 = 0.5;

/// Changes between low and high utilization stretches from which the series is a sawtooth
/// (low → high → low → high): the guides read it as waiting for input between batches.
pub const MIN_SWINGS: usize = 3;

/// Confidence of the idle measurement itself (it is measured, not inferred) before the
/// short-log temper; a reading of its cause is stated with [`READING_CONFIDENCE`].
pub const IDLE_CONFIDENCE: f64 = 0.8;

/// Confidence of the best-supported reading of a sawtooth (an input wait): modest, since
/// samples cannot see the data phase.
pub const READING_CONFIDENCE: f64 = 0.5;

/// Data-phase time over total step time below which the marked data phase rules out an
/// input wait as the reading of a sawtooth: XProf calls a job "moderately input-bound" only
/// from 5 % of step time spent on input (docs/references.md#xprof).
pub const SMALL_DATA_SHARE: f64 = 0.05;

/// Memory used over total from which memory counts as nearly full (the guides keep 20–30 %
/// free; under 10 % free leaves no room for a larger batch).
pub const MEMORY_NEARLY_FULL: f64 = 0.9;

/// Findings whose cause keeps the GPU *slower* rather than idle: their lost share is not
/// idle time, so they do not explain it.
const NOT_IDLE_CAUSES: &[&str] = &[
    "throttling",
    "busy_not_working",
    "memory_bound",
    "recompute_overhead",
    "pcie_degraded",
];

static META: RuleMeta = RuleMeta {
    id: "unexplained_idle",
    title: "GPU idle, cause not visible in this data",
    severity: Severity::Medium,
    doc: RuleDoc {
        detects: "GPUs busy less than 80 % of the time (time-weighted: one minus the mean utilization over the span the job used them, start-up and shutdown idling left out), when no other finding accounts for that idle time. In an inference loop (forward passes marked, never a backward pass or an optimizer step) with a fifth of the step time outside the forward passes, the idle is read as waiting for requests, at low severity.",
        why: "An idle GPU always has a cause; when the recorded signals cannot show it, the answer is what was seen, what was missing, and the measurement that would tell — never silence.",
        evidence: "Time-weighted mean utilization and idle share per GPU; the share of time near zero; swings between low and high utilization (a sawtooth is read as an input wait, with modest confidence, unless the loop marks a data phase under 5 % of the step time, when the largest other phase it marks is named instead); memory use; each rule's measurement that came within a third of its threshold; which of step markers, a data phase, the host view and a profiler trace were missing.",
        first: "Take the next measurement on the ladder: step markers with a data phase (`gw.data(loader)` in Python), then the host view (`gpuwhy record -o run.json -- python train.py`), then a profiler trace of a few steps (`gpuwhy diagnose run.json --trace trace.json`), then the one-variable experiment compared with `gpuwhy compare`.",
    },
};

/// See the module docs.
pub struct UnexplainedIdle;

/// The job's time-weighted idle: mean idle share over the sampled GPUs, with the GPUs and
/// the evidence, or the profiler trace's idle share when there are no samples.
fn idle(s: &Signals, ev: &mut Vec<Evidence>) -> Option<(f64, Vec<u32>, String)> {
    let mut busy: Vec<_> = s
        .sampled_devices()
        .filter_map(|d| d.busy.map(|b| (d, b)))
        .collect();
    // A GPU that never worked while others did is most likely not the job's (a node's
    // spare GPUs in a dmon log): it is named, not counted as the job's idle time.
    if busy.iter().any(|(_, b)| b.near_zero_share < 1.0) {
        busy.retain(|(_, b)| b.near_zero_share < 1.0);
    }
    if busy.is_empty() {
        let b = s.trace.as_ref()?.busy_share()?;
        ev.push(evidence(
            "GPU busy share of the traced span",
            b,
            Comparator::Below,
            1.0 - MIN_IDLE_SHARE,
            "fraction",
            None,
        ));
        return Some((
            1.0 - b,
            Vec::new(),
            "1 − the GPU busy share of the profiler trace's span".into(),
        ));
    }
    for (d, b) in &busy {
        let dev = Some(d.index);
        ev.push(evidence(
            "util_gpu time-weighted mean",
            b.util_mean,
            Comparator::Below,
            100.0 * (1.0 - MIN_IDLE_SHARE),
            "%",
            dev,
        ));
        if b.near_zero_share > 0.0 {
            ev.push(evidence(
                "share of time with util_gpu < 10%",
                b.near_zero_share,
                Comparator::AtLeast,
                super::data_starvation::MIN_IDLE_SHARE,
                "fraction",
                dev,
            ));
        }
        // Memory nearly full rules out the cheapest fix of a steadily low GPU (a larger
        // batch) and is worth knowing when the cause is not visible.
        if let Some(m) = d.mem_used_ratio.filter(|m| m.p50 >= MEMORY_NEARLY_FULL) {
            ev.push(evidence(
                "mem_used p50 / memory total (nearly full)",
                m.p50,
                Comparator::AtLeast,
                MEMORY_NEARLY_FULL,
                "ratio",
                dev,
            ));
        }
    }
    let share = busy.iter().map(|(_, b)| b.idle_share).sum::<f64>() / busy.len() as f64;
    let span = busy.iter().map(|(_, b)| b.span_s).fold(0.0, f64::max);
    let left = busy
        .iter()
        .map(|(_, b)| b.lead_idle_s + b.tail_idle_s)
        .fold(0.0, f64::max);
    let mut basis = format!(
        "time-weighted: 1 − mean util_gpu over the {span:.0} s the GPUs were in use, mean over {}",
        gpus(&busy.iter().map(|(d, _)| d.index).collect::<Vec<_>>())
    );
    if left > 0.0 {
        basis.push_str(&format!(
            " ({left:.0} s of start-up/shutdown idling left out)"
        ));
    }
    Some((share, busy.iter().map(|(d, _)| d.index).collect(), basis))
}

/// GPUs whose utilization swings between low and high stretches (a sawtooth).
fn sawtooth(s: &Signals, ev: &mut Vec<Evidence>) -> Vec<u32> {
    let mut out = Vec::new();
    for d in s.sampled_devices() {
        let Some(b) = d.busy.filter(|b| b.swings >= MIN_SWINGS) else {
            continue;
        };
        ev.push(evidence(
            "swings between util_gpu < 50% and >= 80%",
            b.swings as f64,
            Comparator::AtLeast,
            MIN_SWINGS as f64,
            "count",
            Some(d.index),
        ));
        out.push(d.index);
    }
    out
}

/// One missing rung of the ladder: what could not be seen, and the step that takes it.
struct Rung {
    cost: Cost,
    unseen: &'static str,
    take: &'static str,
}

/// The rungs of the ladder that are missing, in the guides' order, each with the command
/// that takes it.
fn ladder(s: &Signals) -> Vec<Rung> {
    let mut rungs = Vec::new();
    match s.steps.as_ref() {
        None => rungs.push(Rung {
            cost: Cost::Low,
            unseen: "No step markers: the step time and the wait for input could not be measured.",
            take: "Mark steps with a data phase — in Python `for x, y in gw.data(loader):` inside `with gpuwhy.Session(output=\"run.json\") as gw:` (docs/python.md) — then `gpuwhy diagnose run.json`",
        }),
        Some(st) if st.data_share_p50.is_none() => rungs.push(Rung {
            cost: Cost::Low,
            unseen: "Steps were marked without a data phase: the wait for input could not be measured.",
            take: "Wrap the loader as `gw.data(loader)` (or call `gw.phase(\"data\")` before fetching a batch) so the input wait is measured",
        }),
        Some(_) => {}
    }
    if s.host_cpu.is_none() && s.host_proc_cpu.is_none() {
        rungs.push(Rung {
            cost: Cost::Low,
            unseen: "No host view: the CPU, the disk and the job's own CPU were not sampled.",
            take:
                "Record the job with the host view: `gpuwhy record -o run.json -- python train.py`",
        });
    }
    if s.trace.is_none() {
        rungs.push(Rung {
            cost: Cost::Medium,
            unseen: "No profiler trace: what the GPU waited for between kernels is not visible.",
            take: "Trace a few steps with torch.profiler (activities CPU and CUDA, export_chrome_trace) and run `gpuwhy diagnose run.json --trace trace.json`",
        });
    }
    rungs
}

impl Rule for UnexplainedIdle {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn needs(&self) -> super::Needs {
        // How much of the time the GPUs read idle is a reading even in a snapshot; what
        // it costs is not (a snapshot's lost share is taken away: `analysis::claims`).
        super::Needs::State
    }

    fn evaluate(&self, s: &Signals) -> Option<Finding> {
        let mut ev = Vec::new();
        let (share, mut devices, basis) = idle(s, &mut ev)?;
        if share < MIN_IDLE_SHARE {
            return None;
        }
        let saw = sawtooth(s, &mut ev);
        ev.extend(near_miss::near_misses(s));
        let where_ = if devices.is_empty() {
            "The GPU".to_string()
        } else {
            gpus(&devices)
        };
        if let Some(f) = serving(s, share, &devices, &basis, &mut ev) {
            return Some(f);
        }
        let small_data = small_data_phase(s, &mut ev);
        let reading = match (saw.is_empty(), small_data) {
            (true, _) => String::from("the cause is not visible in this data"),
            (false, Some(d)) => format!("{} swings between low and high utilization, but the loop's data phase takes only {:.1}% of the step time: not an input wait; {}", gpus(&saw), d * 100.0, elsewhere(s, &mut ev)),
            (false, None) => format!("{} swings between low and high utilization, a sawtooth: a data/input wait is the best-supported reading (modest confidence)", gpus(&saw)),
        };
        let conf = if saw.is_empty() || small_data.is_some() {
            IDLE_CONFIDENCE
        } else {
            READING_CONFIDENCE
        };
        let mut f = META.finding(
            conf,
            format!(
                "{where_} idle ~{:.0}% {} and no rule explains it; {reading}.",
                share * 100.0,
                // One sample is a reading at one instant, not a share of time.
                if s.samples_per_gpu() <= 1 {
                    "in this snapshot"
                } else {
                    "of the time"
                }
            ),
            ev,
        );
        if share >= HIGH_IDLE_SHARE {
            f.severity = Severity::High;
        }
        f.lost_share = Some(round(share));
        f.lost_share_basis = Some(basis);
        f.devices = std::mem::take(&mut devices);
        let rungs = ladder(s);
        f.unseen = rungs.iter().map(|r| r.unseen.to_string()).collect();
        let unused: Vec<u32> = s
            .sampled_devices()
            .filter(|d| d.busy.is_some() && !f.devices.contains(&d.index))
            .map(|d| d.index)
            .collect();
        if !unused.is_empty() && !f.devices.is_empty() {
            f.unseen.push(format!("{} never worked during the record (utilization under 10% throughout) while the others did: left out of the idle share as most likely not the job's.", gpus(&unused)));
        }
        f.actions = rungs.iter().map(|r| action(r.cost, r.take)).collect();
        f.actions.push(action(Cost::Low, "Then change one variable the reading points at (e.g. DataLoader num_workers ×2 for an input wait) and compare the two reports with `gpuwhy compare base.json new.json`"));
        f.experiment = match (rungs.first(), small_data) {
            (Some(next), _) => experiment(next.take, "the idle time is attributed to a phase, the host or the trace's gaps: a named cause replaces this finding", "the next report's verdict"),
            (None, Some(_)) => experiment("Mark the rest of the step as phases of its own (`gw.phase(\"name\")` around the optimizer step, collectives, logging) and record again", "the idle time falls in one marked phase, which names the cause", "each phase's share of step time"),
            (None, None) => experiment("Double DataLoader num_workers (one change) and compare with `gpuwhy compare base.json new.json`", "if the idle time is an input wait, the idle share falls", "util_gpu time-weighted mean"),
        };
        Some(f)
    }
}

/// The data phase's share of step time when the loop marks one and it is under
/// [`SMALL_DATA_SHARE`] (with its evidence): an input wait cannot be the idle time's reading.
fn small_data_phase(s: &Signals, ev: &mut Vec<Evidence>) -> Option<f64> {
    let d = s.steps.as_ref()?.data_share_total?;
    (d < SMALL_DATA_SHARE).then(|| {
        ev.push(evidence(
            "data phase time / total step time",
            d,
            Comparator::Below,
            SMALL_DATA_SHARE,
            "fraction",
            None,
        ));
        d
    })
}

/// Where the idle time most likely falls when the data phase cannot hold it: the largest
/// other phase the loop marks (with its evidence), else an unmarked part of the step.
fn elsewhere(s: &Signals, ev: &mut Vec<Evidence>) -> String {
    match s
        .phase_activity
        .as_ref()
        .and_then(|p| p.largest_other.clone())
    {
        Some((name, share)) => {
            ev.push(evidence(&format!("phase `{name}` time / total step time (the largest marked besides data, forward and backward)"), share, Comparator::AtLeast, SMALL_DATA_SHARE, "fraction", None));
            format!("the loop's `{name}` phase takes {:.0}% of the step time, where the idle most likely falls", share * 100.0)
        }
        None => "the idle falls in a part of the step the loop does not mark".into(),
    }
}

/// An inference (serving) loop's idle: the loop marks forward passes and never a backward
/// pass or an optimizer step, and at least [`MIN_IDLE_SHARE`] of the step time lies outside
/// the forward passes. That idle is the server waiting for requests (load), not a
/// bottleneck of the GPU work: the finding says so at low severity.
fn serving(
    s: &Signals,
    share: f64,
    devices: &[u32],
    basis: &str,
    ev: &mut Vec<Evidence>,
) -> Option<Finding> {
    if !s.phase_activity.as_ref()?.inference_only {
        return None;
    }
    let outside = 1.0 - s.steps.as_ref()?.fwd_bwd_share_total?;
    let e = evidence(
        "step time outside forward passes / total step time",
        outside,
        Comparator::AtLeast,
        MIN_IDLE_SHARE,
        "fraction",
        None,
    );
    if !e.agrees {
        return None;
    }
    ev.push(e);
    let mut f = META.finding(IDLE_CONFIDENCE, format!("{} idle ~{:.0}% of the time in an inference loop (forward passes only; {:.0}% of the step time passes outside them): the server waits for requests — idle for lack of load, not a bottleneck of the GPU work.", if devices.is_empty() { "The GPU".to_string() } else { gpus(devices) }, share * 100.0, outside * 100.0), std::mem::take(ev));
    f.severity = Severity::Low;
    f.lost_share = Some(round(share));
    f.lost_share_basis = Some(format!(
        "{basis}; idle between requests, not lost to a bottleneck"
    ));
    f.devices = devices.to_vec();
    f.actions = vec![
        action(Cost::Low, "If latency allows, batch requests (dynamic batching in the server) so each forward pass does more work"),
        action(Cost::Medium, "Serve the load from fewer GPUs or replicas (or scale them with the request rate)"),
    ];
    f.experiment = experiment(
        "Replay the same requests at twice the rate (one change)",
        "the idle share falls and forward time per request stays the same",
        "util_gpu time-weighted mean",
    );
    Some(f)
}

/// Keeps `candidate` (this rule's finding) for the idle time the `others` leave
/// unexplained. A finding whose cause idles the GPU explains up to its lost share (the
/// largest one counts: causes overlap); one without an estimate explains it all. The lost
/// share becomes what is left, and the finding goes when less than [`MIN_IDLE_SHARE`] is.
///
/// Memory headroom explains a steadily low GPU (a larger batch fills it) but not a sawtooth:
/// there the input wait is the better reading.
pub(crate) fn settle(mut candidate: Finding, others: &[Finding], s: &Signals) -> Option<Finding> {
    let idle = candidate.lost_share?;
    let saw = !sawtooth(s, &mut Vec::new()).is_empty();
    let mut explained: f64 = 0.0;
    let mut by = None;
    let explains = |f: &&Finding| {
        let slows_only = NOT_IDLE_CAUSES.contains(&f.id.as_str());
        let headroom_vs_sawtooth = saw && f.id == "memory_headroom";
        !(slows_only || headroom_vs_sawtooth)
    };
    for f in others.iter().filter(explains) {
        let l = f.lost_share?;
        if l > explained {
            explained = l;
            by = Some(f.id.clone());
        }
    }
    let left = round((idle - explained).max(0.0));
    if left < MIN_IDLE_SHARE {
        return None;
    }
    if let Some(id) = by {
        candidate.summary = format!("{} ({id} accounts for ~{:.0}% of the run; ~{:.0}% more is idle without a visible cause.)", candidate.summary, explained * 100.0, left * 100.0);
        candidate.lost_share_basis = candidate.lost_share_basis.map(|b| {
            format!(
                "{b}, minus the {:.0}% that {id} accounts for",
                explained * 100.0
            )
        });
    }
    candidate.lost_share = Some(left);
    Some(candidate)
}
