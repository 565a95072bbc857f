use std::io::Write;

use serde_json::{json, Value};

use super::*;
use crate::report::journal::{JournalHeader, JournalLine};
use crate::report::{Column, DeviceInfo, RunInfo};

const CAUSES: [&str; 4] = ["data_starvation", "throttling", "none", "launch_bound"];
const MODELS: [&str; 2] = ["NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"];

/// Report `i` of a generated folder: its label, host, GPUs (some not the job's), verdict,
/// lost share and duration all vary with `i`, and it carries a sample series to skip.
fn report(i: u32) -> Value {
    let gpus = 1 + i % 4;
    let devices: Vec<Value> = (0..gpus + 1)
        .map(|d| json!({ "index": d, "name": MODELS[((i + d) % 2) as usize] }))
        .collect();
    let cause = CAUSES[(i % 4) as usize];
    let lost = (cause != "none").then(|| 0.05 * f64::from(i % 9));
    json!({
        "schema": "gpuwhy.report/1",
        "run": {
            "start_unix_ms": 1_795_000_000_000_i64 + i64::from(i) * 3_600_000,
            "start": "2026-11-18T00:00:00.000Z",
            "duration_s": 600.0 + 60.0 * f64::from(i),
            "host": format!("node-{}", i % 3),
            "label": (i % 5 != 0).then(|| format!("exp-{}", i % 2)),
            "complete": true,
            "job_gpus": { "indices": (0..gpus).collect::<Vec<u32>>(), "others": [gpus],
                          "method": "override", "reason": "given" }
        },
        "verdict": { "id": cause, "title": cause, "confidence": 0.8, "lost_share": lost,
                     "summary": "s" },
        "findings": [],
        "devices": devices,
        "series": [{ "device": 0, "times": { "div": 10000, "runs": [0, [1000, 500]] },
                     "columns": { "util_gpu": { "div": 1, "runs": [50, [0, 500]] } } }]
    })
}

fn row(v: &Value, file: &str) -> crate::Result<RunRow> {
    RunRow::from_slice(v.to_string().as_bytes(), file)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
}

#[test]
fn totals_equal_the_sum_of_the_runs_figures() {
    let rows: Vec<RunRow> = (0..40)
        .map(|i| row(&report(i), &format!("r{i}.json")).expect("reads"))
        .collect();
    // Each run's figure, from what the generator put in: only the job's GPUs count.
    for (i, r) in rows.iter().enumerate() {
        let i = i as u32;
        let v = report(i);
        let share = v["verdict"]["lost_share"].as_f64().unwrap_or(0.0);
        let want = share * f64::from(1 + i % 4) * (600.0 + 60.0 * f64::from(i)) / 3600.0;
        assert!(
            close(r.gpu_hours_lost, want),
            "{i}: {} vs {want}",
            r.gpu_hours_lost
        );
        assert_eq!(r.gpus, 1 + i % 4);
    }
    let s = Summary::new(rows.clone(), Vec::new());
    let t = &s.totals;
    let sum: f64 = rows.iter().map(|r| r.gpu_hours_lost).sum();
    assert!(sum > 1.0 && close(t.gpu_hours_lost, sum));
    assert!(close(t.gpu_hours, rows.iter().map(|r| r.gpu_hours).sum()));
    for groups in [&t.by_cause, &t.by_label, &t.by_host, &t.by_model] {
        let g: f64 = groups.iter().map(|g| g.gpu_hours_lost).sum();
        assert!(close(g, sum), "{groups:?}");
    }
    for cause in CAUSES {
        let want: f64 = rows
            .iter()
            .filter(|r| r.verdict == cause)
            .map(|r| r.gpu_hours_lost)
            .sum();
        let got = t
            .by_cause
            .iter()
            .find(|g| g.key == cause)
            .expect("cause listed");
        assert!(close(got.gpu_hours_lost, want));
    }
    let none = t.by_cause.iter().find(|g| g.key == "none").expect("none");
    assert_eq!(none.gpu_hours_lost, 0.0);
    assert_eq!(
        t.by_cause[0].gpu_hours_lost,
        t.by_cause
            .iter()
            .map(|g| g.gpu_hours_lost)
            .fold(0.0, f64::max)
    );
    assert_eq!((t.runs, t.counted), (40, 40));
    // Sorted by start, and the JSON form reads back as it was.
    assert!(s
        .runs
        .windows(2)
        .all(|w| w[0].start_unix_ms <= w[1].start_unix_ms));
    let back: Summary =
        serde_json::from_str(&serde_json::to_string(&s).expect("json")).expect("reads");
    assert_eq!(back.schema, SUMMARY_SCHEMA);
    // (serde_json reads floats to within an ulp, so the figures are compared as numbers.)
    assert!(close(back.totals.gpu_hours_lost, t.gpu_hours_lost));
    let keys = |t: &Totals| t.by_cause.iter().map(|g| g.key.clone()).collect::<Vec<_>>();
    assert_eq!(keys(&back.totals), keys(t));
    assert_eq!(back.runs.len(), 40);
}

