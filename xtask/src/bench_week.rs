//! `cargo xtask bench` (week; alone: `cargo xtask bench week`): a week of 8 GPUs at the
//! default 100 ms interval beside an hour of the same job. The recording is synthetic and
//! pushed through the recorder's storage at injected times, in a release build
//! (`core/examples/week_bench.rs`); then the report's size in the plain form gpuwhy wrote
//! before and in the compact form, the recording's heap against its bound, `gpuwhy diagnose`
//! on each file (release binary, median of 3) and the viewer's first render of each in
//! headless Chromium. Goals (issue "Week-long recordings"): ≤ 64 MB, heap within its bound,
//! diagnose ≤ 1 s, first render ≤ 1 s.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde_json::Value;

use crate::{cargo, root, run_cmd};

/// The recording's bound for 8 GPUs before retention windows were added (the first hour and
/// 4,096 min/mean/max buckets per GPU stream, plus the events; no host stream), in bytes.
const PRE_RETENTION_BYTES: f64 = 45_623_808.0;

/// Simulator scenarios recorded for the replay table, and the simulated seconds of each.
const REPLAY_SCENARIOS: [&str; 5] = [
    "straggler_8gpu",
    "data_starvation",
    "thermal",
    "memory_bound",
    "healthy",
];
const REPLAY_SECONDS: f64 = 300.0;

/// The recording's heap against its bound, and the bound beside the pre-retention design's.
fn memory(run: &Value) {
    let num = |k: &str| run[k].as_f64().unwrap_or(f64::NAN);
    let (heap, bound) = (num("heap_bytes"), num("bound_bytes"));
    let gpus = num("bound_gpus_events_bytes");
    println!(
        "    recording heap {:.1} MB of its {:.1} MB bound ({:.0}%, host stream included); the \
         GPU streams held the last {:.1} minutes and {} first rows",
        heap / 1e6,
        bound / 1e6,
        100.0 * heap / bound,
        num("gpu_recent_minutes"),
        run["gpu_head_rows"]
    );
    println!(
        "    bound of the 8 GPU streams and the events {gpus:.0} B against the pre-retention \
         design's {PRE_RETENTION_BYTES:.0} B (45.6 MB): {} (docs/report-format.md, \"Memory \
         bound of a recording\")",
        if gpus <= PRE_RETENTION_BYTES {
            "met"
        } else {
            "NOT met"
        }
    );
}

/// Records [`REPLAY_SCENARIOS`] through the simulator into `dir`; the reports' paths.
fn scenario_reports(dir: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut out = Vec::new();
    for name in REPLAY_SCENARIOS {
        let text = gpuwhy_tests::scenario(name).context("a bundled scenario")?;
        let run = gpuwhy_tests::Run {
            duration_s: Some(REPLAY_SECONDS),
            speed: 100.0,
            ..gpuwhy_tests::Run::default()
        };
        let report = gpuwhy_tests::record(text, &run).map_err(anyhow::Error::msg)?;
        let path = dir.join(format!("{name}.json"));
        report.save(&path)?;
        out.push(path);
    }
    Ok(out)
}

/// What the byte budgets held of each kind of data, and what freezing a block costs.
fn replay_table(v: &Value) {
    println!(
        "  byte budgets by kind of data (one GPU stream, default retention, 2.5 h at 100 ms \
         replayed, 23 windows of 601 rows marked before the last hour): minutes of the last \
         hour held, first rows of 3,000, window rows held, bytes a row frozen; freezing and \
         decoding one block of 1,024 rows (release, median of 101)"
    );
    let rows = v["replay"].as_array().cloned().unwrap_or_default();
    for r in &rows {
        let num = |k: &str| r[k].as_f64().unwrap_or(f64::NAN);
        println!(
            "    {:<58} {:5.1} min {:>5} {:>6}/{:<6} {:6.1} B/row  freeze {:4.0} µs ({:.2} µs a \
             row), decode {:3.0} µs{}",
            r["name"].as_str().unwrap_or(""),
            num("recent_minutes"),
            r["head_rows"],
            r["window_rows"],
            r["window_rows_marked"],
            num("bytes_per_row"),
            num("freeze_us_per_block"),
            num("freeze_us_per_block") / 1024.0,
            num("decode_us_per_block"),
            if num("over_bound") > 0.0 {
                "  OVER THE BOUND"
            } else {
                ""
            }
        );
    }
    println!(
        "    freezing runs on the sampler thread once per 1,024 rows of a GPU: the µs a row above \
         is its share of the sampler's CPU per GPU per tick (`cargo xtask bench sampler` runs too \
         few ticks to fill a block)"
    );
}

