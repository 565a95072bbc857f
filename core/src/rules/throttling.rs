//! `throttling`: the hardware runs slower than it can.
//!
//! Two ways: each GPU against its own limits (clock-event reasons, SM clock against its
//! maximum with heat or a power cap), and — where logs carry neither reasons nor maximum
//! clocks (`nvidia-smi dmon`, CSV) — GPUs of one job against each other: at equal
//! utilization, a clock far below the fastest GPU's, with less power, is a held-down clock
//! (`docs/rules.md`, "Cross-GPU evidence").

use super::{confidence, evidence, round, Rule, RuleDoc, RuleMeta};
use crate::metric::reasons;
use crate::report::Comparator;
use crate::report::{device_set as gpus, Action, Cost, Evidence, Experiment, Finding, Severity};
use crate::signals::cross::GpuActivity;
use crate::signals::{DeviceSignals, Signals};

/// Share of loaded samples with a throttling reason bit set at which throttling counts.
/// One loaded sample in five: brief power-cap touches at boost are normal, a fifth of the
/// time is a sustained limit (the guides: "fix power/cooling before touching code").
pub const MIN_THROTTLED_SHARE: f64 = 0.2;

/// Median SM clock under load below this fraction of the maximum SM clock means the clock is
/// held down (boost normally sits within a few percent of max, and the P0 clock may sit a few
/// MHz below it: `docs/references.md#nvml-clocks`).
pub const MAX_CLOCK_RATIO: f64 = 0.85;

/// Degrees below the slowdown threshold at which the GPU counts as "near slowdown".
pub const NEAR_SLOWDOWN_C: f64 = 5.0;

/// Share of loaded samples not in P0 at which the performance state is held down.
pub const MIN_NOT_P0_SHARE: f64 = 0.2;

/// Median power under load over the enforced limit at which the GPU sits at its cap.
pub const AT_POWER_LIMIT: f64 = 0.97;

/// Median clock under load below this fraction of the fastest job GPU's, at equal
/// utilization, marks a held-down clock when no maximum clock is known: the same margin as
/// [`MAX_CLOCK_RATIO`] (identical GPUs boost within a few percent of each other).
pub const PEER_CLOCK_RATIO: f64 = 0.85;

/// Loaded power below this fraction of the fastest GPU's corroborates a held-down clock
/// (a slower clock does less work per second and draws less).
pub const PEER_POWER_RATIO: f64 = 0.9;

/// Largest difference of loaded utilization (points) between two GPUs compared on clocks:
/// DESIGN.md's "differs > 10 points" is where utilization itself stops being equal.
pub const PEER_UTIL_SPREAD: f64 = 10.0;

static META: RuleMeta = RuleMeta {
    id: "throttling",
    title: "GPU clocks held down by power or temperature",
    severity: Severity::High,
    doc: RuleDoc {
        detects: "Clock event reasons (power cap, thermal or hardware slowdown, power brake) under load, SM clock well below its maximum, temperature near the slowdown threshold, P-state other than P0 under load.",
        why: "A throttled GPU does the same work more slowly; no code change fixes a power or cooling limit.",
        evidence: "Share of loaded samples with each reason bit; median SM clock under load against the maximum; temperature p95 against the slowdown threshold; P-state; power against the enforced limit.",
        first: "Check cooling (airflow, fan curves, inlet temperature) and the power limit (`nvidia-smi -q -d POWER`), then the power policy, before touching code.",
    },
};

/// See the module docs.
pub struct Throttling;

/// What one GPU showed.
#[derive(Default)]
struct Check {
    fires: bool,
    /// Clock under load over its reference (maximum, or the fastest peer's).
    ratio: Option<f64>,
    evidence: Vec<Evidence>,
}

impl Check {
    fn push(&mut self, e: Evidence, weight: f64) -> bool {
        let agrees = e.agrees;
        self.evidence.push(e.weighing(weight));
        agrees
    }
}

