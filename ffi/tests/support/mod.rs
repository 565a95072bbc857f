//! What the C ABI tests share: the library built with the test-only export, compilers, the
//! simulated GPU, and running a client program.
//!
//! Each test file uses only part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// `ffi/`.
pub fn ffi_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `ffi/include` (gpuwhy.h).
pub fn include_dir() -> PathBuf {
    ffi_dir().join("include")
}

/// The cargo target profile directory the tests run from (`target/debug`).
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    // target/debug/deps/<test>-<hash>
    exe.parent()
        .and_then(Path::parent)
        .expect("target/debug")
        .to_path_buf()
}

/// Builds `libgpuwhy.so` and `libgpuwhy.a` with the `testing` feature (once per test
/// process) and returns the directory holding them. `cargo test` does not build a cdylib for
/// integration tests, so the tests ask cargo for it; the build is incremental.
pub fn lib_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args(["build", "-p", "gpuwhy-ffi", "--features", "testing"])
            .current_dir(ffi_dir());
        if !cfg!(debug_assertions) {
            cmd.arg("--release");
        }
        let out = cmd.output().expect("run cargo build -p gpuwhy-ffi");
        assert!(
            out.status.success(),
            "cargo build -p gpuwhy-ffi --features testing failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let dir = profile_dir();
        assert!(
            dir.join("libgpuwhy.so").exists(),
            "no libgpuwhy.so in {}",
            dir.display()
        );
        // Programs linked with it ask the loader for its soname, as installed copies have.
        let soname = dir.join("libgpuwhy.so.0");
        if std::fs::symlink_metadata(&soname).is_err() {
            let _ = std::os::unix::fs::symlink("libgpuwhy.so", &soname);
        }
        dir
    })
}

/// True when `tool --version` runs. With `GPUWHY_REQUIRE_TOOLS` set (as `cargo xtask test`
/// does) a missing tool fails the test instead of skipping it.
pub fn have(tool: &str) -> bool {
    let ok = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("GPUWHY_REQUIRE_TOOLS").is_none(),
            "{tool} is required (GPUWHY_REQUIRE_TOOLS is set) but does not run"
        );
        eprintln!("skipped: {tool} is not installed");
    }
    ok
}

/// Compiles with `compiler` (`cc`, `c++`), failing the test with the compiler's output.
pub fn compile(compiler: &str, args: &[&str]) {
    let out = Command::new(compiler)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {compiler}: {e}"));
    assert!(
        out.status.success(),
        "{compiler} {} failed:\n{}{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Compiles C sources into `exe`, linked against the shared libgpuwhy (with an rpath to it),
/// with the warnings the examples promise to be free of, plus `extra` flags.
pub fn build_c(sources: &[&Path], exe: &Path, extra: &[&str]) {
    let lib = lib_dir().display().to_string();
    let inc = include_dir().display().to_string();
    let mut args: Vec<String> = vec![
        "-std=c11".into(),
        "-Wall".into(),
        "-Wextra".into(),
        "-Werror".into(),
        "-g".into(),
        format!("-I{inc}"),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args.extend(sources.iter().map(|p| p.display().to_string()));
    args.extend([
        "-o".into(),
        exe.display().to_string(),
        format!("-L{lib}"),
        format!("-Wl,-rpath,{lib}"),
        "-lgpuwhy".into(),
        "-lpthread".into(),
    ]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    compile("cc", &refs);
}

/// A simulated GPU installed in a temporary directory.
pub struct Sim {
    pub dir: tempfile::TempDir,
    pub lib: PathBuf,
}

/// Installs the simulated NVML playing bundled scenario `name`, with JSON fields of the
/// scenario replaced by `patch` (e.g. `("speed", 4.0)`).
pub fn sim(name: &str, patch: &[(&str, serde_json::Value)]) -> Sim {
    let text = nvml_sim_bundle::scenario(name).unwrap_or_else(|| panic!("no scenario {name}"));
    let mut v: serde_json::Value = serde_json::from_str(text).expect("scenario JSON");
    for (k, val) in patch {
        v[*k] = val.clone();
    }
    let dir = tempfile::Builder::new()
        .prefix("gpuwhy-ffi-sim-")
        .tempdir()
        .expect("temp dir");
    let lib = nvml_sim_bundle::install(dir.path(), Some(&v.to_string()), false)
        .expect("install the simulator");
    Sim { dir, lib }
}

/// Runs `cmd` with the simulated NVML, returning its output; fails the test on a non-zero
/// exit with everything it printed.
pub fn run_ok(cmd: &mut Command, sim: Option<&Sim>) -> Output {
    if let Some(s) = sim {
        cmd.env("GPUWHY_NVML_PATH", &s.lib);
    } else {
        cmd.env("GPUWHY_NVML_PATH", "/nonexistent/libnvidia-ml.so.1");
    }
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Reads a report written by a client.
pub fn report(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("no report at {}: {e}", path.display()));
    serde_json::from_str(&text).expect("the report is JSON")
}

/// Polls `ready` until it returns something, for a test that waits on another process:
/// the condition is what the test needs (a file, a count in it), never a fixed time.
/// `hang` only turns a hang into a failure; a passing test returns long before it.
pub fn wait_for<T>(hang: std::time::Duration, mut ready: impl FnMut() -> Option<T>) -> Option<T> {
    let end = std::time::Instant::now() + hang;
    loop {
        if let Some(v) = ready() {
            return Some(v);
        }
        if std::time::Instant::now() >= end {
            return None;
        }
        // The one sleep allowed in tests: a poll between looks at another process.
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
