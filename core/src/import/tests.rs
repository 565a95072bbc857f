//! Kind detection, and inputs the fuzzers crashed on.

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
fn the_readable_list_names_every_kind_detect_tells_apart() {
    let detected = [
        detect(&fixture("dmon_current.log")),
        detect(&fixture("query_units.csv")),
        detect(&fixture("smi_q_r470_two_gpus.txt")),
        detect(&fixture("smi_q_x_r470_two_gpus.xml")),
        detect(b"{\n  \"schema\": \"gpuwhy.report/1\"}"),
        detect(b"{\"schema\":\"gpuwhy.journal/1\",\"run\":{}}\n{\"k\":\"event\"}"),
        detect(&[0x1f, 0x8b, 8, 0]),
    ];
    let listed = readable_kinds();
    for kind in detected {
        let kind = kind.expect("each fixture is read");
        assert!(
            Kind::ALL.contains(&kind),
            "{kind:?} is missing from Kind::ALL"
        );
    }
    for (i, kind) in Kind::ALL.iter().enumerate() {
        assert!(!Kind::ALL[..i].contains(kind), "{kind:?} is listed twice");
        assert!(listed.contains(kind.description()), "{listed}");
    }
    assert!(listed.starts_with("a gpuwhy report, "), "{listed}");
    assert!(
        listed.ends_with(", or a PyTorch profiler trace (.json/.json.gz)"),
        "{listed}"
    );
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