/// The driver's own throttle reasons on `d`: the share of loaded samples with any (whether
/// it reaches [`MIN_THROTTLED_SHARE`], `None` where reasons are not reported) and each
/// frequent one by name, added to `kinds`.
fn throttle_reasons(
    d: &DeviceSignals,
    c: &mut Check,
    kinds: &mut std::collections::BTreeSet<String>,
) -> Option<bool> {
    let dev = Some(d.index);
    let reasons_hit = d.throttled_share.map(|sh| {
        c.push(
            evidence(
                "share of loaded samples with a throttling reason",
                sh,
                Comparator::AtLeast,
                MIN_THROTTLED_SHARE,
                "fraction",
                dev,
            ),
            2.0,
        )
    });
    for (bit, sh) in d
        .reason_shares
        .iter()
        .filter(|(_, sh)| *sh >= MIN_THROTTLED_SHARE)
    {
        let name = reasons::names(*bit).join("");
        kinds.insert(name.clone());
        c.evidence.push(evidence(
            &format!("share of loaded samples with {name}"),
            *sh,
            Comparator::AtLeast,
            MIN_THROTTLED_SHARE,
            "fraction",
            dev,
        ));
    }
    reasons_hit
}

/// What holds the clock, in words: the driver's reasons and how long it reports them, or
/// what the samples show.
fn why(kinds: std::collections::BTreeSet<String>, reason_share: f64, peers: bool) -> String {
    if !kinds.is_empty() {
        format!(
            "the driver reports {} for {:.0}% of its loaded time",
            kinds.into_iter().collect::<Vec<_>>().join(", "),
            reason_share * 100.0
        )
    } else if peers {
        "clock far below the other GPUs' at equal utilization".to_string()
    } else {
        "clock held below max under load".to_string()
    }
}

/// The fixes, cheapest first.
fn actions() -> Vec<Action> {
    vec![
        Action { text: "Check the enforced power limit and power policy (`nvidia-smi -q -d POWER,PERFORMANCE`); restore the default limit if it was lowered".into(), cost: Cost::Low },
        Action { text: "Check cooling: inlet temperature, airflow, fan speeds, dust; spread hot jobs across chassis".into(), cost: Cost::Medium },
        Action { text: "Have the hardware or data-centre team inspect power delivery (power brake, PSU) and thermal design".into(), cost: Cost::High },
    ]
}

/// Adds `e`, counted with `weight` (or shown as context at 0), and says whether it agrees.
fn push_weighed(c: &mut Check, e: Evidence, weight: f64) -> bool {
    if weight > 0.0 {
        c.push(e, weight)
    } else {
        let agrees = e.agrees;
        c.evidence.push(e);
        agrees
    }
}

/// One GPU against its own limits.
fn own_limits(d: &DeviceSignals, kinds: &mut std::collections::BTreeSet<String>) -> Check {
    let dev = Some(d.index);
    let mut c = Check::default();
    let reasons_hit = throttle_reasons(d, &mut c, kinds);
    c.ratio = d.sm_clock_ratio_loaded;
    let clock_low = d.sm_clock_ratio_loaded.map(|r| {
        c.push(
            evidence(
                "sm_clock p50 under load / max sm_clock",
                r,
                Comparator::Below,
                MAX_CLOCK_RATIO,
                "ratio",
                dev,
            ),
            1.0,
        )
    });
    // The driver's reasons say which limit holds the clock; a signal of another limit is
    // shown but not counted against it (a power-braked GPU is cool and below its power cap;
    // a thermally slowed one need not be at its power cap).
    let named = |bits: &[u64]| {
        d.reason_shares
            .iter()
            .any(|(b, sh)| *sh >= MIN_THROTTLED_SHARE && bits.iter().any(|x| b & x != 0))
    };
    let thermal = named(&[
        reasons::SW_THERMAL,
        reasons::HW_THERMAL,
        reasons::HW_SLOWDOWN,
    ]);
    let power_cap = named(&[reasons::SW_POWER_CAP]);
    let by_reason = reasons_hit == Some(true);
    let weigh = |counts: bool, w: f64| if !by_reason || counts { w } else { 0.0 };
    let hot = match (d.temp, d.temp_slowdown) {
        (Some(t), Some(sd)) => {
            let e = evidence(
                "temp p95",
                t.p95,
                Comparator::AtLeast,
                sd - NEAR_SLOWDOWN_C,
                "°C",
                dev,
            );
            Some(push_weighed(&mut c, e, weigh(thermal, 1.0)))
        }
        _ => None,
    };
    if let Some(p) = d.pstate_not_p0_loaded {
        c.push(
            evidence(
                "share of loaded samples not in P0",
                p,
                Comparator::AtLeast,
                MIN_NOT_P0_SHARE,
                "fraction",
                dev,
            ),
            0.5,
        );
    }
    let at_cap = d.power_over_limit_loaded.map(|r| {
        let e = evidence(
            "power p50 under load / enforced limit",
            r,
            Comparator::AtLeast,
            AT_POWER_LIMIT,
            "ratio",
            dev,
        );
        push_weighed(&mut c, e, weigh(power_cap, 0.5))
    });
    // Fire on the driver's own reasons, or — where reasons are not reported — on a held-down
    // clock together with heat or a power cap.
    c.fires = reasons_hit == Some(true)
        || (reasons_hit.is_none()
            && clock_low == Some(true)
            && (hot == Some(true) || at_cap == Some(true)));
    c
}

