//! `cargo xtask bench`: benchmarks printed as ratios against baselines measured in the same run.
//!
//! - sampler: gpuwhy's library-side CPU time per GPU per tick against `pynvml` polling the
//!   same metrics through the same simulated library (goal: ≥ 20× cheaper).
//! - memory: the recording's heap bytes for days of simulated time against its documented bound.
//! - report size: a simulated week's report file against a simulated hour's.
//! - week: 8 GPUs for a week against an hour: file size, heap, diagnose time, first render
//!   (`bench_week`; alone: `cargo xtask bench week`).
//! - markers: ns per step marker against ns per bare `Instant::now()` in the same process
//!   (goal ≤ 1.5×), and a million-step run's step storage against its documented bound.
//! - markers through the C ABI: a C program's marker calls against its bare clock reads
//!   (`bench_ffi`; goal ≤ 1.5×).
//! - torch phases: the CPU `gpuwhy.torch` adds per phase marker (CUDA-event timing, stand-in
//!   events) against a plain Python marker (`bench_ffi::torch_phases`).
//! - trace: gpuwhy against HTA on a generated ≥ 500 MB profiler trace (`bench_trace`; alone:
//!   `cargo xtask bench trace`).
//! - merge: `gpuwhy merge` on 1 000 rank reports against diagnosing them one by one
//!   (`bench_merge`; alone: `cargo xtask bench merge`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use gpuwhy::collect::{Recorder, RecorderConfig};
use gpuwhy_tests::{install_sim, patched, scenario};
use serde_json::Value;

use crate::{root, run_cmd};

/// Sampling interval for the sampler comparison, seconds.
const INTERVAL_S: f64 = 0.01;
/// Wall seconds each side polls.
const DURATION_S: f64 = 4.0;

pub fn run(_args: &[String]) -> Result<()> {
    sampler()?;
    memory()?;
    week_report()?;
    crate::bench_week::week()?;
    markers()?;
    crate::bench_ffi::markers()?;
    crate::bench_ffi::torch_phases()?;
    viewer()?;
    crate::bench_trace::trace()?;
    crate::bench_merge::merge()?;
    Ok(())
}

