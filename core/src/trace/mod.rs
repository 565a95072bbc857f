//! PyTorch profiler (Kineto) traces: a streaming reader and the summaries the rules read.
//!
//! A trace is read once, event by event ([`read_rank`]), keeping only GPU operations, CUDA
//! runtime calls and `ProfilerStep#N` ranges in a compact form, so memory follows the
//! number of GPU operations, not the file size; `.json.gz` is decompressed on the fly.
//! Each file is one rank; [`TraceSummary::from_ranks`] adds the cross-rank skew. The
//! summary (per rank and stream: busy and idle time, compute/communication/memory time and
//! overlap, HTA's idle breakdown, kernel and launch statistics, syncs, steps, top kernels)
//! feeds [`crate::signals::Signals::trace`] and through it the rules. The format read is
//! documented in `docs/trace-format.md`; the inclusion choices that change the numbers are
//! in [`Choices`] and stated in every summary.
//!
//! Not for: viewing traces, or Nsight Systems reports.

mod activity;
mod analyze;
mod events;
mod fast;
mod gaps;
mod intervals;
mod multi;
#[cfg(feature = "parallel")]
mod parallel;
mod read;
mod split;
mod steps;
mod summary;

pub use activity::CPU_OP_MIN_US;
pub(crate) use activity::{classify, is_allocator_call, CpuKind};
pub use gaps::{GapCauses, LAUNCH_GAP_MAX_US, MIN_OPTIMIZER_IDLE, OPENER_SLACK_US, TOP_RANGES};
#[cfg(feature = "parallel")]
pub use parallel::{read_file, read_files, read_threads, MAX_READ_THREADS, PARALLEL_FROM_BYTES};
pub use summary::{
    Choices, IdleBreakdown, KernelStats, LaunchStats, RankSummary, SkewSummary, Spread, StepStats,
    StepSummary, StreamSummary, SyncStats, TopKernel, TraceSummary,
};

use std::io::{BufRead, BufReader, Read};

use crate::report::{Report, RunInfo};
use crate::{Error, Result};

/// Kernels shorter than this (µs) count as short (TraceLens counts kernels under 10 µs;
/// launches cost 5–20 µs, so such kernels cannot keep the GPU busy on their own).
pub const SHORT_KERNEL_US: f64 = 10.0;
/// Runtime calls longer than this (µs) are outliers (HTA's `runtime_cutoff`).
pub const RUNTIME_OUTLIER_US: f64 = 50.0;
/// Launch delays longer than this (µs) are outliers (HTA's `launch_delay_cutoff`).
pub const DELAY_OUTLIER_US: f64 = 100.0;
/// Kernels listed in [`RankSummary::top_kernels`].
pub const TOP_KERNELS: usize = 10;

/// The most GPU operations, CUDA runtime/driver calls and steps kept from one trace file.
/// Each takes at most 48 bytes, so this bounds the kept events at about 1.4 GB; a real trace
/// with that many is tens of GB of JSON (a 500 MB trace keeps about a million). Past it the
/// trace is refused, with a message, rather than the process running out of memory.
pub const MAX_KEPT_EVENTS: usize = 30_000_000;
/// The most distinct event names interned from one trace (names are kept once each; a real
/// trace has thousands of distinct kernel names, not millions).
pub const MAX_NAMES: usize = 2_000_000;
/// The most bytes of distinct event names from one trace (each is held twice, in the table
/// and its index, so at most 256 MiB).
pub const MAX_NAME_BYTES: usize = 128 << 20;
/// The largest single JSON value read from a trace: one event, or one metadata entry such as
/// `deviceProperties`. A real event is well under a few KB; the top-level values gpuwhy does
/// not read are skipped without being held, whatever their size.
pub const MAX_VALUE_BYTES: usize = 16 << 20;

/// How to read one trace file.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// Inclusion choices.
    pub choices: Choices,
    /// The file's name, for messages and the summary.
    pub label: String,
    /// Rank to use when the trace has no `distributedInfo` (the file's position).
    pub position: u32,
}

