//! Reading: a clear message for each kind of file that is not a readable report.

use gpuwhy_viewer::View;

fn kind(bytes: &str) -> (&'static str, String) {
    match View::load(bytes.as_bytes(), "run.json") {
        Ok(_) => ("ok", String::new()),
        Err(e) => (e.kind, e.message),
    }
}

#[test]
fn messages_say_what_is_wrong() {
    let (k, m) = kind("{\"schema\": \"gpuwhy.report/1\", \"run\": ");
    assert_eq!(k, "invalid");
    assert!(m.contains("cut short"), "{m}");
    assert_eq!(kind("hello").0, "invalid");
    assert_eq!(kind("").0, "invalid");
    let (k, m) = kind(r#"{"hello": 1}"#);
    assert_eq!(k, "not_report");
    assert!(m.contains("not a gpuwhy report"));
    assert_eq!(kind(r#"{"schema": "other/1"}"#).0, "not_report");
    let (k, m) = kind(r#"{"schema": "gpuwhy.report/2.1", "findings": 3}"#);
    assert_eq!(k, "newer_schema", "{m}");
    assert!(m.contains("gpuwhy.report/2.1 is newer"));
    let (k, _) = kind(r#"{"schema": "gpuwhy.report/1", "findings": 3}"#);
    assert_eq!(k, "damaged");
    assert_eq!(kind("{\"schema\":\"gpuwhy.journal/1\"}\n").0, "journal");
}

#[test]
fn a_minimal_report_and_a_newer_minor_version_open() {
    assert_eq!(kind(r#"{"schema": "gpuwhy.report/1"}"#).0, "ok");
    let v = View::load(
        br#"{"schema": "gpuwhy.report/1.3", "unknown": [1]}"#,
        "r.json",
    )
    .map_err(|e| e.message)
    .expect("opens");
    assert_eq!(v.t_range, (0.0, 1.0));
    assert!(v.gpus.is_empty());
}
