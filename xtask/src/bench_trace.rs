//! `cargo xtask bench` trace section (alone: `cargo xtask bench trace`): gpuwhy against HTA
//! (`holistictraceanalysis` from PyPI, in a venv under target/) on one generated trace of at
//! least 500 MB, in the same run: wall time, CPU time, peak RSS and idle % side by side.
//!
//! Goal: ≥ 100× faster, ≤ 5% of HTA's memory, idle % identical under the
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

/// One `gpuwhy diagnose --json FILES` run under the peak-RSS parent, on `threads` reading
/// threads (`None`: as many as the machine gives it).
struct Run {
    v: Value,
    rss_kb: f64,
    wall_s: f64,
    cpu_s: f64,
}

fn gpuwhy(files: &[PathBuf], threads: Option<usize>) -> Result<Run> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"));
    let mut cmd = Command::new("python3");
    cmd.args(["-c", PEAK_RSS])
        .arg(target.join("release").join("gpuwhy"))
        .args(["diagnose", "--json"])
        .args(files);
    match threads {
        Some(n) => cmd.env("GPUWHY_TRACE_THREADS", n.to_string()),
        None => cmd.env_remove("GPUWHY_TRACE_THREADS"),
    };
    let out = cmd.output().context("run gpuwhy")?;
    if !out.status.success() {
        bail!("gpuwhy failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let v: Value = serde_json::from_slice(&out.stdout).context("gpuwhy --json")?;
    let err = String::from_utf8_lossy(&out.stderr);
    let mut last = err.lines().last().unwrap_or("").split_whitespace();
    let mut next = || -> f64 { last.next().and_then(|x| x.parse().ok()).unwrap_or(f64::NAN) };
    let (rss_kb, wall_s, cpu_s) = (next(), next(), next());
    Ok(Run {
        v,
        rss_kb,
        wall_s,
        cpu_s,
    })
}

/// The machine's load average over the last minute (benchmarks on a shared machine say it).
pub(crate) fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

pub fn trace() -> Result<()> {
    let mb: u64 = std::env::var("GPUWHY_BENCH_TRACE_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(TRACE_MB);
    let (dir, file) = generated(mb)?;
    let size = std::fs::metadata(&file)?.len();
    run_cmd(cargo().args(["build", "--release", "-p", "gpuwhy-cli"]))?;
    let one = gpuwhy(std::slice::from_ref(&file), Some(1))?;
    let all = gpuwhy(std::slice::from_ref(&file), None)?;
    let h = hta(&dir)?;
    let r = &all.v["trace"]["ranks"][0];
    let g_idle = r["idle_share"].as_f64().unwrap_or(f64::NAN) * 100.0;
    let one_idle = one.v["trace"]["ranks"][0]["idle_share"]
        .as_f64()
        .unwrap_or(f64::NAN)
        * 100.0;
    let h_s = h["seconds"].as_f64().unwrap_or(f64::NAN);
    let h_cpu = h["cpu_seconds"].as_f64().unwrap_or(f64::NAN);
    let h_rss_kb = h["peak_rss_kb"].as_f64().unwrap_or(f64::NAN);
    let h_idle = h["idle_pct"].as_f64().unwrap_or(f64::NAN);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());

    println!(
        "\ntrace: {:.0} MB, {} events ({}); load average {}",
        size as f64 / 1e6,
        r["events"],
        file.display(),
        load()
    );
    println!("                 gpuwhy, {threads} threads   1 thread        HTA 0.5   ratio");
    println!(
        "  time, s          {:>9.2}  {:>9.2}  {h_s:>12.2}   {:.0}× HTA (goal ≥ 100×); {:.2}× one thread",
        all.wall_s,
        one.wall_s,
        h_s / all.wall_s,
        one.wall_s / all.wall_s
    );
    println!(
        "  CPU time, s      {:>9.2}  {:>9.2}  {h_cpu:>12.2}   {:.0}× less than HTA (user + system: on a shared machine wall time also counts waiting for a core)",
        all.cpu_s,
        one.cpu_s,
        h_cpu / all.cpu_s
    );
    println!(
        "  peak RSS, MB     {:>9.0}  {:>9.0}  {:>12.0}   {:.1}% of HTA's (goal ≤ 5%)",
        all.rss_kb / 1024.0,
        one.rss_kb / 1024.0,
        h_rss_kb / 1024.0,
        all.rss_kb / h_rss_kb * 100.0
    );
    println!(
        "  idle %           {g_idle:>9.4}  {one_idle:>9.4}  {h_idle:>12.4}   {:.4} points from HTA (goal: identical to its 4 decimals); one thread and {threads} identical: {}",
        (g_idle - h_idle).abs(),
        all.v["trace"] == one.v["trace"]
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

/// Rank traces read at once: `RANKS` files of `RANK_MB` MB, `gpuwhy diagnose` on all of
/// them with one reading thread and with the machine's, in the same run (alone: `cargo
/// xtask bench ranks`).
pub fn ranks() -> Result<()> {
    const RANKS: usize = 64;
    const RANK_MB: u64 = 4;
    let dir = root()
        .join("target")
        .join(format!("bench-ranks-{RANKS}x{RANK_MB}"));
    let files: Vec<PathBuf> = (0..RANKS)
        .map(|r| dir.join(format!("rank{r}.json")))
        .collect();
    if !files.iter().all(|f| f.exists()) {
        run_cmd(
            Command::new("python3")
                .arg(root().join("scripts").join("gen_trace.py"))
                .arg("ranks")
                .arg(&dir)
                .arg(RANKS.to_string())
                .arg(RANK_MB.to_string()),
        )?;
    }
    run_cmd(cargo().args(["build", "--release", "-p", "gpuwhy-cli"]))?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    // Interleaved, so that a change in the machine's load falls on both sides.
    let (mut one, mut all) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        one.push(gpuwhy(&files, Some(1))?);
        all.push(gpuwhy(&files, None)?);
    }
    let same = one
        .iter()
        .zip(&all)
        .all(|(a, b)| a.v["trace"] == b.v["trace"]);
    let ratios: Vec<f64> = one
        .iter()
        .zip(&all)
        .map(|(a, b)| a.wall_s / b.wall_s)
        .collect();
    let mut sorted = ratios.clone();
    sorted.sort_by(f64::total_cmp);
    println!(
        "\nmany ranks: {RANKS} rank traces of {RANK_MB} MB, gpuwhy diagnose on all of them; 3 interleaved rounds; load average {}",
        load()
    );
    for (i, (a, b)) in one.iter().zip(&all).enumerate() {
        println!(
            "  round {}: 1 thread {:.2} s, {threads} threads {:.2} s: {:.2}× (CPU {:.2} / {:.2} s; peak RSS {:.0} / {:.0} MB)",
            i + 1,
            a.wall_s,
            b.wall_s,
            a.wall_s / b.wall_s,
            a.cpu_s,
            b.cpu_s,
            a.rss_kb / 1024.0,
            b.rss_kb / 1024.0
        );
    }
    println!(
        "  speed-up: median {:.2}×, spread {:.2}–{:.2}× (goal: close to {threads}× on {threads} free cores); summaries identical: {same}",
        sorted[1], sorted[0], sorted[2]
    );
    Ok(())
}
