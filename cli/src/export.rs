//! `gpuwhy export (--chrome-trace OUT.json | --prometheus OUT.prom) REPORT`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Result};
use gpuwhy::analysis::diagnose;
use gpuwhy::export::{chrome_trace, prometheus_text};
use gpuwhy::report::{write_atomic, Report};

/// Arguments of `gpuwhy export`.
#[derive(clap::Args)]
pub struct Args {
    /// Write the report as a Chrome trace (Perfetto, chrome://tracing) to this file
    #[arg(long, value_name = "OUT.json")]
    chrome_trace: Option<PathBuf>,
    /// Write the latest values and the verdict as Prometheus text (node_exporter textfile) to this file
    #[arg(long, value_name = "OUT.prom")]
    prometheus: Option<PathBuf>,
    /// The report
    report: PathBuf,
}

pub fn run(a: Args) -> Result<ExitCode> {
    if a.chrome_trace.is_none() && a.prometheus.is_none() {
        bail!("nothing to export: give --chrome-trace OUT.json and/or --prometheus OUT.prom");
    }
    let mut r = Report::load(&a.report)?;
    diagnose(&mut r);
    if let Some(p) = &a.chrome_trace {
        let text = serde_json::to_string(&chrome_trace(&r))?;
        write_atomic(p, text.as_bytes())?;
        eprintln!("gpuwhy: Chrome trace written to {} (open it in https://ui.perfetto.dev or chrome://tracing)", p.display());
    }
    if let Some(p) = &a.prometheus {
        write_atomic(p, prometheus_text(&r).as_bytes())?;
        eprintln!("gpuwhy: Prometheus metrics written to {}", p.display());
    }
    Ok(ExitCode::SUCCESS)
}
