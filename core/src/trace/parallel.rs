//! Reading trace files on every core: one large file in parts, many rank files at once.
//!
//! One file: the events array is cut at guessed event starts, one part per thread, each read
//! by its own [`Splitter`] from its own file handle into its own [`Store`]. A guess is only
//! trusted once the part before it, read from a start already trusted, stops exactly there
//! (it stops before the first event at or past the guess); otherwise the rest of the file is
//! read on from where that part stopped, on one thread. So the result never depends on the
//! guesses: it is what one reader of the whole file keeps, in the same order and with the
//! same name ids ([`Store::append`]), and a damaged file gives the same error. gzip files
//! are read on one thread (a gzip stream cannot be entered in the middle).
//!
//! Memory: each thread holds a 64 KiB buffer and the events of its part; together they are
//! the events of the file, plus one table of names per part. Each part checks the kept-event
//! limit ([`super::MAX_KEPT_EVENTS`]) on its own and the joined store checks it again, so
//! at most [`MAX_READ_THREADS`] times the limit can be held before a trace is refused.
//!
//! Only with the `parallel` feature (threads): the viewer's wasm build reads traces on one
//! thread through [`super::read_rank`].

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::events::{Names, Store};
use super::split::{SplitError, Splitter};
use super::{finish, read_rank, split_error, Choices, RankSummary, ReadOptions};
use crate::{Error, Result};

/// The most threads one file is read with (each holds its part's events: see the module
/// docs for what this bounds).
pub const MAX_READ_THREADS: usize = 8;
/// Files smaller than this are read on one thread: starting threads costs more than they
/// save.
pub const PARALLEL_FROM_BYTES: u64 = 8 << 20;
/// How far past a cut the reader looks for an event start (bytes).
const GUESS_WINDOW: usize = 1 << 20;

