//! `cargo xtask test`: formatting, lints, every crate's tests, the scenario table.

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
    run_cmd(cargo().args(["test", "--workspace", "--all-targets"]))?;
    // Doc tests and rustdoc links.
    run_cmd(cargo().args(["test", "--workspace", "--doc"]))?;
    let failed = crate::scenarios::run(&[])?;
    if failed > 0 {
        anyhow::bail!("{failed} scenario(s) did not produce their expected top finding");
    }
    eprintln!("xtask: all tests passed");
    Ok(())
}

/// Installs what the tests need. Idempotent: each step checks before it installs.
fn install() -> Result<()> {
    // rustfmt and clippy ship with the toolchain here; nothing else is needed yet.
    Ok(())
}
