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

/// The cause takes the consequence's lost share when it is the larger measured cost, and
/// says what it causes.
fn carry(cause: &mut Finding, consequence: &Finding, p: &Produces) {
    let carried = consequence.lost_share.filter(|l| *l > 0.0);
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