/// This GPU's activity and the fastest other job GPU of the same product at about the same
/// utilization under load, with its clock.
fn fastest_peer(s: &Signals, index: u32) -> Option<(&GpuActivity, (&GpuActivity, f64))> {
    let acts = &s.cross.activity;
    let me = acts.iter().find(|a| a.index == index)?;
    let my_util = me.util_loaded?;
    let fastest = acts
        .iter()
        .filter(|a| a.index != index && a.name == me.name)
        .filter(|a| {
            a.util_loaded
                .is_some_and(|u| (u - my_util).abs() <= PEER_UTIL_SPREAD)
        })
        .filter_map(|a| a.clock_loaded.map(|c| (a, c)))
        .max_by(|x, y| x.1.total_cmp(&y.1))?;
    Some((me, fastest))
}

/// The clock ratio against the fastest peer, for a GPU throttled by its own reasons but
/// without a maximum clock to measure the loss against (also read by `busy_not_working`:
/// a held-down clock explains low power).
pub(super) fn peer_ratio(s: &Signals, index: u32) -> Option<f64> {
    let (me, (_, fastest)) = fastest_peer(s, index)?;
    Some((me.clock_loaded? / fastest.max(f64::EPSILON)).min(1.0))
}

/// GPUs of the job against the fastest of them at equal utilization, for GPUs without clock
/// reasons to judge them by (those are judged by [`own_limits`]).
fn against_peers(s: &Signals, d: &DeviceSignals) -> Option<Check> {
    // The driver's reasons, where reported, are its word on why; a maximum clock alone is
    // not: a clock held at a fraction of it with no heat or power cap in sight (a locked or
    // application clock, a slowdown the log does not name) shows against identical peers.
    if d.throttled_share.is_some() {
        return None;
    }
    let (me, fastest) = fastest_peer(s, d.index)?;
    let my_clock = me.clock_loaded?;
    let my_util = me.util_loaded?;
    let dev = Some(d.index);
    let mut c = Check::default();
    let ratio = my_clock / fastest.1.max(f64::EPSILON);
    c.ratio = Some(ratio);
    let metric = format!(
        "{} p50 under load / GPU {}'s",
        s.cross.clock_metric, fastest.0.index
    );
    let slow = c.push(
        evidence(
            &metric,
            ratio,
            Comparator::Below,
            PEER_CLOCK_RATIO,
            "ratio",
            dev,
        ),
        2.0,
    );
    let power = me
        .power_loaded
        .zip(fastest.0.power_loaded)
        .filter(|(_, f)| *f > 0.0);
    let weaker = power.map(|(p, f)| {
        let metric = format!("power p50 under load / GPU {}'s", fastest.0.index);
        c.push(
            evidence(
                &metric,
                p / f,
                Comparator::Below,
                PEER_POWER_RATIO,
                "ratio",
                dev,
            ),
            1.0,
        )
    });
    c.evidence.push(evidence(
        "util_gpu p50 under load",
        my_util,
        Comparator::AtLeast,
        0.0,
        "%",
        dev,
    ));
    // A slower clock that draws as much power is not held down by power or heat.
    c.fires = slow && weaker != Some(false);
    Some(c)
}