/// Runs `gpuwhy diagnose` on `report` three times; the median CPU seconds and the largest
/// resident memory (MB), as `/usr/bin/time` measures them.
fn diagnose(gpuwhy: &Path, report: &Path) -> Result<(f64, f64)> {
    // CPU seconds (user + system) rather than wall time: the machine may be shared, and the
    // goal is about the work one diagnosis does.
    let mut runs = Vec::new();
    for _ in 0..3 {
        let out = Command::new("/usr/bin/time")
            .args(["-f", "%U %S %M"])
            .arg(gpuwhy)
            .arg("diagnose")
            .arg(report)
            .stdout(std::process::Stdio::null())
            .output()
            .context("cannot run /usr/bin/time gpuwhy diagnose")?;
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().last().unwrap_or("");
        let mut it = last.split_whitespace().map(str::parse::<f64>);
        match (it.next(), it.next(), it.next()) {
            (Some(Ok(user)), Some(Ok(sys)), Some(Ok(kb))) => runs.push((user + sys, kb / 1000.0)),
            _ => bail!("gpuwhy diagnose {}: {err}", report.display()),
        }
    }
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let rss = runs.iter().map(|r| r.1).fold(0.0, f64::max);
    Ok((runs[1].0, rss))
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// The viewer's first render of `report` in headless Chromium (the harness of
/// `viewer/tests/browser/bench.mjs`, which prints its own lines).
fn render(report: &Path) -> Result<()> {
    crate::viewer::install()?;
    crate::viewer::install_browser()?;
    let out = crate::viewer::build()?;
    run_cmd(
        Command::new("node")
            .arg(root().join("viewer/tests/browser/bench.mjs"))
            .arg(out.join("www"))
            .arg(report)
            .arg(out.join("pkg/gpuwhy_viewer_bg.wasm")),
    )
}

pub fn week() -> Result<()> {
    let dir = root().join("target").join("bench-week");
    let mut args = vec![dir.clone().into_os_string()];
    args.extend(
        scenario_reports(&dir.join("replay"))?
            .into_iter()
            .map(PathBuf::into_os_string),
    );
    // Real logs the repository keeps; the example skips those under 10 rows.
    for f in std::fs::read_dir(root().join("tests/corpus/real"))? {
        let p = f?.path();
        if p.extension().is_some_and(|e| e == "csv" || e == "dmon") {
            args.push(p.into_os_string());
        }
    }
    let refs: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    let v = crate::bench::release_example("week_bench", &refs)?;
    run_cmd(cargo().args(["build", "--release", "-p", "gpuwhy-cli"]))?;
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), PathBuf::from);
    let gpuwhy = target.join("release").join("gpuwhy");
    let mb = |run: &str, k: &str| v[run][k].as_f64().unwrap_or(f64::NAN) / 1e6;
    let num = |run: &str, k: &str| v[run][k].as_f64().unwrap_or(f64::NAN);
    println!(
        "week-long report: 8 GPUs at 100 ms and the host at 0.5 s, synthetic straggler job \
         pushed through the recorder at injected times (release build), load average {}",
        load_average()
    );
    for run in ["hour", "week"] {
        let path = PathBuf::from(v[run]["path"].as_str().unwrap_or_default());
        let (secs, rss) = diagnose(&gpuwhy, &path)?;
        let plain = PathBuf::from(v[run]["plain_path"].as_str().unwrap_or_default());
        let (plain_secs, plain_rss) = diagnose(&gpuwhy, &plain)?;
        // Hundreds of MB, needed for nothing else.
        let _ = std::fs::remove_file(&plain);
        println!(
            "  {run:4}: {:>11} samples, top finding {} (from the plain form: {})",
            num(run, "samples"),
            v[run]["top"],
            v[run]["top_plain"]
        );
        println!(
            "    report: plain form (as written before) {:7.1} MB, compact {:6.1} MB ({:.1}× smaller), \
             .json.gz {:5.1} MB (goal ≤ 64 MB)",
            mb(run, "old_bytes"),
            mb(run, "new_bytes"),
            num(run, "old_bytes") / num(run, "new_bytes"),
            mb(run, "gz_bytes")
        );
        memory(&v[run]);
        println!(
            "    gpuwhy diagnose (release, median of 3, CPU time): {secs:.2} s, {rss:.0} MB \
             resident (goal ≤ 1 s); on the plain form {plain_secs:.2} s, {plain_rss:.0} MB"
        );
        println!(
            "      in-process: read {:.2} s (plain form {:.2} s), report + rules {:.2} s (wall)",
            num(run, "parse_s"),
            num(run, "parse_old_s"),
            num(run, "diagnose_s")
        );
    }
    replay_table(&v);
    provisional()?;
    let week = PathBuf::from(v["week"]["path"].as_str().unwrap_or_default());
    println!(
        "  viewer, first render of the week's report (goal ≤ 1 s; the harness's own goal \
         line below is the day-long bench's):"
    );
    render(&week)
}

/// The session's provisional diagnosis: passes per week and what one costs, on ten minutes of
/// 8 GPUs (`core/examples/provisional_bench.rs`).
fn provisional() -> Result<()> {
    let v = crate::bench::release_example("provisional_bench", &[])?;
    let num = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    let period = num("period_s");
    let passes = 7.0 * 86_400.0 / period;
    let cpu = num("cpu_s_median");
    println!(
        "  provisional diagnosis (a pass every {period:.0} s of recorded time): {passes:.0} passes \
         per week; one pass over {} rows of {} GPUs: CPU {:.0} ms (median of 5; copy under the \
         sampler's lock {:.1} ms, report + rules {:.0} ms wall), {:.1} MB copied; {:.3}% of one \
         core, {:.0} s of CPU per week; windows asked: {}",
        v["gpu_rows"],
        v["gpus"],
        cpu * 1e3,
        num("copy_s") * 1e3,
        num("diagnose_s") * 1e3,
        num("copied_bytes") / 1e6,
        100.0 * cpu / period,
        cpu * passes,
        v["windows"]
    );
    Ok(())
}
