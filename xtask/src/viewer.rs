//! `cargo xtask viewer`: builds the report viewer (WebAssembly + the page) into
//! `target/viewer/`, installing what that needs; and the viewer's browser tests and
//! benchmark, which `cargo xtask test` and `cargo xtask bench` run.
//!
//! Output: `target/viewer/www/` (the static page), `target/viewer/gpuwhy-viewer.html` (the
//! single-file page `gpuwhy view` fills in) and the analysis module for it. The last two are
//! committed in `viewer/dist/`, which every `gpuwhy` binary embeds: `cargo xtask viewer`
//! updates them there, and `cargo xtask viewer test` (so CI) fails when they differ from a
//! fresh build (see `dist.rs` and docs/viewer.md, "How `gpuwhy` gets it").

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::{cargo, root, run_cmd};

mod build;
mod dist;
mod fixtures;
mod fixtures_page;
mod long_report;

pub use build::build;
use fixtures::fixtures;
use long_report::long_report;

/// `cargo xtask viewer [test|bench]`: build, then optionally run the browser tests or the
/// benchmark alone.
pub fn run(args: &[String]) -> Result<()> {
    match args.first().map(String::as_str) {
        None => {
            install()?;
            let out = build()?;
            dist::update(&out)?;
            eprintln!("xtask: viewer built: {}", out.display());
            Ok(())
        }
        Some("check") => {
            install()?;
            dist::check(&build()?)
        }
        Some("test") => test(),
        Some("bench") => bench(),
        Some(other) => {
            bail!(
                "unknown `cargo xtask viewer {other}`; use no argument, `check`, `test` or `bench`"
            )
        }
    }
}

fn viewer_dir() -> PathBuf {
    root().join("viewer")
}

/// Where the built viewer goes.
pub fn out_dir() -> PathBuf {
    root().join("target").join("viewer")
}

/// The Rust toolchain the viewer's modules are built with: pinned, because the committed
/// page must come out byte for byte the same from every machine's build. Moving it means
/// rebuilding the page (`cargo xtask viewer`) and committing `viewer/dist/`.
pub const WASM_TOOLCHAIN: &str = "1.95.0";

/// The `wasm-bindgen` version pinned in Cargo.lock: the CLI must match it exactly.
fn wasm_bindgen_version() -> Result<String> {
    let lock =
        std::fs::read_to_string(root().join("Cargo.lock")).context("cannot read Cargo.lock")?;
    let mut lines = lock.lines();
    while let Some(l) = lines.next() {
        if l.trim() == "name = \"wasm-bindgen\"" {
            if let Some(v) = lines
                .next()
                .and_then(|v| v.trim().strip_prefix("version = \""))
            {
                return Ok(v.trim_end_matches('"').to_string());
            }
        }
    }
    bail!("Cargo.lock has no wasm-bindgen package; is viewer/ a workspace member?")
}

