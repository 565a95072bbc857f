//! `cargo xtask bench`, C ABI part: one step marker through `libgpuwhy.so` against a bare
//! `clock_gettime` read, both timed in the same C program (`ffi/bench/marker_bench.c`,
//! built with -O2 against the release library). Goal: ≤ 1.5×.

use std::process::Command;

use anyhow::{bail, Context, Result};
use serde_json::Value;

use crate::root;

pub fn markers() -> Result<()> {
    let root = root();
    let status = crate::cargo()
        .args(["build", "--release", "--quiet", "-p", "gpuwhy-ffi"])
        .current_dir(&root)
        .status()
        .context("cannot build the release libgpuwhy")?;
    if !status.success() {
        bail!("cargo build --release -p gpuwhy-ffi failed");
    }
    let lib = root.join("target/release");
    // Programs linked with libgpuwhy ask the loader for its soname.
    let soname = lib.join("libgpuwhy.so.0");
    if std::fs::symlink_metadata(&soname).is_err() {
        std::os::unix::fs::symlink("libgpuwhy.so", &soname).context("soname link")?;
    }
    let dir = tempfile::tempdir()?;
    let exe = dir.path().join("marker_bench");
    let out = Command::new("cc")
        .args(["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror"])
        .arg(format!("-I{}", root.join("ffi/include").display()))
        .arg(root.join("ffi/bench/marker_bench.c"))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", lib.display()))
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-lgpuwhy")
        .output()
        .context("cannot run cc (install gcc)")?;
    if !out.status.success() {
        bail!(
            "compiling ffi/bench/marker_bench.c failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = Command::new(&exe)
        .output()
        .context("cannot run the C marker benchmark")?;
    if !out.status.success() {
        bail!(
            "C marker benchmark failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let v: Value = serde_json::from_slice(&out.stdout).context("C marker benchmark output")?;
    let num = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    println!("markers through the C ABI (libgpuwhy.so, C program built with -O2): batches of 1,000 steps × 6 markers alternating with 6,000 bare clock reads, sampler draining between batches; median of 7 rounds of 60 batches");
    println!(
        "    bare clock_gettime(CLOCK_MONOTONIC): {:8.1} ns",
        num("bare_ns")
    );
    println!(
        "    one marker through the C ABI       : {:8.1} ns  (ratio {:.2}×, goal ≤ 1.5×)",
        num("marker_ns"),
        num("ratio")
    );
    Ok(())
}

/// The CPU cost `gpuwhy.torch` adds per phase marker (two CUDA event records, the pairing,
/// a query and the attach), against a plain `gpuwhy.Session` marker, through the release
/// library (`ffi/bench/torch_phase_bench.py`; stand-in events, so CUDA's own cost of
/// cudaEventRecord/cudaEventQuery is not in it).
pub fn torch_phases() -> Result<()> {
    let root = root();
    let status = crate::cargo()
        .args(["build", "--release", "--quiet", "-p", "gpuwhy-ffi"])
        .status()
        .context("cannot build the release libgpuwhy")?;
    if !status.success() {
        bail!("cargo build --release -p gpuwhy-ffi failed");
    }
    let out = Command::new("python3")
        .arg(root.join("ffi/bench/torch_phase_bench.py"))
        .env("GPUWHY_LIB", root.join("target/release/libgpuwhy.so"))
        .env("PYTHONPATH", root.join("ffi/python"))
        .env("GPUWHY_NVML_PATH", "/nonexistent/libnvidia-ml.so.1")
        .output()
        .context("cannot run python3")?;
    if !out.status.success() {
        bail!(
            "torch phase benchmark failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    print!("{}", String::from_utf8_lossy(&out.stdout));
    Ok(())
}
