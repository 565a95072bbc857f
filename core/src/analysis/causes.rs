//! Causes before symptoms. A rule declares the findings its mechanism can produce
//! ([`Rule::produces`]); when a cause and its consequence hold on the related GPUs, the
//! consequence is marked `caused_by` the cause, listed right after it, and the cause carries
//! the consequence's measured lost share (the time the others wait for a slow GPU, the time
//! the slow copies take). Findings are otherwise independent and ordered by cost
//! (docs/rules.md, "Causes and consequences").

use crate::report::Finding;
use crate::rules::{round, Produces, Relation, Rule, RULES};

/// The rule whose id `id` is.
fn rule(id: &str) -> Option<&'static dyn Rule> {
    RULES.iter().copied().find(|r| r.meta().id == id)
}

/// Whether `consequence` shows on the GPUs `p` relates to `cause`'s.
fn related(cause: &Finding, consequence: &Finding, p: &Produces) -> bool {
    match p.on {
        Relation::Job => true,
        Relation::SameGpus => consequence
            .devices
            .iter()
            .any(|d| cause.devices.contains(d)),
        Relation::OthersWaitFor => consequence
            .devices
            .first()
            .is_some_and(|d| cause.devices.contains(d)),
        Relation::SharedEvidence(word) => [cause, consequence].iter().all(|f| {
            f.evidence
                .iter()
                .any(|e| e.agrees && e.value > 0.0 && e.metric.contains(word))
        }),
    }
}

/// Marks every consequence with its cause and moves what it costs onto the cause. A
/// finding is the consequence of at most one cause: the first, in the order given (most
/// costly first), that produces it. A cause is never made the consequence of its own
/// consequence.
pub(super) fn link(findings: &mut [Finding]) {
    for c in 0..findings.len() {
        if findings[c].caused_by.is_some() {
            continue;
        }
        let Some(r) = rule(&findings[c].id) else {
            continue;
        };
        for p in r.produces() {
            for q in 0..findings.len() {
                let linkable = q != c
                    && findings[q].id == p.id
                    && findings[q].caused_by.is_none()
                    && related(&findings[c], &findings[q], p);
                if linkable {
                    let consequence = findings[q].clone();
                    carry(&mut findings[c], &consequence, p);
                    findings[q].caused_by = Some(findings[c].id.clone());
                }
            }
        }
    }
}

/// The cause takes the consequence's lost share when it is the larger measured cost — not
/// an upper bound over a cost the cause measured itself, nor a share that holds other time
/// ([`Produces::carries`]) — and says what it causes.
fn carry(cause: &mut Finding, consequence: &Finding, p: &Produces) {
    let bound = consequence
        .lost_share_basis
        .as_deref()
        .is_some_and(|b| b.starts_with("upper bound"));
    let carried = consequence
        .lost_share
        .filter(|l| *l > 0.0)
        .filter(|_| p.carries && !(bound && cause.lost_share.is_some()));
    if let Some(l) = carried {
        if cause.lost_share.is_none_or(|own| l > own) {
            cause.lost_share = Some(round(l));
            cause.lost_share_basis = Some(format!(
                "carried from `{}`, which it causes: {}",
                consequence.id,
                consequence
                    .lost_share_basis
                    .as_deref()
                    .unwrap_or("as that finding measured it")
            ));
        }
    }
    let cost = carried
        .map(|l| format!(" ~{:.0}% of the run", l * 100.0))
        .unwrap_or_default();
    cause.summary = format!(
        "{} It causes `{}`: {}{cost}.",
        cause.summary.trim_end(),
        consequence.id,
        p.how
    );
}

