//! `gpuwhy record [-o FILE] [--interval D] [--duration D] [-- CMD ARGS…]`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use gpuwhy::analysis::diagnose;
use gpuwhy::collect::{Recorder, RecorderConfig};
use gpuwhy::compare::BaselineComparison;
use gpuwhy::recording::Recording;
use gpuwhy::report::journal::journal_path;
use gpuwhy::report::{JobPlace, Report};
use gpuwhy::session::{Provisional, PROVISIONAL_PERIOD_S};

use crate::duration::parse_seconds;
use crate::live::Live;

/// Arguments of `gpuwhy record`.
#[derive(clap::Args)]
pub struct Args {
    /// Where to write the report
    #[arg(short, long, default_value = "gpuwhy-report.json")]
    output: PathBuf,
    /// Sampling interval (10ms–10s)
    #[arg(long, default_value = "100ms", value_parser = parse_seconds)]
    interval: f64,
    /// Stop after this long (default: when the command exits, or at Ctrl-C)
    #[arg(long, value_parser = parse_seconds)]
    duration: Option<f64>,
    /// A label for the run, shown in the report
    #[arg(long)]
    label: Option<String>,
    /// Path of libnvidia-ml.so.1 (default: GPUWHY_NVML_PATH, then the system's)
    #[arg(long)]
    nvml: Option<PathBuf>,
    /// Do not read GPM counters (use when Nsight or DCGM profiling runs at the same time)
    #[arg(long)]
    no_gpm: bool,
    /// No live status lines on stderr
    #[arg(short, long)]
    quiet: bool,
    /// Say more: when no NVIDIA driver is found, every place that was searched and why
    #[arg(short, long)]
    verbose: bool,
    /// Keep this file up to date (rewritten atomically every few seconds) with the latest
    /// values and the current verdict, for node_exporter's textfile collector
    #[arg(long, value_name = "PATH")]
    prometheus_textfile: Option<PathBuf>,
    /// Also write the report as a self-contained HTML page beside it (see `gpuwhy view`)
    #[arg(long)]
    html: bool,
    /// A baseline report to compare this run with: the report then carries the comparison
    /// (`gpuwhy diagnose` shows it); a baseline that cannot be read is noted there instead
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// The job's GPUs, when gpuwhy should not work them out: NVML indices (as nvidia-smi
    /// numbers them) or GPU or MIG UUIDs, comma-separated; the others are shown but not judged
    #[arg(long, value_name = "LIST")]
    gpus: Option<String>,
    /// Inside a container: the host's `/proc`, mounted into it (e.g. `/host/proc`), so the
    /// host pids NVML reports can be matched to the job's processes (docs/job-gpus.md)
    #[arg(long, value_name = "DIR")]
    host_proc: Option<PathBuf>,
    /// Recorded time between the provisional diagnoses that keep full resolution around
    /// what a long run's findings cite (docs/report-format.md, "Retention"); 0 turns them off
    #[arg(long, value_name = "D", default_value_t = PROVISIONAL_PERIOD_S, value_parser = parse_seconds)]
    provisional_period: f64,
    /// The command to run and record, after `--`
    #[arg(last = true)]
    command: Vec<String>,
}

/// How often `--prometheus-textfile` is rewritten.
const PROMETHEUS_EVERY: Duration = Duration::from_secs(5);

/// Rewrites the Prometheus textfile from a snapshot of the recording; a failure is a
/// warning, never the end of the recording.
fn write_prometheus(recorder: &Recorder, path: &Path) {
    let mut r = Report::from_recording(&recorder.snapshot());
    diagnose(&mut r);
    if let Err(e) =
        gpuwhy::report::write_atomic(path, gpuwhy::export::prometheus_text(&r).as_bytes())
    {
        eprintln!("gpuwhy: warning: cannot update {}: {e}", path.display());
    }
}

/// Writes the report of a finished recording atomically (compared with `baseline`, when
/// one is given), then removes the journal.
pub fn finish(rec: &Recording, out: &Path, baseline: Option<&Path>) -> Result<Report> {
    let mut report = Report::from_recording(rec);
    diagnose(&mut report);
    if let Some(b) = baseline {
        report.comparison = Some(BaselineComparison::of(&report, b));
    }
    save(&report, out)?;
    Ok(report)
}