/// Threads for reading traces: `GPUWHY_TRACE_THREADS` when set (1 reads on one thread, as
/// the benchmark's baseline does), else the cores available, at most [`MAX_READ_THREADS`].
pub fn read_threads() -> usize {
    let env = std::env::var("GPUWHY_TRACE_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    env.unwrap_or(cores).clamp(1, MAX_READ_THREADS)
}

/// Reads the trace files `paths` (one rank each), several at once on [`read_threads`]
/// threads; a single file is read in parts. The summaries come in the order of `paths`;
/// the first file that cannot be read (in that order) is the error.
pub fn read_files(paths: &[PathBuf], choices: Choices) -> Result<Vec<RankSummary>> {
    let threads = read_threads();
    let opts = |i: usize| ReadOptions {
        choices,
        label: paths[i].display().to_string(),
        position: i as u32,
    };
    if paths.len() <= 1 || threads == 1 {
        let parts = if paths.len() == 1 { threads } else { 1 };
        return (0..paths.len())
            .map(|i| read_file_in(&paths[i], &opts(i), parts))
            .collect();
    }
    // Files are handed out one at a time, so a large file does not hold up the others.
    let next = AtomicUsize::new(0);
    let mut done: Vec<(usize, Result<RankSummary>)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads.min(paths.len()))
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= paths.len() {
                            return mine;
                        }
                        mine.push((i, read_file_in(&paths[i], &opts(i), 1)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// Reads one trace file on up to [`read_threads`] threads.
pub fn read_file(path: &Path, opts: &ReadOptions) -> Result<RankSummary> {
    read_file_in(path, opts, read_threads())
}

fn open(path: &Path, opts: &ReadOptions) -> Result<File> {
    File::open(path).map_err(|e| Error::BadReport {
        path: opts.label.clone().into(),
        reason: format!("cannot open the trace: {e}"),
    })
}

/// Reads `path` in up to `parts` parts, one thread each.
fn read_file_in(path: &Path, opts: &ReadOptions, parts: usize) -> Result<RankSummary> {
    read_path(path, opts, parts, PARALLEL_FROM_BYTES).map(|(summary, _)| summary)
}

/// [`read_file_in`] for files of at least `min_bytes`; also says how many parts were read
/// apart and joined (1: on one thread; 2 for a gzip file inflated on another thread).
fn read_path(
    path: &Path,
    opts: &ReadOptions,
    parts: usize,
    min_bytes: u64,
) -> Result<(RankSummary, usize)> {
    let mut f = open(path, opts)?;
    let size = f.metadata().map(|m| m.len()).unwrap_or(0);
    let mut head = [0u8; 4096];
    let n = read_some(&mut f, &mut head).unwrap_or(0);
    let first = head[..n].iter().find(|b| !b.is_ascii_whitespace()).copied();
    let gz = head[..n].starts_with(&[0x1f, 0x8b]);
    let cuts = if parts > 1 && size >= min_bytes && !gz && first.is_some() {
        guesses(&mut f, size, parts)
    } else {
        Vec::new()
    };
    if cuts.is_empty() {
        f.seek(SeekFrom::Start(0)).map_err(|e| Error::BadReport {
            path: opts.label.clone().into(),
            reason: format!("cannot read the trace: {e}"),
        })?;
        if gz && parts > 1 && size >= min_bytes {
            return Ok((gzip::read(f, opts)?, 2));
        }
        return Ok((read_rank(f, opts)?, 1));
    }
    let object = first == Some(b'{');
    let (store, consumed, joined) =
        read_parts(path, &cuts, object).map_err(|e| split_error(e, opts))?;
    Ok((finish(store, consumed, opts)?, joined))
}

/// Fills `buf` as far as the file allows.
fn read_some(f: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// Guessed event starts near `size * k / parts`, increasing; empty when none is found.
fn guesses(f: &mut File, size: u64, parts: usize) -> Vec<u64> {
    let mut cuts: Vec<u64> = Vec::new();
    let mut window = vec![0u8; GUESS_WINDOW];
    for k in 1..parts {
        let from = size * k as u64 / parts as u64;
        if cuts.last().is_some_and(|&c| c >= from) || f.seek(SeekFrom::Start(from)).is_err() {
            continue;
        }
        let Ok(n) = read_some(f, &mut window) else {
            continue;
        };
        if let Some(at) = event_start(&window[..n]) {
            cuts.push(from + at as u64);
        }
    }
    cuts
}

/// The first place in `buf` that looks like the start of an event of an array: a `{` after
/// the `}` and `,` that end the object before it, opening an object the fast event reader
/// reads whole and that has a `ph` (every trace event has one; the objects nested in an
/// event's `args` do not). A guess: the reader checks it.
fn event_start(buf: &[u8]) -> Option<usize> {
    let mut names = Names::default();
    let mut i = 0;
    while let Some(at) = memchr::memchr(b'}', &buf[i..]) {
        let after = i + at + 1;
        i = after;
        let rest = &buf[after..];
        let j = rest.iter().position(|b| !b.is_ascii_whitespace())?;
        if rest[j] != b',' {
            continue;
        }
        let k = rest[j + 1..]
            .iter()
            .position(|b| !b.is_ascii_whitespace())?;
        let start = after + j + 1 + k;
        if buf[start] == b'{' {
            if let Some((e, _)) = super::fast::event(&buf[start..], &mut names) {
                if e.ph != 0 {
                    return Some(start);
                }
            }
        }
    }
    None
}

/// What one part gave: its store and where it stopped (`None`: it read to the end).
type Part = std::result::Result<(Store, Option<u64>, u64), SplitError>;

/// Reads the file from `start` (0: the whole trace from its beginning; else a guessed event
/// start) to the first event at or past `stop`.
fn read_part(path: &Path, start: u64, stop: Option<u64>, object: bool) -> Part {
    let io = |e: std::io::Error| SplitError {
        byte: start,
        what: format!("cannot read the trace: {e}"),
        eof: false,
        limit: false,
    };
    let mut f = File::open(path).map_err(io)?;
    f.seek(SeekFrom::Start(start)).map_err(io)?;
    let mut sp = Splitter::at(BufReader::with_capacity(1 << 16, f), start, stop);
    let mut store = Store::default();
    if start == 0 {
        sp.read(&mut store)?;
    } else {
        sp.read_from_event(&mut store, object)?;
    }
    if let Some(why) = store.over_limit() {
        return Err(SplitError {
            byte: sp.bytes(),
            what: why,
            eof: false,
            limit: true,
        });
    }
    Ok((store, sp.stopped, sp.bytes()))
}

/// Reads the parts that `cuts` delimit at once and joins those whose start the part before
/// confirmed; past the first unconfirmed one, reads the rest on this thread. Returns the
/// store, the bytes read and how many parts were joined.
fn read_parts(
    path: &Path,
    cuts: &[u64],
    object: bool,
) -> std::result::Result<(Store, u64, usize), SplitError> {
    let results: Vec<Part> = std::thread::scope(|s| {
        let others: Vec<_> = (0..cuts.len())
            .map(|k| {
                let stop = cuts.get(k + 1).copied();
                s.spawn(move || read_part(path, cuts[k], stop, object))
            })
            .collect();
        let mut all = vec![read_part(path, 0, cuts.first().copied(), object)];
        all.extend(
            others
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))),
        );
        all
    });
    let mut results = results.into_iter();
    let (mut store, mut stopped, mut bytes) = results.next().expect("the first part")?;
    let mut joined = 1;
    for (cut, part) in cuts.iter().zip(results) {
        match stopped {
            Some(at) if at == *cut => {
                let (next, next_stop, next_bytes) = part?;
                store.append(next);
                (stopped, bytes) = (next_stop, next_bytes);
                joined += 1;
            }
            _ => break,
        }
    }
    if let Some(at) = stopped {
        // A guess was not an event start: read on from the last confirmed stop.
        let (rest, _, end) = read_part(path, at, None, object)?;
        store.append(rest);
        bytes = end;
    }
    if let Some(why) = store.over_limit() {
        return Err(SplitError {
            byte: bytes,
            what: why,
            eof: false,
            limit: true,
        });
    }
    Ok((store, bytes, joined))
}

mod gzip;
#[cfg(test)]
mod tests;
