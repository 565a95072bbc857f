//! The report a recording turns into is valid against `docs/report.schema.json`, the schema
//! is strict about types, and it describes every field gpuwhy writes. The report checked is
//! built in `fixture`; `format_doc` checks `docs/report-format.md` against the code.

use std::path::Path;

use gpuwhy::report::Report;
use gpuwhy_tests::{record, scenario, Run};
use serde_json::{json, Value};

mod fixture;
mod format_doc;

pub(crate) use fixture::report;

const SCHEMA: &str = include_str!("../../docs/report.schema.json");

pub(crate) fn schema() -> Value {
    serde_json::from_str(SCHEMA).expect("docs/report.schema.json is valid JSON")
}

pub(crate) fn validator() -> jsonschema::Validator {
    jsonschema::draft202012::new(&schema())
        .expect("docs/report.schema.json is a valid draft 2020-12 schema")
}

/// Every way `doc` breaks the schema, one line each.
pub(crate) fn errors(v: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    v.iter_errors(doc)
        .map(|e| format!("at {}: {e}", e.instance_path()))
        .collect()
}

#[test]
fn a_diagnosed_report_is_valid_against_the_published_schema() {
    let (report, doc) = report();
    // The test must cover the parts of the format that are easy to get wrong.
    assert!(
        report.series[0].data.coarse.is_some(),
        "GPU 0 ran past the full-resolution window"
    );
    assert!(report.series[1].data.coarse.is_none());
    assert!(
        report.findings.iter().any(|f| f.id == "gpu_fault"),
        "findings: {:?}",
        report.findings
    );
    assert!(report
        .findings
        .iter()
        .any(|f| f.evidence.iter().any(|e| e.time_range.is_some())));
    // The compact series form: a value not read is a null (or a run of them), not 0.
    let runs = |m: &str| doc["series"][0]["columns"][m]["runs"].clone();
    let missing = |v: &Value| v.is_null() || v[0].is_null();
    assert!(missing(&runs("temp")[1]), "temp: {}", runs("temp"));
    assert!(missing(&runs("gpm_sm_util")[0]), "{}", runs("gpm_sm_util"));
    assert_eq!(doc["series"][0]["coarse"]["rows_per_bucket"], json!(1));
    // Buckets are packed too; a mean at 100 times its column's precision.
    assert_eq!(
        doc["series"][0]["coarse"]["metrics"]["util_gpu"]["mean"]["div"],
        json!(100)
    );

    let errs = errors(&validator(), doc);
    assert!(
        errs.is_empty(),
        "the report breaks docs/report.schema.json:\n{}",
        errs.join("\n")
    );
    // The plain series form, as reports before the compact one hold it, is valid too.
    let plain: Value = serde_json::from_str(&report.to_json_plain()).expect("JSON");
    assert_eq!(plain["series"][0]["metrics"]["temp"][1], Value::Null);
    let errs = errors(&validator(), &plain);
    assert!(errs.is_empty(), "plain form: {}", errs.join("\n"));
}

