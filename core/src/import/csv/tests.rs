//! `--query-gpu` CSV layouts: units in headers and values, `nounits`, `noheader`.

use super::*;
use crate::recording::Recording;

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/import/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).expect("fixture")
}

fn col(rec: &Recording, dev: usize, m: GpuMetric) -> Vec<f32> {
    rec.devices[dev].series.column(m.index()).to_vec()
}

#[test]
fn header_with_units_two_gpus_and_missing_values() {
    let out = parse(&fixture("query_units.csv"), &ImportOptions::default()).expect("parses");
    let rec = &out.recording;
    assert_eq!(rec.run.source, "csv");
    assert_eq!(rec.devices.len(), 2);
    let d0 = &rec.devices[0].info;
    assert_eq!(d0.name.as_deref(), Some("NVIDIA H100 80GB HBM3"));
    assert_eq!(d0.memory_total_mib, Some(81559.0));
    assert_eq!(d0.power_limit_w, Some(700.0));
    assert_eq!(d0.max_sm_clock_mhz, Some(1980.0));
    assert_eq!(col(rec, 0, GpuMetric::UtilGpu), vec![45.0, 47.0, 46.0]);
    let u1 = col(rec, 1, GpuMetric::UtilGpu);
    assert!(u1[1].is_nan() && u1[0] == 40.0, "[N/A] is missing: {u1:?}");
    assert!(col(rec, 1, GpuMetric::Power)[1].is_nan());
    assert_eq!(col(rec, 1, GpuMetric::ClockReasons)[0], 4.0);
    assert_eq!(col(rec, 0, GpuMetric::Pstate)[0], 0.0);
    assert_eq!(col(rec, 0, GpuMetric::PcieGen)[0], 5.0);
    // Rows of one nvidia-smi loop share its time, so GPUs line up.
    assert_eq!(rec.devices[0].series.times(), rec.devices[1].series.times());
    assert_eq!(rec.devices[0].series.times(), &[0.0, 0.5, 1.0]);
    assert_eq!(rec.run.interval_s, 0.5);
    assert_eq!(rec.run.start, "2026-11-29T11:22:00.101Z");
    assert!(out
        .notes
        .iter()
        .any(|n| n.contains("encoder.stats.sessionCount")));
    assert!(!rec.devices[0].info.capabilities["pcie_rx"].available);
}

#[test]
fn nounits_with_uuid_and_reason_fields() {
    let out = parse(&fixture("query_nounits.csv"), &ImportOptions::default()).expect("parses");
    let rec = &out.recording;
    assert_eq!(rec.devices.len(), 1);
    assert_eq!(rec.devices[0].info.uuid.as_deref(), Some("GPU-aaaa"));
    assert_eq!(col(rec, 0, GpuMetric::Power), vec![350.5, 351.5, 349.0]);
    assert_eq!(col(rec, 0, GpuMetric::ClockReasons), vec![0.0, 4.0, 12.0]);
}

#[test]
fn noheader_with_units_is_guessed_and_says_so() {
    let out = parse(&fixture("query_noheader.csv"), &ImportOptions::default()).expect("parses");
    let rec = &out.recording;
    assert_eq!(col(rec, 0, GpuMetric::UtilGpu), vec![45.0, 46.0, 47.0]);
    assert_eq!(col(rec, 0, GpuMetric::UtilMem), vec![20.0, 21.0, 22.0]);
    assert_eq!(
        col(rec, 0, GpuMetric::MemUsed),
        vec![1200.0, 1300.0, 1250.0]
    );
    assert_eq!(rec.devices[0].info.memory_total_mib, Some(40960.0));
    assert_eq!(rec.run.interval_s, 2.0);
    assert!(out
        .notes
        .iter()
        .any(|n| n.contains("no header") && n.contains("--fields")));
}

