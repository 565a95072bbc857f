//! Each kind `gpuwhy diagnose` and the browser read, from its bytes through [`diagnose`]:
//! the same report, notes and findings as the steps it stands for, and its refusals.

use std::path::PathBuf;

use crate::analysis::{diagnose_any as diagnose, diagnose_log, diagnose_traced, temper};
use crate::import::{detect, import, ImportOptions, Input, Kind};
use crate::report::Report;
use crate::trace::{self, Choices, ReadOptions, TraceSummary};
use crate::Error;

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).expect("fixture")
}

fn opts(path: &str) -> ImportOptions {
    ImportOptions {
        path: PathBuf::from(path),
        ..ImportOptions::default()
    }
}

fn bytes_of<'a>(bytes: &'a [u8], path: &str) -> Input<'a> {
    Input::Bytes {
        kind: detect(bytes).expect("a known kind"),
        bytes,
        opts: opts(path),
    }
}

fn ids(r: &Report) -> Vec<&str> {
    r.findings.iter().map(|f| f.id.as_str()).collect()
}

/// A trace fixture read as the browser reads one (from bytes, default choices).
fn trace_of(name: &str) -> TraceSummary {
    let choices = Choices::default();
    let opts = ReadOptions {
        choices,
        label: name.into(),
        position: 0,
    };
    let rank = trace::read_slice(&fixture(name), &opts).expect("reads the trace");
    TraceSummary::from_ranks(vec![rank], choices)
}

/// A two-minute dmon log of a 10 s input-wait sawtooth on one GPU, at 1 s.
fn sawtooth_dmon() -> String {
    let mut text = String::from("# gpu sm mem enc dec\n# Idx % % % %\n");
    for i in 0..120 {
        let sm = if i % 10 < 4 { 2 } else { 97 };
        text.push_str(&format!("    0 {sm:>5} {:>5}     0     0\n", sm / 3));
    }
    text
}

#[test]
fn a_short_dmon_log_is_imported_labelled_and_tempered_as_its_steps_do() {
    let bytes = fixture("import/dmon_current.log");
    let d = diagnose(Some(bytes_of(&bytes, "logs/dmon_current.log")), None).expect("reads");
    // The steps it stands for, one by one.
    let imported = import(Kind::Dmon, &bytes, &opts("logs/dmon_current.log")).expect("imports");
    let mut steps = Report::from_recording(&imported.recording);
    diagnose_log(&mut steps);

    assert_eq!(d.report.run.source, "dmon");
    assert_eq!(d.report.run.label.as_deref(), Some("dmon_current.log"));
    assert_eq!(d.report.series.len(), 2);
    assert_eq!(d.samples, Some(imported.samples));
    assert_eq!(imported.samples, 3);
    assert_eq!(d.notes, imported.notes);
    assert!(!d.notes.is_empty());
    assert_eq!(d.report.findings, steps.findings);
    assert_eq!(d.report.verdict, steps.verdict);
    // Three samples per GPU (the last line is cut): confidence lowered, and said.
    assert!(
        d.report.verdict.summary.contains("Only 3 samples"),
        "{}",
        d.report.verdict.summary
    );
}

#[test]
fn a_long_dmon_log_goes_through_the_usual_rules() {
    let log = sawtooth_dmon();
    let d = diagnose(Some(bytes_of(log.as_bytes(), "run.log")), None).expect("reads");
    assert_eq!(d.samples, Some(120));
    assert_eq!(
        d.report.verdict.id, "data_starvation",
        "{:#?}",
        d.report.findings
    );
    assert!(!d.report.verdict.summary.contains("Only"));
}

#[test]
fn a_query_gpu_csv_is_imported_with_its_devices() {
    let bytes = fixture("import/query_units.csv");
    let d = diagnose(Some(bytes_of(&bytes, "query_units.csv")), None).expect("reads");
    let imported = import(Kind::Csv, &bytes, &opts("query_units.csv")).expect("imports");
    assert_eq!(d.report.run.source, "csv");
    assert_eq!(d.report.run.label.as_deref(), Some("query_units.csv"));
    assert_eq!(d.report.series.len(), 2);
    assert_eq!(
        d.report.devices[0].name.as_deref(),
        Some("NVIDIA H100 80GB HBM3")
    );
    assert_eq!(d.samples, Some(imported.samples));
    assert_eq!(d.notes, imported.notes);
}

#[test]
fn a_report_is_rediagnosed_the_same_from_bytes_or_parsed() {
    let log = sawtooth_dmon();
    let first = diagnose(Some(bytes_of(log.as_bytes(), "run.log")), None).expect("reads");
    let json = first.report.to_json();
    assert_eq!(detect(json.as_bytes()), Some(Kind::Report));
    let from_bytes = diagnose(Some(bytes_of(json.as_bytes(), "run.json")), None).expect("reads");
    let parsed = Report::from_slice(json.as_bytes(), "run.json".as_ref()).expect("parses");
    let from_report = diagnose(Some(Input::Report(Box::new(parsed))), None).expect("reads");
    for d in [&from_bytes, &from_report] {
        assert_eq!(d.report.findings, first.report.findings);
        assert_eq!(d.report.verdict, first.report.verdict);
        assert_eq!(d.report.series.len(), 1);
        assert!(d.notes.is_empty());
        assert_eq!(d.samples, None);
    }
}