/// What a broken document breaks, and how to break it.
type Breakage = (&'static str, fn(&mut Value));

#[test]
fn reports_recorded_through_the_simulator_are_valid() {
    let v = validator();
    let root = schema();
    for name in ["gpu_lost", "straggler_8gpu"] {
        let run = Run {
            duration_s: Some(20.0),
            speed: 20.0,
            host: true,
            ..Run::default()
        };
        let report = record(scenario(name).expect("bundled scenario"), &run).expect("records");
        let doc: Value = serde_json::from_str(&report.to_json()).expect("JSON");
        let errs = errors(&v, &doc);
        assert!(
            errs.is_empty(),
            "the {name} report breaks docs/report.schema.json:\n{}",
            errs.join("\n")
        );
        let mut missing = Vec::new();
        undocumented(&root, &root, &doc, "", &mut missing);
        assert!(
            missing.is_empty(),
            "{name}: fields written but not in docs/report.schema.json: {missing:?}"
        );
    }
}

#[test]
fn the_schema_rejects_wrong_types() {
    let v = validator();
    let good = &report().1;
    let broken: [Breakage; 9] = [
        ("findings is a string", |d| d["findings"] = json!("x")),
        ("severity outside the enum", |d| {
            d["findings"][0]["severity"] = json!("huge")
        }),
        ("action cost outside the enum", |d| {
            d["findings"][0]["actions"][0]["cost"] = json!("free")
        }),
        ("evidence without agrees", |d| {
            d["findings"][0]["evidence"][0]
                .as_object_mut()
                .expect("object")
                .remove("agrees");
        }),
        ("a sample that is text", |d| {
            d["series"][0]["columns"]["util_gpu"]["runs"][0] = json!("97")
        }),
        ("a negative device index", |d| {
            d["devices"][0]["index"] = json!(-1)
        }),
        ("capability without available", |d| {
            d["devices"][0]["capabilities"]["power"] = json!({ "reason": "x" })
        }),
        ("another major version", |d| {
            d["schema"] = json!("gpuwhy.report/2")
        }),
        ("no schema", |d| {
            d.as_object_mut().expect("object").remove("schema");
        }),
    ];
    for (what, breaks) in broken {
        let mut doc = good.clone();
        breaks(&mut doc);
        assert!(
            !v.is_valid(&doc),
            "the schema accepted a report with {what}"
        );
    }
}

#[test]
fn the_schema_accepts_unknown_fields_and_minor_versions() {
    let v = validator();
    let mut doc = report().1.clone();
    doc["schema"] = json!("gpuwhy.report/1.3");
    doc["added_in_1_3"] = json!({ "anything": [1, 2] });
    doc["devices"][0]["new_fact"] = json!("x");
    doc["findings"][0]["new_score"] = json!(0.5);
    let errs = errors(&v, &doc);
    assert!(
        errs.is_empty(),
        "forward compatibility broken:\n{}",
        errs.join("\n")
    );
    // And gpuwhy itself reads such a document.
    let back = Report::from_slice(doc.to_string().as_bytes(), Path::new("future.json"))
        .expect("a 1.x report is read");
    assert_eq!(back.devices.len(), 2);
}

/// Resolves a local `$ref` (`#/$defs/name`) and `anyOf` with `null` to the object schema.
fn resolve<'a>(root: &'a Value, mut node: &'a Value) -> &'a Value {
    loop {
        if let Some(r) = node.get("$ref").and_then(Value::as_str) {
            let name = r
                .strip_prefix("#/$defs/")
                .expect("only local $defs references");
            node = &root["$defs"][name];
        } else if let Some(alts) = node.get("anyOf").and_then(Value::as_array) {
            node = alts
                .iter()
                .find(|a| a.get("type") != Some(&json!("null")))
                .expect("a non-null alternative");
        } else {
            return node;
        }
    }
}

/// Every object key the writer emits is described by the schema (unknown keys are allowed by
/// the schema, so validation alone would not notice a field the schema forgot).
pub(crate) fn undocumented(
    root: &Value,
    schema: &Value,
    doc: &Value,
    path: &str,
    out: &mut Vec<String>,
) {
    let schema = resolve(root, schema);
    match doc {
        Value::Object(map) => {
            let props = schema.get("properties").and_then(Value::as_object);
            let extra = schema.get("additionalProperties").filter(|a| a.is_object());
            for (k, v) in map {
                match (props.and_then(|p| p.get(k)), extra) {
                    (Some(s), _) | (None, Some(s)) => {
                        undocumented(root, s, v, &format!("{path}/{k}"), out)
                    }
                    (None, None) => out.push(format!("{path}/{k}")),
                }
            }
        }
        Value::Array(items) => {
            if let Some(s) = schema.get("items") {
                for (i, v) in items.iter().enumerate().take(3) {
                    undocumented(root, s, v, &format!("{path}/{i}"), out);
                }
            }
        }
        _ => {}
    }
}

#[test]
fn the_schema_describes_every_field_gpuwhy_writes() {
    let root = schema();
    let mut missing = Vec::new();
    undocumented(&root, &root, &report().1, "", &mut missing);
    assert!(
        missing.is_empty(),
        "fields written but not in docs/report.schema.json: {missing:?}"
    );
}
