//! `cargo xtask bench` merge section (alone: `cargo xtask bench merge`): `gpuwhy merge` on
//! 1 000 rank reports (and with `--rediagnose`), against diagnosing the same reports one by
//! one in the same run.
//!
//! The reports come from one recording of `straggler_8gpu` (eight GPUs per report, as when
//! every rank of an 8-GPU node records its node), copied 1 000 times as a job of 125 nodes:
//! each copy gets its rank, world size, node and a start up to half a second apart, and its
//! step statistics scaled by a few percent; rank 517's backward phase is 2.1× the others'.
//! The merge must name that rank and phase, or the bench fails.
//! Goal: seconds on a 2-core machine. `GPUWHY_BENCH_RANKS` sets another count.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use gpuwhy::report::{rfc3339_utc, Report};
use gpuwhy_tests::{record, scenario, Run};
use serde_json::Value;

use crate::{cargo, root, run_cmd};

/// Rank reports merged.
const RANKS: u32 = 1_000;
/// Ranks per node.
const PER_NODE: u32 = 8;
/// The straggler, and how much longer its backward phase is.
const STRAGGLER: u32 = 517;
const STRAGGLER_FACTOR: f64 = 2.1;
/// Reports diagnosed one by one for the baseline (its time is scaled to all of them).
const BASELINE_FILES: usize = 20;

/// Same idea as `bench_trace`: a Python parent reports its only child's peak RSS (KiB), wall
/// seconds and CPU seconds on stderr's last line (CPU time says what a busy shared machine's
/// wall time does not).
pub(crate) const PEAK_RSS: &str = "import resource, subprocess, sys, time\n\
t = time.perf_counter()\n\
p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE)\n\
sys.stdout.buffer.write(p.stdout)\n\
u = resource.getrusage(resource.RUSAGE_CHILDREN)\n\
print(f'{u.ru_maxrss} {time.perf_counter() - t} {u.ru_utime + u.ru_stime}', file=sys.stderr)\n\
sys.exit(p.returncode)\n";

/// A deterministic number in −1..1 for rank `r` and stream `k` (no RNG dependency).
pub(crate) fn jitter(r: u32, k: u32) -> f64 {
    let mut x = u64::from(r).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ u64::from(k).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 31;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 29;
    (x % 2_000_001) as f64 / 1_000_000.0 - 1.0
}

/// Writes the rank reports into `dir`; returns the bytes of one.
fn write_ranks(base: &Report, dir: &Path, ranks: u32) -> Result<usize> {
    // Serialise what every copy shares once; only `run` and `steps` differ per rank.
    let doc = serde_json::to_value(base)?;
    let Value::Object(map) = doc else {
        bail!("a report serialises to an object")
    };
    let shared: Vec<(String, Option<String>)> = map
        .iter()
        .map(|(k, v)| {
            let fixed = (k != "run" && k != "steps").then(|| v.to_string());
            (k.clone(), fixed)
        })
        .collect();
    let steps = base.steps.as_ref().context("the recording has steps")?;
    let mut size = 0;
    for r in 0..ranks {
        let mut run = base.run.clone();
        run.rank = Some(r);
        run.world_size = Some(ranks);
        run.host = format!("node-{:03}", r / PER_NODE);
        run.start_unix_ms += (250.0 * (1.0 + jitter(r, 0))) as i64;
        run.start = rfc3339_utc(run.start_unix_ms);
        let mut st = steps.clone();
        let scale = 1.0 + 0.03 * jitter(r, 1);
        for (name, s) in st.stats.iter_mut() {
            let f = if r == STRAGGLER && name == "backward" {
                STRAGGLER_FACTOR
            } else {
                scale
            };
            s.p50_s *= f;
            s.p95_s *= f;
        }
        let mut text = String::from("{");
        for (i, (k, fixed)) in shared.iter().enumerate() {
            let v = match (k.as_str(), fixed) {
                (_, Some(f)) => f.clone(),
                ("run", None) => serde_json::to_string(&run)?,
                _ => serde_json::to_string(&st)?,
            };
            if i > 0 {
                text.push(',');
            }
            text.push_str(&serde_json::to_string(k)?);
            text.push(':');
            text.push_str(&v);
        }
        text.push('}');
        size = text.len();
        std::fs::write(dir.join(format!("rank{r:04}.json")), text)?;
    }
    Ok(size)
}

/// What one timed run measured.
pub(crate) struct Timed {
    pub stdout: Vec<u8>,
    pub rss_kb: f64,
    pub wall_s: f64,
    pub cpu_s: f64,
}

