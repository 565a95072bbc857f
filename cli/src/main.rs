//! `gpuwhy`: why is my GPU not busy? Record a job, diagnose a report, merge a job's ranks,
//! list GPUs, run a demo.

mod compare;
mod demo;
mod devices;
mod diagnose;
mod duration;
mod export;
mod import;
mod import_render;
mod jobgpus;
mod live;
mod merge;
mod record;
mod render;
mod summary;
mod summary_files;
mod summary_page;
mod summary_text;
mod view;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Why is my GPU not busy? Watches a training job and says which bottleneck holds GPU
/// utilization down, with the evidence, the fixes ordered by cost, and the experiment that
/// confirms it.
#[derive(Parser)]
#[command(name = "gpuwhy", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List GPUs and which metrics each supports (and why not)
    Devices(devices::Args),
    /// Record GPUs and the host while a command runs (or for a duration), then diagnose
    Record(record::Args),
    /// Diagnose a report (or the `.partial` journal of an interrupted recording), an
    /// nvidia-smi dmon or --query-gpu CSV log, or PyTorch profiler traces
    Diagnose(diagnose::Args),
    /// Run a bundled scenario on the simulated GPU, end to end, and diagnose it
    Demo(demo::Args),
    /// Write a report as one self-contained HTML page that opens offline
    View(view::Args),
    /// Compare a baseline report with a candidate: step times, GPUs, findings, experiments
    Compare(compare::Args),
    /// Export a report as a Chrome trace or as Prometheus metrics
    Export(export::Args),
    /// Merge the reports of a distributed job's ranks: stragglers, imbalance, a job verdict
    Merge(merge::Args),
    /// Summarise many reports: each run's verdict and GPU-hours lost, totals by cause,
    /// label, host and GPU model, the changes tried; as text, JSON or one offline page
    Summary(summary::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Devices(a) => devices::run(a),
        Command::Record(a) => record::run(a),
        Command::Diagnose(a) => diagnose::run(a),
        Command::Demo(a) => demo::run(a),
        Command::View(a) => view::run(a),
        Command::Compare(a) => compare::run(a),
        Command::Export(a) => export::run(a),
        Command::Merge(a) => merge::run(a),
        Command::Summary(a) => summary::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            // One clear line, then the hint carried by the error chain.
            eprintln!("gpuwhy: error: {e}");
            for cause in e.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::from(2)
        }
    }
}