#[test]
fn noheader_nounits_needs_fields_and_works_with_them() {
    let text = fixture("query_noheader_nounits.csv");
    let e = parse(&text, &ImportOptions::default()).expect_err("cannot guess");
    assert!(e.to_string().contains("--fields"), "{e}");
    let opts = ImportOptions {
        fields: Some(vec![
            "utilization.gpu".into(),
            "memory.used".into(),
            "power.draw".into(),
        ]),
        interval_s: Some(0.1),
        ..Default::default()
    };
    let out = parse(&text, &opts).expect("parses with fields");
    let rec = &out.recording;
    assert_eq!(col(rec, 0, GpuMetric::UtilGpu), vec![45.0, 46.0]);
    assert_eq!(col(rec, 0, GpuMetric::Power), vec![350.5, 351.5]);
    assert_eq!(rec.devices[0].series.times(), &[0.0, 0.1]);
}

#[test]
fn malformed_rows_name_the_line() {
    let text = "utilization.gpu [%], memory.used [MiB]\n45 %, 10 MiB\nabc, 10 MiB\n46 %, 11 MiB\n";
    // One bad row among good ones is read past with a note naming it (it used to refuse
    // the whole log).
    let out = parse(text, &ImportOptions::default()).expect("reads around it");
    assert_eq!(col(&out.recording, 0, GpuMetric::UtilGpu), vec![45.0, 46.0]);
    assert!(
        out.notes
            .iter()
            .any(|n| n.contains("1 damaged or elided line was skipped")
                && n.contains("line 3")
                && n.contains("utilization.gpu")
                && n.contains("abc")),
        "{:?}",
        out.notes
    );
    // A row truncated mid-file (a copy that lost its end) is read past the same way.
    let text = "timestamp, utilization.gpu [%], memory.used [MiB]\n\
        2026/11/29 11:22:00.000, 45 %, 10 MiB\n2026/11/29 11:22:01.000, 4\n\
        2026/11/29 11:22:02.000, 46 %, 11 MiB\n2026/11/29 11:22:03.000, 47 %, 12 MiB\n";
    let out = parse(text, &ImportOptions::default()).expect("reads around it");
    assert_eq!(out.samples, 3);
    assert!(
        out.notes.iter().any(|n| n.contains("line 3")),
        "{:?}",
        out.notes
    );
    // Mostly rows that are not rows: refused, naming the first.
    let text = "utilization.gpu [%], memory.used [MiB]\nabc, 10 MiB\n45 %, 10 MiB\nxyz, 1 MiB\n46 %, 11 MiB\n";
    let e = parse(text, &ImportOptions::default()).expect_err("half garbage");
    let msg = e.to_string();
    assert!(
        msg.contains("line 2") && msg.contains("not a CSV log"),
        "{msg}"
    );
    // A cut-off last line is dropped, not an error.
    let text = "utilization.gpu [%], memory.used [MiB]\n45 %, 10 MiB\n46 %";
    let out = parse(text, &ImportOptions::default()).expect("tolerates the tail");
    assert_eq!(out.samples, 1);
}

/// The CSV crash seen once by the fuzz target and never saved (f299ad9 fixed its cause, a
/// date whose year overflowed the day count): rebuilt here as whole logs, with years at and
/// past both ends of the calendar, a huge GPU index and overflowing values. Each must give a
/// recording or an error naming the line, never a panic.
#[test]
fn absurd_dates_and_numbers_are_refused_or_read_never_a_panic() {
    let header = "timestamp, index, utilization.gpu [%]\n";
    let out = parse(
        &format!("{header}0001/01/01 00:00:00.000, 0, 45 %\n9999/12/31 23:59:59.999, 0, 46 %\n"),
        &ImportOptions::default(),
    )
    .expect("the calendar's ends are dates");
    assert_eq!(out.recording.run.start, "0001-01-01T00:00:00.000Z");
    assert!(out.recording.run.duration_s > 3.0e11);
    let err = parse(
        &format!("{header}49999999999999926/1/1 00:00:00.000, 0, 45 %\n2026/11/29 11:22:00.101, 0, 46 %\n"),
        &ImportOptions::default(),
    )
    .expect_err("a year past 9999 is not a date");
    assert!(err.to_string().contains("line 2"), "{err}");
    let out = parse(
        &format!("{header}2026/11/29 11:22:00.101, 4294967295, 1e39 %\n2026/11/29 11:22:00.601, 0, inf %\n"),
        &ImportOptions::default(),
    )
    .expect("a huge index is one more GPU; overflowing values read as infinite");
    assert_eq!(out.recording.devices.len(), 2);
}
