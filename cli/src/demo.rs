//! `gpuwhy demo [SCENARIO] [-o FILE]`: a bundled scenario on the simulated GPU, end to end:
//! the diagnosis printed, the report written, and its HTML page beside it.
//!
//! The simulated NVML library is embedded in this binary; the demo writes it to a temporary
//! directory as `libnvidia-ml.so.1` with the scenario beside it and records it through the
//! very same loading path as a real driver. `--install-sim DIR` only writes the two files, so
//! that another program (scripts/gpu-check.sh's dry run) can record on the simulated GPU.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use std::sync::atomic::{AtomicBool, Ordering};

use gpuwhy::collect::RecorderConfig;
use gpuwhy::report::Report;
use gpuwhy::session::{Session, SessionConfig};
use serde_json::Value;

use crate::duration::parse_seconds;
use crate::live::Live;

/// Scenario run when none is named.
pub const DEFAULT_SCENARIO: &str = "data_starvation";

/// Arguments of `gpuwhy demo`.
#[derive(clap::Args)]
pub struct Args {
    /// Scenario name (see --list) or path to a scenario JSON file
    scenario: Option<String>,
    /// Where to write the report (default: gpuwhy-demo-SCENARIO.json)
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// List the bundled scenarios
    #[arg(long)]
    list: bool,
    /// Override the scenario's simulated duration
    #[arg(long, value_parser = parse_seconds)]
    duration: Option<f64>,
    /// No live status lines
    #[arg(short, long)]
    quiet: bool,
    /// Write the report's self-contained HTML page beside it (the default; see `gpuwhy
    /// view`)
    #[arg(long, overrides_with = "no_html")]
    html: bool,
    /// Write the report only, no HTML page
    #[arg(long)]
    no_html: bool,
    /// Record nothing: write the simulated libnvidia-ml.so.1 and the scenario (scenario.json)
    /// into DIR and print the library's path, for your own program to load through
    /// GPUWHY_NVML_PATH
    #[arg(long, value_name = "DIR")]
    install_sim: Option<PathBuf>,
}

/// A scenario's name and text, from the bundle or a file.
fn load(name: &str) -> Result<(String, String)> {
    if let Some((n, text)) = nvml_sim_bundle::SCENARIOS.iter().find(|(n, _)| *n == name) {
        return Ok((n.to_string(), text.to_string()));
    }
    let path = PathBuf::from(name);
    if path.exists() {
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read scenario {}", path.display()))?;
        let stem = path.file_stem().map_or_else(
            || "custom".to_string(),
            |s| s.to_string_lossy().into_owned(),
        );
        return Ok((stem, text));
    }
    let names: Vec<&str> = nvml_sim_bundle::SCENARIOS.iter().map(|(n, _)| *n).collect();
    bail!(
        "unknown scenario '{name}'; bundled scenarios: {} (or give a path to a scenario JSON file)",
        names.join(", ")
    )
}

fn list() {
    println!("{:<20} {:<18} description", "scenario", "expected");
    for (name, text) in nvml_sim_bundle::SCENARIOS {
        let v: Value = serde_json::from_str(text).unwrap_or(Value::Null);
        let expect = v["expect"]["top_finding"].as_str().unwrap_or("-");
        let desc = v["description"].as_str().unwrap_or("");
        println!("{name:<20} {expect:<18} {desc}");
    }
}

