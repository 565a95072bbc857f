//! `cargo xtask fuzz --seconds N [TARGET]`: runs the cargo-fuzz targets in `fuzz/` (the
//! report reader, the dmon and CSV importers, the trace reader, the scenario parser), each
//! for N seconds, prints the executions each reached and fails on any crash, hang or
//! out-of-memory abort. `cargo xtask test` runs a smoke of a few seconds per target.
//!
//! The targets need nightly Rust and cargo-fuzz; cargo-fuzz is installed when missing, and
//! either one missing is an error, never a silent skip. Each run starts from the committed
//! seed corpus (`fuzz/corpus/TARGET`, only read) and grows a working corpus under
//! `target/fuzz-corpus/TARGET` that later runs start from too (the smoke keeps what it
//! finds only for its own run, so its time stays the same). Crash inputs land in
//! `fuzz/artifacts/TARGET/`; libFuzzer's output is kept in `target/fuzz-logs/TARGET.log`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::{root, run_cmd};

/// The fuzz targets, as named in `fuzz/Cargo.toml`.
pub const TARGETS: &[&str] = &["report", "dmon", "csv", "smi", "trace", "scenario"];

/// Seconds per target of the smoke in `cargo xtask test`.
pub const SMOKE_SECONDS: u64 = 5;

/// Seconds one input may take before libFuzzer calls it a hang: a reader that takes this
/// long on one small input would stall `gpuwhy diagnose` on a real file.
const TIMEOUT_S: u64 = 10;

/// Memory (MiB) one run may use; above it libFuzzer reports an out-of-memory crash, which
/// is how a missing size limit in a reader shows up.
const RSS_LIMIT_MB: u64 = 2048;

/// `cargo xtask fuzz --seconds N [--runs N] [--max-len BYTES] [--fresh] [TARGET]`;
/// `--fresh` runs as the smoke does, from the seeds alone, keeping nothing it finds;
/// `--runs` stops a target after that many executions (long runs aim at 10 M) and
/// `--max-len` caps generated inputs (libFuzzer's default is the largest input of the
/// corpus, and longer inputs run slower); both are passed to libFuzzer as they are.
pub fn run(args: &[String]) -> Result<()> {
    let mut seconds = None;
    let mut only = None;
    let mut limits = Limits {
        corpus: Corpus::Kept,
        runs: None,
        max_len: None,
    };
    let mut it = args.iter();
    let number = |flag: &str, it: &mut std::slice::Iter<'_, String>| -> Result<u64> {
        let v = it
            .next()
            .with_context(|| format!("{flag} needs a number"))?;
        v.parse::<u64>()
            .with_context(|| format!("{flag} {v}: not a whole number"))
    };
    while let Some(a) = it.next() {
        match a.as_str() {
            "--fresh" => limits.corpus = Corpus::Fresh,
            "--seconds" => seconds = Some(number("--seconds", &mut it)?),
            "--runs" => limits.runs = Some(number("--runs", &mut it)?),
            "--max-len" => limits.max_len = Some(number("--max-len", &mut it)?),
            t => match TARGETS.iter().find(|k| **k == t) {
                Some(k) => only = Some(*k),
                None => bail!(
                    "unknown argument `{t}`; usage: cargo xtask fuzz --seconds N [--runs N] [--max-len BYTES] [--fresh] [{}]",
                    TARGETS.join("|")
                ),
            },
        }
    }
    let Some(seconds) = seconds.filter(|s| *s > 0) else {
        bail!("usage: cargo xtask fuzz --seconds N [TARGET]: how long to run each target");
    };
    let targets: Vec<&str> = match only {
        Some(t) => vec![t],
        None => TARGETS.to_vec(),
    };
    fuzz(&targets, seconds, limits)
}

/// The fuzz smoke of `cargo xtask test`: every target for [`SMOKE_SECONDS`].
pub fn smoke() -> Result<()> {
    let limits = Limits {
        corpus: Corpus::Fresh,
        runs: None,
        max_len: None,
    };
    fuzz(TARGETS, SMOKE_SECONDS, limits)
}

/// What bounds one target's run besides its seconds.
#[derive(Clone, Copy)]
struct Limits {
    corpus: Corpus,
    /// libFuzzer's `-runs`: executions after which it stops.
    runs: Option<u64>,
    /// libFuzzer's `-max_len`: the longest input it generates.
    max_len: Option<u64>,
}

/// Where a run keeps the inputs it finds.
#[derive(Clone, Copy, PartialEq)]
enum Corpus {
    /// In `target/fuzz-corpus/TARGET`, which the next run starts from.
    Kept,
    /// In a temporary directory: the smoke starts from the seeds alone every time, so the
    /// corpus long runs grew (thousands of inputs, each run once at start-up) does not
    /// lengthen `cargo xtask test`.
    Fresh,
}

/// What one target's run reached.
struct Outcome {
    target: &'static str,
    executions: Option<u64>,
    /// libFuzzer's average executions per second.
    rate: Option<u64>,
    /// Inputs and kB of the corpus in memory at the end.
    corpus: Option<(u64, u64)>,
    seconds: f64,
    failure: Option<String>,
}

