//! A session's comparison with its baseline (`comparison`): read as far as the page shows
//! it, and shown under the verdict.

use gpuwhy::compare::{BaselineComparison, Comparison, ExperimentCheck, Outcome, VerdictDiff};
use gpuwhy::report::Report;
use gpuwhy_viewer::page::overview;
use gpuwhy_viewer::View;

use crate::fixtures::one_gpu;

const HOSTILE: &str = r#"<img src=x onerror="alert(1)"></script>"#;

fn compared(text: &str) -> BaselineComparison {
    BaselineComparison {
        baseline: format!("runs/{text}.json"),
        result: Some(Comparison {
            labels: ("before".into(), "after".into()),
            forced_despite: Some(format!("the GPUs differ ({text})")),
            steps: None,
            gpus: Vec::new(),
            verdict: VerdictDiff {
                baseline_top: ("data_starvation".into(), 0.9),
                candidate_top: ("none".into(), 0.0),
                resolved: vec!["data_starvation".into(), text.into()],
                new: Vec::new(),
                persisting: vec![("launch_bound".into(), 0.75, f64::NAN)],
            },
            experiments: vec![ExperimentCheck {
                finding: "data_starvation".into(),
                metric: "data_share_p50".into(),
                expected: "down".into(),
                baseline: Some(0.45),
                candidate: None,
                outcome: Outcome::Held,
            }],
            summary: format!("step time p50 −38% ({text})"),
        }),
        error: None,
    }
}

fn through_json(r: &Report) -> Report {
    View::load(r.to_json().as_bytes(), "r.json")
        .map_err(|e| e.message)
        .expect("opens")
        .report
}

#[test]
fn the_shown_parts_read_as_serde_reads_them() {
    let mut r = one_gpu(vec![50.0; 20], vec![f32::NAN; 20]);
    r.comparison = Some(compared("x"));
    let got = through_json(&r).comparison.expect("read");
    let want: Report = serde_json::from_str(&r.to_json()).expect("serde reads it");
    let mut want = want.comparison.expect("serde");
    // Not read: the run labels (the step and GPU changes are empty here).
    want.result.as_mut().expect("result").labels = Default::default();
    assert_eq!(format!("{got:?}"), format!("{want:?}"));
    // An error instead of a result.
    r.comparison = Some(BaselineComparison {
        baseline: "gone.json".into(),
        result: None,
        error: Some("cannot read the baseline: gone.json: not found".into()),
    });
    let got = through_json(&r).comparison.expect("read");
    assert_eq!(got, r.comparison.clone().expect("set"));
    let html = overview::verdict_html(&through_json(&r));
    assert!(
        html.contains("No comparison: cannot read the baseline"),
        "{html}"
    );
}

#[test]
fn the_verdict_says_how_the_run_compares_with_its_baseline() {
    let mut r = one_gpu(vec![50.0; 20], vec![f32::NAN; 20]);
    assert!(!overview::verdict_html(&r).contains("Against the baseline"));
    r.comparison = Some(compared(HOSTILE));
    let html = overview::verdict_html(&through_json(&r));
    for want in [
        "Against the baseline",
        "step time p50 −38%",
        "Resolved: data_starvation, ",
        "New: none",
        "Still there: launch_bound, confidence 0.75 → NaN",
        "Experiment for data_starvation: data_share_p50 expected to go down: held",
        "Compared although the GPUs differ",
    ] {
        assert!(html.contains(want), "{want} in {html}");
    }
    assert!(
        !html.contains("<img") && !html.contains("</script"),
        "{html}"
    );
    assert_eq!(html.matches("&lt;img src=x").count(), 4, "{html}");
}