/// Writes a report atomically, then removes the recording's journal. On failure the journal
/// stays, and the error says where the data is.
pub fn save(report: &Report, out: &Path) -> Result<()> {
    let journal = journal_path(out);
    report.save(out).with_context(|| {
        format!(
            "the recording is not lost: it stays in the journal {} (`gpuwhy diagnose` reads it)",
            journal.display()
        )
    })?;
    let _ = std::fs::remove_file(&journal);
    Ok(())
}

pub fn run(a: Args) -> Result<ExitCode> {
    if a.duration.is_none() && a.command.is_empty() {
        eprintln!("gpuwhy: recording until Ctrl-C (give `-- CMD ARGS…` to record a command, or --duration)");
    }
    if let Some(g) = &a.gpus {
        gpuwhy::jobgpus::parse_gpus(g).map_err(|e| anyhow::anyhow!("--gpus: {e}"))?;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let s2 = Arc::clone(&stop);
    ctrlc::set_handler(move || s2.store(true, Ordering::SeqCst))
        .context("cannot install the Ctrl-C handler")?;
    let mut child = spawn(&a.command)?;
    let recorder = Recorder::start(config(&a, child.as_ref()))?;
    // Keeps full resolution around what a long run's findings cite (docs/report-format.md,
    // "Retention"); stopped before the recorder.
    let mut provisional = match a.provisional_period {
        0.0 => None,
        period => Some(Provisional::for_recorder(&recorder, period)?),
    };
    let (ended_by, exit, gpus_told) = watch(&a, &recorder, child.as_mut(), &stop)?;
    if let Some(p) = provisional.as_mut() {
        p.stop();
    }
    if let Some(e) = recorder.journal_error() {
        eprintln!("gpuwhy: warning: the crash journal could not be written ({e}); the report is still written at the end");
    }
    let mut rec = recorder.stop();
    let no_gpu_told = gpus_told && rec.gpu_absent_reason.is_some();
    if !gpus_told {
        if let Some(why) = &rec.gpu_absent_reason {
            eprintln!(
                "gpuwhy: no GPU metrics were recorded: {}",
                gpuwhy::headline(why)
            );
        }
    }
    rec.run.complete = true;
    rec.run.ended_by = Some(ended_by.into());
    rec.run.exit_code = exit.and_then(|s| s.code());
    let report = finish(&rec, &a.output, a.baseline.as_deref())?;
    tell_end(&a, &report, no_gpu_told)?;
    let code = match exit {
        Some(st) => exit_code_of(st),
        None => 0,
    };
    Ok(ExitCode::from(code))
}

/// Starts the recorded command, if there is one.
fn spawn(command: &[String]) -> Result<Option<std::process::Child>> {
    let Some((exe, args)) = command.split_first() else {
        return Ok(None);
    };
    let c = std::process::Command::new(exe)
        .args(args)
        .spawn()
        .with_context(|| format!("cannot start `{exe}`: is it installed and on PATH?"))?;
    Ok(Some(c))
}

/// The recorder's configuration from the command line and the job's environment.
fn config(a: &Args, child: Option<&std::process::Child>) -> RecorderConfig {
    let mut cfg = RecorderConfig {
        interval_s: a.interval,
        nvml_path: a.nvml.clone(),
        gpm: !a.no_gpm,
        target_pid: child.map(std::process::Child::id),
        journal: Some(journal_path(&a.output)),
        ..RecorderConfig::default()
    };
    cfg.job.gpus = a.gpus.clone();
    cfg.job.host_proc = a.host_proc.clone();
    cfg.run.label = a.label.clone();
    cfg.run.command = (!a.command.is_empty()).then(|| a.command.clone());
    if let Some(place) = JobPlace::from_env() {
        place.apply(&mut cfg.run);
    }
    cfg
}

/// Shows the live status until the command exits, the duration is reached or Ctrl-C;
/// returns why the recording ended, the command's exit status, and whether the absence of
/// GPU metrics was already said.
fn watch(
    a: &Args,
    recorder: &Recorder,
    mut child: Option<&mut std::process::Child>,
    stop: &AtomicBool,
) -> Result<(&'static str, Option<std::process::ExitStatus>, bool)> {
    // NVML loads on the sampler thread, and a slow driver can take seconds: whether there
    // are GPU metrics is said as soon as it is known, at start or later in the loop.
    let mut gpus_told = false;
    tell_gpus(recorder, &mut gpus_told, a.verbose);
    let started = Instant::now();
    let mut live = Live::new(a.quiet);
    let mut interrupted_at: Option<Instant> = None;
    let mut last_prom: Option<Instant> = None;
    loop {
        std::thread::sleep(Duration::from_millis(50));
        tell_gpus(recorder, &mut gpus_told, a.verbose);
        live.tick(recorder);
        if let Some(p) = &a.prometheus_textfile {
            if last_prom.is_none_or(|t| t.elapsed() >= PROMETHEUS_EVERY) {
                last_prom = Some(Instant::now());
                write_prometheus(recorder, p);
            }
        }
        if let Some(c) = child.as_mut() {
            if let Some(st) = c
                .try_wait()
                .context("cannot wait for the recorded command")?
            {
                return Ok(("command exited", Some(st), gpus_told));
            }
        }
        if a.duration
            .is_some_and(|d| started.elapsed().as_secs_f64() >= d)
        {
            return Ok(("duration reached", None, gpus_told));
        }
        if stop.load(Ordering::SeqCst) {
            // The terminal sent Ctrl-C to the command too; give it a moment to exit so its
            // status can be passed on, but never hang on a command that ignores it.
            let t = *interrupted_at.get_or_insert_with(Instant::now);
            if child.is_none() || t.elapsed() > Duration::from_secs(5) {
                return Ok(("interrupted", None, gpus_told));
            }
        }
    }
}

/// The last lines: the Prometheus file, the verdict, the job's GPUs, the comparison, where
/// the report is, and the HTML page beside it with `--html`.
fn tell_end(a: &Args, report: &gpuwhy::report::Report, no_gpu_told: bool) -> Result<()> {
    if let Some(p) = &a.prometheus_textfile {
        if let Err(e) =
            gpuwhy::report::write_atomic(p, gpuwhy::export::prometheus_text(report).as_bytes())
        {
            eprintln!("gpuwhy: warning: cannot update {}: {e}", p.display());
        }
    }
    // Without GPUs and findings the verdict only repeats why, which was said at the start.
    if !(no_gpu_told && report.findings.is_empty()) {
        eprintln!("gpuwhy: {}", report.verdict.summary);
    }
    if let Some(l) = crate::jobgpus::line(report) {
        eprintln!("gpuwhy: {l}");
    }
    if let Some(c) = &report.comparison {
        match (&c.result, &c.error) {
            (Some(r), _) => eprintln!("gpuwhy: against {}: {}", c.baseline, r.summary),
            (None, Some(e)) => eprintln!("gpuwhy: warning: no comparison with the baseline: {e}"),
            (None, None) => {}
        }
    }
    eprintln!(
        "gpuwhy: report written to {} (details: gpuwhy diagnose {})",
        a.output.display(),
        a.output.display()
    );
    if a.html {
        crate::view::write_beside(report, &a.output)?;
    }
    Ok(())
}

/// Says once, when the GPUs have been probed, that there are no GPU metrics and why, in one
/// line; the places searched for NVML (in the report either way) only with `--verbose`.
fn tell_gpus(recorder: &Recorder, told: &mut bool, verbose: bool) {
    if *told || !recorder.wait_probed(Duration::ZERO) {
        return;
    }
    *told = true;
    if let Some(why) = recorder.gpu_absent_reason() {
        let line = gpuwhy::headline(&why);
        eprintln!("gpuwhy: no GPU metrics will be recorded, host metrics only: {line}");
        if let (true, Some(places)) = (verbose, why.split_once(gpuwhy::TRIED).map(|p| p.1)) {
            eprintln!("gpuwhy: places searched for NVML:");
            for place in places.split("; ") {
                eprintln!("gpuwhy:   {place}");
            }
        }
    }
}

/// The shell's convention: the exit code, or 128 + the signal number.
fn exit_code_of(st: std::process::ExitStatus) -> u8 {
    if let Some(c) = st.code() {
        return c.clamp(0, 255) as u8;
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = st.signal() {
            return (128 + sig).clamp(0, 255) as u8;
        }
    }
    1
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        a: Args,
    }

    #[test]
    fn host_proc_and_gpus_reach_the_recorder_config() {
        let cli = Cli::try_parse_from([
            "record",
            "--host-proc",
            "/host/proc",
            "--gpus",
            "MIG-1234",
            "-o",
            "r.json",
        ])
        .expect("parses");
        let cfg = config(&cli.a, None);
        assert_eq!(
            cfg.job.host_proc.as_deref(),
            Some(std::path::Path::new("/host/proc"))
        );
        assert_eq!(cfg.job.gpus.as_deref(), Some("MIG-1234"));
        let cli = Cli::try_parse_from(["record", "-o", "r.json"]).expect("parses");
        assert_eq!(config(&cli.a, None).job.host_proc, None);
    }
}
