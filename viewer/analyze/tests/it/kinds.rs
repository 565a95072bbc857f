//! Each kind of file gives the report `gpuwhy diagnose` would: same readers, same rules;
//! and the verdict says where it came from.

use std::path::Path;

use gpuwhy::import::{self, ImportOptions, Kind};
use gpuwhy::report::{Report, Verdict};
use gpuwhy::trace::{self, Choices, ReadOptions, TraceSummary};
use gpuwhy_analyze::{analyze, detect, Analysis};

use crate::fixtures::{core_fixture, dmon_log};

fn ids(r: &Report) -> Vec<&str> {
    r.findings.iter().map(|f| f.id.as_str()).collect()
}

/// What `gpuwhy diagnose` does with a log (cli/src/import.rs), step by step.
fn log_as_cli(kind: Kind, bytes: &[u8], name: &str) -> Report {
    let opts = ImportOptions {
        path: name.into(),
        ..ImportOptions::default()
    };
    let imported = import::import(kind, bytes, &opts).expect("imports");
    let mut r = Report::from_recording(&imported.recording);
    gpuwhy::analysis::diagnose_log(&mut r);
    r
}

fn ends_with_source(a: &Analysis) {
    assert!(
        a.report.verdict.summary.ends_with(&a.source),
        "{}",
        a.report.verdict.summary
    );
}

#[test]
fn a_dmon_log_is_read_and_diagnosed_as_the_cli_does() {
    let log = dmon_log(120, 2);
    assert_eq!(detect(log.as_bytes()), Some(Kind::Dmon));
    let a = analyze(log.as_bytes(), "run.log").expect("reads");
    assert_eq!(a.kind, Kind::Dmon);
    // Idle 4 s of every 10 on both GPUs: the GPU waits for data ~40% of the run.
    assert_eq!(a.report.verdict.id, "data_starvation");
    assert_eq!(a.report.verdict.lost_share, Some(0.4));
    let cli = log_as_cli(Kind::Dmon, log.as_bytes(), "run.log");
    assert_eq!(ids(&a.report), ids(&cli));
    assert_eq!(a.report.findings, cli.findings);
    assert_eq!(a.report.series.len(), 2);
    assert!(a.report.series.iter().all(|s| s.data.t.len() == 120));
    assert_eq!(a.report.run.label.as_deref(), Some("run.log"));
    assert!(
        a.source
            .contains("nvidia-smi dmon log (run.log), analysed in this browser: 120 samples per GPU, 2 GPUs, 1 s apart"),
        "{}",
        a.source
    );
    ends_with_source(&a);
    assert!(a.notes.iter().any(|n| n.contains("no time column")));
}

#[test]
fn a_short_dmon_log_says_its_confidence_is_lowered() {
    let a = analyze(&core_fixture("import/dmon_current.log"), "short.log").expect("reads");
    assert_eq!(a.kind, Kind::Dmon);
    assert!(
        a.report.verdict.summary.contains("Only 3 samples per GPU"),
        "{}",
        a.report.verdict.summary
    );
    assert!(
        a.source.contains("3 samples per GPU, 2 GPUs"),
        "{}",
        a.source
    );
    assert!(
        a.notes
            .iter()
            .any(|n| n.contains("line 11") && n.contains("left out")),
        "the truncated last line is reported: {:?}",
        a.notes
    );
}

#[test]
fn a_query_gpu_csv_is_read_with_device_names() {
    let bytes = core_fixture("import/query_units.csv");
    assert_eq!(detect(&bytes), Some(Kind::Csv));
    let a = analyze(&bytes, "query.csv").expect("reads");
    assert_eq!(a.kind, Kind::Csv);
    let cli = log_as_cli(Kind::Csv, &bytes, "query.csv");
    assert_eq!(a.report.findings, cli.findings);
    assert_eq!(a.report.devices.len(), 2);
    assert_eq!(
        a.report.devices[0].name.as_deref(),
        Some("NVIDIA H100 80GB HBM3")
    );
    assert!(
        a.source
            .contains("--query-gpu CSV log (query.csv), analysed in this browser: 3 samples per GPU, 2 GPUs, 0.5 s apart"),
        "{}",
        a.source
    );
    ends_with_source(&a);
}