fn fuzz(targets: &[&'static str], seconds: u64, limits: Limits) -> Result<()> {
    install()?;
    let dir = root().join("fuzz");
    // One build of every target up front, with the flags `cargo fuzz run` uses below, so
    // the per-target runs do not rebuild and their seconds are all fuzzing.
    run_cmd(
        nightly()
            .args(["fuzz", "build"])
            .args(BUILD_FLAGS)
            .current_dir(&dir),
    )?;
    let mut outcomes = Vec::new();
    for &target in targets {
        outcomes.push(run_target(&dir, target, seconds, limits)?);
    }
    eprintln!("xtask: fuzz results (at most {seconds} s per target):");
    for o in &outcomes {
        let execs = o.executions.map_or_else(|| "?".into(), |n| n.to_string());
        let rate = match (o.rate, &o.failure) {
            (Some(r), None) => format!(", {r}/s"),
            _ => String::new(),
        };
        let corpus = o.corpus.map_or_else(String::new, |(n, kb)| {
            format!(", corpus {n} inputs / {kb} kB")
        });
        let status = o.failure.as_deref().unwrap_or("ok");
        eprintln!(
            "  {:<9} {execs:>12} executions in {:.0} s wall{rate}{corpus}: {status}",
            o.target, o.seconds
        );
    }
    let failed: Vec<&Outcome> = outcomes.iter().filter(|o| o.failure.is_some()).collect();
    if !failed.is_empty() {
        bail!(
            "{} fuzz target(s) failed ({}); reproduce one with `cd fuzz && cargo +nightly fuzz run {} TARGET ARTIFACT`, \
             then turn the input into a regression test",
            failed.len(),
            failed.iter().map(|o| o.target).collect::<Vec<_>>().join(", "),
            BUILD_FLAGS.join(" ")
        );
    }
    Ok(())
}

/// Build flags: no sanitizer (the fuzzed code is safe Rust; a panic, hang or OOM is what is
/// looked for, and without ASan it runs several times faster) and debug assertions on, so
/// integer overflow panics as it does in tests.
const BUILD_FLAGS: &[&str] = &["--sanitizer", "none", "--debug-assertions"];

fn run_target(dir: &Path, target: &'static str, seconds: u64, limits: Limits) -> Result<Outcome> {
    let fresh = match limits.corpus {
        Corpus::Kept => None,
        Corpus::Fresh => Some(tempfile::tempdir_in(root().join("target"))?),
    };
    let work = match &fresh {
        Some(t) => t.path().to_path_buf(),
        None => root().join("target").join("fuzz-corpus").join(target),
    };
    let logs = root().join("target").join("fuzz-logs");
    fs::create_dir_all(&work).with_context(|| format!("cannot create {}", work.display()))?;
    fs::create_dir_all(&logs).with_context(|| format!("cannot create {}", logs.display()))?;
    let seeds = seeds(target);
    if !seeds.is_dir() {
        bail!("no seed corpus at {}", seeds.display());
    }
    let log_path = logs.join(format!("{target}.log"));
    let log = fs::File::create(&log_path)
        .with_context(|| format!("cannot create {}", log_path.display()))?;
    eprintln!(
        "xtask: fuzzing {target} for {seconds} s (log: {})",
        log_path.display()
    );
    let started = Instant::now();
    // The working corpus comes first: libFuzzer adds new inputs to the first directory
    // only, so the committed seeds stay as they are.
    let mut cmd = nightly();
    cmd.args(["fuzz", "run"])
        .args(BUILD_FLAGS)
        .arg(target)
        .arg(&work)
        .arg(&seeds)
        .arg("--");
    if let Some(n) = limits.runs {
        cmd.arg(format!("-runs={n}"));
    }
    if let Some(n) = limits.max_len {
        cmd.arg(format!("-max_len={n}"));
    }
    let status = cmd
        .arg(format!("-max_total_time={seconds}"))
        .arg(format!("-timeout={TIMEOUT_S}"))
        .arg(format!("-rss_limit_mb={RSS_LIMIT_MB}"))
        .arg("-print_final_stats=1")
        .current_dir(dir)
        .stdout(log.try_clone()?)
        .stderr(log)
        .status()
        .context("cannot run `cargo +nightly fuzz run`")?;
    let elapsed = started.elapsed().as_secs_f64();
    let text = fs::read_to_string(&log_path).unwrap_or_default();
    let executions = stat(&text, "number_of_executed_units");
    let rate = stat(&text, "average_exec_per_sec");
    let corpus = corpus_size(&text);
    let failure = (!status.success()).then(|| {
        let tail: Vec<&str> = text.lines().rev().take(40).collect();
        eprintln!(
            "xtask: fuzz target {target} failed ({status}); the end of its log:\n{}",
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        );
        match artifact(&text) {
            Some(a) => format!("FAILED, input saved to {a}"),
            None => format!("FAILED ({status}), see {}", log_path.display()),
        }
    });
    Ok(Outcome {
        target,
        executions,
        rate,
        corpus,
        seconds: elapsed,
        failure,
    })
}

/// One of libFuzzer's final stats, `stat::NAME: N` (printed by `-print_final_stats=1`):
/// `number_of_executed_units`, `average_exec_per_sec`.
fn stat(log: &str, name: &str) -> Option<u64> {
    let prefix = format!("stat::{name}:");
    log.lines()
        .rev()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .and_then(|n| n.trim().parse().ok())
}

/// The in-memory corpus at the last status line (`corp: 1986/346Kb`), as (inputs, kB).
fn corpus_size(log: &str) -> Option<(u64, u64)> {
    let field = log.lines().rev().find_map(|l| l.split_once(" corp: "))?.1;
    let (n, size) = field.split_whitespace().next()?.split_once('/')?;
    let kb = match size.strip_suffix("Mb") {
        Some(mb) => mb.parse::<u64>().ok()? * 1024,
        None => match size.strip_suffix("Kb") {
            Some(kb) => kb.parse().ok()?,
            None => size.strip_suffix('b')?.parse::<u64>().ok()?.div_ceil(1024),
        },
    };
    Some((n.parse().ok()?, kb))
}

/// The file libFuzzer wrote the failing input to (`Test unit written to PATH`).
fn artifact(log: &str) -> Option<String> {
    log.lines()
        .find_map(|l| l.split_once("Test unit written to "))
        .map(|(_, p)| p.trim().to_string())
}

/// `cargo +nightly` through rustup, whatever toolchain runs xtask: the outer cargo's
/// `CARGO` and `RUSTUP_TOOLCHAIN` would otherwise pin the stable one.
fn nightly() -> Command {
    let mut c = Command::new("cargo");
    c.arg("+nightly")
        .env_remove("CARGO")
        .env_remove("RUSTUP_TOOLCHAIN")
        .env_remove("RUSTC")
        .env_remove("RUSTDOC")
        .stdin(Stdio::null());
    c
}

/// Checks for nightly and installs cargo-fuzz when it is missing (idempotent).
fn install() -> Result<()> {
    let ok = |c: &mut Command| {
        c.stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !ok(nightly().arg("--version")) {
        bail!(
            "the fuzz targets need nightly Rust and `cargo +nightly` does not run; \
             install it with `rustup toolchain install nightly --profile minimal`"
        );
    }
    if !ok(nightly().args(["fuzz", "--version"])) {
        run_cmd(
            crate::cargo()
                .args(["install", "cargo-fuzz", "--locked"])
                .env_remove("RUSTUP_TOOLCHAIN"),
        )
        .context("cannot install cargo-fuzz, which the fuzz targets need")?;
        if !ok(nightly().args(["fuzz", "--version"])) {
            bail!("cargo-fuzz was installed but `cargo +nightly fuzz --version` still fails; is ~/.cargo/bin on PATH?");
        }
    }
    Ok(())
}

/// Where the committed seed corpus of `target` is.
fn seeds(target: &str) -> PathBuf {
    root().join("fuzz").join("corpus").join(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn final_stats_and_artifacts_are_read_from_the_log() {
        let log = "#1024 pulse cov: 10\nDone 123456 runs in 5 second(s)\n\
                   stat::number_of_executed_units: 123456\nstat::average_exec_per_sec:     24691\n";
        assert_eq!(stat(log, "number_of_executed_units"), Some(123456));
        assert_eq!(stat(log, "average_exec_per_sec"), Some(24691));
        assert_eq!(stat("no stats", "number_of_executed_units"), None);
        let status =
            "#4031098\tREDUCE cov: 1332 ft: 7086 corp: 1986/346Kb lim: 1024 exec/s: 2577\n\
                      #9\tINITED cov: 3 ft: 3 corp: 2/17b exec/s: 0 rss: 30Mb\n";
        assert_eq!(corpus_size(status), Some((2, 1)));
        let first = status.lines().next().expect("a line");
        assert_eq!(corpus_size(first), Some((1986, 346)));
        assert_eq!(
            corpus_size("corp: 3/2Mb x"),
            None,
            "needs the leading space"
        );
        assert_eq!(corpus_size(" corp: 3/2Mb x"), Some((3, 2048)));
        let crash = "==1== ERROR: libFuzzer: deadly signal\n\
                     artifact_prefix='/w/fuzz/artifacts/trace/'; Test unit written to /w/fuzz/artifacts/trace/crash-abc\n";
        assert_eq!(
            artifact(crash).as_deref(),
            Some("/w/fuzz/artifacts/trace/crash-abc")
        );
    }

    #[test]
    fn every_target_has_a_seed_corpus_and_a_source() {
        for t in TARGETS {
            let seeds = seeds(t);
            let n = fs::read_dir(&seeds).map(|d| d.count()).unwrap_or(0);
            assert!(n > 0, "no seeds in {}", seeds.display());
            let src = root()
                .join("fuzz")
                .join("fuzz_targets")
                .join(format!("{t}.rs"));
            assert!(src.is_file(), "no {}", src.display());
        }
    }
}
