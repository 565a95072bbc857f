//! A merged job's diagnosis: its signals re-derived from the per-rank rows
//! (`crate::signals::ranks`), its own `rank_imbalance` finding beside the ranks' findings
//! folded into one per rule id that says on which ranks it holds, ordered as single reports
//! are (a failing GPU first), and the verdict.

use crate::report::Comparator;
use crate::report::{Evidence, Finding, RanksData, Report, Verdict};
use crate::rules::{ev, round, RankImbalance};
use crate::signals::ranks::median;

/// Re-derives a job report's nodes, stragglers, imbalance, findings and verdict from its
/// per-rank rows. Returns false (and changes nothing) for a report that is not a job report.
pub(super) fn diagnose_job(report: &mut Report) -> bool {
    let Some(r) = report.ranks.as_mut() else {
        return false;
    };
    crate::signals::ranks::derive(r);
    let (findings, verdict) = judge(r);
    report.findings = findings;
    report.verdict = verdict;
    true
}

/// `ranks 0–3, 6, 9` (at most a few groups, then `…`).
pub fn rank_list(ranks: &[u32]) -> String {
    let mut groups: Vec<(u32, u32)> = Vec::new();
    for &r in ranks {
        match groups.last_mut() {
            Some((_, hi)) if *hi + 1 == r => *hi = r,
            _ => groups.push((r, r)),
        }
    }
    let mut parts: Vec<String> = groups
        .iter()
        .take(8)
        .map(|(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}–{b}")
            }
        })
        .collect();
    if groups.len() > 8 {
        parts.push("…".into());
    }
    format!(
        "{} {}",
        if ranks.len() == 1 { "rank" } else { "ranks" },
        parts.join(", ")
    )
}

/// The ranks' own findings, one per rule id, each with the share of ranks that have it.
fn folded(r: &RanksData, skip: Option<&str>) -> Vec<(Finding, f64)> {
    let n = r.ranks.len();
    let mut out = Vec::new();
    for ex in &r.exemplars {
        let id = ex.finding.id.as_str();
        if skip == Some(id) {
            continue;
        }
        let holders: Vec<(u32, f64)> = r
            .ranks
            .iter()
            .filter_map(|x| {
                x.findings
                    .iter()
                    .find(|f| f.id == id)
                    .map(|f| (x.rank, f.confidence))
            })
            .collect();
        let k = holders.len();
        if k == 0 {
            continue;
        }
        let mut confs: Vec<f64> = holders.iter().map(|h| h.1).collect();
        confs.sort_by(f64::total_cmp);
        let ranks: Vec<u32> = holders.iter().map(|h| h.0).collect();
        let host = r
            .ranks
            .iter()
            .find(|x| x.rank == ex.rank)
            .map_or("", |x| x.host.as_str());
        let on = match k {
            1 => format!("On rank {} ({host}) only", ex.rank),
            _ if k == n => format!(
                "On all {n} ranks; on rank {} ({host}), the most confident",
                ex.rank
            ),
            _ => format!(
                "On {k} of {n} ranks ({}); on rank {} ({host}), the most confident",
                rank_list(&ranks),
                ex.rank
            ),
        };
        let mut f = ex.finding.clone();
        f.summary = format!("{on}: {}", f.summary);
        f.confidence = round(median(&confs).unwrap_or(0.0));
        if 2 * k < n {
            f.lost_share = None;
        }
        f.devices.clear();
        let mut evidence = vec![ev(
            "ranks with this finding".into(),
            k as f64,
            Comparator::AtLeast,
            1.0,
            "ranks",
            true,
        )];
        evidence.extend(ex.finding.evidence.iter().map(|e| {
            let gpu = e.device.map(|d| format!(" (GPU {d})")).unwrap_or_default();
            Evidence {
                metric: format!("rank {}: {}{gpu}", ex.rank, e.metric),
                device: None,
                // The job's confidence is the ranks' median, not this rank's weighted share.
                weight: None,
                ..e.clone()
            }
        }));
        f.evidence = evidence;
        out.push((f, k as f64 / n as f64));
    }
    out
}

fn no_finding_summary(r: &RanksData) -> String {
    let range = |v: Vec<f64>| {
        let v: Vec<f64> = v.into_iter().filter(|x| x.is_finite()).collect();
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (!v.is_empty()).then_some((lo, hi))
    };
    let mut s = format!(
        "No rank stands out: {} ranks on {} nodes",
        r.ranks.len(),
        r.nodes.len()
    );
    if let Some((lo, hi)) = range(
        r.ranks
            .iter()
            .filter_map(|x| x.steps.as_ref().map(|st| st.step.p50_s))
            .collect(),
    ) {
        s.push_str(&format!(", step time p50 {lo:.3}–{hi:.3} s"));
    }
    if let Some((lo, hi)) = range(r.ranks.iter().filter_map(|x| x.util_p50).collect()) {
        s.push_str(&format!(", GPU util_gpu p50 {lo:.0}–{hi:.0}%"));
    }
    s.push('.');
    s
}

/// The job's findings, most important first, and its verdict.
fn judge(r: &RanksData) -> (Vec<Finding>, Verdict) {
    let job = RankImbalance.evaluate_job(r);
    let mut weighted = folded(r, job.as_ref().map(|f| f.id.as_str()));
    weighted.extend(job.map(|f| (f, 1.0)));
    // A failing or throttled GPU comes first even on one rank (fix the hardware before
    // judging anything else); otherwise a rank's own finding counts for the share of ranks
    // that have it, so the job's straggler outranks the local cause that makes it one.
    weighted.sort_by(|(a, wa), (b, wb)| {
        super::precedence(a)
            .cmp(&super::precedence(b))
            .then_with(|| (b.score() * wb).total_cmp(&(a.score() * wa)))
            .then_with(|| a.id.cmp(&b.id))
    });
    let findings: Vec<Finding> = weighted.into_iter().map(|(f, _)| f).collect();
    let mut verdict = match findings.first() {
        Some(top) => Verdict {
            id: top.id.clone(),
            title: top.title.clone(),
            confidence: top.confidence,
            lost_share: top.lost_share,
            summary: format!(
                "{}{}: {}",
                top.title,
                top.lost_share
                    .map(|l| format!(" (~{:.0}% of the run lost)", l * 100.0))
                    .unwrap_or_default(),
                top.summary
            ),
        },
        None => Verdict {
            summary: no_finding_summary(r),
            ..Verdict::default()
        },
    };
    if !r.missing.is_empty() {
        verdict.summary.push_str(&format!(
            " No report for {} of {}: the job is judged without them.",
            rank_list(&r.missing),
            r.world_size.unwrap_or(0)
        ));
    }
    (findings, verdict)
}
