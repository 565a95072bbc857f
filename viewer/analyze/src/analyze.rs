//! One dropped file in, a diagnosed report out: the kind told by content with core's
//! [`import::detect`], then core's [`analysis::diagnose_any`] — the path `gpuwhy diagnose FILE`
//! takes too (`cli/src/import.rs`) — on the bytes instead of a file.

use std::path::Path;

use gpuwhy::analysis::{self, Diagnosed};
use gpuwhy::import::{self, ImportOptions, Input, Kind};
use gpuwhy::report::{Report, Tool};
use gpuwhy::trace::{self, Choices, ReadOptions, TraceSummary};

/// A diagnosed file.
#[derive(Debug, Clone)]
pub struct Analysis {
    /// The report with fresh findings; its verdict's summary ends with [`Analysis::source`].
    pub report: Report,
    /// What the file was.
    pub kind: Kind,
    /// One sentence: what was read and where it was analysed ("From an nvidia-smi dmon log
    /// (run.log): 120 samples per GPU …").
    pub source: String,
    /// What was inferred or left out while reading it, one sentence each.
    pub notes: Vec<String>,
}

impl Analysis {
    /// The report as compact JSON, for the viewer to draw.
    pub fn report_json(&self) -> Result<String, String> {
        serde_json::to_string(&self.report).map_err(|e| format!("cannot write the report: {e}"))
    }
}

/// The kind of file `bytes` holds, as `gpuwhy diagnose` tells it (core's [`import::detect`]
/// on the first [`import::DETECT_BYTES`]); `None` when gpuwhy reads no such file.
pub fn detect(bytes: &[u8]) -> Option<Kind> {
    import::detect(&bytes[..bytes.len().min(import::DETECT_BYTES)])
}

/// Reads `bytes` (a report, a crash journal, an `nvidia-smi dmon` log, an `nvidia-smi
/// --query-gpu … --format=csv` log or a PyTorch profiler trace, `.json` or `.json.gz`) and
/// runs the rules on it. `name` is the file's name, for messages and the report's label.
///
/// Errors are one message naming the file and, where the reader knows it, the line or the
/// byte offset and what was expected there.
pub fn analyze(bytes: &[u8], name: &str) -> Result<Analysis, String> {
    let path = Path::new(name);
    let Some(kind) = detect(bytes) else {
        return Err(unknown(bytes, name));
    };
    let err = |e: gpuwhy::Error| e.to_string();
    // A trace is read from the bytes here (the CLI streams its file); the rest is core's.
    let trace = match kind {
        Kind::Trace => {
            let choices = Choices::default();
            let opts = ReadOptions {
                choices,
                label: name.to_string(),
                position: 0,
            };
            let rank = trace::read_slice(bytes, &opts).map_err(err)?;
            Some(TraceSummary::from_ranks(vec![rank], choices))
        }
        _ => None,
    };
    let input = trace.is_none().then(|| Input::Bytes {
        kind,
        bytes,
        opts: ImportOptions {
            path: path.to_path_buf(),
            ..ImportOptions::default()
        },
    });
    let Diagnosed {
        mut report,
        notes,
        samples,
    } = analysis::diagnose_any(input, trace.as_ref()).map_err(err)?;
    let (source, notes) = match &trace {
        Some(t) => (trace_source(t, name), t.choices_text.clone()),
        None => (file_source(kind, &report, samples, name), notes),
    };
    report.verdict.summary = format!("{} {source}", report.verdict.summary);
    Ok(Analysis {
        report,
        kind,
        source,
        notes,
    })
}

/// The sentence for a report, a journal or a log; `samples` per GPU of a log.
fn file_source(kind: Kind, report: &Report, samples: Option<usize>, name: &str) -> String {
    let what = match kind {
        Kind::Journal => {
            return format!("Replayed in this browser from {name}, the journal of an interrupted recording, and diagnosed.")
        }
        Kind::Report => {
            return format!(
                "Rules re-run in this browser by gpuwhy {} on the samples of {name} (written by gpuwhy {}).",
                Tool::default().version,
                report.tool.version
            )
        }
        Kind::Dmon => "an nvidia-smi dmon log",
        Kind::Smi => "an nvidia-smi -q dump",
        Kind::Csv | Kind::Trace => "an nvidia-smi --query-gpu CSV log",
    };
    let gpus = report.series.len();
    format!(
        "From {what} ({name}), analysed in this browser: {} samples per GPU, {gpus} GPU{}, {} s apart.",
        samples.unwrap_or_default(),
        if gpus == 1 { "" } else { "s" },
        round(report.run.interval_s)
    )
}

/// The sentence for a trace read alone.
fn trace_source(t: &TraceSummary, name: &str) -> String {
    let mut s = format!("From a PyTorch profiler trace ({name}), analysed in this browser");
    if let Some(r) = t.ranks.first() {
        s.push_str(&format!(
            ": rank {}, {} events, {} kernels",
            r.rank, r.events, r.kernels.count
        ));
        if let Some(b) = t.busy_share() {
            s.push_str(&format!(", GPU busy {:.0}% of the traced span", b * 100.0));
        }
    }
    s.push('.');
    s
}

/// Seconds shown to a millisecond at most.
fn round(s: f64) -> f64 {
    (s * 1000.0).round() / 1000.0
}

/// Why a file that is none of the kinds gpuwhy reads was refused: where it stops being
/// text, or which line was expected to be a header.
fn unknown(bytes: &[u8], name: &str) -> String {
    const KINDS: &str = "a gpuwhy report or crash journal (JSON), an `nvidia-smi dmon` log (first line \
        `# gpu pwr gtemp sm mem …`), an `nvidia-smi --query-gpu=… --format=csv` log (a comma-separated \
        header such as `timestamp, index, utilization.gpu [%]`), or a PyTorch profiler trace \
        (.json or .json.gz)";
    let head = &bytes[..bytes.len().min(import::DETECT_BYTES)];
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return format!("{name} is empty; expected {KINDS}");
    }
    if let Err(e) = std::str::from_utf8(head) {
        // A multi-byte character cut at the end of the head is still text.
        if e.error_len().is_some() {
            return format!(
                "{name}: byte {} is not UTF-8 text (a binary file?); expected {KINDS}",
                e.valid_up_to()
            );
        }
    }
    let text = String::from_utf8_lossy(head);
    let line = text
        .lines()
        .position(|l| !l.trim().is_empty())
        .map_or(1, |i| i + 1);
    format!("{name}: line {line} is not the start of a file gpuwhy reads; expected {KINDS}")
}
