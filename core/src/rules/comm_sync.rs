//! `comm_sync`: GPUs wait on each other (collective-communication bubbles).

use super::traced::*;
use super::{action, confidence, evidence, experiment, round, Rule, RuleDoc, RuleMeta, Weight};
use crate::report::Comparator;
use crate::report::{Cost, Severity};
use crate::report::{Evidence, Finding};
use crate::signals::Signals;
use crate::trace::{RankSummary, TraceSummary};

/// Share of dip times at which every GPU dips, from which the dips are synchronized:
/// independent waits (input, launches) rarely line up across GPUs; waits on an all-reduce do.
pub const MIN_DIP_AGREEMENT: f64 = 0.7;
/// Share of samples that are dip times on every GPU, from which the bubbles cost time.
pub const MIN_DIP_SHARE: f64 = 0.05;
/// Traffic during dips over traffic outside them, from which the dips are communication.
pub const TRAFFIC_RATIO: f64 = 1.5;
/// Data-phase share p50 from which the dips are input waits instead (data_starvation).
pub const DATA_WAIT_SHARE: f64 = 0.15;
/// Largest coefficient of variation of the spacing of slow steps from which they recur
/// every N steps (a collective at each gradient-accumulation boundary): the regularity
/// `periodic_stall` asks of a fixed period (its `MAX_SPACING_CV`; that rule defers to this
/// one, so the number is repeated rather than imported).
pub const MAX_SPACING_CV: f64 = 0.2;

static META: RuleMeta = RuleMeta {
    id: "comm_sync",
    title: "GPUs wait on each other (communication bubbles)",
    severity: Severity::High,
    doc: RuleDoc {
        detects: "Two or more GPUs whose utilization dips at the same moments, repeatedly, with NVLink/PCIe traffic rising in the dips and no input wait to explain them.",
        why: "In data-parallel training every step ends in an all-reduce; when it is not overlapped with compute, every GPU idles for it together.",
        evidence: "Share of dip times at which all GPUs dip; share of samples in such dips; NVLink/PCIe traffic in dips against outside; the data-phase share.",
        first: "Larger batch or gradient accumulation, larger DDP buckets (25 → 50–100 MB), overlap communication with backward; check the NVLink/P2P path; prefer ZeRO-1/2 over ZeRO-3 on slow links.",
    },
};

/// See the module docs.
pub struct CommSync;

impl Rule for CommSync {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn evaluate(&self, s: &Signals) -> Option<crate::report::Finding> {
        // A profiler trace measures this directly: trust it first.
        if let Some(f) = s.trace.as_ref().and_then(|t| traced(t, &META)) {
            return Some(f);
        }
        let (n, dip_share, mut ev) = dips(s)?;
        if !(ev[0].agrees && ev[1].agrees) {
            return None;
        }
        if let Some(d) = s.steps.as_ref().and_then(|st| st.data_share_p50) {
            if d >= DATA_WAIT_SHARE {
                return None;
            }
            ev.push(evidence(
                "data phase share of step p50",
                d,
                Comparator::Below,
                DATA_WAIT_SHARE,
                "fraction",
                None,
            ));
        }
        supporting_evidence(s, n, &mut ev);
        Some(finding(s, n, dip_share, ev))
    }
}

/// The synchronized dips' evidence: the number of job GPUs, the share of samples in dips
/// every GPU shares, and the two evidence items (agreement, share); `None` with fewer than
/// two GPUs or no dips.
fn dips(s: &Signals) -> Option<(usize, f64, Vec<Evidence>)> {
    let agreement = s.cross.dip_agreement?;
    let n = s.job_devices().count();
    if n < 2 {
        return None;
    }
    let samples = s
        .sampled_devices()
        .map(|d| d.samples)
        .max()
        .unwrap_or(0)
        .max(1);
    let dip_share = s.cross.dip_samples as f64 * agreement / samples as f64;
    let ev = vec![
        evidence(
            "share of dip times at which all GPUs dip",
            agreement,
            Comparator::AtLeast,
            MIN_DIP_AGREEMENT,
            "fraction",
            None,
        ),
        evidence(
            "share of samples in synchronized dips",
            dip_share,
            Comparator::AtLeast,
            MIN_DIP_SHARE,
            "fraction",
            None,
        ),
    ];
    Some((n, dip_share, ev))
}

