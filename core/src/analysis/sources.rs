//! Diagnosing what came from elsewhere than a recording: a report read with a profiler
//! trace ([`diagnose_traced`]), an imported log, whose source can show less
//! ([`diagnose_log`], [`temper`]), and any file `gpuwhy diagnose` reads
//! ([`diagnose_any`]). The importers and the trace reader only read; the rules run and the
//! verdict is written here.

use super::{diagnose, diagnose_with};
use crate::import::{load, Input, Loaded};
use crate::report::Report;
use crate::rules::round;
use crate::rules::traced::from_trace;
use crate::signals::Signals;
use crate::trace::TraceSummary;
use crate::Result;

/// A diagnosed input.
#[derive(Debug, Clone)]
pub struct Diagnosed {
    /// The report with fresh findings and verdict.
    pub report: Report,
    /// What the log importer inferred or left out, one sentence each (none for a report, a
    /// journal or a trace alone).
    pub notes: Vec<String>,
    /// Samples of the GPU with the most, for an imported log.
    pub samples: Option<usize>,
}

/// Reads `input` into a report ([`crate::import::load`]: a report or journal parsed, a log
/// imported, or without an input the report of `trace` alone) and runs the rules on it: with
/// `trace` attached when given ([`diagnose_traced`]), alone otherwise ([`diagnose`]); then a
/// log of few samples has its confidence lowered ([`temper`]).
///
/// Errors are [`crate::import::load`]'s.
pub fn diagnose_any(input: Option<Input<'_>>, trace: Option<&TraceSummary>) -> Result<Diagnosed> {
    let Loaded {
        mut report,
        notes,
        samples,
    } = load(input, trace)?;
    match trace {
        Some(t) => diagnose_traced(&mut report, t),
        None => diagnose(&mut report),
    }
    temper(&mut report);
    Ok(Diagnosed {
        report,
        notes,
        samples,
    })
}

/// Runs the rules on `report` with `trace` attached ([`diagnose_with`]); when no rule fires
/// the verdict says what the trace shows.
pub fn diagnose_traced(report: &mut Report, trace: &TraceSummary) {
    let mut s = Signals::from_report(report);
    s.trace = Some(trace.clone());
    diagnose_with(report, &s);
    if report.verdict.id == "none" {
        if let Some(b) = trace.busy_share() {
            report.verdict.summary = format!(
                "No rule fired: in the profiler trace the GPU is busy {:.0}% of the traced span.",
                b * 100.0
            );
        } else if trace.ranks.iter().all(|r| r.streams.is_empty()) {
            report.verdict.summary = no_gpu_operations(trace);
        }
    }
}

/// The verdict for a trace without a single GPU operation (a CPU-only recording).
fn no_gpu_operations(trace: &TraceSummary) -> String {
    let events: u64 = trace.ranks.iter().map(|r| r.events).sum();
    let steps: usize = trace.ranks.iter().map(|r| r.step_stats.count).sum();
    let in_steps = match trace.ranks.first() {
        Some(r) if steps > 0 => format!(
            " over {steps} profiler steps (CPU time per step p50 {:.1} ms)",
            r.step_stats.cpu_us.p50 / 1e3
        ),
        _ => String::new(),
    };
    format!(
        "The profiler trace has no GPU operations: no kernel, memcpy or memset among its \
         {events} events{in_steps}, so the traced code ran on the CPU only and there is no GPU \
         time to explain. To see why a GPU is idle, record on the GPU machine with \
         ProfilerActivity.CUDA in torch.profiler's activities."
    )
}

/// Samples per GPU below which an imported log's findings lose confidence: percentiles
/// (p5/p95) and the periodicity search (at least 16 samples and two periods) mean little on
/// fewer, and 60 is one minute at dmon's default 1 s interval.
pub const FEW_SAMPLES: usize = 60;

/// Runs the rules on a report imported from a log ([`diagnose`]) and, when
/// the log has fewer than [`FEW_SAMPLES`] samples per GPU, lowers every finding's confidence
/// in proportion (to at most half) and says so in the verdict and the findings — except
/// findings measured from a profiler trace of the same run.
pub fn diagnose_log(report: &mut Report) {
    diagnose(report);
    temper(report);
}

/// Lowers confidence for short logs (see [`diagnose_log`]); a no-op for other reports.
pub fn temper(report: &mut Report) {
    if !matches!(report.run.source.as_str(), "dmon" | "csv" | "smi") {
        return;
    }
    let n = report
        .series
        .iter()
        .map(|s| s.data.t.len() + s.data.coarse.as_ref().map_or(0, |c| c.t_start.len()))
        .max()
        .unwrap_or(0);
    if n >= FEW_SAMPLES {
        return;
    }
    let factor = (n as f64 / FEW_SAMPLES as f64).max(0.5);
    let what = match report.run.source.as_str() {
        "smi" => "nvidia-smi -q dump",
        "dmon" => "dmon log",
        _ => "csv log",
    };
    let why = if n <= 1 {
        format!("Only 1 sample per GPU was in the {what}: confidence is lowered; a log of at least {FEW_SAMPLES} samples would settle it.")
    } else {
        format!(
            "Only {n} samples per GPU ({:.0} s) were in the {what}: confidence is lowered; a log of at least {FEW_SAMPLES} samples would settle it.",
            report.run.duration_s,
        )
    };
    // Findings measured from a profiler trace read beside the log keep their confidence.
    // A failing GPU is the driver's own word on its errors, not a reading of few samples.
    for f in report
        .findings
        .iter_mut()
        .filter(|f| !from_trace(f) && f.id != "gpu_fault")
    {
        f.confidence = round(f.confidence * factor);
        f.unseen.push(why.clone());
    }
    crate::analysis::settle_severity(&mut report.findings);
    let top_from_trace = report.findings.first().is_some_and(from_trace);
    if let Some(top) = report.findings.first() {
        report.verdict.confidence = top.confidence;
    }
    // Below the samples a pattern needs, the verdict already says what would settle it
    // (`claims::thin`).
    if !top_from_trace && n >= crate::rules::MIN_SERIES_SAMPLES {
        report.verdict.summary = format!("{} ({why})", report.verdict.summary);
    }
}
