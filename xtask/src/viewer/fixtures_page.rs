//! The browser tests' pages: the page `gpuwhy demo` leaves with the viewer
//! embedded in the binary (no viewer build, no `GPUWHY_VIEWER_PAGE`: what a fresh clone's
//! `cargo run --release -- demo` gives), a single file with the analysis module, and a
//! report of 100,000 steps for the step chart.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};
use gpuwhy::report::Report;

use super::fixtures::{gpuwhy_bin, synthetic_steps};
use super::long_report::long_report;
use super::out_dir;
use crate::run_cmd;

/// Writes into `dir`: `fresh/gpuwhy-demo-data_starvation.{json,html}` (`gpuwhy demo` run
/// in `fresh/` with its defaults), `analysis.html` (`gpuwhy view --with-analysis` of the
/// demo report, with this build's page) and `steps100k.{json,html}` (6.5 hours of one GPU
/// with about 100,000 steps).
pub(super) fn fixtures(dir: &Path) -> Result<()> {
    let bin = gpuwhy_bin()?;
    let fresh = dir.join("fresh");
    if fresh.exists() {
        std::fs::remove_dir_all(&fresh)?;
    }
    std::fs::create_dir_all(&fresh)?;
    // As a new user runs it: no arguments, no viewer page named, in an empty directory.
    let out = Command::new(&bin)
        .arg("demo")
        .env_remove("GPUWHY_VIEWER_PAGE")
        .current_dir(&fresh)
        .output()
        .context("cannot run gpuwhy demo")?;
    let said = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() || !said.contains("Open it in a browser: file://") {
        bail!(
            "gpuwhy demo failed or did not say how to open its page ({}):\n{said}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::fs::write(fresh.join("stdout.txt"), said.as_bytes())?;
    let page = out_dir().join("gpuwhy-viewer.html");
    run_cmd(
        Command::new(&bin)
            .arg("view")
            .arg(fresh.join("gpuwhy-demo-data_starvation.json"))
            .arg("--with-analysis")
            .arg("-o")
            .arg(dir.join("analysis.html"))
            .env("GPUWHY_VIEWER_PAGE", &page),
    )?;
    let mut long: Report = long_report(6.5, 1);
    long.steps = Some(synthetic_steps(long.run.duration_s));
    let json = dir.join("steps100k.json");
    let text = serde_json::to_string(&long).context("cannot serialise the long report")?;
    std::fs::write(&json, text)?;
    run_cmd(
        Command::new(&bin)
            .arg("view")
            .arg(&json)
            .env("GPUWHY_VIEWER_PAGE", &page),
    )
}
