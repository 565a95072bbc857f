//! A merged job report (`gpuwhy merge`) is valid against `docs/report.schema.json`, the
//! schema describes every field of its `ranks` section, and gpuwhy reads it back unchanged.

use std::path::Path;

use gpuwhy::merge::{merge, MergeOptions, RankDigest};
use gpuwhy::report::{PhaseStats, Report, StepsData};
use serde_json::Value;

use crate::schema::{errors, report, schema, undocumented, validator};

fn steps(data_p50_s: f64) -> StepsData {
    let stats = |p50_s: f64| PhaseStats {
        count: 100,
        sum_s: 100.0 * p50_s,
        min_s: p50_s,
        max_s: p50_s,
        p50_s,
        p95_s: p50_s,
        p99_s: p50_s,
    };
    StepsData {
        phases: vec!["data".into(), "forward".into()],
        count: 100,
        stats: [
            ("step".to_string(), stats(0.4 + data_p50_s)),
            ("data".to_string(), stats(data_p50_s)),
            ("forward".to_string(), stats(0.4)),
        ]
        .into_iter()
        .collect(),
        ..StepsData::default()
    }
}

/// Four ranks on two nodes of a world of five (rank 4's report is missing): rank 3's data
/// phase is three times the others', rank 2's GPU 0 runs at 20 %.
fn job() -> Report {
    let base = &report().0;
    let digests: Vec<RankDigest> = (0..4u32)
        .map(|rank| {
            let mut r = base.clone();
            r.run.rank = Some(rank);
            r.run.world_size = Some(5);
            r.run.host = format!("node-{}", rank / 2);
            r.steps = Some(steps(if rank == 3 { 0.09 } else { 0.03 }));
            let mut d = RankDigest::of(&r, &format!("rank{rank}.json")).expect("a rank report");
            if rank == 2 {
                d.gpus[0].util_p50 = Some(20.0);
            }
            d
        })
        .collect();
    merge(digests, &MergeOptions::default()).expect("the ranks merge")
}

#[test]
fn a_merged_job_report_is_valid_and_fully_described() {
    let job = job();
    let r = job.ranks.as_ref().expect("a ranks section");
    // Every part of the section is present, so the checks below see all of its fields.
    assert_eq!(r.missing, vec![4]);
    assert_eq!((r.stragglers.len(), r.stragglers[0].rank), (1, 3));
    assert_eq!(r.stragglers[0].phase, "data");
    assert!(r.imbalance.as_ref().is_some_and(|i| !i.outliers.is_empty()));
    assert!(!r.exemplars.is_empty() && !job.events.is_empty());
    assert_eq!(
        job.verdict.id, "gpu_fault",
        "a failing GPU comes first, on any rank"
    );
    assert!(job.findings.iter().any(|f| f.id == "rank_imbalance"));

    let doc: Value = serde_json::from_str(&job.to_json()).expect("JSON");
    let errs = errors(&validator(), &doc);
    assert!(
        errs.is_empty(),
        "the job report breaks docs/report.schema.json:\n{}",
        errs.join("\n")
    );
    let root = schema();
    let mut missing = Vec::new();
    undocumented(&root, &root, &doc, "", &mut missing);
    assert!(
        missing.is_empty(),
        "fields written but not in docs/report.schema.json: {missing:?}"
    );
    let back = Report::from_slice(job.to_json().as_bytes(), Path::new("job.json"))
        .expect("gpuwhy reads a job report");
    assert_eq!(back, job);
}