#[test]
fn a_crash_journal_is_replayed_and_diagnosed() {
    use crate::metric::GpuMetric;
    use crate::report::journal::{JournalHeader, JournalLine};
    use crate::report::{Column, DeviceInfo, RunInfo};

    let run = RunInfo {
        source: "nvml".into(),
        interval_s: 1.0,
        ..RunInfo::default()
    };
    let device = DeviceInfo {
        index: 0,
        name: Some("NVIDIA A100-SXM4-80GB".into()),
        ..DeviceInfo::default()
    };
    let header = JournalHeader::bare(run, vec![device]);
    let rows = (0..100)
        .map(|i| {
            let mut row = vec![f32::NAN; GpuMetric::COUNT];
            let busy = i % 10 < 6;
            row[GpuMetric::UtilGpu.index()] = if busy { 97.0 } else { 2.0 };
            row[GpuMetric::Power.index()] = if busy { 380.0 } else { 90.0 };
            Column(row)
        })
        .collect();
    let line = JournalLine::Gpu {
        dev: 0,
        t: (0..100).map(f64::from).collect(),
        rows,
    };
    let text = format!(
        "{}\n{}\n",
        serde_json::to_string(&header).expect("serialises"),
        serde_json::to_string(&line).expect("serialises")
    );
    assert_eq!(detect(text.as_bytes()), Some(Kind::Journal));
    let d = diagnose(Some(bytes_of(text.as_bytes(), "run.json.partial")), None).expect("replays");
    assert_eq!(d.report.series.len(), 1);
    assert_eq!(d.report.series[0].data.t.len(), 100);
    assert_eq!(d.report.verdict.id, "data_starvation");
    assert!(d.notes.is_empty());
}

#[test]
fn a_trace_alone_gets_its_report_and_the_rules_with_the_trace() {
    for name in ["trace/small.json", "trace/small.json.gz"] {
        assert_eq!(detect(&fixture(name)), Some(Kind::Trace));
        let t = trace_of(name);
        let d = diagnose(None, Some(&t)).expect("diagnoses");
        let mut steps = trace::report(&t);
        diagnose_traced(&mut steps, &t);
        assert_eq!(d.report.run.source, "trace");
        assert_eq!(d.report.run.label.as_deref(), Some(name));
        assert_eq!(d.report.findings, steps.findings);
        assert_eq!(d.report.verdict, steps.verdict);
        assert!(!d.report.verdict.summary.is_empty());
        assert!(d.notes.is_empty());
    }
}

#[test]
fn a_log_with_a_trace_is_diagnosed_with_the_trace_attached() {
    let log = sawtooth_dmon();
    let t = trace_of("trace/launch_bound.json");
    let d = diagnose(Some(bytes_of(log.as_bytes(), "run.log")), Some(&t)).expect("reads");
    let imported = import(Kind::Dmon, log.as_bytes(), &opts("run.log")).expect("imports");
    let mut steps = Report::from_recording(&imported.recording);
    diagnose_traced(&mut steps, &t);
    temper(&mut steps);
    assert_eq!(d.report.run.source, "dmon");
    assert_eq!(ids(&d.report), ids(&steps));
    assert_eq!(d.report.findings, steps.findings);
    // The trace's findings join the log's.
    let alone = diagnose(Some(bytes_of(log.as_bytes(), "run.log")), None).expect("reads");
    assert_ne!(ids(&d.report), ids(&alone.report));
}

#[test]
fn refusals_name_the_file_and_what_is_wrong() {
    let none = diagnose(None, None).expect_err("nothing to read");
    assert_eq!(
        none.to_string(),
        "nothing to diagnose: give a report, a log or a profiler trace"
    );
    let trace = fixture("trace/small.json");
    let as_log = diagnose(Some(bytes_of(&trace, "small.json")), None).expect_err("a trace");
    assert!(matches!(as_log, Error::InvalidArgument(_)), "{as_log:?}");
    assert!(
        as_log.to_string().contains("small.json is a trace"),
        "{as_log}"
    );
    let empty = diagnose(
        Some(Input::Bytes {
            kind: Kind::Report,
            bytes: b"  \n",
            opts: opts("cut.json"),
        }),
        None,
    )
    .expect_err("empty");
    assert!(empty.to_string().contains("cut.json"), "{empty}");
    assert!(empty.to_string().contains("the file is empty"), "{empty}");
    let bad = b"# gpu sm mem enc dec\n# Idx % % % %\n    0  nope  1 0 0\n    0  50  1 0 0\n";
    let err = diagnose(Some(bytes_of(bad, "bad.log")), None).expect_err("bad line");
    assert!(err.to_string().contains("bad.log"), "{err}");
    assert!(err.to_string().contains("line 3"), "{err}");
}