/// Whether the job's GPUs dip together, with no input wait to explain it and link traffic
/// rising in the dips: the picture of a collective every GPU waits for. `periodic_stall`
/// leaves a stall with this picture to this rule (a collective every N micro-steps of
/// gradient accumulation is communication, not an eval or a checkpoint).
pub(crate) fn collective_in_dips(s: &Signals) -> bool {
    dips(s).is_some_and(|(_, _, ev)| ev.iter().all(|e| e.agrees))
        && s.steps
            .as_ref()
            .and_then(|st| st.data_share_p50)
            .is_none_or(|d| d < DATA_WAIT_SHARE)
        && traffic_ratio(s).is_some_and(|r| r >= TRAFFIC_RATIO)
}

/// Mean over the GPUs of NVLink+PCIe traffic in dips over traffic outside them.
fn traffic_ratio(s: &Signals) -> Option<f64> {
    let ratios: Vec<f64> = s
        .sampled_devices()
        .filter_map(|d| d.traffic_in_dips)
        .filter(|(_, out)| *out > 0.0)
        .map(|(i, o)| i / o)
        .collect();
    (!ratios.is_empty()).then(|| ratios.iter().sum::<f64>() / ratios.len() as f64)
}

/// What supports synchronized dips besides the dips themselves: traffic bursts inside them
/// and dips that repeat on every GPU, each weighing 1.
fn supporting_evidence(s: &Signals, n: usize, ev: &mut Vec<Evidence>) {
    if let Some(r) = traffic_ratio(s) {
        let e = evidence(
            "NVLink+PCIe traffic in dips / outside",
            r,
            Comparator::AtLeast,
            TRAFFIC_RATIO,
            "ratio",
            None,
        );
        ev.push(e.weighing(1.0));
    }
    let periodic = s
        .sampled_devices()
        .filter(|d| d.util_period.is_some_and(|p| p.strength >= 0.3))
        .count();
    let e = evidence(
        "GPUs whose dips repeat periodically",
        periodic as f64,
        Comparator::AtLeast,
        n as f64,
        "GPUs",
        None,
    );
    ev.push(e.weighing(1.0));
}

/// The synchronized dips fired the finding: they agree by construction and weigh 2.
const DIPS: Weight = Weight::Prior(2.0);

/// The finding from the dips' evidence: what the synchronized idling costs and the fixes.
fn finding(s: &Signals, n: usize, dip_share: f64, ev: Vec<Evidence>) -> Finding {
    let devices: Vec<u32> = s.job_devices().map(|d| d.index).collect();
    // The time lost is the time every GPU idles at once, over the sample times at which all
    // of them were sampled (evenly spaced, so a share of times is a share of time).
    let lost = s.cross.all_idle_share.unwrap_or(dip_share);
    let mut f = META.finding(
        confidence(&ev, &[DIPS]) * if s.steps.is_some() { 0.85 } else { 0.7 },
        format!("All {n} GPUs dip together in {:.0}% of samples{}: they wait on each other (collective communication), not on input. About {:.0}% of the run is lost, estimated as the share of time at which every GPU idles at once.", dip_share * 100.0, every_n_steps(s), lost * 100.0),
        ev,
    );
    f.lost_share = Some(round(lost));
    f.lost_share_basis = Some(if s.cross.all_idle_share.is_some() {
        "time-weighted: the share of time at which every one of the job's GPUs idles at once".into()
    } else {
        "the share of samples in which all the job's GPUs dip together".into()
    });
    f.devices = devices;
    f.actions = vec![
        action(Cost::Low, "Raise the per-GPU batch or use gradient accumulation so each all-reduce amortises over more compute"),
        action(Cost::Low, "Raise DDP bucket_cap_mb (25 → 50–100 MB) and keep gradient_as_bucket_view=True"),
        action(Cost::Medium, "Overlap communication with backward (DDP does by default; check no_sync/hooks); prefer ZeRO-1/2 over ZeRO-3 on slow links"),
        action(Cost::High, "Check the interconnect: NVLink/P2P enabled (`nvidia-smi topo -m`), NIC and NCCL settings across nodes"),
    ];
    f.experiment = experiment(
        "Double gradient accumulation steps (one change)",
        "the share of synchronized dips falls by about half; step time per sample falls",
        "synchronized dip share; samples per second",
    );
    f.unseen.push("Without a profiler trace the NCCL kernels and their overlap with compute are not visible; a PyTorch profiler trace shows them.".into());
    f
}

