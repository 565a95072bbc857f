//! `cargo xtask test`: formatting, lints, every crate's tests, the scenario table, the
//! accuracy corpus.

use anyhow::Result;

use crate::{cargo, run_cmd};

pub fn run(_args: &[String]) -> Result<()> {
    install()?;
    run_cmd(cargo().args(["fmt", "--all", "--check"]))?;
    run_cmd(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    // core's modules only point down its layers (known violations are printed as debt).
    crate::layers::run(&[])?;
    // No function grows past 80 lines beyond the listed debt, and no test sleeps.
    crate::hygiene::run(&[])?;
    // Tests that need an external tool fail instead of skipping when it is missing.
    run_cmd(
        cargo()
            .args(["test", "--workspace", "--all-targets"])
            .env("GPUWHY_REQUIRE_TOOLS", "1"),
    )?;
    // Doc tests and rustdoc links.
    run_cmd(cargo().args(["test", "--workspace", "--doc"]))?;
    // The Python wheel, installed offline into a fresh virtual environment and run there.
    crate::wheel::test()?;
    let failed = crate::scenarios::run(&[])?;
    if failed > 0 {
        anyhow::bail!("{failed} scenario(s) did not produce their expected top finding");
    }
    // The accuracy corpus: real logs and traces, and simulated jobs beyond the bundle.
    crate::accuracy::run(&[])?;
    // The viewer: its WebAssembly build and its tests in a real browser.
    crate::viewer::test()?;
    // The readers of untrusted files under libFuzzer, a few seconds each.
    crate::fuzz::smoke()?;
    eprintln!("xtask: all tests passed");
    Ok(())
}

/// Installs what the tests need. Idempotent: each step checks before it installs.
fn install() -> Result<()> {
    // The viewer: the wasm32 target, wasm-bindgen-cli, npm packages and Chromium.
    crate::viewer::install()?;
    crate::viewer::install_browser()?;
    // promtool (Debian's `prometheus` package) validates the Prometheus exports.
    if !have("promtool") {
        apt_install(&["prometheus"])?;
    }
    // The C ABI's packaging test builds the C++ example with both.
    if !have("cmake") {
        apt_install(&["cmake"])?;
    }
    if !have("pkg-config") {
        apt_install(&["pkg-config"])?;
    }
    Ok(())
}

/// True when `tool` runs.
pub fn have(tool: &str) -> bool {
    std::process::Command::new(tool)
        .arg("--version")
        .output()
        .is_ok()
}

/// `apt-get update` then `apt-get install -y PACKAGES` (CI and developer machines run as root).
pub fn apt_install(packages: &[&str]) -> Result<()> {
    run_cmd(
        std::process::Command::new("apt-get")
            .arg("update")
            .arg("-qq"),
    )?;
    run_cmd(
        std::process::Command::new("apt-get")
            .args(["install", "-y", "-qq", "--no-install-recommends"])
            .args(packages)
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )
}
