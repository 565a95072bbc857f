//! A report that carries its comparison with a baseline (a session that named one) is valid
//! against `docs/report.schema.json`, the schema describes every field of the `comparison`
//! section and of `run.local_rank`, and gpuwhy reads the section back unchanged.

use gpuwhy::compare::BaselineComparison;
use gpuwhy::report::{Column, Report, StepsData};

use crate::schema::{errors, report, schema, undocumented, validator};

/// Steps of `n` durations around `step_s`, the data phase a third of each.
fn steps(n: usize, step_s: f32) -> StepsData {
    let durations: Vec<f32> = (0..n)
        .map(|i| step_s * (1.0 + 0.01 * (i % 7) as f32))
        .collect();
    StepsData {
        phases: vec!["data".into(), "forward".into()],
        count: n as u64,
        t: (0..n).map(|i| i as f64 * f64::from(step_s)).collect(),
        duration: Column(durations.clone()),
        phase_durations: [
            (
                "data".to_string(),
                Column(durations.iter().map(|d| d / 3.0).collect()),
            ),
            (
                "forward".to_string(),
                Column(durations.iter().map(|d| d * 2.0 / 3.0).collect()),
            ),
        ]
        .into_iter()
        .collect(),
        exact_steps: n as u64,
        ..StepsData::default()
    }
}

#[test]
fn a_report_with_its_baseline_comparison_is_valid_and_fully_described() {
    let dir = tempfile::tempdir().expect("temp dir");
    let base_path = dir.path().join("baseline.json");
    let mut base = report().0.clone();
    base.steps = Some(steps(60, 0.30));
    base.save(&base_path).expect("saves the baseline");

    let mut run = report().0.clone();
    run.steps = Some(steps(60, 0.20));
    (run.run.rank, run.run.world_size, run.run.local_rank) = (Some(9), Some(16), Some(1));
    run.comparison = Some(BaselineComparison::of(&run, &base_path));
    let c = run.comparison.as_ref().expect("set above");
    assert_eq!(c.error, None);
    let result = c.result.as_ref().expect("the same hardware compares");
    let st = result.steps.as_ref().expect("both have steps");
    assert!(st.test.is_some_and(|t| t.significant), "{st:?}");
    assert_eq!(st.phases.len(), 2);
    assert!(!result.experiments.is_empty(), "the baseline has findings");

    let doc: serde_json::Value = serde_json::from_str(&run.to_json()).expect("JSON");
    assert_eq!(doc["run"]["local_rank"], 1);
    let errs = errors(&validator(), &doc);
    assert!(errs.is_empty(), "breaks the schema:\n{}", errs.join("\n"));
    let root = schema();
    let mut missing = Vec::new();
    undocumented(&root, &root, &doc, "", &mut missing);
    assert!(missing.is_empty(), "not in the schema: {missing:?}");

    let back = Report::from_slice(run.to_json().as_bytes(), &base_path).expect("reads back");
    assert_eq!(back.comparison, run.comparison);
    assert_eq!(back.run.local_rank, Some(1));
}

#[test]
fn a_baseline_that_cannot_be_read_is_an_error_in_a_valid_report() {
    let dir = tempfile::tempdir().expect("temp dir");
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, b"{ not json").expect("writes");
    let mut run = report().0.clone();
    run.comparison = Some(BaselineComparison::of(&run, &junk));
    let c = run.comparison.as_ref().expect("set above");
    assert!(c.result.is_none());
    assert!(
        c.error.as_deref().is_some_and(|e| e.contains("junk.json")),
        "{c:?}"
    );
    let doc: serde_json::Value = serde_json::from_str(&run.to_json()).expect("JSON");
    let errs = errors(&validator(), &doc);
    assert!(errs.is_empty(), "breaks the schema:\n{}", errs.join("\n"));
}
