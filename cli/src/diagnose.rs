//! `gpuwhy diagnose FILE… [--trace TRACE] [--json]`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

/// Arguments of `gpuwhy diagnose`.
#[derive(clap::Args)]
pub struct Args {
    /// What to diagnose, told apart by content: a report written by `gpuwhy record`/`demo`
    /// (or its `.partial` journal), an `nvidia-smi dmon` log, an `nvidia-smi --query-gpu
    /// ... --format=csv` log, or PyTorch profiler traces (.json/.json.gz, one per rank)
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// A PyTorch profiler trace of the same run, read beside the report or log (repeat for
    /// several ranks)
    #[arg(long, value_name = "TRACE")]
    trace: Vec<PathBuf>,
    /// Sample interval of a log without timestamps (dmon's -d, the CSV's -l), e.g. 1s, 500ms
    #[arg(long, value_parser = crate::duration::parse_seconds)]
    interval: Option<f64>,
    /// The --query-gpu field list of a CSV written with `noheader`
    #[arg(long, value_delimiter = ',')]
    fields: Option<Vec<String>>,
    /// Read traces with HTA's inclusion choices (drop the last step and unmatched GPU
    /// operations, count sync records as busy, round timestamps to whole µs) to compare
    /// numbers with it
    #[arg(long)]
    hta_choices: bool,
    /// The job's GPUs, replacing what the report decided: NVML indices or GPU or MIG UUIDs,
    /// comma-separated; the others are shown but not judged
    #[arg(long, value_name = "LIST")]
    gpus: Option<String>,
    /// Print the verdict and findings as JSON instead of text
    #[arg(long)]
    json: bool,
}

/// Marks the GPUs `sel` names as the job's and diagnoses again (with the trace, as before).
fn choose_gpus(loaded: &mut crate::import::Loaded, sel: &[gpuwhy::jobgpus::Selector]) {
    let r = &mut loaded.report;
    let job = gpuwhy::jobgpus::override_report(&r.devices, r.run.job_gpus.as_ref(), sel);
    r.run.job_gpus = Some(job);
    match &loaded.trace {
        Some(t) => gpuwhy::analysis::diagnose_traced(r, t),
        None => gpuwhy::analysis::diagnose(r),
    }
    gpuwhy::analysis::temper(r);
}

pub fn run(a: Args) -> Result<ExitCode> {
    let gpus = match &a.gpus {
        Some(g) => {
            Some(gpuwhy::jobgpus::parse_gpus(g).map_err(|e| anyhow::anyhow!("--gpus: {e}"))?)
        }
        None => None,
    };
    // Re-run the rules: a report keeps its samples, so newer rules apply to older reports.
    let loaded = crate::import::load(&crate::import::Inputs {
        files: &a.files,
        traces: &a.trace,
        interval_s: a.interval,
        fields: a.fields.clone(),
        hta: a.hta_choices,
    })?;
    let mut loaded = loaded;
    if let Some(sel) = &gpus {
        choose_gpus(&mut loaded, sel);
    }
    let report = &loaded.report;
    if a.json {
        let out = serde_json::json!({
            "verdict": report.verdict,
            "findings": report.findings,
            "run": report.run,
            "trace": loaded.trace,
            "notes": loaded.notes,
            // A job report's rows (every rank), and a report's comparison with its baseline.
            "ranks": report.ranks.as_ref().map(|r| &r.ranks),
            "stragglers": report.ranks.as_ref().map(|r| &r.stragglers),
            "comparison": report.comparison,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        for n in &loaded.notes {
            eprintln!("note: {n}");
        }
        print!("{}", crate::render::text(report));
        if let Some(l) = crate::jobgpus::line(report) {
            println!("\n{l}");
        }
        if let Some(t) = &loaded.trace {
            print!("{}", crate::import_render::trace_text(t));
        }
    }
    Ok(ExitCode::SUCCESS)
}
