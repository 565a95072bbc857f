//! Kind detection and the few-samples rule, end to end through report, signals and rules.

use super::*;

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/import/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).expect("fixture")
}

#[test]
fn detects_each_kind_by_content() {
    assert_eq!(detect(&fixture("dmon_current.log")), Some(Kind::Dmon));
    assert_eq!(detect(&fixture("dmon_dt.log")), Some(Kind::Dmon));
    assert_eq!(detect(&fixture("query_units.csv")), Some(Kind::Csv));
    assert_eq!(detect(&fixture("query_noheader.csv")), Some(Kind::Csv));
    assert_eq!(
        detect(b"{\n  \"schema\": \"gpuwhy.report/1\"}"),
        Some(Kind::Report)
    );
    assert_eq!(
        detect(b"{\"schema\":\"gpuwhy.journal/1\",\"run\":{}}\n{\"k\":\"event\"}"),
        Some(Kind::Journal)
    );
    assert_eq!(
        detect(b"{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": []"),
        Some(Kind::Trace)
    );
    assert_eq!(detect(&[0x1f, 0x8b, 8, 0]), Some(Kind::Trace));
    assert_eq!(detect(b"hello world\n"), None);
}

#[test]
fn a_gzip_report_or_journal_is_told_from_a_gzip_trace() {
    use std::io::Write;
    let gz = |text: &[u8]| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(text).expect("gzip");
        e.finish().expect("gzip")
    };
    let report = gz(b"{\n  \"schema\": \"gpuwhy.report/1\", \"series\": []}");
    assert_eq!(detect(&report), Some(Kind::Report));
    // Only the first bytes of a file are looked at: a cut stream still tells.
    assert_eq!(detect(&report[..report.len() - 8]), Some(Kind::Report));
    let journal = gz(b"{\"schema\":\"gpuwhy.journal/1\",\"run\":{}}\n");
    assert_eq!(detect(&journal), Some(Kind::Journal));
    assert_eq!(detect(&gz(b"{\"traceEvents\": []}")), Some(Kind::Trace));
    assert_eq!(detect(&gz(b"{\"other\": 1}")), Some(Kind::Trace));
}

#[test]
fn a_short_log_is_diagnosed_with_lowered_confidence_and_says_so() {
    let out = import(
        Kind::Dmon,
        &fixture("dmon_su.log"),
        &ImportOptions::default(),
    )
    .expect("imports");
    let mut r = Report::from_recording(&out.recording);
    diagnose_log(&mut r);
    assert!(
        r.verdict.summary.contains("Only 4 samples"),
        "{}",
        r.verdict.summary
    );
    for f in &r.findings {
        assert!(f.unseen.iter().any(|u| u.contains("Only 4 samples")));
        assert!(f.confidence <= 0.5 + 1e-9, "{}: {}", f.id, f.confidence);
    }
}

#[test]
fn a_long_sawtooth_log_goes_through_the_usual_rules() {
    // Two minutes of a 10 s input-wait sawtooth at 1 s, as dmon -s u prints it.
    let mut text = String::from("# gpu sm mem enc dec\n# Idx % % % %\n");
    for i in 0..120 {
        let sm = if i % 10 < 4 { 2 } else { 97 };
        text.push_str(&format!("    0 {sm:>5} {:>5}     0     0\n", sm / 3));
    }
    let out = import(Kind::Dmon, text.as_bytes(), &ImportOptions::default()).expect("imports");
    assert_eq!(out.samples, 120);
    let mut r = Report::from_recording(&out.recording);
    diagnose_log(&mut r);
    assert_eq!(r.run.source, "dmon");
    assert!(!r.verdict.summary.contains("Only"), "{}", r.verdict.summary);
    assert_eq!(r.verdict.id, "data_starvation", "{:#?}", r.findings);
}

/// Inputs on which the fuzz targets (`fuzz/`, targets `dmon` and `csv`) once crashed: each
/// is read as a log or refused with a message, as both kinds.
#[test]
fn inputs_the_fuzzers_crashed_on_are_read_or_refused() {
    let found: &[&[u8]] = &[
        // A date whose year overflowed the day count (csv).
        b"49999999999999926/1/1",
        b"timestamp, utilization.gpu [%]\n49999999999999926/11/29 11:22:00.000, 50 %\n",
    ];
    for input in found {
        for kind in [Kind::Dmon, Kind::Csv] {
            let _ = import(kind, input, &ImportOptions::default());
        }
    }
}
