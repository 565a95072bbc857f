//! `gpuwhy summary --json` is valid against `docs/summary.schema.json`, which is strict: a
//! field the summary writes and the schema does not describe fails, and so does one it
//! describes and the summary no longer writes. The summary checked holds every kind of
//! row: a recorded report, a merged job report and one of its ranks, a run with its
//! baseline's comparison, a later run of the same label, and a file that cannot be read.

use gpuwhy::summary::{RunRow, Summary, Unreadable};
use gpuwhy_tests::{record, scenario, Run};
use serde_json::{json, Value};

const SCHEMA: &str = include_str!("../../docs/summary.schema.json");

fn row(v: &Value, file: &str) -> RunRow {
    RunRow::from_slice(v.to_string().as_bytes(), file).expect("a report")
}

fn summary() -> Summary {
    let text = scenario("data_starvation").expect("bundled scenario");
    let run = Run {
        duration_s: Some(10.0),
        speed: 20.0,
        ..Run::default()
    };
    let recorded = record(text, &run).expect("records");
    let mut first: Value = serde_json::from_str(&recorded.to_json()).expect("json");
    first["run"]["label"] = json!("exp");
    first["run"]["rank"] = json!(0);
    let mut second = first.clone();
    second["run"]["start_unix_ms"] = json!(recorded.run.start_unix_ms + 60_000);
    second["verdict"] =
        json!({ "id": "none", "title": "No bottleneck found", "confidence": 0.0, "summary": "s" });
    second["comparison"] = json!({ "baseline": "first.json", "result": null,
        "error": "the runs are not comparable (different GPU count)" });
    let mut third = first.clone();
    third["run"]["start_unix_ms"] = json!(recorded.run.start_unix_ms + 120_000);
    let job = json!({
        "schema": "gpuwhy.report/1",
        "run": { "start_unix_ms": recorded.run.start_unix_ms, "host": recorded.run.host, "duration_s": 10.0 },
        "verdict": { "id": "rank_imbalance", "title": "t", "confidence": 0.9, "lost_share": 0.2, "summary": "s" },
        "ranks": { "ranks": [{ "rank": 0, "host": recorded.run.host, "offset_s": 0.0, "gpu": 0,
                               "gpus": [{ "index": 0, "name": "NVIDIA H100 80GB HBM3" }] }] }
    });
    let mut rows = vec![
        row(&first, "first.json"),
        row(&second, "second.json"),
        row(&third, "third.json"),
        row(&job, "job.json"),
    ];
    rows[1].page = Some("runs/00001-second.html".into());
    let bad = Unreadable {
        file: "cut.json".into(),
        reason: "it was cut short".into(),
    };
    Summary::new(rows, vec![bad])
}

#[test]
fn the_summary_json_is_valid_against_its_schema_and_the_schema_describes_every_field() {
    let schema: Value = serde_json::from_str(SCHEMA).expect("docs/summary.schema.json is JSON");
    let v = jsonschema::draft202012::new(&schema).expect("a valid draft 2020-12 schema");
    let s = summary();
    let doc = serde_json::to_value(&s).expect("serialises");
    let errors: Vec<String> = v
        .iter_errors(&doc)
        .map(|e| format!("at {}: {e}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    // Every kind of row and change is in what was checked.
    let kinds: Vec<&str> = s.runs.iter().map(|r| r.kind.as_str()).collect();
    assert!(
        kinds.contains(&"job") && kinds.contains(&"single"),
        "{kinds:?}"
    );
    assert!(
        s.runs.iter().any(|r| r.in_job.is_some()),
        "the rank is held by the job"
    );
    assert!(s.runs.iter().any(|r| r.baseline.is_some()));
    let via: Vec<String> = s
        .fixes
        .iter()
        .map(|f| serde_json::to_string(&f.via).expect("via"))
        .collect();
    assert_eq!(via, ["\"baseline\"", "\"label\""], "{:#?}", s.fixes);
    // A field the schema does not know is refused: the schema is strict.
    let mut extra = doc.clone();
    extra["runs"][0]["undocumented"] = json!(1);
    assert!(!v.is_valid(&extra));
}
