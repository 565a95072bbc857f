//! The trace-backed rules on generated traces with known answers (`scripts/gen_trace.py`;
//! the small trace's numbers are worked out in its docstring and `docs/trace-format.md`),
//! diagnosed whole.

use crate::analysis::diagnose_traced as diagnose;
use crate::report::{FindingSource, Report};
use crate::trace::tests::{close, path, read};
use crate::trace::*;

fn diagnosed(names: &[&str]) -> Report {
    let ranks = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let f = std::fs::File::open(path(n)).expect("fixture");
            let opts = ReadOptions {
                label: n.to_string(),
                position: i as u32,
                ..Default::default()
            };
            read_rank(f, &opts).expect("reads")
        })
        .collect();
    let t = TraceSummary::from_ranks(ranks, Choices::default());
    let mut r = report(&t);
    diagnose(&mut r, &t);
    // A trace alone has no samples: whatever is found was found in the trace.
    for f in &r.findings {
        assert_eq!(f.source, Some(FindingSource::Trace), "{}", f.id);
    }
    r
}

#[test]
fn a_launch_storm_is_launch_bound_from_the_trace_alone() {
    let r = diagnosed(&["launch_bound.json"]);
    assert_eq!(r.verdict.id, "launch_bound", "{:#?}", r.findings);
    let f = &r.findings[0];
    assert!(f.confidence >= 0.8, "{}", f.confidence);
    assert!(f
        .evidence
        .iter()
        .any(|e| e.metric.contains("host-wait") && e.agrees));
    assert!(f
        .unseen
        .iter()
        .any(|u| u.contains("last ProfilerStep kept")));
    assert_eq!(r.run.source, "trace");
    assert!(
        !r.findings.iter().any(|f| f.id == "host_sync"),
        "no syncs in a storm"
    );
}

#[test]
fn the_small_trace_has_host_syncs_every_step() {
    let r = diagnosed(&["small.json"]);
    let f = r
        .findings
        .iter()
        .find(|f| f.id == "host_sync")
        .expect("host_sync fires");
    assert_eq!(f.evidence[0].value, 2.0);
    // The gap before C after each step's stream sync (90 µs × 3) over the 2953 µs span.
    assert_eq!(f.evidence[1].value, 0.091);
    assert_eq!(f.lost_share, Some(0.091));
    assert!(
        f.summary.contains("cudaStreamSynchronize ×3"),
        "{}",
        f.summary
    );
    assert!(
        !r.findings.iter().any(|f| f.id == "comm_sync"),
        "NCCL is fully overlapped"
    );
}

#[test]
fn two_ranks_show_exposed_communication_and_the_straggler() {
    let r = diagnosed(&["comm_rank0.json", "comm_rank1.json"]);
    let ids: Vec<&str> = r.findings.iter().map(|f| f.id.as_str()).collect();
    assert!(
        ids.contains(&"comm_sync") && ids.contains(&"rank_imbalance"),
        "{ids:?}"
    );
    let ri = r
        .findings
        .iter()
        .find(|f| f.id == "rank_imbalance")
        .expect("fires");
    assert!(ri.summary.starts_with("Rank 1 "), "{}", ri.summary);
    let cs = r
        .findings
        .iter()
        .find(|f| f.id == "comm_sync")
        .expect("fires");
    assert!(
        close(cs.evidence[0].value, crate::rules::round(4000.0 / 10900.0)),
        "{:?}",
        cs.evidence[0]
    );
}

#[test]
fn changing_shapes_show_in_step_times_and_kernel_counts() {
    let r = diagnosed(&["dynamic.json"]);
    assert!(
        r.findings.iter().any(|f| f.id == "dynamic_shapes"),
        "{:#?}",
        r.findings
    );
    assert!(!r.findings.iter().any(|f| f.id == "launch_bound"));
    assert!(
        !r.findings.iter().any(|f| f.id == "host_sync"),
        "no syncs in it"
    );
}

#[test]
fn skew_is_the_spread_of_the_last_collectives_start() {
    let a = read("comm_rank0.json", Choices::default());
    let b = read("comm_rank1.json", Choices::default());
    let t = TraceSummary::from_ranks(vec![b, a], Choices::default());
    let s = t.skew.expect("two ranks");
    assert_eq!(s.steps, 10);
    assert!(close(s.comm_start_skew_p50_us, 150.0), "{s:?}");
    assert_eq!(s.straggler, Some(1));
    assert_eq!(s.straggler_share, 1.0);
    assert_eq!(t.ranks[0].rank, 0, "sorted by rank");
}
