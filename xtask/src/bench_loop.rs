//! `cargo xtask bench torch-loop`: what a session costs a real PyTorch CPU training loop of
//! about 1 ms steps, with and without a session (`gpuwhy.Session`) and through
//! `gpuwhy.torch.Session`, interleaved in the same run (`ffi/bench/torch_loop_bench.py`).
//! Goal: ≤ 0.5 % at 1 ms steps.
//!
//! torch is large, so it is installed (from PyPI, into `target/bench-torch-venv`, never into
//! the user's Python) only when asked: `GPUWHY_BENCH_TORCH=install`. Without it and without
//! torch in that venv, the part says so and is skipped, as the HTA part's venv is made once
//! and reused.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde_json::Value;

use crate::{root, run_cmd};

/// The venv's python, if torch imports there; installs torch first when asked.
fn torch_python() -> Result<Option<PathBuf>> {
    let venv = root().join("target").join("bench-torch-venv");
    let py = venv.join("bin").join("python");
    let has = || {
        Command::new(&py)
            .args(["-c", "import torch"])
            .status()
            .is_ok_and(|s| s.success())
    };
    if has() {
        return Ok(Some(py));
    }
    if std::env::var("GPUWHY_BENCH_TORCH").as_deref() != Ok("install") {
        return Ok(None);
    }
    run_cmd(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
    run_cmd(Command::new(&py).args(["-m", "pip", "install", "--quiet", "torch"]))?;
    if !has() {
        bail!("torch is not importable from {}", py.display());
    }
    Ok(Some(py))
}

pub fn torch_loop() -> Result<()> {
    let Some(py) = torch_python()? else {
        println!("torch loop: skipped: no torch in target/bench-torch-venv (GPUWHY_BENCH_TORCH=install cargo xtask bench torch-loop installs it there)");
        return Ok(());
    };
    let status = crate::cargo()
        .args(["build", "--release", "--quiet", "-p", "gpuwhy-ffi"])
        .status()
        .context("cannot build the release libgpuwhy")?;
    if !status.success() {
        bail!("cargo build --release -p gpuwhy-ffi failed");
    }
    let out = Command::new(&py)
        .arg(root().join("ffi/bench/torch_loop_bench.py"))
        .env("GPUWHY_LIB", root().join("target/release/libgpuwhy.so"))
        .env("PYTHONPATH", root().join("ffi/python"))
        .env("GPUWHY_NVML_PATH", "/nonexistent/libnvidia-ml.so.1")
        .output()
        .context("cannot run the torch loop bench")?;
    if !out.status.success() {
        bail!(
            "torch loop bench failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let v: Value = serde_json::from_slice(&out.stdout).context("torch loop bench output")?;
    println!(
        "torch loop: PyTorch {} CPU loop, {:.2} ms steps, {} interleaved rounds of {} steps per side; load average {}",
        v["torch"].as_str().unwrap_or("?"),
        v["step_ms"].as_f64().unwrap_or(f64::NAN),
        v["rounds"],
        v["block_steps"],
        crate::bench_trace::load()
    );
    for (side, label) in [
        ("session", "gpuwhy.Session, 5 markers a step   "),
        ("torch_session", "gpuwhy.torch.Session, same markers "),
    ] {
        for (what, r) in [("wall", &v[side]), ("training thread CPU", &v[side]["cpu"])] {
            let f = |k: &str| r[k].as_f64().unwrap_or(f64::NAN);
            println!(
                "    {label}, {what}: overhead median {:+.2} % (mean {:+.2} % ± {:.2} % s.e.; rounds p25–p75 {:+.2}–{:+.2} %, min–max {:+.2}–{:+.2} %), goal ≤ 0.5 %; {:+.1} µs per step",
                f("median_pct"),
                f("mean_pct"),
                f("sem_pct"),
                f("p25_pct"),
                f("p75_pct"),
                f("min_pct"),
                f("max_pct"),
                f("added_us_per_step"),
            );
        }
    }
    Ok(())
}