/// Runs `gpuwhy ARGS` under the peak-RSS parent.
pub(crate) fn timed(gpuwhy: &Path, args: &[&str], files: &[PathBuf]) -> Result<Timed> {
    let out = Command::new("python3")
        .args(["-c", PEAK_RSS])
        .arg(gpuwhy)
        .args(args)
        .args(files)
        .output()
        .context("run gpuwhy")?;
    if !out.status.success() {
        bail!("gpuwhy failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let mut last = err.lines().last().unwrap_or("").split_whitespace();
    let mut num = || -> f64 { last.next().and_then(|x| x.parse().ok()).unwrap_or(f64::NAN) };
    let (rss_kb, wall_s, cpu_s) = (num(), num(), num());
    Ok(Timed {
        stdout: out.stdout,
        rss_kb,
        wall_s,
        cpu_s,
    })
}

pub fn merge() -> Result<()> {
    let ranks: u32 = std::env::var("GPUWHY_BENCH_RANKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(RANKS);
    run_cmd(cargo().args(["build", "--release", "-p", "gpuwhy-cli"]))?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"));
    let gpuwhy = target.join("release").join("gpuwhy");

    let text = scenario("straggler_8gpu").context("bundled scenario straggler_8gpu")?;
    let run = Run {
        speed: 20.0,
        ..Run::default()
    };
    let base = record(text, &run).map_err(anyhow::Error::msg)?;
    let dir = tempfile::Builder::new()
        .prefix("gpuwhy-bench-merge-")
        .tempdir()?;
    let ranks_dir = dir.path().join("ranks");
    std::fs::create_dir_all(&ranks_dir)?;
    let one = write_ranks(&base, &ranks_dir, ranks)?;
    let job = dir.path().join("job.json");

    let merge_with = |extra: &[&str], out: &Path| -> Result<(Value, Timed)> {
        let o = out.to_string_lossy();
        let mut args = vec!["merge", "--json", "-o", &o];
        args.extend_from_slice(extra);
        let t = timed(&gpuwhy, &args, std::slice::from_ref(&ranks_dir))?;
        let v: Value = serde_json::from_slice(&t.stdout).context("merge --json")?;
        let top = &v["stragglers"][0];
        if top["rank"] != STRAGGLER || top["phase"] != "backward" {
            bail!("merge {extra:?} did not name rank {STRAGGLER}'s backward phase: {top}");
        }
        Ok((v, t))
    };
    let (v, fast) = merge_with(&[], &job)?;
    let (_, full) = merge_with(&["--rediagnose"], &dir.path().join("job-full.json"))?;

    let (each, diagnosed) = diagnose_each(&gpuwhy, &ranks_dir, ranks)?;
    let all = each * f64::from(ranks);
    let sizes = Sizes {
        ranks,
        one,
        gpus: base.devices.len(),
        steps: base.steps.as_ref().map_or(0, |s| s.count),
    };
    print(&sizes, &fast, &full, (each, all, diagnosed), &v, &job);
    Ok(())
}

/// Seconds per `gpuwhy diagnose` of one rank's report (what a user would do without
/// merge), measured on a few of them, and how many.
fn diagnose_each(gpuwhy: &Path, ranks_dir: &Path, ranks: u32) -> Result<(f64, usize)> {
    let some: Vec<PathBuf> = (0..BASELINE_FILES.min(ranks as usize))
        .map(|r| ranks_dir.join(format!("rank{r:04}.json")))
        .collect();
    let start = Instant::now();
    for f in &some {
        let out = Command::new(gpuwhy)
            .args(["diagnose", "--json"])
            .arg(f)
            .output()
            .context("run gpuwhy diagnose")?;
        if !out.status.success() {
            bail!(
                "gpuwhy diagnose failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    let each = start.elapsed().as_secs_f64() / some.len().max(1) as f64;
    Ok((each, some.len()))
}

/// What was merged: ranks, bytes per rank report, GPUs and steps per report.
struct Sizes {
    ranks: u32,
    one: usize,
    gpus: usize,
    steps: u64,
}

/// The figures: both merges against diagnosing each rank, and the straggler found.
fn print(s: &Sizes, fast: &Timed, full: &Timed, each: (f64, f64, usize), v: &Value, job: &Path) {
    let (each, all, diagnosed) = each;
    let ranks = s.ranks;
    let one = s.one;
    let total_mb = one as f64 * f64::from(ranks) / 1e6;
    println!(
        "\nmerge: {ranks} rank reports of {:.0} KB each ({total_mb:.0} MB, {} GPUs per report, {} steps), {} nodes, {} cores",
        one as f64 / 1e3,
        s.gpus,
        s.steps,
        ranks.div_ceil(PER_NODE),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    for (name, t) in [("gpuwhy merge", fast), ("gpuwhy merge --rediagnose", full)] {
        println!(
            "  {name:<26}: {:6.2} s wall, {:6.2} s CPU  ({:.0} MB/s, peak RSS {:.0} MB)",
            t.wall_s,
            t.cpu_s,
            total_mb / t.wall_s,
            t.rss_kb / 1024.0
        );
    }
    println!(
        "  {:<26}: {all:6.2} s wall  ({:.0} ms per process, from {} of them)",
        "diagnose each rank",
        each * 1e3,
        diagnosed
    );
    println!(
        "  {:<26}: {:6.1}× faster than diagnosing each rank ({:.1}× with --rediagnose; goal: seconds)",
        "ratio",
        all / fast.wall_s,
        all / full.wall_s
    );
    let top = &v["stragglers"][0];
    println!(
        "  {:<26}: rank {} {} phase p50 {:.1}× the others' median; job report {:.0} KB",
        "found",
        top["rank"],
        top["phase"].as_str().unwrap_or("?"),
        top["ratio"].as_f64().unwrap_or(f64::NAN),
        std::fs::metadata(job).map_or(0.0, |m| m.len() as f64 / 1e3)
    );
}
