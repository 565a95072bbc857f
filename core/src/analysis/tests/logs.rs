//! The few-samples rule on imported logs, end to end through report, signals, rules and
//! the analysis that lowers a short log's confidence.

use crate::analysis::{diagnose_any, diagnose_log};
use crate::import::*;
use crate::report::Report;

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/import/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).expect("fixture")
}

fn fixture_text(name: &str) -> String {
    String::from_utf8(fixture(name)).expect("text fixture")
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

#[test]
fn a_power_capped_snapshot_under_load_is_diagnosed_as_throttling() {
    // The first GPU is at 98 % with SW Power Cap active at its power limit. (The
    // PERFORMANCE excerpt alone has no Utilization section, so no load to judge it by.)
    let text = fixture_text("smi_q_r470_two_gpus.txt");
    let d = diagnose_any(
        Some(Input::Bytes {
            kind: Kind::Smi,
            bytes: text.as_bytes(),
            opts: ImportOptions::default(),
        }),
        None,
    )
    .expect("diagnoses");
    assert_eq!(d.samples, Some(1));
    assert!(
        d.report.findings.iter().any(|f| f.id == "throttling"),
        "{:?}",
        d.report.findings.iter().map(|f| &f.id).collect::<Vec<_>>()
    );
    let t = d.report.findings.iter().find(|f| f.id == "throttling");
    let t = t.expect("throttling");
    assert!(
        t.unseen.iter().any(|u| u.contains("Only 1 sample per GPU")),
        "a snapshot's confidence is lowered: {:?}",
        t.unseen
    );
    // A snapshot shows the clock-event reason, not how long it lasts.
    assert_eq!(t.lost_share, None);
    assert!(!t.summary.contains("% of the run"), "{}", t.summary);
    assert!(
        d.report.verdict.summary.contains("snapshot"),
        "{}",
        d.report.verdict.summary
    );
}