#[test]
fn damaged_foreign_newer_and_cut_files_say_why() {
    let good = report(1).to_string();
    let cut = RunRow::from_slice(&good.as_bytes()[..good.len() / 2], "cut.json").expect_err("cut");
    assert!(cut.to_string().contains("cut short"), "{cut}");
    let foreign =
        RunRow::from_slice(br#"{"name": "package.json"}"#, "p.json").expect_err("foreign");
    assert!(
        foreign.to_string().contains("not a gpuwhy report"),
        "{foreign}"
    );
    let other = RunRow::from_slice(br#"{"schema": "other/1"}"#, "o.json").expect_err("other");
    assert!(other.to_string().contains("not a gpuwhy report"), "{other}");
    let mut newer = report(1);
    newer["schema"] = json!("gpuwhy.report/2");
    let err = row(&newer, "n.json").expect_err("newer");
    assert!(err.to_string().contains("newer"), "{err}");
    let binary = RunRow::from_slice(&[0x89, b'P', b'N', b'G', 0, 1, 2], "x.png").expect_err("png");
    assert!(binary.to_string().contains("not JSON"), "{binary}");
    let empty = RunRow::from_slice(b"", "e.json").expect_err("empty");
    assert!(empty.to_string().contains("empty"), "{empty}");
    let gz = gzip(good.as_bytes());
    assert_eq!(RunRow::from_slice(&gz, "g.json.gz").expect("gz").gpus, 2);
    let err = RunRow::from_slice(&gz[..gz.len() - 8], "g.json.gz").expect_err("cut gz");
    assert!(err.to_string().contains("gzip"), "{err}");
    // A verdict of the wrong shape goes to the full reader, which says what is wrong.
    let mut odd = report(1);
    odd["verdict"] = json!("data_starvation");
    assert!(row(&odd, "odd.json")
        .expect_err("shape")
        .to_string()
        .contains("odd.json"));
}

#[test]
fn an_old_report_in_the_plain_form_without_newer_fields_reads() {
    // As gpuwhy wrote before lost shares, job GPUs and the compact form.
    let old = json!({
        "schema": "gpuwhy.report/1",
        "tool": { "name": "gpuwhy", "version": "0.0.1" },
        "run": { "duration_s": 7200.0, "host": "old-node", "start_unix_ms": 1 },
        "verdict": { "id": "data_starvation", "title": "t", "confidence": 0.5, "summary": "s" },
        "devices": [{ "index": 0, "name": null }, { "index": 1 }],
        "series": [{ "device": 0, "t": [0.0, 0.1], "metrics": { "util_gpu": [1, 2] } }]
    });
    let r = row(&old, "old.json").expect("reads");
    assert_eq!((r.gpus, r.lost_share, r.gpu_hours_lost), (2, None, 0.0));
    assert_eq!(r.gpu_hours, 4.0);
    assert_eq!(r.gpus_by_model.get("unknown"), Some(&2));
    let major0 = json!({ "schema": "gpuwhy.report/0.9" });
    assert_eq!(row(&major0, "zero.json").expect("reads").verdict, "none");
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).expect("gzip into memory");
    enc.finish().expect("gzip into memory")
}

#[test]
fn a_crash_journal_is_replayed_and_diagnosed() {
    let run = RunInfo {
        host: "h".into(),
        duration_s: 0.0,
        ..RunInfo::default()
    };
    let header = JournalHeader::bare(run, vec![DeviceInfo::default()]);
    let mut row_vals = vec![f32::NAN; crate::metric::GpuMetric::COUNT];
    row_vals[crate::metric::GpuMetric::UtilGpu.index()] = 3.0;
    let t: Vec<f64> = (0..50).map(|i| f64::from(i) * 0.1).collect();
    let line = JournalLine::Gpu {
        dev: 0,
        rows: vec![Column(row_vals); t.len()],
        t,
    };
    let text = format!(
        "{}\n{}\n",
        serde_json::to_string(&header).expect("header"),
        serde_json::to_string(&line).expect("line")
    );
    let r = RunRow::from_slice(text.as_bytes(), "run.json.partial").expect("a journal reads");
    assert_eq!((r.kind.as_str(), r.complete, r.gpus), ("journal", false, 1));
    // Diagnosed here: the verdict is the rules' (not the empty default of a fresh replay).
    let mut full = crate::report::Report::from_slice(text.as_bytes(), std::path::Path::new("j"))
        .expect("replays");
    crate::analysis::diagnose(&mut full);
    assert_eq!(r.verdict, full.verdict.id);
    assert_eq!(r.findings.len(), full.findings.len());
}

fn job_report() -> Value {
    let rank = |r: u32, host: &str, offset: f64| {
        json!({ "rank": r, "host": host, "offset_s": offset, "gpu": r % 2,
                "gpus": [{ "index": 0, "name": MODELS[0] }, { "index": 1, "name": MODELS[0] }] })
    };
    json!({
        "schema": "gpuwhy.report/1",
        "run": { "start_unix_ms": 1_000_000, "duration_s": 3600.0, "host": "2 nodes: a, b",
                 "label": "job", "source": "merged" },
        "verdict": { "id": "rank_imbalance", "title": "t", "confidence": 0.9,
                     "lost_share": 0.25, "summary": "s" },
        "ranks": { "world_size": 4, "ranks": [rank(0, "a", 0.0), rank(1, "a", 0.2),
                                              rank(2, "b", 0.4), rank(3, "b", 0.5)] }
    })
}

#[test]
fn a_job_report_counts_its_ranks_gpus_and_its_ranks_own_reports_are_not_counted_twice() {
    let job = row(&job_report(), "job.json").expect("job");
    assert_eq!((job.kind.as_str(), job.gpus), ("job", 4));
    assert_eq!(job.gpus_by_host.get("b"), Some(&2));
    assert!(close(job.gpu_hours_lost, 0.25 * 4.0));
    let mut rows = vec![job];
    for (r, host, offset_ms) in [(0, "a", 0), (1, "a", 200), (3, "b", 500)] {
        let mut v = report(r);
        v["run"]["rank"] = json!(r);
        v["run"]["host"] = json!(host);
        v["run"]["start_unix_ms"] = json!(1_000_000 + offset_ms);
        rows.push(row(&v, &format!("rank{r}.json")).expect("rank"));
    }
    // Rank 3 of another job (another start) is counted on its own.
    let mut other = report(3);
    other["run"]["rank"] = json!(3);
    other["run"]["host"] = json!("b");
    rows.push(row(&other, "other-rank3.json").expect("other"));
    let s = Summary::new(rows, Vec::new());
    let held: Vec<&str> = s
        .runs
        .iter()
        .filter(|r| r.in_job.is_some())
        .map(|r| r.file.as_str())
        .collect();
    assert_eq!(held, ["rank0.json", "rank1.json", "rank3.json"]);
    assert_eq!((s.totals.runs, s.totals.counted), (5, 2));
    let sum: f64 = s.counted().map(|r| r.gpu_hours_lost).sum();
    assert!(close(s.totals.gpu_hours_lost, sum));
}

#[test]
fn fixes_pair_a_run_with_its_baseline_and_runs_of_a_label_whose_verdict_moved() {
    let before = report(1); // throttling, 5 % lost
    let mut after = report(2);
    after["run"]["label"] = json!("exp-1");
    after["comparison"] = json!({
        "baseline": "/elsewhere/r1.json",
        "result": {
            "labels": ["r1", "r2"], "forced_despite": null, "steps": null, "gpus": [],
            "verdict": { "baseline_top": ["throttling", 0.8], "candidate_top": ["none", 0.0],
                         "resolved": ["throttling"], "new": [], "persisting": [] },
            "experiments": [{ "finding": "throttling", "metric": "m", "expected": "e",
                              "baseline": 1.0, "candidate": 2.0, "outcome": "held" }],
            "summary": "throttling 0.80 → resolved; new top finding: none 0.00"
        },
        "error": null
    });
    after["verdict"] = json!({ "id": "none", "title": "No bottleneck found", "confidence": 0.0,
                               "summary": "s" });
    // Same label, later, verdict moved back: a label change.
    let mut third = report(3);
    third["run"]["label"] = json!("exp-1");
    let rows = [(before, "r1.json"), (after, "r2.json"), (third, "r3.json")]
        .iter()
        .map(|(v, f)| row(v, f).expect("reads"))
        .collect();
    let s = Summary::new(rows, Vec::new());
    assert_eq!(s.fixes.len(), 2, "{:#?}", s.fixes);
    let b = &s.fixes[0];
    assert_eq!(
        (b.via, b.before.as_deref(), b.after.as_str()),
        (FixVia::Baseline, Some("r1.json"), "r2.json")
    );
    assert_eq!(
        (b.resolved.clone(), b.experiments_held, b.outcome.as_str()),
        (vec!["throttling".to_string()], 1, "better")
    );
    assert!(b.summary.contains("resolved"));
    let l = &s.fixes[1];
    assert_eq!(
        (l.via, l.before.as_deref(), l.after.as_str()),
        (FixVia::Label, Some("r2.json"), "r3.json")
    );
    assert_eq!(l.summary, "top finding none 0.00 → launch_bound 0.80");
    assert_eq!(l.outcome, "worse");
}
