//! Telling the GPUs of a `--query-gpu` log apart when it has no `index`, `pci.bus_id` or
//! `uuid` column. nvidia-smi prints one row per GPU per poll, in index order, so row `i`
//! of a poll of `n` rows is GPU `i`. The poll size is read from the evidence the log has:
//!
//! 1. timestamps: the rows of one poll carry the same time, or times a few ms apart, and
//!    polls are an interval apart, so the gaps between rows fall in two groups far apart;
//!    the rows between two long gaps are one poll;
//! 2. without usable timestamps, the values: each GPU keeps its own temperature, memory in
//!    use and limits from one poll to the next, so with `n` GPUs a row is close to the row
//!    `n` before it and unlike the rows in between.
//!
//! Where neither settles it the log is read as one GPU, and the caller says so.

use crate::metric::GpuMetric;

/// Most GPUs a node's log is searched for (an HGX node has 8; 16 leaves room).
const MAX_POLL: usize = 16;

/// Two gap lengths whose ratio is at least this are "within a poll" and "between polls":
/// nvidia-smi's rows of one poll are at most a few ms apart, its polls 10 ms (`-lms 10`) or
/// more, usually 1 s.
const GAP_RATIO: f64 = 5.0;

/// Longest gap between two rows of one poll, seconds: nvidia-smi queries a node's GPUs one
/// after the other in milliseconds each, so rows further apart than this are different polls.
const WITHIN_POLL_S: f64 = 0.5;

/// Share of polls that must have the common size for it to be the number of GPUs (the
/// rest: a last poll cut short, a damaged row read past).
const REGULAR_SHARE: f64 = 0.8;

/// Lag distance (median over columns, relative to the distance between neighbouring rows)
/// under which rows `n` apart are taken for the same GPU, and over which the rows in
/// between must stay for them to be other GPUs.
const SAME_GPU: f64 = 0.35;
const OTHER_GPU: f64 = 0.6;

/// Rows the values are compared over (256 polls of 16 GPUs).
const EVIDENCE_ROWS: usize = 4096;

/// How the rows were assigned to GPUs.
#[derive(Debug, PartialEq)]
pub(super) enum Split {
    /// One row per poll: one GPU (timestamps all distinct and evenly spaced).
    One,
    /// `n` GPUs; `keys[i]` is the GPU of row `i`. `how` says from what, for the note.
    Gpus {
        n: usize,
        keys: Vec<u32>,
        how: &'static str,
    },
    /// Nothing settles it.
    Unknown,
}

/// The poll size of rows with `times` (seconds, `None` where a row had none), whose rows
/// sit at data-line positions `slots` (a damaged line read past keeps its slot) and carry
/// `values` (one row of metrics and facts each, `NaN` where missing).
pub(super) fn split(times: &[Option<f64>], slots: &[usize], values: &[Vec<f32>]) -> Split {
    if times.len() < 2 {
        return Split::One;
    }
    if times.iter().all(Option::is_some) {
        let t: Vec<f64> = times.iter().flatten().copied().collect();
        if let Some(s) = by_time(&t) {
            return s;
        }
    }
    by_values(slots, values)
}

/// Polls from the gaps between timestamps; `None` when the gaps do not fall in two groups.
fn by_time(t: &[f64]) -> Option<Split> {
    let gaps: Vec<f64> = t.windows(2).map(|w| (w[1] - w[0]).max(0.0)).collect();
    let mut sorted = gaps.clone();
    sorted.sort_by(f64::total_cmp);
    let (lo, hi) = (sorted[0], sorted[sorted.len() - 1]);
    // The widest jump between consecutive sorted gaps, in ratio (a 1 ms floor keeps equal
    // times from making every ratio infinite).
    let floor = 1e-3;
    let (jump, ratio) = sorted
        .windows(2)
        .enumerate()
        .map(|(i, w)| (i, w[1].max(floor) / w[0].max(floor)))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    if ratio < GAP_RATIO {
        // One group of gaps: all rows in one poll (every time equal), or one row per poll.
        return Some(if hi <= floor {
            // One poll of a query without `-l`: each row is another GPU.
            keys_in_runs(
                &vec![false; gaps.len()],
                "timestamps: every row has the same time",
            )
        } else if hi / lo.max(floor) < GAP_RATIO {
            Split::One
        } else {
            return None;
        });
    }
    let cut = sorted[jump];
    if cut > WITHIN_POLL_S {
        // Rows seconds apart are polls of one GPU with pauses between, not GPUs of one poll.
        return Some(Split::One);
    }
    let boundary: Vec<bool> = gaps.iter().map(|g| *g > cut).collect();
    Some(keys_in_runs(&boundary, "timestamps repeating in polls"))
}

