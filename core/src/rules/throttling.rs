//! `throttling`: the hardware runs slower than it can.

use super::{confidence, evidence, gpus, round, Rule, RuleDoc, RuleMeta};
use crate::metric::reasons;
use crate::report::{Action, Cost, Experiment, Finding, Severity};
use crate::signals::Signals;

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

impl Rule for Throttling {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn evaluate(&self, s: &Signals) -> Option<Finding> {
        let mut devices = Vec::new();
        let mut ev = Vec::new();
        let mut weights = Vec::new();
        let mut lost = Vec::new();
        let mut kinds = std::collections::BTreeSet::new();
        for d in s.sampled_devices() {
            let dev = Some(d.index);
            let mut local = Vec::new();
            let mut w = Vec::new();
            let reasons_hit = d.throttled_share.map(|sh| {
                let e = evidence(
                    "share of loaded samples with a throttling reason",
                    sh,
                    ">=",
                    MIN_THROTTLED_SHARE,
                    "fraction",
                    dev,
                );
                w.push((2.0, e.agrees));
                local.push(e);
                sh >= MIN_THROTTLED_SHARE
            });
            for (bit, sh) in &d.reason_shares {
                if *sh >= MIN_THROTTLED_SHARE {
                    let name = reasons::names(*bit).join("");
                    kinds.insert(name.clone());
                    local.push(evidence(
                        &format!("share of loaded samples with {name}"),
                        *sh,
                        ">=",
                        MIN_THROTTLED_SHARE,
                        "fraction",
                        dev,
                    ));
                }
            }
            let clock_low = d.sm_clock_ratio_loaded.map(|r| {
                let e = evidence(
                    "sm_clock p50 under load / max sm_clock",
                    r,
                    "<",
                    MAX_CLOCK_RATIO,
                    "ratio",
                    dev,
                );
                w.push((1.0, e.agrees));
                local.push(e);
                r < MAX_CLOCK_RATIO
            });
            let hot = match (d.temp, d.temp_slowdown) {
                (Some(t), Some(sd)) => {
                    let e = evidence("temp p95", t.p95, ">=", sd - NEAR_SLOWDOWN_C, "°C", dev);
                    w.push((1.0, e.agrees));
                    local.push(e);
                    Some(t.p95 >= sd - NEAR_SLOWDOWN_C)
                }
                _ => None,
            };
            if let Some(p) = d.pstate_not_p0_loaded {
                let e = evidence(
                    "share of loaded samples not in P0",
                    p,
                    ">=",
                    MIN_NOT_P0_SHARE,
                    "fraction",
                    dev,
                );
                w.push((0.5, e.agrees));
                local.push(e);
            }
            let at_cap = d.power_over_limit_loaded.map(|r| {
                let e = evidence(
                    "power p50 under load / enforced limit",
                    r,
                    ">=",
                    AT_POWER_LIMIT,
                    "ratio",
                    dev,
                );
                w.push((0.5, e.agrees));
                local.push(e);
                r >= AT_POWER_LIMIT
            });
            // Fire on the driver's own reasons, or — where reasons are not reported — on a
            // held-down clock together with heat or a power cap.
            let fires = reasons_hit == Some(true)
                || (reasons_hit.is_none()
                    && clock_low == Some(true)
                    && (hot == Some(true) || at_cap == Some(true)));
            if fires {
                devices.push(d.index);
                lost.push(d.sm_clock_ratio_loaded.map_or(0.0, |r| (1.0 - r).max(0.0)));
                ev.extend(local);
                weights.extend(w);
            }
        }
        if devices.is_empty() {
            return None;
        }
        let lost_share = round(lost.iter().sum::<f64>() / lost.len() as f64);
        let why = if kinds.is_empty() {
            "clock held below max under load".to_string()
        } else {
            kinds.into_iter().collect::<Vec<_>>().join(", ")
        };
        Some(Finding {
            id: META.id.into(),
            title: META.title.into(),
            severity: META.severity,
            confidence: confidence(&weights),
            summary: format!(
                "{} {} below {} clock under load ({why}); about {:.0}% of clock speed is lost.",
                gpus(&devices),
                if devices.len() == 1 { "runs" } else { "run" },
                if devices.len() == 1 { "its" } else { "their" },
                lost_share * 100.0
            ),
            lost_share: (lost_share > 0.0).then_some(lost_share),
            lost_share_basis: None,
            devices,
            evidence: ev,
            actions: vec![
                Action { text: "Check the enforced power limit and power policy (`nvidia-smi -q -d POWER,PERFORMANCE`); restore the default limit if it was lowered".into(), cost: Cost::Low },
                Action { text: "Check cooling: inlet temperature, airflow, fan speeds, dust; spread hot jobs across chassis".into(), cost: Cost::Medium },
                Action { text: "Have the hardware or data-centre team inspect power delivery (power brake, PSU) and thermal design".into(), cost: Cost::High },
            ],
            experiment: Experiment {
                change: "Run the same job on the same GPU after fixing cooling or restoring the power limit (one change)".into(),
                expect: "sm_clock p50 under load rises toward max and the throttling reason share falls; step time p50 falls".into(),
                metric: "sm_clock p50 under load; step time p50".into(),
            },
            unseen: Vec::new(),
        })
    }
}
