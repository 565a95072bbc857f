//! `cargo xtask bench` summary section (alone: `cargo xtask bench summary`): `gpuwhy
//! summary` on 10,000 reports — about a month of a busy cluster's jobs — as JSON and as
//! the page with every run's own page, and the page opened in headless Chromium, against
//! diagnosing the same reports one by one in the same run.
//!
//! The reports come from one recording of `data_starvation` (two simulated minutes, one
//! GPU), copied as 10,000 runs over 30 days: each copy gets its label (40 experiments),
//! host (64 nodes), start, duration and a verdict of one of five causes with its lost
//! share. The summary's totals must equal the sum of its rows, or the bench fails.
//! Goal: seconds on this 2-core machine. `GPUWHY_BENCH_REPORTS` sets another count.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use gpuwhy::report::{rfc3339_utc, Report};
use gpuwhy_tests::{record, scenario, Run};
use serde_json::{json, Value};

use crate::bench_merge::{jitter, timed, Timed};
use crate::{cargo, root, run_cmd};

/// Reports summarised.
const REPORTS: u32 = 10_000;
/// Reports diagnosed one by one for the baseline (its time is scaled to all of them).
const BASELINE_FILES: u32 = 20;
const CAUSES: [&str; 5] = [
    "data_starvation",
    "throttling",
    "none",
    "comm_sync",
    "unexplained_idle",
];

/// Writes the reports into `dir`; returns the bytes of one.
fn write_reports(base: &Report, dir: &Path, n: u32) -> Result<usize> {
    let doc: Value = serde_json::from_str(&base.to_json())?;
    let month_ms = 30.0 * 86_400_000.0;
    let mut size = 0;
    for k in 0..n {
        let mut v = doc.clone();
        let run = &mut v["run"];
        let start = base.run.start_unix_ms + (month_ms * f64::from(k) / f64::from(n)) as i64;
        run["start_unix_ms"] = json!(start);
        run["start"] = json!(rfc3339_utc(start));
        run["label"] = json!(format!("exp-{:02}", k % 40));
        run["host"] = json!(format!("node-{:02}", k % 64));
        run["duration_s"] = json!(3600.0 * (1.0 + jitter(k, 0)));
        let cause = CAUSES[(k % 5) as usize];
        let share = (cause != "none").then(|| 0.25 * (1.0 + jitter(k, 1)));
        v["verdict"]["id"] = json!(cause);
        v["verdict"]["lost_share"] = json!(share);
        let text = v.to_string();
        size = text.len();
        std::fs::write(dir.join(format!("run{k:05}.json")), text)?;
    }
    Ok(size)
}