fn output_of(cmd: &mut Command) -> Option<String> {
    let out = cmd.output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Installs what building the viewer needs. Idempotent: each step checks first.
pub fn install() -> Result<()> {
    let targets = output_of(Command::new("rustup").args([
        "target",
        "list",
        "--installed",
        "--toolchain",
        WASM_TOOLCHAIN,
    ]));
    if !targets.is_some_and(|t| t.lines().any(|l| l.trim() == "wasm32-unknown-unknown")) {
        run_cmd(Command::new("rustup").args([
            "toolchain",
            "install",
            WASM_TOOLCHAIN,
            "--profile",
            "minimal",
            "--target",
            "wasm32-unknown-unknown",
        ]))
        .with_context(|| {
            format!("the viewer needs Rust {WASM_TOOLCHAIN} with the target wasm32-unknown-unknown")
        })?;
    }
    let want = wasm_bindgen_version()?;
    let have = output_of(Command::new("wasm-bindgen").arg("--version"));
    if have.as_deref().map(str::trim) != Some(&format!("wasm-bindgen {want}")) {
        // Without --locked: the CLI's own lock file pins a yanked crate.
        run_cmd(cargo().args(["install", "wasm-bindgen-cli", "--version", &want]))
            .with_context(|| format!("the viewer needs wasm-bindgen-cli {want} (the version of the wasm-bindgen crate in Cargo.lock)"))?;
    }
    if output_of(Command::new("npm").arg("--version")).is_none() {
        bail!("the viewer needs Node.js and npm (for wasm-opt from npm `binaryen` and the browser tests' playwright-core); install them (Debian: apt-get install nodejs npm)");
    }
    let modules = viewer_dir().join("node_modules");
    let stamp = modules.join(".package-lock.json");
    let fresh = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let up_to_date = match (
        fresh(&stamp),
        fresh(&viewer_dir().join("package-lock.json")),
    ) {
        (Some(a), Some(b)) => a >= b,
        _ => false,
    };
    if !up_to_date || !modules.join(".bin").join("wasm-opt").exists() {
        run_cmd(
            Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund", "--prefix"])
                .arg(viewer_dir()),
        )?;
    }
    Ok(())
}

/// Installs Debian's Chromium when `/usr/bin/chromium` is missing (the browser tests drive it).
pub fn install_browser() -> Result<()> {
    if Path::new("/usr/bin/chromium").exists() {
        return Ok(());
    }
    crate::test::apt_install(&["chromium", "chromium-driver"])
        .context("the viewer's browser tests need Chromium at /usr/bin/chromium")
}

/// Builds the viewer and runs its browser tests (node's test runner, playwright-core,
/// Debian's Chromium). The screenshot lands in `target/viewer-test/`.
pub fn test() -> Result<()> {
    install()?;
    install_browser()?;
    let out = build()?;
    let dir = root().join("target").join("viewer-test");
    fixtures(&dir)?;
    fixtures_page::fixtures(&dir)?;
    run_cmd(
        Command::new("node")
            .args(["--test", "--test-reporter=spec"])
            .arg(viewer_dir().join("tests/browser/viewer.test.mjs"))
            .arg(viewer_dir().join("tests/browser/analyze.test.mjs"))
            .arg(viewer_dir().join("tests/browser/compare.test.mjs"))
            .arg(viewer_dir().join("tests/browser/page.test.mjs"))
            .arg(viewer_dir().join("tests/browser/summary.test.mjs"))
            .env("GPUWHY_VIEWER_SITE", out.join("www"))
            .env("GPUWHY_VIEWER_FIXTURES", &dir)
            .env("GPUWHY_BIN", fixtures::gpuwhy_bin()?),
    )?;
    // After the tests, so that they run on a module over its size goal too.
    build::check_size(&out)?;
    // Last, so that a change to the viewer is tested before it is committed: the page in
    // viewer/dist/ (what every gpuwhy binary embeds) must be this build's.
    dist::check(&out)
}

/// The viewer's benchmark: a 24 h × 8 GPU report rendered in headless Chromium (goal
/// ≤ 500 ms) and the WebAssembly module's gzipped size (goal ≤ 150 kB).
pub fn bench() -> Result<()> {
    install()?;
    install_browser()?;
    let out = build()?;
    let dir = root().join("target").join("viewer-bench");
    std::fs::create_dir_all(&dir)?;
    let report = long_report(24.0, 8);
    let path = dir.join("long-24h-8gpu.json");
    // Compact, as a recorder writing for size would; pretty JSON would triple it.
    let json = serde_json::to_string(&report).context("cannot serialise the long report")?;
    std::fs::write(&path, json).with_context(|| format!("cannot write {}", path.display()))?;
    run_cmd(
        Command::new("node")
            .arg(viewer_dir().join("tests/browser/bench.mjs"))
            .arg(out.join("www"))
            .arg(&path)
            .arg(out.join("pkg/gpuwhy_viewer_bg.wasm")),
    )
}