/// Puts each consequence right after its cause, keeping the order of everything else.
pub(super) fn group(findings: Vec<Finding>) -> Vec<Finding> {
    let (consequences, mut rest): (Vec<Finding>, Vec<Finding>) =
        findings.into_iter().partition(|f| f.caused_by.is_some());
    let mut left: Vec<Option<Finding>> = consequences.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(rest.len() + left.len());
    for f in rest.drain(..) {
        let id = f.id.clone();
        out.push(f);
        for slot in left.iter_mut() {
            if slot.as_ref().and_then(|q| q.caused_by.as_deref()) == Some(id.as_str()) {
                out.extend(slot.take());
            }
        }
    }
    // A consequence whose cause was dropped afterwards stands alone, as a cause of its own.
    out.extend(left.into_iter().flatten().map(|mut q| {
        q.caused_by = None;
        q
    }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Comparator, Evidence, Experiment, FindingSource, Severity};

    fn finding(id: &str, devices: &[u32], lost: f64, evidence: Vec<Evidence>) -> Finding {
        Finding {
            id: id.into(),
            title: id.into(),
            severity: Severity::High,
            confidence: 0.9,
            summary: format!("{id}."),
            lost_share: Some(lost),
            lost_share_basis: Some(format!("{id}'s basis")),
            devices: devices.to_vec(),
            evidence,
            actions: Vec::new(),
            experiment: Experiment::default(),
            unseen: Vec::new(),
            source: Some(FindingSource::Samples),
            caused_by: None,
        }
    }

    fn item(metric: &str, value: f64) -> Evidence {
        crate::rules::evidence(metric, value, Comparator::Above, 0.0, "calls", None)
    }

    #[test]
    fn a_throttled_straggler_carries_the_wait_it_causes_and_its_consequence_follows_it() {
        let mut v = vec![
            finding("rank_imbalance", &[3, 0, 1, 2], 0.24, Vec::new()),
            finding("throttling", &[3], 0.1, Vec::new()),
            finding("data_starvation", &[0, 1, 2, 3], 0.05, Vec::new()),
        ];
        link(&mut v);
        let v = group(v);
        let ids: Vec<&str> = v.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["throttling", "rank_imbalance", "data_starvation"]);
        assert_eq!(v[0].lost_share, Some(0.24));
        assert!(v[0]
            .lost_share_basis
            .as_deref()
            .is_some_and(|b| b.contains("rank_imbalance")));
        assert_eq!(v[1].caused_by.as_deref(), Some("throttling"));
        assert_eq!(v[2].caused_by, None);
    }

    #[test]
    fn a_straggler_that_is_not_the_throttled_gpu_is_a_cause_of_its_own() {
        let mut v = vec![
            finding("rank_imbalance", &[2, 0, 1, 3], 0.24, Vec::new()),
            finding("throttling", &[3], 0.1, Vec::new()),
        ];
        link(&mut v);
        assert!(v.iter().all(|f| f.caused_by.is_none()));
        assert_eq!(v[1].lost_share, Some(0.1));
    }

    #[test]
    fn an_upper_bound_is_not_carried_over_a_measured_cost_nor_a_collective_s_dips() {
        let mut host = finding("host_transfer", &[1], 0.26, Vec::new());
        host.lost_share_basis = Some("upper bound: idle share".into());
        let mut v = vec![
            host,
            finding("comm_sync", &[0, 1, 2, 3], 0.25, Vec::new()),
            finding("pcie_degraded", &[1], 0.07, Vec::new()),
        ];
        link(&mut v);
        let v = group(v);
        let ids: Vec<&str> = v.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["pcie_degraded", "host_transfer", "comm_sync"]);
        assert_eq!(v[0].lost_share, Some(0.07));
        assert!(v[1..]
            .iter()
            .all(|f| f.caused_by.as_deref() == Some("pcie_degraded")));
    }

    #[test]
    fn a_host_wait_at_pageable_copies_is_caused_by_the_transfer() {
        let mut v = vec![
            finding(
                "host_sync",
                &[],
                0.3,
                vec![item("cudaMemcpyAsync of pageable memory", 40.0)],
            ),
            finding(
                "host_transfer",
                &[],
                0.12,
                vec![item("async copies from/to pageable memory", 40.0)],
            ),
        ];
        link(&mut v);
        let v = group(v);
        assert_eq!(v[0].id, "host_transfer");
        assert_eq!(v[0].lost_share, Some(0.3));
        assert_eq!(v[1].caused_by.as_deref(), Some("host_transfer"));
        // Syncs of another kind are a cause of their own.
        let mut v = vec![
            finding(
                "host_sync",
                &[],
                0.3,
                vec![item("cudaMemcpyAsync of pageable memory", 0.0)],
            ),
            finding(
                "host_transfer",
                &[],
                0.12,
                vec![item("async copies from/to pageable memory", 40.0)],
            ),
        ];
        link(&mut v);
        assert!(v.iter().all(|f| f.caused_by.is_none()));
    }
}