/// A Python virtual environment with nvidia-ml-py, created once under target/.
fn python_with_pynvml() -> Result<PathBuf> {
    let venv = root().join("target").join("bench-venv");
    let py = venv.join("bin").join("python");
    let has = |py: &Path| {
        Command::new(py)
            .args(["-c", "import pynvml"])
            .status()
            .is_ok_and(|s| s.success())
    };
    if !has(&py) {
        run_cmd(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
        run_cmd(Command::new(&py).args(["-m", "pip", "install", "--quiet", "nvidia-ml-py"]))?;
    }
    if !has(&py) {
        bail!("pynvml is not importable from {}", py.display());
    }
    Ok(py)
}

fn sampler() -> Result<()> {
    let text = scenario("straggler_8gpu").context("bundled scenario straggler_8gpu")?;
    let text = patched(text, &[("speed", Value::from(1.0))]);
    let sim = install_sim(&text, false)?;

    // gpuwhy: the sampler thread's own CPU time, GPU metrics only.
    let cfg = RecorderConfig {
        interval_s: INTERVAL_S,
        nvml_path: Some(sim.lib().to_path_buf()),
        host: false,
        ..RecorderConfig::default()
    };
    let rec = Recorder::start(cfg)?;
    std::thread::sleep(Duration::from_secs_f64(DURATION_S));
    let r = rec.stop();
    let gpus = r.devices.len().max(1) as f64;
    let ticks = r.overhead.ticks.max(1) as f64;
    let ours = r
        .overhead
        .cpu_per_gpu_tick_us
        .context("the OS gave no thread CPU time")?;
    let ours_total = r.overhead.sampler_cpu_s.unwrap_or(f64::NAN) / (ticks * gpus) * 1e6;

    // pynvml: the same calls from Python, same interval, same library.
    let py = python_with_pynvml()?;
    let out = Command::new(&py)
        .arg(root().join("xtask").join("bench").join("pynvml_poll.py"))
        .arg(INTERVAL_S.to_string())
        .arg(DURATION_S.to_string())
        .env("LD_LIBRARY_PATH", sim.dir())
        .output()
        .context("cannot run the pynvml baseline")?;
    if !out.status.success() {
        bail!(
            "pynvml baseline failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let v: Value = serde_json::from_slice(&out.stdout).context("pynvml baseline output")?;
    let num = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    let per = num("ticks").max(1.0) * num("gpus").max(1.0);
    let theirs = num("work_s") / per * 1e6;
    let theirs_total = num("cpu_s") / per * 1e6;
    println!(
        "sampler: {} GPUs, interval {} ms, {} s each, same simulated libnvidia-ml.so.1",
        r.devices.len(),
        INTERVAL_S * 1e3,
        DURATION_S
    );
    // Every NVML call is a trip into the kernel driver on real hardware, so the count is
    // what a user pays. The every-tick metrics (utilization, memory, power, three clocks,
    // P-state, clock-event reasons) have no field ids in nvml.h, so they stay single calls;
    // the slow tick's temperature, PCIe and NVLink counters share one field call.
    println!(
        "  NVML calls per GPU per tick: {:.2} (goal ≤ 3 where fields are supported; 8 of them \
         every tick have no field id, the slow tick adds its field call and link state)",
        r.overhead.nvml_calls as f64 / (ticks * gpus)
    );
    println!("  per GPU per tick, CPU of the polling work (wake-ups excluded):");
    println!(
        "    gpuwhy sampler : {ours:8.2} µs  ({} ticks, {} NVML calls, mean call {:.2} µs wall)",
        r.overhead.ticks, r.overhead.nvml_calls, r.overhead.nvml_call_mean_us
    );
    println!(
        "    pynvml polling : {theirs:8.2} µs  ({} ticks)",
        num("ticks")
    );
    println!(
        "    ratio          : {:8.1}× cheaper (goal ≥ 20×)",
        theirs / ours
    );
    // Time inside libnvidia-ml itself is the same library doing the same calls for both;
    // gpuwhy measured it (wall time of each call), so subtracting it from both leaves what
    // each binding adds on top of NVML.
    let in_nvml = r.overhead.nvml_call_mean_us * r.overhead.nvml_calls as f64 / (ticks * gpus);
    println!(
        "  per GPU per tick, excluding the {in_nvml:.2} µs spent inside the simulated NVML itself:"
    );
    println!(
        "    gpuwhy {:.2} µs, pynvml {:.2} µs, ratio {:.1}×",
        ours - in_nvml,
        theirs - in_nvml,
        (theirs - in_nvml) / (ours - in_nvml)
    );
    println!(
        "  per GPU per tick, whole thread/process CPU (timer wake-ups included, same for both):"
    );
    println!(
        "    gpuwhy {ours_total:.2} µs, pynvml {theirs_total:.2} µs, ratio {:.1}×",
        theirs_total / ours_total
    );
    Ok(())
}

fn memory() -> Result<()> {
    // Two simulated days on one GPU at a 1 s interval, simulated at ×20 000.
    let text = scenario("healthy").context("bundled scenario healthy")?;
    let speed = 20_000.0;
    let sim_seconds = 2.0 * 86_400.0;
    let text = patched(text, &[("speed", Value::from(speed))]);
    let sim = install_sim(&text, false)?;
    let cfg = RecorderConfig {
        interval_s: 1.0,
        nvml_path: Some(sim.lib().to_path_buf()),
        host: false,
        time_scale: speed,
        ..RecorderConfig::default()
    };
    let rec = Recorder::start(cfg)?;
    std::thread::sleep(Duration::from_secs_f64(sim_seconds / speed));
    let r = rec.stop();
    let rows: u64 = r.devices.iter().map(|d| d.series.total_rows()).sum();
    println!(
        "memory: {:.1} simulated hours, {rows} samples on {} GPU",
        r.run.duration_s / 3600.0,
        r.devices.len()
    );
    println!(
        "  heap bytes {} vs documented bound {} ({:.0}% of the bound)",
        r.heap_bytes(),
        r.worst_case_bytes(),
        100.0 * r.heap_bytes() as f64 / r.worst_case_bytes() as f64
    );
    Ok(())
}

/// The report file of a simulated week against that of a simulated hour, both recorded in
/// this run on one GPU at a 1 s interval: long runs keep full resolution for the recent
/// part and bounded coarse buckets before it, so a week costs far less than 168 hours.
fn week_report() -> Result<()> {
    let text = scenario("healthy").context("bundled scenario healthy")?;
    let speed = 20_000.0;
    let size = |sim_seconds: f64| -> Result<(usize, u64)> {
        let text = patched(text, &[("speed", Value::from(speed))]);
        let sim = install_sim(&text, false)?;
        let cfg = RecorderConfig {
            interval_s: 1.0,
            nvml_path: Some(sim.lib().to_path_buf()),
            host: false,
            time_scale: speed,
            ..RecorderConfig::default()
        };
        let rec = Recorder::start(cfg)?;
        std::thread::sleep(Duration::from_secs_f64(sim_seconds / speed));
        let r = rec.stop();
        let rows = r.devices.iter().map(|d| d.series.total_rows()).sum();
        let mut report = gpuwhy::report::Report::from_recording(&r);
        gpuwhy::analysis::diagnose(&mut report);
        Ok((report.to_json().len(), rows))
    };
    let (hour, hour_rows) = size(3_600.0)?;
    let (week, week_rows) = size(7.0 * 86_400.0)?;
    println!("report size: one GPU at a 1 s interval, simulated at ×20 000");
    println!(
        "    1 hour : {:>12} bytes ({} samples)",
        grouped(hour as u64),
        grouped(hour_rows)
    );
    println!(
        "    1 week : {:>12} bytes ({} samples): {:.1}× the hour's file for {:.0}× its samples",
        grouped(week as u64),
        grouped(week_rows),
        week as f64 / hour as f64,
        week_rows as f64 / hour_rows.max(1) as f64
    );
    Ok(())
}

/// The viewer: a 24 h × 8 GPU report rendered in headless Chromium, and the bundle's size.
fn viewer() -> Result<()> {
    crate::viewer::bench()
}

/// Thousands separators, as the docs write numbers.
fn grouped(n: u64) -> String {
    let digits: Vec<char> = n.to_string().chars().rev().collect();
    let groups: Vec<String> = digits
        .chunks(3)
        .map(|g| g.iter().rev().collect())
        .rev()
        .collect();
    groups.join(",")
}

fn markers() -> Result<()> {
    // The markers are a few nanoseconds of optimised code; timing them in xtask's debug
    // build would measure the lack of inlining. The measuring half is an example of the
    // core crate, built with optimisations (core/examples/marker_bench.rs).
    let out = crate::cargo()
        .args([
            "run",
            "--release",
            "--quiet",
            "-p",
            "gpuwhy",
            "--example",
            "marker_bench",
        ])
        .current_dir(root())
        .output()
        .context("cannot run the marker benchmark")?;
    if !out.status.success() {
        bail!(
            "marker benchmark failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let v: Value = serde_json::from_slice(&out.stdout).context("marker benchmark output")?;
    let num = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    let int = |k: &str| v[k].as_u64().unwrap_or(0);
    let (bare, marker) = (num("bare_ns"), num("marker_ns"));
    println!("markers: step_begin, 4 phases, step_end per step; batches of 1,000 steps alternating with 6,000 bare clock reads; median of 9 rounds of 100 batches; release build");
    println!("    bare Instant::now()  : {bare:8.1} ns");
    println!(
        "    one marker           : {marker:8.1} ns  (ratio {:.2}×, goal ≤ 1.5×)",
        num("ratio")
    );
    println!(
        "    fold, sampler thread : {:8.1} ns per step (off the training thread)",
        num("fold_ns_per_step")
    );
    println!(
        "    loop outrunning the sampler, marking thread folds its own full ring: {:.1} ns per marker",
        num("self_fold_marker_ns")
    );
    let (used, bound) = (int("long_memory_bytes"), int("long_memory_bound_bytes"));
    println!(
        "  memory: {} steps ({} kept exactly), 4 phases: step storage {} bytes vs documented bound {} ({:.0}% of the bound)",
        grouped(int("long_steps")),
        grouped(int("long_kept")),
        grouped(used),
        grouped(bound),
        100.0 * used as f64 / bound as f64
    );
    println!(
        "    step log with all 16 phases, CPU and GPU durations, 1,000,000 steps: {} bytes vs bound {}",
        grouped(int("full_log_bytes")),
        grouped(int("full_log_bound_bytes"))
    );
    Ok(())
}