impl Rule for Throttling {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn needs(&self) -> super::Needs {
        // The driver's clock-event reasons and a clock against its maximum are state.
        super::Needs::State
    }

    fn produces(&self) -> &'static [super::Produces] {
        &[
            super::Produces {
                id: "rank_imbalance",
                on: super::Relation::OthersWaitFor,
                how: "the other GPUs wait for the slowed one at every synchronisation",
                carries: true,
            },
            super::Produces {
                id: "comm_sync",
                on: super::Relation::SameGpus,
                how: "the collectives wait for the slowed GPU, so the GPUs dip together",
                carries: false,
            },
        ]
    }

    fn evaluate(&self, s: &Signals) -> Option<Finding> {
        let mut devices = Vec::new();
        let mut ev = Vec::new();
        let mut lost = Vec::new();
        let mut kinds = std::collections::BTreeSet::new();
        let mut peers = false;
        // The largest clock shortfall and the largest share of loaded time the driver
        // reported a reason, for the summary.
        let (mut shortfall, mut reason_share): (f64, f64) = (0.0, 0.0);
        for d in s.sampled_devices() {
            let mut c = own_limits(d, &mut kinds);
            if !c.fires && d.job {
                if let Some(p) = against_peers(s, d).filter(|p| p.fires) {
                    peers = true;
                    c = p;
                }
            }
            if c.fires && c.ratio.is_none() {
                c.ratio = peer_ratio(s, d.index);
            }
            if c.fires {
                // Time-weighted: only the time under load runs slower.
                let loaded = s
                    .cross
                    .activity
                    .iter()
                    .find(|a| a.index == d.index)
                    .map_or(1.0, |a| a.loaded_share);
                lost.push(c.ratio.map_or(0.0, |r| loaded * (1.0 - r).max(0.0)));
                shortfall = shortfall.max(c.ratio.map_or(0.0, |r| 1.0 - r));
                reason_share = reason_share.max(d.throttled_share.unwrap_or(0.0));
                devices.push(d.index);
                ev.extend(c.evidence);
            }
        }
        if devices.is_empty() {
            return None;
        }
        // A synchronous job runs at its slowest GPU's pace: the largest loss is the job's.
        let lost_share = round(lost.iter().copied().fold(0.0, f64::max));
        let peers_only = peers && kinds.is_empty();
        let why = why(kinds, reason_share, peers);
        let mut f = META.finding(
            // Peers show that a clock is held down, not by what: less sure than the driver's word.
            confidence(&ev, &[]) * if peers_only { 0.85 } else { 1.0 },
            format!(
                "{} {}{} below {} clock under load ({why}){}",
                gpus(&devices),
                if devices.len() == 1 { "runs" } else { "run" },
                if shortfall > 0.0 { format!(" {:.0}%", shortfall * 100.0) } else { String::new() },
                if devices.len() == 1 { "its" } else { "their" },
                // A snapshot shows the state, not how long it lasts.
                if s.samples_per_gpu() <= 1 {
                    " in this snapshot.".to_string()
                } else {
                    format!("; about {:.0}% of the run is lost (estimated as the share of time under load × the clock shortfall, for the slowest GPU; exact for compute-bound work, an upper bound otherwise).", lost_share * 100.0)
                }
            ),
            ev,
        );
        f.lost_share = (lost_share > 0.0).then_some(lost_share);
        f.lost_share_basis = Some("time-weighted: the share of time under load × the clock shortfall (1 − clock / max clock, or / the fastest peer's clock), for the slowest GPU; exact for compute-bound work, an upper bound otherwise".into());
        f.devices = devices;
        f.actions = actions();
        f.experiment = Experiment {
            change: "Run the same job on the same GPU after fixing cooling or restoring the power limit (one change)".into(),
            expect: "sm_clock p50 under load rises toward max and the throttling reason share falls; step time p50 falls".into(),
            metric: "sm_clock p50 under load; step time p50".into(),
        };
        if peers {
            f.unseen.push("No clock-event reasons or maximum clocks were recorded, so the cause (power cap, thermal, hardware slowdown) is not visible: `nvidia-smi -q -d PERFORMANCE` on the slow GPUs names it.".into());
        }
        Some(f)
    }
}
