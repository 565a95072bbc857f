//! `gpuwhy summary` on a generated folder as a user runs it: the totals are the sum of the
//! per-run figures, damaged, partial, old-schema and foreign files are handled, a job report
//! and its ranks are not counted twice, and `gpuwhy view DIR` writes the page with each
//! run's page beside it.

use std::path::Path;

use gpuwhy::metric::GpuMetric;
use gpuwhy::report::journal::{JournalLine, JOURNAL_SCHEMA};
use gpuwhy::report::{Column, DeviceInfo, Report, RunInfo};
use serde_json::{json, Value};

use crate::{gpuwhy, run, text};

const CAUSES: [&str; 3] = ["data_starvation", "throttling", "none"];

/// Report `i`: its GPUs, verdict, lost share, label, host and duration vary with `i`.
fn report(i: u32) -> Value {
    let cause = CAUSES[(i % 3) as usize];
    json!({
        "schema": "gpuwhy.report/1",
        "run": { "start_unix_ms": 1_795_000_000_000_i64 + i64::from(i) * 60_000,
                 "duration_s": 1800.0 + 100.0 * f64::from(i), "host": format!("h{}", i % 2),
                 "label": format!("exp-{}", i % 4), "complete": true },
        "verdict": { "id": cause, "title": cause, "confidence": 0.7,
                     "lost_share": (cause != "none").then(|| 0.1 + 0.02 * f64::from(i)),
                     "summary": "s" },
        "devices": (0..1 + i % 3).map(|d| json!({ "index": d, "name": "NVIDIA A100-SXM4-80GB" }))
            .collect::<Vec<_>>()
    })
}

/// A crash journal of one GPU, as a recorder killed after two lines leaves it.
fn journal() -> String {
    let run = RunInfo {
        host: "crashed".into(),
        label: Some("exp-0".into()),
        ..RunInfo::default()
    };
    let header =
        json!({ "schema": JOURNAL_SCHEMA, "run": run, "devices": [DeviceInfo::default()] });
    let mut row = vec![f32::NAN; GpuMetric::COUNT];
    row[GpuMetric::UtilGpu.index()] = 2.0;
    let t: Vec<f64> = (0..40).map(|i| f64::from(i) * 0.1).collect();
    let line = JournalLine::Gpu {
        dev: 0,
        rows: vec![Column(row); t.len()],
        t,
    };
    format!(
        "{}\n{}\n",
        header,
        serde_json::to_string(&line).expect("line")
    )
}