/// Seconds per `gpuwhy diagnose` of one report (what a user does without the summary).
fn diagnose_each(gpuwhy: &Path, dir: &Path) -> Result<f64> {
    let start = Instant::now();
    for k in 0..BASELINE_FILES {
        let out = Command::new(gpuwhy)
            .args(["diagnose", "--json"])
            .arg(dir.join(format!("run{k:05}.json")))
            .output()
            .context("run gpuwhy diagnose")?;
        if !out.status.success() {
            bail!(
                "gpuwhy diagnose failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    Ok(start.elapsed().as_secs_f64() / f64::from(BASELINE_FILES))
}

/// Fails unless the summary read every report and its totals are the sum of its rows.
fn check(v: &Value, n: u32) -> Result<()> {
    let runs = v["runs"].as_array().context("summary --json has runs")?;
    let sum: f64 = runs
        .iter()
        .filter_map(|r| r["gpu_hours_lost"].as_f64())
        .sum();
    let total = v["totals"]["gpu_hours_lost"].as_f64().unwrap_or(f64::NAN);
    if runs.len() != n as usize || (sum - total).abs() > 1e-6 * total.max(1.0) {
        bail!(
            "summary read {} of {n} reports; totals {total} against the rows' sum {sum}",
            runs.len()
        );
    }
    Ok(())
}

pub fn summary() -> Result<()> {
    let n: u32 = std::env::var("GPUWHY_BENCH_REPORTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(REPORTS);
    run_cmd(cargo().args(["build", "--release", "-p", "gpuwhy-cli"]))?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"));
    let gpuwhy = target.join("release").join("gpuwhy");
    let text = scenario("data_starvation").context("bundled scenario data_starvation")?;
    let run = Run {
        duration_s: Some(120.0),
        speed: 20.0,
        ..Run::default()
    };
    let base = record(text, &run).map_err(anyhow::Error::msg)?;
    let dir = tempfile::Builder::new()
        .prefix("gpuwhy-bench-summary-")
        .tempdir()?;
    let reports = dir.path().join("reports");
    std::fs::create_dir_all(&reports)?;
    let one = write_reports(&base, &reports, n)?;
    let json = timed(
        &gpuwhy,
        &["summary", "--json"],
        std::slice::from_ref(&reports),
    )?;
    let v: Value = serde_json::from_slice(&json.stdout).context("summary --json")?;
    check(&v, n)?;
    let index = dir.path().join("page").join("index.html");
    let index_arg = index.to_string_lossy().into_owned();
    let html = timed(
        &gpuwhy,
        &["summary", "--html", &index_arg],
        std::slice::from_ref(&reports),
    )?;
    let each = diagnose_each(&gpuwhy, &reports)?;
    let page = page_marks(&index)?;
    let pages_mb = dir_bytes(&index.with_file_name("runs")) as f64 / 1e6;
    print(
        n,
        one,
        (&json, &html),
        each,
        &page,
        (std::fs::metadata(&index)?.len(), pages_mb),
    );
    Ok(())
}

/// The page's own marks in headless Chromium (medians of three openings).
fn page_marks(index: &Path) -> Result<Value> {
    crate::viewer::install_browser()?;
    let out = Command::new("node")
        .arg(root().join("viewer/tests/browser/summary-bench.mjs"))
        .arg(index)
        .output()
        .context("run node")?;
    if !out.status.success() {
        bail!(
            "the page bench failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let last = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .unwrap_or("")
        .to_string();
    serde_json::from_str(&last).with_context(|| format!("the page bench printed {last}"))
}

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir).map_or(0, |d| {
        d.flatten()
            .filter_map(|e| e.metadata().ok())
            .map(|m| m.len())
            .sum()
    })
}

/// The figures, as ratios against diagnosing each report alone.
fn print(n: u32, one: usize, t: (&Timed, &Timed), each: f64, page: &Value, sizes: (u64, f64)) {
    let (json, html) = t;
    let all = each * f64::from(n);
    let total_mb = one as f64 * f64::from(n) / 1e6;
    println!(
        "\nsummary: {n} reports of {:.0} KB each ({total_mb:.0} MB), {} cores",
        one as f64 / 1e3,
        std::thread::available_parallelism().map_or(1, |c| c.get())
    );
    for (name, t) in [
        ("gpuwhy summary --json", json),
        ("gpuwhy summary --html", html),
    ] {
        println!(
            "  {name:<24}: {:6.2} s wall, {:6.2} s CPU  ({:.0} MB/s, peak RSS {:.0} MB)",
            t.wall_s,
            t.cpu_s,
            total_mb / t.wall_s,
            t.rss_kb / 1024.0
        );
    }
    println!(
        "  {:<24}: {all:6.1} s wall  ({:.0} ms per process, from {BASELINE_FILES} of them)",
        "diagnose each report",
        each * 1e3
    );
    println!(
        "  {:<24}: {:6.1}× faster than diagnosing each report ({:.1}× with the page and {n} run pages, {:.0} MB of them; goal: seconds)",
        "ratio",
        all / json.wall_s,
        all / html.wall_s,
        sizes.1
    );
    let ms = |k: &str| page[k].as_f64().unwrap_or(f64::NAN);
    println!(
        "  {:<24}: first screen ({} rows) {:.0} ms, all sections {:.0} ms from navigation, index {:.1} MB: {:.2}× / {:.2}× one `gpuwhy diagnose`",
        "page in Chromium",
        page["rows"],
        ms("table_ms"),
        ms("ready_ms"),
        sizes.0 as f64 / 1e6,
        ms("table_ms") / 1e3 / each,
        ms("ready_ms") / 1e3 / each
    );
}
