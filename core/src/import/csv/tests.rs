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

/// A log of `gpus` GPUs written without `index`: one row per GPU per poll, in index order,
/// each GPU with its own utilization and temperature. `stamp` gives rows a timestamp.
fn log_without_index(gpus: usize, polls: usize, stamp: bool) -> String {
    let mut s = String::from(if stamp {
        "timestamp, name, utilization.gpu [%], memory.used [MiB], temperature.gpu\n"
    } else {
        "name, utilization.gpu [%], memory.used [MiB], temperature.gpu\n"
    });
    for p in 0..polls {
        for g in 0..gpus {
            if stamp {
                s.push_str(&format!("2026/11/29 11:22:{:02}.{:03}, ", p, 100 + g));
            }
            let util = 90 - 10 * g + p % 2;
            let mem = 30_000 + 700 * g + p % 3;
            let temp = 55 + 3 * g + p % 2;
            s.push_str(&format!(
                "NVIDIA A100-SXM4-80GB, {util} %, {mem} MiB, {temp}\n"
            ));
        }
    }
    s
}

#[test]
fn a_multi_gpu_log_without_index_is_split_by_place_in_the_poll() {
    for stamp in [true, false] {
        let out =
            parse(&log_without_index(4, 6, stamp), &ImportOptions::default()).expect("parses");
        let rec = &out.recording;
        assert_eq!(rec.devices.len(), 4, "timestamps: {stamp}");
        for g in 0..4 {
            let u = col(rec, g, GpuMetric::UtilGpu);
            assert_eq!(u.len(), 6);
            assert!(
                u.iter().all(|x| (*x - (90 - 10 * g) as f32).abs() <= 1.0),
                "GPU {g} keeps its own utilization, not its neighbours': {u:?}"
            );
        }
        let note = out
            .notes
            .iter()
            .find(|n| n.contains("no index, pci.bus_id or uuid"))
            .expect("a note says how the rows were split");
        assert!(note.contains("polls of 4"), "{note}");
        assert!(
            note.contains(if stamp { "timestamps" } else { "the values" }),
            "{note}"
        );
    }
    // With timestamps, the GPUs of one poll share its time.
    let out = parse(&log_without_index(2, 5, true), &ImportOptions::default()).expect("parses");
    let rec = &out.recording;
    assert_eq!(rec.devices[0].series.times(), rec.devices[1].series.times());
}

#[test]
fn a_log_without_index_whose_polls_cannot_be_told_is_one_gpu_with_a_warning() {
    let text = "utilization.gpu [%], temperature.gpu\n\
        40 %, 50\n41 %, 51\n42 %, 52\n43 %, 53\n44 %, 54\n45 %, 55\n46 %, 56\n47 %, 57\n";
    let out = parse(text, &ImportOptions::default()).expect("parses");
    assert_eq!(out.recording.devices.len(), 1);
    assert!(
        out.notes
            .iter()
            .any(|n| n.contains("read as one GPU") && n.contains("add index")),
        "{:?}",
        out.notes
    );
    // One GPU polled with timestamps is one GPU, without a warning.
    let out = parse(&log_without_index(1, 6, true), &ImportOptions::default()).expect("parses");
    assert_eq!(out.recording.devices.len(), 1);
    assert!(
        !out.notes.iter().any(|n| n.contains("no index")),
        "{:?}",
        out.notes
    );
}

#[test]
fn a_health_query_gives_readings_when_counters_change_and_keeps_na_unread() {
    let text = "timestamp, index, ecc.mode.current, ecc.errors.corrected.volatile.total, \
        ecc.errors.uncorrected.volatile.total, ecc.errors.corrected.volatile.dram, \
        retired_pages.pending, remapped_rows.pending, pcie.link.gen.gpumax\n\
        2026/11/29 11:00:00.000, 0, Enabled, 10, 0, 10, [N/A], No, 4\n\
        2026/11/29 11:01:00.000, 0, Enabled, 10, 0, 10, [N/A], No, 4\n\
        2026/11/29 11:02:00.000, 0, Enabled, 25, 0, 25, [N/A], Yes, 4\n\
        2026/11/29 11:03:00.000, 0, Enabled, 25, 0, 25, [N/A], Yes, 4\n\
        2026/11/29 11:04:00.000, 0, Enabled, 25, 0, 25, [N/A], Yes, 4\n";
    let out = parse(text, &ImportOptions::default()).expect("parses");
    let info = &out.recording.devices[0].info;
    assert_eq!(info.pcie_device_max_gen, Some(4));
    let h = info.health.as_ref().expect("health");
    assert_eq!(h.ecc_enabled, Some(true));
    let seen: Vec<(f64, Option<u64>, Option<bool>)> = h
        .readings
        .iter()
        .map(|r| {
            (
                r.t_s,
                r.ecc.volatile_corrected,
                r.remapped_rows.and_then(|x| x.pending),
            )
        })
        .collect();
    assert_eq!(
        seen,
        vec![
            (0.0, Some(10), Some(false)),
            (60.0, Some(10), Some(false)),
            (120.0, Some(25), Some(true)),
            (240.0, Some(25), Some(true)),
        ],
        "the first, each change, and the last row"
    );
    assert_eq!(
        h.readings[0].ecc_locations["dram"].volatile_corrected,
        Some(10)
    );
    assert_eq!(h.readings[0].retired_pages, None, "[N/A] is not zero");
    assert!(h.unavailable["retired_pages"].contains("N/A"), "{h:?}");
    assert!(!h.unavailable.contains_key("remapped_rows"));
}

#[test]
fn one_gpu_whose_power_and_utilization_alternate_with_its_steps_is_not_split() {
    // A step of two samples: busy, waiting, busy, … with a steady temperature and memory.
    let mut text =
        String::from("utilization.gpu [%], power.draw [W], memory.used [MiB], temperature.gpu\n");
    for i in 0..20 {
        let (u, p) = if i % 2 == 0 { (98, 390) } else { (5, 90) };
        text.push_str(&format!("{u} %, {p} W, 30000 MiB, {}\n", 60 + i / 8));
    }
    let out = parse(&text, &ImportOptions::default()).expect("parses");
    assert_eq!(out.recording.devices.len(), 1, "{:?}", out.notes);
}
