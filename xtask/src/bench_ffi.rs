//! `cargo xtask bench`, C ABI part: one step marker through `libgpuwhy.so` against a bare
//! `clock_gettime` read, both timed in the same C program (`ffi/bench/marker_bench.c`,
//! built with -O2 against the release library). Goal: ≤ 1.5× in every run. And the same for
//! Python: a marker against a bare ctypes call (goal ≤ 2×).

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
        .arg("-ldl")
        .output()
        .context("cannot run cc (install gcc)")?;
    if !out.status.success() {
        bail!(
            "compiling ffi/bench/marker_bench.c failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // cargo puts target/debug on LD_LIBRARY_PATH for the programs it runs (xtask included),
    // and the loader prefers it to the program's RUNPATH: with a debug libgpuwhy.so.0 there
    // (the tests make one) the bench measured the unoptimised library, 5-20x slower. The
    // program says which library it got, and anything but the release one is refused.
    let out = Command::new(&exe)
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .context("cannot run the C marker benchmark")?;
    if !out.status.success() {
        bail!(
            "C marker benchmark failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let v: Value = serde_json::from_slice(&out.stdout).context("C marker benchmark output")?;
    let loaded = std::path::PathBuf::from(v["library"].as_str().unwrap_or("?"));
    if loaded.canonicalize().ok() != lib.join("libgpuwhy.so").canonicalize().ok() {
        bail!(
            "the C marker bench loaded {} instead of the release library in {}",
            loaded.display(),
            lib.display()
        );
    }
    let num = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    println!("markers through the C ABI (libgpuwhy.so, C program built with -O2): batches of 1,000 steps × 6 markers alternating with 6,000 bare clock reads, sampler draining between batches; median of 7 rounds of 60 batches; load average {}", crate::bench_trace::load());
    println!(
        "    bare clock_gettime(CLOCK_MONOTONIC): {:8.1} ns",
        num("bare_ns")
    );
    println!(
        "    one marker through the C ABI       : {:8.1} ns  (ratio {:.2}×, rounds {:.2}–{:.2}×, goal ≤ 1.5× in every run; {} of {} batches over 1.5×)",
        num("marker_ns"),
        num("ratio"),
        num("ratio_min"),
        num("ratio_max"),
        v["batches_over_goal"],
        v["batches"]
    );
    Ok(())
}

/// Builds the release library (once per call) and returns the environment a Python bench
/// script needs to load it and the package from the checkout.
fn python_env(cmd: &mut Command) -> Result<()> {
    let root = root();
    let status = crate::cargo()
        .args(["build", "--release", "--quiet", "-p", "gpuwhy-ffi"])
        .status()
        .context("cannot build the release libgpuwhy")?;
    if !status.success() {
        bail!("cargo build --release -p gpuwhy-ffi failed");
    }
    cmd.env("GPUWHY_LIB", root.join("target/release/libgpuwhy.so"))
        .env("PYTHONPATH", root.join("ffi/python"))
        .env("GPUWHY_NVML_PATH", "/nonexistent/libnvidia-ml.so.1");
    Ok(())
}

/// A marker from Python (the `gpuwhy` package over the release library) against a bare
/// ctypes call of `gpuwhy_abi_version`, a C function that only returns a constant, in the
/// same process (`ffi/bench/py_marker_bench.py`). Goal: ≤ 2×.
pub fn py_markers() -> Result<()> {
    let mut cmd = Command::new("python3");
    cmd.arg(root().join("ffi/bench/py_marker_bench.py"));
    python_env(&mut cmd)?;
    let out = cmd.output().context("cannot run python3")?;
    if !out.status.success() {
        bail!(
            "Python marker benchmark failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let v: Value = serde_json::from_slice(&out.stdout).context("Python marker bench output")?;
    println!(
        "markers from Python (gpuwhy package, release library): {} rounds of {} pairs of 1,000 calls, marker against a bare ctypes call of gpuwhy_abi_version(); load average {}",
        v["rounds"],
        v["pairs"],
        crate::bench_trace::load()
    );
    println!(
        "    bare ctypes call                : {:8.1} ns",
        v["bare_ns"].as_f64().unwrap_or(f64::NAN)
    );
    for (key, label) in [
        ("step_begin", "session.step_begin()        "),
        ("phase", "session.phase(\"forward\")    "),
        ("step_end", "session.step_end()          "),
    ] {
        let r = &v[key];
        let f = |k: &str| r[k].as_f64().unwrap_or(f64::NAN);
        println!(
            "    {label}: {:8.2}× the bare call (rounds {:.2}–{:.2}×, goal ≤ 2×)",
            f("ratio"),
            f("min"),
            f("max")
        );
    }
    Ok(())
}

/// The CPU cost `gpuwhy.torch` adds per phase marker (two CUDA event records, the pairing,
/// a query and the attach), against a plain `gpuwhy.Session` marker, through the release
/// library (`ffi/bench/torch_phase_bench.py`; stand-in events, so CUDA's own cost of
/// cudaEventRecord/cudaEventQuery is not in it).
pub fn torch_phases() -> Result<()> {
    let mut cmd = Command::new("python3");
    cmd.arg(root().join("ffi/bench/torch_phase_bench.py"));
    python_env(&mut cmd)?;
    let out = cmd.output().context("cannot run python3")?;
    if !out.status.success() {
        bail!(
            "torch phase benchmark failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    print!("{}", String::from_utf8_lossy(&out.stdout));
    Ok(())
}
