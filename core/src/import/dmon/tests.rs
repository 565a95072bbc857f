//! Every dmon layout the issue lists, on fixtures in `core/tests/fixtures/import/`.

use super::*;
use crate::metric::GpuMetric;
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

fn available(rec: &Recording, dev: usize, m: GpuMetric) -> bool {
    rec.devices[dev].info.capabilities[m.name()].available
}

#[test]
fn current_layout_two_gpus_repeated_header_and_truncated_last_line() {
    let out = parse(&fixture("dmon_current.log"), &ImportOptions::default()).expect("parses");
    let rec = &out.recording;
    assert_eq!(rec.run.source, "dmon");
    assert_eq!(rec.devices.len(), 2);
    assert_eq!(col(rec, 0, GpuMetric::UtilGpu), vec![90.0, 92.0, 94.0]);
    assert_eq!(col(rec, 1, GpuMetric::UtilGpu), vec![70.0, 72.0, 74.0]);
    assert_eq!(rec.devices[0].series.times(), &[0.0, 1.0, 2.0]);
    assert_eq!(rec.devices[1].series.times(), &[0.0, 1.0, 2.0]);
    assert!(
        col(rec, 0, GpuMetric::UtilMem)[2].is_nan(),
        "N/A is missing, not 0"
    );
    assert_eq!(col(rec, 0, GpuMetric::MemUsed)[0], 40000.0);
    assert_eq!(col(rec, 1, GpuMetric::PcieRx)[0], 120.0);
    assert_eq!(col(rec, 0, GpuMetric::GraphicsClock)[0], 1980.0);
    assert!(!available(rec, 0, GpuMetric::SmClock));
    assert!(!available(rec, 0, GpuMetric::ClockReasons));
    assert!(available(rec, 0, GpuMetric::Temp));
    assert!(
        out.notes
            .iter()
            .any(|n| n.contains("line 11") && n.contains("left out")),
        "{:?}",
        out.notes
    );
    assert!(out.notes.iter().any(|n| n.contains("no time column")));
    assert_eq!(rec.run.interval_s, 1.0);
    assert_eq!(rec.run.duration_s, 2.0);
}

#[test]
fn old_temp_layout_and_given_interval() {
    let opts = ImportOptions {
        interval_s: Some(0.5),
        ..Default::default()
    };
    let out = parse(&fixture("dmon_old.log"), &opts).expect("parses");
    let rec = &out.recording;
    assert_eq!(rec.devices.len(), 1);
    assert_eq!(col(rec, 0, GpuMetric::Temp), vec![48.0, 55.0, 56.0, 56.0]);
    assert_eq!(col(rec, 0, GpuMetric::Power)[1], 120.0);
    assert_eq!(rec.devices[0].series.times()[3], 1.5);
    assert_eq!(rec.run.interval_s, 0.5);
    assert!(!available(rec, 0, GpuMetric::PcieRx), "not in -s puc");
}

#[test]
fn utilization_only_subset() {
    let out = parse(&fixture("dmon_su.log"), &ImportOptions::default()).expect("parses");
    let rec = &out.recording;
    assert_eq!(
        col(rec, 0, GpuMetric::UtilGpu),
        vec![10.0, 95.0, 12.0, 96.0]
    );
    assert!(!available(rec, 0, GpuMetric::Power));
    let reason = rec.devices[0].info.capabilities["power"]
        .reason
        .clone()
        .unwrap_or_default();
    assert!(
        reason.contains("-s selection") && reason.contains("dmon log"),
        "{reason}"
    );
    assert!(out.notes.iter().any(|n| n.contains("enc dec jpg ofa")));
}

#[test]
fn date_time_columns_cross_midnight_and_set_the_start() {
    let out = parse(&fixture("dmon_dt.log"), &ImportOptions::default()).expect("parses");
    let rec = &out.recording;
    assert_eq!(rec.devices.len(), 2);
    assert_eq!(rec.devices[0].series.times(), &[0.0, 2.0, 4.0]);
    assert_eq!(rec.run.interval_s, 2.0);
    assert_eq!(rec.run.start, "2026-11-29T23:59:58.000Z");
    assert!(!out.notes.iter().any(|n| n.contains("no time column")));
}

#[test]
fn malformed_input_names_the_line_and_what_was_expected() {
    let e = parse("    0  12  13\n", &ImportOptions::default()).expect_err("no header");
    assert!(
        e.to_string().contains("line 1") && e.to_string().contains("header"),
        "{e}"
    );
    // A damaged value or a short row mid-file is read past with a note (it used to refuse
    // the whole log, which lost the rows around it); so is a `...` where a post elided rows.
    let text = "# gpu sm mem\n# Idx % %\n 0 10 5\n 0 abc 5\n 0 11 5\n";
    let out = parse(text, &ImportOptions::default()).expect("reads around the bad value");
    assert_eq!(col(&out.recording, 0, GpuMetric::UtilGpu), vec![10.0, 11.0]);
    let note = out
        .notes
        .iter()
        .find(|n| n.contains("skipped"))
        .expect("a note");
    assert!(
        note.starts_with("1 damaged or elided line was skipped")
            && note.contains("line 4")
            && note.contains("column `sm`")
            && note.contains("abc"),
        "{note}"
    );
    let text = "# gpu sm mem\n 0 10 5\n 0 11\n 0 12 5\n";
    let out = parse(text, &ImportOptions::default()).expect("reads around the short row");
    assert_eq!(out.samples, 2);
    assert!(out
        .notes
        .iter()
        .any(|n| n.contains("line 3") && n.contains("expected 3 values")));
}

#[test]
fn an_elided_stretch_is_read_around_and_counted() {
    let text = "# gpu sm mem\n# Idx % %\n 0 10 5\n 0 12 5\n...\n 0 90 5\n[...]\n 0 91 5\n 0 92 5\n";
    let out = parse(text, &ImportOptions::default()).expect("reads around the elisions");
    assert_eq!(
        col(&out.recording, 0, GpuMetric::UtilGpu),
        vec![10.0, 12.0, 90.0, 91.0, 92.0]
    );
    let note = out
        .notes
        .iter()
        .find(|n| n.contains("skipped"))
        .expect("a note");
    assert!(
        note.starts_with("2 damaged or elided lines were skipped (lines 5, 7;"),
        "{note}"
    );
}

#[test]
fn mostly_garbage_after_a_header_is_refused_naming_the_first_bad_line() {
    let text = "# gpu sm mem\n 0 10 5\nlorem ipsum\ndolor sit amet\nconsectetur\n 0 11 5\n";
    let e = parse(text, &ImportOptions::default()).expect_err("mostly garbage");
    let msg = e.to_string();
    assert!(
        msg.contains("line 3") && msg.contains("3 of 5 lines") && msg.contains("not a dmon log"),
        "{msg}"
    );
}

#[test]
fn no_panic_on_garbage() {
    for text in [
        "",
        "#",
        "# gpu\n",
        "# gpu sm\n\u{0}\u{1}",
        "# gpu sm\n-1 5\n 0 5\n",
        "# Date Time gpu sm\n x y 0 1\n 1 2 3 4\n",
    ] {
        let _ = parse(text, &ImportOptions::default());
    }
}