/// When the steps show the stall every N steps (a collective at each gradient-accumulation
/// boundary), the words that say so.
fn every_n_steps(s: &Signals) -> String {
    let Some(st) = s.steps.as_ref() else {
        return String::new();
    };
    match (st.outlier_period_steps, st.outlier_spacing_cv) {
        (Some(p), Some(cv)) if p > 1.0 && cv < MAX_SPACING_CV => format!(
            ", in a step every ~{p:.0} steps (a collective at each gradient-accumulation boundary)"
        ),
        _ => String::new(),
    }
}

// Evidence from a profiler trace, tried first when one is attached.

/// Exposed (not overlapped) communication over the span from which communication costs
/// time (torch-tb-profiler recommends acting above 10 % communication; §2.2).
pub const MIN_EXPOSED_COMM_SHARE: f64 = 0.10;

/// `comm_sync` from a trace: communication kernels not hidden under compute.
fn traced(t: &TraceSummary, meta: &RuleMeta) -> Option<Finding> {
    let exposed = |r: &RankSummary| {
        if r.span_us > 0.0 {
            (r.comm_us - r.comm_overlap_us) / r.span_us
        } else {
            0.0
        }
    };
    let r = worst(t, exposed)?;
    let x = exposed(r);
    let e = evidence(
        "exposed communication (NCCL not overlapped with compute) over the span",
        x,
        Comparator::AtLeast,
        MIN_EXPOSED_COMM_SHARE,
        "fraction",
        None,
    );
    if !e.agrees {
        return None;
    }
    // The exposed share fired the finding (it agrees by the check above) and weighs most.
    let mut ev = vec![e.weighing(3.0)];
    ev.push(evidence(
        "communication over the span",
        r.comm_us / r.span_us,
        Comparator::AtLeast,
        MIN_EXPOSED_COMM_SHARE,
        "fraction",
        None,
    ));
    let overlap = r.comm_overlap_share.unwrap_or(0.0);
    let e = evidence(
        "communication overlapped with compute",
        overlap,
        Comparator::Below,
        0.5,
        "fraction",
        None,
    );
    ev.push(e.weighing(1.0));
    let mut f = meta.finding(
        confidence(&ev, &[]) * 0.95,
        format!(
            "NCCL kernels take {:.0}% of the traced span{} and only {:.0}% of that runs under compute: {:.0}% of the span is exposed communication.",
            r.comm_us / r.span_us * 100.0,
            rank_note(t, r),
            overlap * 100.0,
            x * 100.0
        ),
        ev,
    );
    f.lost_share = Some(round(x));
    f.actions = vec![
        action(Cost::Low, "Raise the per-GPU batch or use gradient accumulation so each all-reduce amortises over more compute"),
        action(Cost::Low, "Raise DDP bucket_cap_mb (25 → 50–100 MB) and keep gradient_as_bucket_view=True"),
        action(Cost::Medium, "Overlap communication with backward (DDP does by default; check no_sync/hooks); prefer ZeRO-1/2 over ZeRO-3 on slow links"),
        action(Cost::High, "Check the interconnect: NVLink/P2P enabled (`nvidia-smi topo -m`), NIC and NCCL settings across nodes"),
    ];
    f.experiment = experiment(
        "Double gradient accumulation steps (one change), profile again",
        "exposed communication share of the span falls by about half",
        "trace exposed communication share",
    );
    mark_traced(&mut f, t);
    Some(f)
}