/// Reads one trace file (`.json` or gzip-compressed) from `reader` and summarises it.
pub fn read_rank<R: Read>(reader: R, opts: &ReadOptions) -> Result<RankSummary> {
    let mut buf = BufReader::with_capacity(1 << 16, reader);
    let head = buf.fill_buf().map_err(|e| Error::BadReport {
        path: opts.label.clone().into(),
        reason: format!("cannot read the trace: {e}"),
    })?;
    let gz = head.starts_with(&[0x1f, 0x8b]);
    let mut store = events::Store::default();
    let consumed = if gz {
        let dec = BufReader::with_capacity(1 << 16, flate2::read::MultiGzDecoder::new(buf));
        parse(dec, &mut store)
    } else {
        parse(buf, &mut store)
    }
    .map_err(|e| split_error(e, opts))?;
    finish(store, consumed, opts)
}

/// The summary of everything read from one trace (`consumed` bytes of JSON).
fn finish(store: events::Store, consumed: u64, opts: &ReadOptions) -> Result<RankSummary> {
    if store.events == 0 {
        return Err(Error::BadReport {
            path: opts.label.clone().into(),
            reason: format!(
                "no trace events in {consumed} bytes: expected a Chrome trace with a \"traceEvents\" array \
                 (torch.profiler's export_chrome_trace or tensorboard_trace_handler output)"
            ),
        });
    }
    Ok(analyze::summarize(
        store,
        &opts.choices,
        &opts.label,
        opts.position,
    ))
}

fn parse<R: BufRead>(
    reader: R,
    store: &mut events::Store,
) -> std::result::Result<u64, split::SplitError> {
    let mut sp = split::Splitter::new(reader);
    sp.read(store).map(|()| sp.bytes())
}

/// The error a reader's stop becomes, in the user's terms.
fn split_error(e: split::SplitError, opts: &ReadOptions) -> Error {
    let at = format!("byte {} of the (decompressed) JSON", e.byte);
    let reason = if e.limit {
        format!("the trace is too large to read (at {at}): {}", e.what)
    } else if e.eof {
        format!(
            "the trace ends in the middle of the JSON at {at}: the file was cut short \
             (was the profiler stopped while writing, or the copy incomplete?); {}",
            e.what
        )
    } else {
        format!("not a valid Chrome trace at {at}: {}", e.what)
    };
    Error::BadReport {
        path: opts.label.clone().into(),
        reason,
    }
}

/// Summarises a trace held in memory (the viewer's dropped file).
pub fn read_slice(bytes: &[u8], opts: &ReadOptions) -> Result<RankSummary> {
    read_rank(bytes, opts)
}

impl TraceSummary {
    /// The summary of one run's ranks (one trace file each) read with `choices`.
    pub fn from_ranks(mut ranks: Vec<RankSummary>, choices: Choices) -> TraceSummary {
        ranks.sort_by_key(|r| r.rank);
        TraceSummary {
            choices: Some(choices),
            choices_text: choices.sentences(),
            skew: multi::skew(&ranks),
            ranks,
        }
    }

    /// GPU busy over span, summed over ranks (`None` without GPU operations).
    pub fn busy_share(&self) -> Option<f64> {
        let span: f64 = self.ranks.iter().map(|r| r.span_us).sum();
        (span > 0.0).then(|| self.ranks.iter().map(|r| r.busy_us).sum::<f64>() / span)
    }
}

/// A report for a trace read on its own: no GPU samples, the run's span and ranks.
pub fn report(trace: &TraceSummary) -> Report {
    let first = trace.ranks.first();
    let run = RunInfo {
        duration_s: trace.ranks.iter().map(|r| r.span_us).fold(0.0, f64::max) / 1e6,
        source: "trace".into(),
        complete: true,
        rank: first.map(|r| r.rank),
        world_size: first.and_then(|r| r.world_size),
        label: first.map(|r| r.source.clone()),
        ended_by: Some("read from a profiler trace".into()),
        ..Default::default()
    };
    let mut r = Report::from_recording(&crate::recording::Recording::new(run));
    r.gpu_absent_reason = Some(
        "a profiler trace has kernels, not GPU samples: utilization, clocks, power and PCIe come from `gpuwhy record` (or a dmon log) of the same run"
            .into(),
    );
    r
}

#[cfg(test)]
mod fast_tests;
#[cfg(test)]
mod hostile;
#[cfg(test)]
pub(crate) mod tests;
