//! `cargo xtask bench` trace section (alone: `cargo xtask bench trace`): gpuwhy against HTA
//! (`holistictraceanalysis` from PyPI, in a venv under target/) on one generated trace of at
//! least 500 MB, in the same run: wall time, CPU time, peak RSS and idle % side by side.
//!
//! Goal: ≥ 50× faster, ≤ 1/10 of HTA's memory, idle % within 0.5 points under the
//! same inclusion choices (every step kept; the generated trace has no sync records, no
//! unmatched GPU operations and whole-µs timestamps, so HTA's other choices change nothing).
//! `GPUWHY_BENCH_TRACE_MB` sets another size (for a quick look).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde_json::Value;

use crate::{cargo, root, run_cmd};

/// Size of the generated trace, MB.
const TRACE_MB: u64 = 500;

/// Runs `cmd` under a Python parent that reports the child's peak RSS (KiB), wall time and
/// CPU time (user + system, s) on stderr's last line: `getrusage(RUSAGE_CHILDREN)` of a
/// process whose only child is `cmd`.
const PEAK_RSS: &str = "import resource, subprocess, sys, time\n\
t = time.perf_counter()\n\
p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE)\n\
sys.stdout.buffer.write(p.stdout)\n\
r = resource.getrusage(resource.RUSAGE_CHILDREN)\n\
print(f'{r.ru_maxrss} {time.perf_counter() - t} {r.ru_utime + r.ru_stime}', file=sys.stderr)\n\
sys.exit(p.returncode)\n";

fn hta_python() -> Result<PathBuf> {
    let venv = root().join("target").join("bench-hta-venv");
    let py = venv.join("bin").join("python");
    let has = |py: &Path| {
        Command::new(py)
            .args(["-c", "import hta.trace_analysis"])
            .status()
            .is_ok_and(|s| s.success())
    };
    if !has(&py) {
        run_cmd(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
        run_cmd(Command::new(&py).args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "HolisticTraceAnalysis",
        ]))?;
    }
    if !has(&py) {
        bail!("hta is not importable from {}", py.display());
    }
    Ok(py)
}

/// The synthetic trace of `mb` MB (made once, kept in `target/`): its folder and file.
fn generated(mb: u64) -> Result<(PathBuf, PathBuf)> {
    let dir = root().join("target").join(format!("bench-trace-{mb}"));
    let file = dir.join("rank0.json");
    let big_enough = std::fs::metadata(&file).is_ok_and(|m| m.len() >= mb * 1_000_000);
    if !big_enough {
        std::fs::create_dir_all(&dir)?;
        run_cmd(
            Command::new("python3")
                .arg(root().join("scripts").join("gen_trace.py"))
                .arg("big")
                .arg(&file)
                .arg(mb.to_string()),
        )?;
    }
    Ok((dir, file))
}

/// HTA's figures for the trace folder `dir` (the last line of its script's output).
fn hta(dir: &Path) -> Result<Value> {
    let py = hta_python()?;
    let out = Command::new(&py)
        .arg(root().join("xtask").join("bench").join("hta_trace.py"))
        .arg(dir)
        .output()
        .context("run HTA")?;
    if !out.status.success() {
        bail!("HTA failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let h: Value =
        serde_json::from_str(text.lines().last().unwrap_or("{}")).context("HTA's JSON")?;
    Ok(h)
}

pub fn trace() -> Result<()> {
    let mb: u64 = std::env::var("GPUWHY_BENCH_TRACE_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(TRACE_MB);
    let (dir, file) = generated(mb)?;
    let size = std::fs::metadata(&file)?.len();
    run_cmd(cargo().args(["build", "--release", "-p", "gpuwhy-cli"]))?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"));
    let gpuwhy = target.join("release").join("gpuwhy");

    let out = Command::new("python3")
        .args(["-c", PEAK_RSS])
        .arg(&gpuwhy)
        .args(["diagnose", "--json"])
        .arg(&file)
        .output()
        .context("run gpuwhy")?;
    if !out.status.success() {
        bail!("gpuwhy failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let v: Value = serde_json::from_slice(&out.stdout).context("gpuwhy --json")?;
    let err = String::from_utf8_lossy(&out.stderr);
    let mut last = err.lines().last().unwrap_or("").split_whitespace();
    let g_rss_kb: f64 = last.next().and_then(|x| x.parse().ok()).unwrap_or(f64::NAN);
    let g_s: f64 = last.next().and_then(|x| x.parse().ok()).unwrap_or(f64::NAN);
    let g_cpu: f64 = last.next().and_then(|x| x.parse().ok()).unwrap_or(f64::NAN);
    let r = &v["trace"]["ranks"][0];
    let g_idle = r["idle_share"].as_f64().unwrap_or(f64::NAN) * 100.0;

    let h = hta(&dir)?;
    let h_s = h["seconds"].as_f64().unwrap_or(f64::NAN);
    let h_cpu = h["cpu_seconds"].as_f64().unwrap_or(f64::NAN);
    let h_rss_kb = h["peak_rss_kb"].as_f64().unwrap_or(f64::NAN);
    let h_idle = h["idle_pct"].as_f64().unwrap_or(f64::NAN);

    println!(
        "\ntrace: {:.0} MB, {} events ({})",
        size as f64 / 1e6,
        r["events"],
        file.display()
    );
    println!("                      gpuwhy        HTA 0.5   ratio");
    println!(
        "  time, s          {g_s:>9.2}  {h_s:>12.2}   {:.0}× faster (goal ≥ 50×)",
        h_s / g_s
    );
    println!(
        "  CPU time, s      {g_cpu:>9.2}  {h_cpu:>12.2}   {:.0}× less (user + system: on a shared machine wall time also counts waiting for a core)",
        h_cpu / g_cpu
    );
    println!(
        "  peak RSS, MB     {:>9.0}  {:>12.0}   {:.1}% of HTA's (goal ≤ 10%)",
        g_rss_kb / 1024.0,
        h_rss_kb / 1024.0,
        g_rss_kb / h_rss_kb * 100.0
    );
    println!(
        "  idle %           {g_idle:>9.3}  {h_idle:>12.3}   {:.3} points apart (goal ≤ 0.5)",
        (g_idle - h_idle).abs()
    );
    println!(
        "  idle breakdown   gpuwhy main stream: host wait {:.0} µs, kernel wait {:.0} µs, other {:.0} µs; HTA rank 0: {}",
        r["main_stream_idle"]["host_wait_us"].as_f64().unwrap_or(f64::NAN),
        r["main_stream_idle"]["kernel_wait_us"].as_f64().unwrap_or(f64::NAN),
        r["main_stream_idle"]["other_us"].as_f64().unwrap_or(f64::NAN),
        h["idle_breakdown_us"]
    );
    Ok(())
}
