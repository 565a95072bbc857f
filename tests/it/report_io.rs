//! Reports on disk: round trip, damaged files, newer schemas, the crash journal.

use gpuwhy::report::{journal, Report};
use gpuwhy::Error;
use gpuwhy_tests::{record, scenario, Run};

fn sample_report() -> Report {
    record(
        scenario("data_starvation").expect("bundled"),
        &Run {
            duration_s: Some(4.0),
            host: true,
            ..Run::default()
        },
    )
    .expect("records")
}

#[test]
fn a_report_round_trips_through_its_file() {
    let r = sample_report();
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("run.json");
    r.save(&p).expect("saves");
    let back = Report::load(&p).expect("loads");
    assert_eq!(back.devices, r.devices);
    assert_eq!(back.findings, r.findings);
    assert_eq!(back.verdict, r.verdict);
    assert_eq!(back.series[0].data.t, r.series[0].data.t);
    assert_eq!(
        back.series[0].data.metrics["util_gpu"].0.len(),
        r.series[0].data.metrics["util_gpu"].0.len()
    );
    assert!(back.host.is_some(), "host samples survive");
    // No temporary file is left behind by the atomic write.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .expect("dir")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[test]
fn truncated_garbage_and_foreign_files_get_clear_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = sample_report().to_json();
    let cases: [(&str, Vec<u8>, &str); 5] = [
        (
            "truncated.json",
            json.as_bytes()[..json.len() / 2].to_vec(),
            "cut short",
        ),
        (
            "garbage.bin",
            vec![0x7f, b'E', b'L', b'F', 0, 1, 2, 3],
            "not JSON",
        ),
        ("empty.json", Vec::new(), "empty"),
        (
            "other.json",
            br#"{"name": "something else"}"#.to_vec(),
            "not a gpuwhy report",
        ),
        (
            "trace.json",
            br#"{"schema": "chrome.trace/1"}"#.to_vec(),
            "not a gpuwhy report",
        ),
    ];
    for (name, bytes, expect) in cases {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).expect("write");
        let err = Report::load(&p).expect_err(name);
        let msg = err.to_string();
        assert!(matches!(err, Error::BadReport { .. }), "{name}: {msg}");
        assert!(msg.contains(expect), "{name}: {msg}");
        assert!(msg.contains(name), "the message names the file: {msg}");
    }
}

#[test]
fn a_newer_major_schema_is_refused_and_a_newer_minor_is_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = sample_report().to_json();
    let newer = json.replacen("gpuwhy.report/1", "gpuwhy.report/2", 1);
    let p = dir.path().join("v2.json");
    std::fs::write(&p, newer).expect("write");
    let err = Report::load(&p).expect_err("refused");
    assert!(matches!(err, Error::NewerSchema { .. }), "{err}");
    assert!(err.to_string().contains("upgrade gpuwhy"), "{err}");
    let minor = json
        .replacen("gpuwhy.report/1", "gpuwhy.report/1.7", 1)
        .replacen("{", "{\n  \"a_future_field\": {\"x\": 1},", 1);
    let p = dir.path().join("v1.7.json");
    std::fs::write(&p, minor).expect("write");
    let r = Report::load(&p).expect("a newer minor version with unknown fields is read");
    assert_eq!(r.verdict.id, "data_starvation");
}

#[test]
fn the_journal_of_a_recording_replays_into_a_partial_report() {
    let dir = tempfile::tempdir().expect("tempdir");
    let jp = journal::journal_path(&dir.path().join("run.json"));
    let r = record(
        scenario("data_starvation").expect("bundled"),
        &Run {
            duration_s: Some(6.0),
            journal: Some(jp.clone()),
            ..Run::default()
        },
    )
    .expect("records");
    let bytes = std::fs::read(&jp).expect("journal written");
    // Cut the last line in half, as a kill in the middle of a write would.
    let cut = &bytes[..bytes.len() - 40];
    let p = dir.path().join("cut.partial");
    std::fs::write(&p, cut).expect("write");
    let mut back = Report::load(&p).expect("a damaged tail is dropped, the rest is read");
    assert!(!back.run.complete);
    assert!(back
        .run
        .ended_by
        .as_deref()
        .unwrap_or("")
        .contains("journal"));
    let full = r.series[0].data.t.len();
    let got = back.series[0].data.t.len();
    assert!(
        got > full / 2 && got <= full,
        "recovered {got} of {full} samples"
    );
    gpuwhy::analysis::diagnose(&mut back);
    assert_eq!(
        back.verdict.id, "data_starvation",
        "the partial recording still diagnoses"
    );
}