/// Rows numbered within runs split at `boundary` (after row `i` when `boundary[i]`; one
/// more row than gaps): the number of GPUs is the common run length, if runs are regular
/// enough and, with several polls, no more than a node's GPUs (a single GPU's log with two
/// long pauses is three long runs, not a node).
fn keys_in_runs(boundary: &[bool], how: &'static str) -> Split {
    let rows = boundary.len() + 1;
    let mut keys = Vec::with_capacity(rows);
    let mut lens = Vec::new();
    let mut pos = 0u32;
    // After the last row the run ends whatever follows.
    for ends in boundary.iter().copied().chain([true]) {
        keys.push(pos);
        pos += 1;
        if ends {
            lens.push(pos as usize);
            pos = 0;
        }
    }
    let n = mode(&lens);
    // The last poll may be cut short by the end of the log.
    let full = &lens[..lens.len().saturating_sub(1).max(1)];
    let regular = full.iter().filter(|l| **l == n).count() as f64 / full.len() as f64;
    if n == 1 {
        return Split::One;
    }
    let max = if lens.len() == 1 {
        MAX_POLL * 4
    } else {
        MAX_POLL
    };
    if n > max || regular < REGULAR_SHARE || lens.len() == 2 && lens[1] != n {
        return Split::Unknown;
    }
    Split::Gpus { n, keys, how }
}

fn mode(lens: &[usize]) -> usize {
    let mut counts = std::collections::BTreeMap::new();
    for l in lens {
        *counts.entry(*l).or_insert(0usize) += 1;
    }
    counts
        .into_iter()
        .max_by_key(|(l, c)| (*c, *l))
        .map_or(1, |(l, _)| l)
}

/// The poll size from the values: the smallest lag `n` at which rows are close to the row
/// `n` before while every smaller lag keeps them apart.
fn by_values(slots: &[usize], values: &[Vec<f32>]) -> Split {
    // Rows by slot, so a damaged line read past does not shift the GPUs after it.
    let len = slots.last().map_or(0, |s| s + 1);
    // The first rows are evidence enough, and bound the work on a log of days.
    let mut at: Vec<Option<&Vec<f32>>> = vec![None; len.min(EVIDENCE_ROWS)];
    for (s, v) in slots.iter().zip(values) {
        if let Some(a) = at.get_mut(*s) {
            *a = Some(v);
        }
    }
    let d = |k: usize| distance(&at, k);
    let Some(base) = d(1) else {
        return Split::Unknown;
    };
    if base <= 0.0 {
        return Split::Unknown;
    }
    let lags: Vec<Option<f64>> = (1..=MAX_POLL).map(|k| d(k).map(|x| x / base)).collect();
    for n in 2..=MAX_POLL {
        // Three polls at least, so the lag is seen twice per GPU.
        if len < 3 * n {
            break;
        }
        let Some(same) = lags[n - 1] else { continue };
        let apart = (1..n).all(|j| lags[j - 1].is_some_and(|x| x >= OTHER_GPU));
        if same <= SAME_GPU && apart {
            let keys = slots.iter().map(|s| (s % n) as u32).collect();
            return Split::Gpus {
                n,
                keys,
                how: "the values: every row continues the temperature and memory in use of the row that many rows before it",
            };
        }
    }
    Split::Unknown
}

/// The median over columns of the mean absolute difference between rows `k` apart, each
/// column scaled by its own mean difference between neighbouring rows; `None` without a
/// column that varies.
fn distance(at: &[Option<&Vec<f32>>], k: usize) -> Option<f64> {
    let width = at.iter().flatten().map(|v| v.len()).max()?;
    let mut per_col = Vec::new();
    for c in 0..width {
        let diff = |lag: usize| {
            let (mut sum, mut n) = (0.0f64, 0usize);
            for i in lag..at.len() {
                let (Some(a), Some(b)) = (at[i], at[i - lag]) else {
                    continue;
                };
                let (x, y) = (a.get(c).copied(), b.get(c).copied());
                if let (Some(x), Some(y)) = (x, y) {
                    if x.is_finite() && y.is_finite() {
                        sum += f64::from((x - y).abs());
                        n += 1;
                    }
                }
            }
            (n > 0).then(|| sum / n as f64)
        };
        let (Some(scale), Some(dk)) = (diff(1), diff(k)) else {
            continue;
        };
        if scale > 0.0 {
            per_col.push(dk / scale);
        }
    }
    crate::stats::select(&mut per_col, 0.5)
}

/// The columns of a row that characterise one GPU over polls: its temperature (a GPU's
/// thermal mass keeps it within a degree or two from one second to the next, while GPUs of
/// a node differ by several), its memory in use (a framework's allocator keeps it steady)
/// and its facts. Utilization, power, clocks and P-state are left out: one GPU's swing with
/// the steps of a loop, so a single GPU with a step of two samples would look like two.
pub(super) fn features(row: &[f32; GpuMetric::COUNT], facts: [Option<f64>; 4]) -> Vec<f32> {
    let mut v: Vec<f32> = [GpuMetric::Temp, GpuMetric::MemUsed]
        .iter()
        .map(|m| row[m.index()])
        .collect();
    v.extend(facts.iter().map(|f| f.map_or(f32::NAN, |x| x as f32)));
    v
}

#[cfg(test)]
#[path = "polls_tests.rs"]
mod tests;
