//! `gpuwhy diagnose FILE [--json]`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use gpuwhy::analysis::diagnose;
use gpuwhy::report::Report;

/// Arguments of `gpuwhy diagnose`.
#[derive(clap::Args)]
pub struct Args {
    /// A report written by `gpuwhy record`/`demo`, or its `.partial` journal
    file: PathBuf,
    /// Print the verdict and findings as JSON instead of text
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let mut report = Report::load(&a.file)?;
    // Re-run the rules: a report keeps its samples, so newer rules apply to older reports.
    diagnose(&mut report);
    if a.json {
        let out = serde_json::json!({ "verdict": report.verdict, "findings": report.findings, "run": report.run });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print!("{}", crate::render::text(&report));
    }
    Ok(ExitCode::SUCCESS)
}