pub fn run(a: Args) -> Result<ExitCode> {
    if a.list {
        list();
        return Ok(ExitCode::SUCCESS);
    }
    let (name, text) = load(a.scenario.as_deref().unwrap_or(DEFAULT_SCENARIO))?;
    if let Some(dir) = &a.install_sim {
        let lib = nvml_sim_bundle::install(dir, Some(&text), false).with_context(|| {
            format!(
                "cannot write the simulated NVML library into {}",
                dir.display()
            )
        })?;
        println!("{}", lib.display());
        return Ok(ExitCode::SUCCESS);
    }
    let v: Value = serde_json::from_str(&text)
        .with_context(|| format!("scenario '{name}' is not valid JSON"))?;
    let speed = v["speed"].as_f64().filter(|s| *s > 0.0).unwrap_or(1.0);
    let duration = a
        .duration
        .or_else(|| v["demo"]["duration_s"].as_f64())
        .unwrap_or(12.0);
    let interval = v["demo"]["interval_ms"]
        .as_f64()
        .map_or(0.1, |ms| ms / 1000.0);
    let expect = v["expect"]["top_finding"].as_str().map(str::to_string);
    let output = a
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("gpuwhy-demo-{name}.json")));

    let dir = tempfile::Builder::new()
        .prefix("gpuwhy-sim-")
        .tempdir()
        .context("cannot create a temporary directory for the simulated GPU")?;
    let lib = nvml_sim_bundle::install(dir.path(), Some(&text), false)
        .context("cannot write the simulated NVML library")?;
    let mut cfg = RecorderConfig {
        interval_s: interval,
        nvml_path: Some(lib),
        time_scale: speed,
        journal: Some(gpuwhy::report::journal::journal_path(&output)),
        ..RecorderConfig::default()
    };
    // The scenario's trainer runs in this process: its processes (`"pid": "self"`) are the
    // job's, and this shell's CUDA_VISIBLE_DEVICES says nothing of simulated GPUs.
    cfg.job.pid = Some(std::process::id());
    cfg.job.env = Some(gpuwhy::jobgpus::JobEnv::default());
    // A scenario whose job runs in a container's PID namespace comes with the host's /proc
    // that maps NVML's pids to it (docs/job-gpus.md).
    cfg.job.host_proc = nvml_sim_bundle::host_proc(&text, dir.path())
        .context("cannot write the simulated host /proc")?;
    cfg.run.label = Some(format!("demo: {name}"));
    cfg.run.source = "simulator".into();
    eprintln!("gpuwhy: demo '{name}' on the simulated GPU for {duration:.0} s of simulated time (speed ×{speed})…");
    let schedule = nvml_sim_bundle::trainer::schedule(&text, duration).map_err(|e| anyhow!(e))?;
    let session = Session::start(SessionConfig::from(cfg))?;
    play(&session, schedule.as_ref(), speed, duration, a.quiet)?;
    let mut report = session.finish();
    report.run.complete = true;
    report.run.ended_by = Some("duration reached".into());
    crate::record::save(&report, &output)?;
    show(&a, &report, &output, expect.as_deref())
}

/// Replays the scenario's training loop (if it has one) against the session for
/// `duration` simulated seconds, with the live status line.
fn play(
    session: &Session,
    schedule: Option<&nvml_sim_bundle::trainer::Schedule>,
    speed: f64,
    duration: f64,
    quiet: bool,
) -> Result<()> {
    // The sampler thread loads the simulated GPU; on a loaded machine that can take longer
    // than Session::start waits. Its time 0 is the end of that first nvmlInit, and the
    // trainer's schedule counts from there.
    session.recorder().wait_probed(Duration::from_secs(30));
    let origin = session
        .recorder()
        .nvml_ready_at()
        .unwrap_or_else(Instant::now);
    if let Some(why) = session.recorder().gpu_absent_reason() {
        bail!("the simulated GPU did not load: {why}");
    }
    let wall = Duration::from_secs_f64(duration / speed);
    let mut live = Live::new(quiet);
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        // The scenario's training loop, replayed with its step markers going to the session.
        let trainer = schedule.map(|sch| {
            s.spawn(|| nvml_sim_bundle::trainer::run(sch, speed, origin, &stop, session))
        });
        while origin.elapsed() < wall {
            std::thread::sleep(
                Duration::from_millis(50).min(wall.saturating_sub(origin.elapsed())),
            );
            live.tick(session.recorder());
        }
        stop.store(true, Ordering::SeqCst);
        if let Some(t) = trainer {
            let _ = t.join();
        }
    });
    Ok(())
}

/// Prints the report's text, where it was written, the HTML page beside it and whether
/// the scenario's expected top finding came out.
fn show(a: &Args, report: &Report, output: &Path, expect: Option<&str>) -> Result<ExitCode> {
    print!("{}", crate::render::text(report));
    if let Some(l) = crate::jobgpus::line(report) {
        println!("\n{l}");
    }
    println!("\nReport written to {}", output.display());
    // The page beside the report (gpuwhy-demo-SCENARIO.html): every binary carries the
    // viewer, so a first run ends with something to open.
    if !a.no_html {
        crate::view::write_beside(report, output)?;
    }
    if let Some(e) = expect {
        let ok = e == report.verdict.id;
        println!(
            "Scenario expects top finding '{e}': {}",
            if ok { "matched" } else { "NOT matched" }
        );
    }
    Ok(ExitCode::SUCCESS)
}