#[test]
fn a_profiler_trace_json_and_gz_give_the_cli_s_findings() {
    let json = core_fixture("trace/small.json");
    let gz = core_fixture("trace/small.json.gz");
    assert_eq!(detect(&json), Some(Kind::Trace));
    assert_eq!(detect(&gz), Some(Kind::Trace));
    let a = analyze(&json, "small.json").expect("reads");
    let b = analyze(&gz, "small.json").expect("reads gzip");
    assert_eq!(a.kind, Kind::Trace);
    assert_eq!(a.report.findings, b.report.findings);

    let opts = ReadOptions {
        choices: Choices::default(),
        label: "small.json".into(),
        position: 0,
    };
    let rank = trace::read_slice(&json, &opts).expect("core reads it");
    let kernels = rank.kernels.count;
    let summary = TraceSummary::from_ranks(vec![rank], Choices::default());
    let mut cli = trace::report(&summary);
    gpuwhy::analysis::diagnose_traced(&mut cli, &summary);
    assert_eq!(a.report.findings, cli.findings);
    assert_eq!(a.report.verdict.id, "host_sync");
    assert!(
        a.source.contains(&format!("{kernels} kernels")),
        "{}",
        a.source
    );
    ends_with_source(&a);
    // The inclusion choices are stated, as the CLI's summary states them.
    assert_eq!(a.notes, summary.choices_text);
}

#[test]
fn a_report_gets_its_rules_re_run() {
    let log = dmon_log(120, 1);
    let fresh = analyze(log.as_bytes(), "run.log").expect("reads").report;
    let mut stale = fresh.clone();
    // As an older gpuwhy might have left it: a finding no rule gives now, another verdict.
    stale.findings.truncate(0);
    let mut gone = fresh.findings[0].clone();
    gone.id = "retired_rule".into();
    stale.findings.push(gone);
    stale.verdict = Verdict::default();
    let bytes = stale.to_json().into_bytes();
    assert_eq!(detect(&bytes), Some(Kind::Report));

    let a = analyze(&bytes, "old.json").expect("reads");
    assert_eq!(a.kind, Kind::Report);
    assert_eq!(ids(&a.report), ids(&fresh));
    assert!(!ids(&a.report).contains(&"retired_rule"));
    assert_eq!(a.report.verdict.id, fresh.verdict.id);
    // Compared as JSON: missing samples are NaN, which equals nothing.
    let json = |r: &Report| serde_json::to_string(&r.series).expect("serialises");
    assert_eq!(
        json(&a.report),
        json(&fresh),
        "the samples are kept as they were"
    );
    assert!(
        a.source.starts_with("Rules re-run in this browser"),
        "{}",
        a.source
    );
    ends_with_source(&a);
}

#[test]
fn the_report_it_returns_reads_back_as_a_report() {
    let log = dmon_log(30, 2);
    let a = analyze(log.as_bytes(), "run.log").expect("reads");
    let json = a.report_json().expect("serialises");
    let back = Report::from_slice(json.as_bytes(), Path::new("back.json")).expect("a report");
    assert_eq!(back.findings, a.report.findings);
    assert_eq!(back.verdict, a.report.verdict);
    assert_eq!(back.series.len(), 2);
}

#[test]
fn a_crash_journal_is_replayed_and_diagnosed() {
    let bytes = crate::fixtures::journal(100).into_bytes();
    assert_eq!(detect(&bytes), Some(Kind::Journal));
    let a = analyze(&bytes, "run.json.partial").expect("replays");
    assert_eq!(a.kind, Kind::Journal);
    assert_eq!(a.report.series.len(), 1);
    assert_eq!(a.report.series[0].data.t.len(), 100);
    assert_eq!(a.report.verdict.id, "data_starvation");
    assert!(
        a.source.contains("journal of an interrupted recording"),
        "{}",
        a.source
    );
    ends_with_source(&a);
}
