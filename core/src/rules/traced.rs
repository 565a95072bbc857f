//! What several rules read the same way from a profiler trace ([`crate::trace::TraceSummary`]):
//! the idle and cause shares from which a trace is worth a finding, the rank a trace
//! finding speaks of, the note that marks a finding measured from a trace, and the share of
//! the span one CPU activity under the GPU's gaps costs. A trace measures kernels and
//! launches, so the rules' trace-backed findings carry more confidence than the
//! sample-based ones; each rule tries its trace evidence first, in its own file.

use super::{evidence, round};
use crate::report::Comparator;
use crate::report::{Evidence, Finding, FindingSource};
use crate::trace::{GapCauses, RankSummary, TraceSummary};

/// GPU idle share of the traced span from which idle time is worth a finding (TraceLens's
/// agent flags idle above 15 %; `docs/references.md#tracelens`).
pub const MIN_IDLE_SHARE: f64 = 0.15;

/// Share of the traced span that the GPU gaps under one CPU activity (the DataLoader,
/// allocator calls, syncs, CPU work) must cost for a finding: torch-tb-profiler's performance
/// recommendation flags the DataLoader from 5 % of the step time (`docs/trace-format.md`,
/// "What the CPU was doing").
pub const MIN_CAUSE_SHARE: f64 = 0.05;

/// Share of the main stream's idle time that is host wait from which the CPU is the cause
/// (HTA's idle breakdown; a majority).
pub const MIN_HOST_WAIT_SHARE: f64 = 0.5;

pub(crate) fn worst(t: &TraceSummary, key: impl Fn(&RankSummary) -> f64) -> Option<&RankSummary> {
    t.ranks.iter().max_by(|a, b| key(a).total_cmp(&key(b)))
}

pub(crate) fn rank_note(t: &TraceSummary, r: &RankSummary) -> String {
    if t.ranks.len() > 1 {
        format!(" (rank {})", r.rank)
    } else {
        String::new()
    }
}

/// How every trace-backed finding's `unseen` note on the inclusion choices begins.
pub const CHOICES_NOTE: &str = "Trace inclusion choices: ";

/// Whether `f` was concluded from a profiler trace.
pub fn from_trace(f: &Finding) -> bool {
    f.source == Some(FindingSource::Trace)
}

/// Marks `f` as concluded from the trace `t`: its source, and the note on the trace's
/// inclusion choices.
pub(crate) fn mark_traced(f: &mut Finding, t: &TraceSummary) {
    f.source = Some(FindingSource::Trace);
    f.unseen.push(choices_unseen(t));
}

pub(crate) fn choices_unseen(t: &TraceSummary) -> String {
    format!("{CHOICES_NOTE}{}.", t.choices_text.join("; "))
}

/// `part(causes)` over the rank's span (0 without a span).
pub(crate) fn of_span(r: &RankSummary, part: impl Fn(&GapCauses) -> f64) -> f64 {
    if r.span_us > 0.0 {
        part(&r.gap_causes) / r.span_us
    } else {
        0.0
    }
}

/// The rank where `part` costs most, its share of the span, and the evidence that it is worth
/// a finding; `None` when it costs less than [`MIN_CAUSE_SHARE`] everywhere.
pub(crate) fn costly<'a>(
    t: &'a TraceSummary,
    what: &str,
    part: impl Fn(&GapCauses) -> f64 + Copy,
) -> Option<(&'a RankSummary, f64, Vec<Evidence>)> {
    let r = worst(t, |r| of_span(r, part))?;
    let share = of_span(r, part);
    let e = evidence(
        &format!("GPU idle time {what}, over the traced span"),
        share,
        Comparator::AtLeast,
        MIN_CAUSE_SHARE,
        "fraction",
        None,
    );
    if !e.agrees {
        return None;
    }
    let g = &r.gap_causes;
    let e_idle = evidence(
        &format!("share of the GPU's idle time {what}"),
        g.of_idle(part(g)),
        Comparator::AtLeast,
        0.0,
        "fraction",
        None,
    );
    let e_all = evidence(
        "GPU idle share of the traced span",
        r.idle_share,
        Comparator::AtLeast,
        MIN_IDLE_SHARE,
        "fraction",
        None,
    );
    // The costly share fired the finding (it agrees by the check above) and weighs most;
    // the span's idle share supports it.
    Some((r, share, vec![e.weighing(3.0), e_idle, e_all.weighing(1.0)]))
}

/// The CPU ranges under the gaps whose names `keep` accepts, as "name (N ms)" text.
pub(crate) fn named(g: &GapCauses, keep: impl Fn(&str) -> bool) -> String {
    let v: Vec<String> = g
        .top_ranges
        .iter()
        .filter(|(n, _)| keep(n))
        .take(3)
        .map(|(n, us)| format!("{n} ({:.1} ms)", us / 1e3))
        .collect();
    v.join(", ")
}

pub(crate) fn finish(f: &mut Finding, t: &TraceSummary, share: f64) {
    f.lost_share = Some(round(share));
    mark_traced(f, t);
}

/// The host-wait share of the main stream's idle time, weighed, where the trace has it: the
/// evidence every host-side trace rule cites against [`MIN_HOST_WAIT_SHARE`].
pub(crate) fn host_wait_evidence(r: &RankSummary) -> Option<Evidence> {
    let hw = r.main_stream_idle.host_wait_share()?;
    let e = evidence(
        "host-wait share of the main stream's idle time",
        hw,
        Comparator::AtLeast,
        MIN_HOST_WAIT_SHARE,
        "fraction",
        None,
    );
    Some(e.weighing(1.0))
}
