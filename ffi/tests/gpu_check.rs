//! scripts/gpu-check.sh's dry run: the script a real GPU machine runs, with the
//! simulated GPU playing each job's scenario and sleep/spin stand-ins for PyTorch. It must
//! reach every expected verdict through the Python binding, print the markers' cost, and
//! fail when a verdict is wrong.

mod support;

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};

use support::*;

/// The `gpuwhy` CLI beside the test build of libgpuwhy (target/debug), built once per test
/// process: the dry run installs the simulator with `gpuwhy demo --install-sim`.
fn cli() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let dir = lib_dir().to_path_buf();
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args(["build", "-p", "gpuwhy-cli"])
            .current_dir(ffi_dir());
        if !cfg!(debug_assertions) {
            cmd.arg("--release");
        }
        let out = cmd.output().expect("run cargo build -p gpuwhy-cli");
        assert!(
            out.status.success(),
            "cargo build -p gpuwhy-cli failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        dir.join("gpuwhy")
    })
    .clone()
}

/// Runs `scripts/gpu-check.sh --dry-run` with `args`, one at a time: the launch-bound
/// stand-in needs a core to itself.
fn dry_run(out: &std::path::Path, args: &[&str]) -> Output {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let bin = cli();
    let _guard = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let t0 = std::time::Instant::now();
    let o = Command::new("bash")
        .arg(ffi_dir().join("../scripts/gpu-check.sh"))
        .arg("--dry-run")
        .arg("--bin")
        .arg(bin.parent().expect("target/debug"))
        .arg("--out")
        .arg(out)
        .args(args)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("GPUWHY_NVML_PATH")
        .env_remove("GPUWHY_LIB")
        .output()
        .expect("run scripts/gpu-check.sh");
    eprintln!(
        "gpu-check.sh --dry-run {args:?} took {:.1} s, {}\n{}{}",
        t0.elapsed().as_secs_f64(),
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

#[test]
fn the_gpu_check_dry_run_reaches_every_expected_verdict() {
    if !have("python3") {
        return;
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let o = dry_run(tmp.path(), &["--seconds", "4"]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    // 3: the launch-bound stand-in could not get a core on a saturated machine, and nothing
    // else went wrong; the script says so rather than blaming gpuwhy.
    let code = o.status.code();
    assert!(
        code == Some(0) || code == Some(3),
        "exit {code:?}:\n{stdout}"
    );
    if code == Some(3) {
        eprintln!("warning: the launch_bound check was inconclusive (machine saturated)");
    }
    // `gpuwhy devices` ran on the simulator.
    assert!(stdout.contains("GPU 0: NVIDIA H100"), "{stdout}");
    let verdicts: Vec<&str> = stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("verdict:"))
        .collect();
    assert_eq!(verdicts.len(), 3, "{stdout}");
    let ok = verdicts
        .iter()
        .filter(|l| l.contains("verdict: OK"))
        .count();
    assert!(ok >= if code == Some(0) { 3 } else { 2 }, "{stdout}");

    for (job, top) in [
        ("healthy", "none"),
        ("starved", "data_starvation"),
        ("tiny", "launch_bound"),
    ] {
        let r = report(&tmp.path().join(format!("{job}.json")));
        assert_eq!(r["run"]["label"], format!("gpu-check: {job}"));
        assert!(
            r["steps"]["count"].as_u64().unwrap_or(0) >= 10,
            "{job}: {}",
            r["steps"]
        );
        assert_eq!(r["devices"].as_array().map(Vec::len), Some(1), "{job}");
        if job != "tiny" || code == Some(0) {
            assert_eq!(r["verdict"]["id"], top, "{job}: {}", r["findings"]);
        }
        // The summary line: job, expected, top finding, step p50, markers' cost, overhead.
        let row = stdout
            .lines()
            .find(|l| l.starts_with(&format!("{job} ")))
            .unwrap_or_else(|| panic!("no summary row for {job}:\n{stdout}"));
        assert!(row.contains(" us "), "{row}");
    }
    // The starved loop's data wait shows in its markers (450 of 1000 simulated ms).
    let starved = report(&tmp.path().join("starved.json"));
    let share = &starved["findings"][0]["evidence"][0];
    assert_eq!(share["metric"], "data phase share of step time p50");
    let v = share["value"].as_f64().unwrap_or(0.0);
    assert!((0.40..0.52).contains(&v), "data share {v}");
    // The interleaved timing with and without markers ran on the tiny loop.
    assert!(
        stdout.contains("timed without and with markers"),
        "{stdout}"
    );
    assert!(stdout.contains("gpu-check: "), "{stdout}");
}

#[test]
fn the_gpu_check_fails_when_a_verdict_is_wrong() {
    if !have("python3") {
        return;
    }
    // The healthy loop on a memory-bound GPU: gpuwhy rightly says memory_bound, which is
    // not what a healthy loop on a healthy GPU should get, so the check must fail.
    let tmp = tempfile::tempdir().expect("temp dir");
    let o = dry_run(
        tmp.path(),
        &[
            "--seconds",
            "3",
            "--jobs",
            "healthy",
            "--scenario",
            "healthy=memory_bound",
        ],
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("verdict: WRONG: first loop-level finding is memory_bound, expected none"),
        "{stdout}"
    );
    assert!(stdout.contains("gpu-check: FAILED"), "{stdout}");
}
