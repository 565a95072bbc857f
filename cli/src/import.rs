//! What `gpuwhy diagnose` reads besides reports: nvidia-smi dmon and CSV logs, and PyTorch
//! profiler traces — each file's kind told by its content, large files read with a progress
//! line on a terminal.

use std::fs::File;
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use gpuwhy::analysis::{self, Diagnosed};
use gpuwhy::import::{self, ImportOptions, Input, Kind};
use gpuwhy::report::Report;
use gpuwhy::trace::{self, Choices, TraceSummary};

/// Files at least this large get a progress line (when stderr is a terminal).
const PROGRESS_FROM_BYTES: u64 = 64 << 20;

/// What was read: the report to diagnose, the trace of the run, notes for the user.
pub struct Loaded {
    /// The report (from a report, a journal, a log, or built for a trace alone).
    pub report: Report,
    /// The profiler trace, when one was given.
    pub trace: Option<TraceSummary>,
    /// What was inferred or left out while importing.
    pub notes: Vec<String>,
}

/// How to read the files.
pub struct Inputs<'a> {
    /// Files given as arguments.
    pub files: &'a [PathBuf],
    /// Files given with `--trace`.
    pub traces: &'a [PathBuf],
    /// `--interval`, seconds.
    pub interval_s: Option<f64>,
    /// `--fields`.
    pub fields: Option<Vec<String>>,
    /// `--hta-choices`.
    pub hta: bool,
}

/// Reads the first bytes of `path` (decompressed when gzip) and tells its kind.
fn kind_of(path: &Path) -> Result<Kind> {
    let mut head = Vec::new();
    File::open(path)
        .with_context(|| format!("cannot open {}", path.display()))?
        .take(import::DETECT_BYTES as u64)
        .read_to_end(&mut head)
        .with_context(|| format!("cannot read {}", path.display()))?;
    import::detect(&head).with_context(|| {
        format!(
            "{}: not a file gpuwhy reads; expected {}",
            path.display(),
            import::readable_kinds()
        )
    })
}

/// Reads every input and diagnoses it.
pub fn load(inp: &Inputs) -> Result<Loaded> {
    let mut samples: Option<(PathBuf, Kind)> = None;
    let mut traces: Vec<PathBuf> = Vec::new();
    for f in inp.files {
        match kind_of(f)? {
            Kind::Trace => traces.push(f.clone()),
            k => {
                if let Some((other, _)) = &samples {
                    bail!(
                        "{} and {} are both reports or logs: diagnose one at a time (several profiler traces of one run may go together, one per rank)",
                        other.display(),
                        f.display()
                    );
                }
                samples = Some((f.clone(), k));
            }
        }
    }
    for t in inp.traces {
        match kind_of(t)? {
            Kind::Trace => traces.push(t.clone()),
            k => bail!(
                "--trace {}: this is a {} file, not a profiler trace",
                t.display(),
                k.as_str()
            ),
        }
    }
    let choices = if inp.hta {
        Choices::hta()
    } else {
        Choices::default()
    };
    // Traces are read on every core (one large file in parts, many rank files at once), so
    // there is no single stream to show progress on: one line says what is being read.
    let total: u64 = traces
        .iter()
        .filter_map(|t| std::fs::metadata(t).ok())
        .map(|m| m.len())
        .sum();
    if total >= PROGRESS_FROM_BYTES && std::io::stderr().is_terminal() {
        eprintln!(
            "  reading {} profiler trace file(s), {:.0} MB, on {} threads",
            traces.len(),
            total as f64 / 1e6,
            trace::read_threads()
        );
    }
    let ranks = trace::read_files(&traces, choices)?;
    let trace = (!ranks.is_empty()).then(|| TraceSummary::from_ranks(ranks, choices));
    // Reading is this side's (with a progress line); the rest is core's, as in the browser.
    let mut bytes = Vec::new();
    let input = match samples {
        Some((path, Kind::Report | Kind::Journal)) => {
            Some(Input::Report(Box::new(Report::load(&path)?)))
        }
        Some((path, kind)) => {
            progress_reader(&path)?
                .read_to_end(&mut bytes)
                .with_context(|| format!("cannot read {}", path.display()))?;
            Some(Input::Bytes {
                kind,
                bytes: &bytes,
                opts: ImportOptions {
                    path,
                    interval_s: inp.interval_s,
                    fields: inp.fields.clone(),
                },
            })
        }
        None => None,
    };
    let Diagnosed { report, notes, .. } = analysis::diagnose_any(input, trace.as_ref())?;
    Ok(Loaded {
        report,
        trace,
        notes,
    })
}

/// A reader of `path` that shows bytes read and the rate on stderr while it reads, for
/// large files when stderr is a terminal; a plain reader otherwise.
fn progress_reader(path: &Path) -> Result<Box<dyn Read>> {
    let f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let size = f.metadata().map(|m| m.len()).unwrap_or(0);
    if size < PROGRESS_FROM_BYTES || !std::io::stderr().is_terminal() {
        return Ok(Box::new(f));
    }
    Ok(Box::new(Progress {
        inner: f,
        name: path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        size,
        read: 0,
        start: Instant::now(),
        last: Instant::now(),
        done: false,
    }))
}

struct Progress {
    inner: File,
    name: String,
    size: u64,
    read: u64,
    start: Instant,
    last: Instant,
    done: bool,
}

impl Progress {
    fn show(&mut self, end: bool) {
        let secs = self.start.elapsed().as_secs_f64().max(1e-3);
        let mb = |b: u64| b as f64 / 1e6;
        let mut err = std::io::stderr();
        let _ = write!(
            err,
            "\r  reading {}: {:.0} of {:.0} MB ({:.0}%), {:.0} MB/s   ",
            self.name,
            mb(self.read),
            mb(self.size),
            self.read as f64 / self.size.max(1) as f64 * 100.0,
            mb(self.read) / secs
        );
        if end {
            let _ = writeln!(err);
        }
        let _ = err.flush();
    }
}

impl Read for Progress {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        if n == 0 && !self.done {
            self.done = true;
            self.show(true);
        } else if self.last.elapsed() >= Duration::from_millis(250) {
            self.last = Instant::now();
            self.show(false);
        }
        Ok(n)
    }
}
