//! `cargo xtask bench`: benchmarks printed as ratios against baselines measured in the same run.
//!
//! Each part runs alone as `cargo xtask bench PART` (the names in [`PARTS`]).
//!
//! - sampler: NVML calls per GPU per tick with and without the field batch, the sampler
//!   thread's CPU per GPU per tick against `pynvml` polling the same metrics through the same
//!   simulated library with a real driver's per-call cost, and the host sample's cost before
//!   and after its cadence and open files (`bench_sampler`; alone: `cargo xtask bench sampler`).
//! - memory: the recording's heap bytes for days of simulated time against its documented bound.
//! - report size: a simulated week's report file against a simulated hour's.
//! - week: 8 GPUs for a week against an hour: file size, heap, diagnose time, first render
//!   (`bench_week`; alone: `cargo xtask bench week`).
//! - markers: ns per step marker against ns per bare `Instant::now()` in the same process
//!   (goal ≤ 1.5×), and a million-step run's step storage against its documented bound.
//! - markers through the C ABI: a C program's marker calls against its bare clock reads
//!   (`bench_ffi`; goal ≤ 1.5×).
//! - markers from Python: each marker through the `gpuwhy` package against a bare ctypes call
//!   of a trivial C function in the same process (`bench_ffi::py_markers`; goal ≤ 2×).
//! - torch phases: the CPU `gpuwhy.torch` adds per phase marker (CUDA-event timing, stand-in
//!   events) against a plain Python marker (`bench_ffi::torch_phases`).
//! - torch loop: a real PyTorch CPU loop of ~1 ms steps with and without a session,
//!   interleaved rounds (`bench_loop`; goal ≤ 0.5 %); torch is installed into its own venv only
//!   with `GPUWHY_BENCH_TORCH=install`, else the part says how and is skipped.
//! - trace: gpuwhy against HTA on a generated ≥ 500 MB profiler trace, and against itself
//!   on one reading thread (`bench_trace`; alone: `cargo xtask bench trace`).
//! - ranks: 64 rank traces read at once against one thread (`bench_trace::ranks`).
//! - merge: `gpuwhy merge` on 1 000 rank reports against diagnosing them one by one
//!   (`bench_merge`; alone: `cargo xtask bench merge`).
//! - summary: `gpuwhy summary` on 10,000 reports (JSON, and the page with every run's
//!   page) and the page's first screen in Chromium, against diagnosing each report alone
//!   (`bench_summary`; alone: `cargo xtask bench summary`).

use std::time::Duration;

use anyhow::{bail, Context, Result};
use gpuwhy::collect::{Recorder, RecorderConfig};
use gpuwhy_tests::{install_sim, patched, scenario};
use serde_json::Value;

use crate::root;

/// One part of the bench: its name and what runs it.
type Part = (&'static str, fn() -> Result<()>);

/// The parts of the bench, in the order a full run takes them; `cargo xtask bench PART...`
/// runs the named ones alone.
const PARTS: &[Part] = &[
    ("sampler", crate::bench_sampler::sampler),
    ("memory", memory),
    ("report-size", week_report),
    ("week", crate::bench_week::week),
    ("markers", markers),
    ("c-markers", crate::bench_ffi::markers),
    ("py-markers", crate::bench_ffi::py_markers),
    ("torch-phases", crate::bench_ffi::torch_phases),
    ("torch-loop", crate::bench_loop::torch_loop),
    ("viewer", viewer),
    ("trace", crate::bench_trace::trace),
    ("ranks", crate::bench_trace::ranks),
    ("merge", crate::bench_merge::merge),
    ("summary", crate::bench_summary::summary),
];

pub fn run(args: &[String]) -> Result<()> {
    if args.is_empty() {
        return PARTS.iter().try_for_each(|(_, part)| part());
    }
    for name in args {
        let Some((_, part)) = PARTS.iter().find(|(n, _)| n == name) else {
            let names: Vec<&str> = PARTS.iter().map(|(n, _)| *n).collect();
            bail!("no bench part {name:?}; the parts: {}", names.join(", "));
        };
        part()?;
    }
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

/// Runs `core/examples/NAME.rs` built in release with `args` and reads the one JSON value it
/// prints: the benches whose measuring half must not be xtask's debug build.
pub(crate) fn release_example(name: &str, args: &[&std::ffi::OsStr]) -> Result<Value> {
    let out = crate::cargo()
        .args([
            "run",
            "--release",
            "--quiet",
            "-p",
            "gpuwhy",
            "--example",
            name,
        ])
        .args(args)
        .current_dir(root())
        .output()
        .with_context(|| format!("cannot run the {name} example"))?;
    if !out.status.success() {
        bail!("{name} failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    serde_json::from_slice(&out.stdout).with_context(|| format!("{name} output"))
}

fn markers() -> Result<()> {
    // The markers are a few nanoseconds of optimised code; timing them in xtask's debug
    // build would measure the lack of inlining. The measuring half is an example of the
    // core crate, built with optimisations (core/examples/marker_bench.rs).
    let v = release_example("marker_bench", &[])?;
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