/// The folder: 12 reports (one gzip-compressed, one in a subfolder), a journal, and files
/// that cannot be read.
fn folder(dir: &Path) {
    std::fs::create_dir_all(dir.join("sub")).expect("mkdir");
    for i in 0..12 {
        let path = match i {
            3 => dir.join("sub").join("r03.json"),
            _ => dir.join(format!("r{i:02}.json")),
        };
        std::fs::write(path, report(i).to_string()).expect("write");
    }
    // Saved as gpuwhy saves a `.gz` name: gzip-compressed.
    let r12: Report = serde_json::from_value(report(12)).expect("a report");
    r12.save(&dir.join("r12.json.gz")).expect("save");
    std::fs::write(dir.join("killed.json.partial"), journal()).expect("write");
    std::fs::write(dir.join("cut.json"), &report(1).to_string()[..80]).expect("write");
    std::fs::write(dir.join("package.json"), r#"{"name": "not a report"}"#).expect("write");
    let mut newer = report(2);
    newer["schema"] = json!("gpuwhy.report/2");
    std::fs::write(dir.join("newer.json"), newer.to_string()).expect("write");
    std::fs::write(dir.join("notes.txt"), "not looked at").expect("write");
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * (1.0 + a.abs())
}

#[test]
fn totals_are_the_sum_of_the_runs_and_bad_files_are_listed_with_why() {
    let dir = tempfile::tempdir().expect("tempdir");
    folder(dir.path());
    let o = run(gpuwhy().arg("summary").arg(dir.path()).arg("--json"));
    assert!(o.status.success(), "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["schema"], "gpuwhy.summary/1");
    let runs = v["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 14, "12 reports, the gzip one and the journal");
    for r in runs.iter().filter(|r| r["kind"] == "single") {
        let i: u32 = r["file"].as_str().unwrap().rsplit('r').next().unwrap()[..2]
            .parse()
            .unwrap();
        let want = report(i);
        let lost = want["verdict"]["lost_share"].as_f64().unwrap_or(0.0);
        let hours = f64::from(1 + i % 3) * (1800.0 + 100.0 * f64::from(i)) / 3600.0;
        assert!(
            close(r["gpu_hours_lost"].as_f64().unwrap(), lost * hours),
            "{r}"
        );
    }
    let f = |r: &Value, k: &str| r[k].as_f64().unwrap();
    let sum: f64 = runs.iter().map(|r| f(r, "gpu_hours_lost")).sum();
    let t = &v["totals"];
    assert!(sum > 1.0 && close(f(t, "gpu_hours_lost"), sum));
    for by in ["by_cause", "by_label", "by_host", "by_model"] {
        let s: f64 = t[by]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| f(g, "gpu_hours_lost"))
            .sum();
        assert!(close(s, sum), "{by}");
    }
    let journal = runs
        .iter()
        .find(|r| r["kind"] == "journal")
        .expect("the journal was read");
    assert_eq!(
        (journal["complete"].as_bool(), journal["host"].as_str()),
        (Some(false), Some("crashed"))
    );
    let bad: Vec<(String, String)> = v["unreadable"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            (
                u["file"]
                    .as_str()
                    .unwrap()
                    .rsplit('/')
                    .next()
                    .unwrap()
                    .to_string(),
                u["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let reason = |name: &str| &bad.iter().find(|(f, _)| f == name).expect(name).1;
    assert_eq!(bad.len(), 3, "{bad:?}");
    assert!(reason("cut.json").contains("cut short"));
    assert!(reason("package.json").contains("not a gpuwhy report"));
    assert!(reason("newer.json").contains("newer than this gpuwhy"));
}

#[test]
fn the_text_lists_every_run_the_files_not_read_and_the_totals() {
    let dir = tempfile::tempdir().expect("tempdir");
    folder(dir.path());
    let glob = dir.path().join("r0*.json");
    let o = run(gpuwhy()
        .arg("summary")
        .arg(&glob)
        .arg(dir.path().join("cut.json"))
        .arg("missing.json"));
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    // The glob (quoted, as a shell would leave it when nothing matched) takes r00…r09
    // without the subfolder's r03.
    let runs: Vec<&str> = t.lines().filter(|l| l.starts_with("2026-")).collect();
    assert_eq!(runs.len(), 9, "{t}");
    assert!(
        runs.iter().all(|l| l.contains("/r0") && !l.contains("r03")),
        "{t}"
    );
    // Runs of one label whose verdict moved are listed as changes tried.
    assert!(
        t.contains("r00.json → ")
            && t.contains("[same label]: data_starvation 10% → throttling 18%: worse"),
        "{t}"
    );
    assert!(
        t.contains("Not read (2):") && t.contains("missing.json: no such file"),
        "{t}"
    );
    for heading in [
        "GPU-hours lost by cause:",
        "by label:",
        "by host:",
        "by GPU model:",
    ] {
        assert!(t.contains(heading), "{t}");
    }
    let none = run(gpuwhy().arg("summary").arg(dir.path().join("cut.json")));
    assert_eq!(none.status.code(), Some(2));
    assert!(
        text(&none).contains("no report could be read"),
        "{}",
        text(&none)
    );
}

#[test]
fn view_of_a_directory_writes_the_summary_page_and_each_runs_page_beside_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    folder(dir.path());
    let o = run(gpuwhy()
        .env_remove("GPUWHY_VIEWER_PAGE")
        .arg("view")
        .arg(dir.path()));
    assert!(o.status.success(), "{}", text(&o));
    let index = std::fs::read_to_string(dir.path().join("index.html")).expect("index.html");
    let data = index.split_once("id=\"gpuwhy-summary\">").expect("data").1;
    let v: Value =
        serde_json::from_str(data.split_once("</script>").expect("end").0).expect("json");
    let runs = v["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 14);
    for r in runs {
        let link = r["page"].as_str().expect("every run has its page");
        let page = std::fs::read_to_string(dir.path().join(link)).expect("the linked page");
        assert!(page.contains("id=\"gpuwhy-report\""), "{link}");
    }
    // Run again: the pages written the first time are not taken for reports.
    let again = run(gpuwhy()
        .env_remove("GPUWHY_VIEWER_PAGE")
        .arg("view")
        .arg(dir.path()));
    assert!(
        text(&again).contains("Summary page of 14 runs (3 not read)"),
        "{}",
        text(&again)
    );
}
