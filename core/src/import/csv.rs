//! `nvidia-smi --query-gpu=FIELDS --format=csv[,noheader][,nounits]` logs.
//!
//! The header repeats the query's field names with units in brackets
//! (`utilization.gpu [%]`), and values carry units (`45 %`, `1234 MiB`) unless `nounits` was
//! given. Values the GPU does not report read `[N/A]` or `[Not Supported]`. Without a header
//! the fields come from [`ImportOptions::fields`] (the `--query-gpu` list), or are guessed
//! from the values' units, and the guesses are reported in the notes.
//!
//! Not for: `--query-compute-apps` or other query kinds, or quoted CSV with embedded commas.

use super::table::{empty_row, parse_clock, parse_date, Skipped, Table};
use super::{bad, ImportOptions, Imported};
use crate::metric::GpuMetric;
use crate::report::DeviceInfo;
use crate::Result;
use columns::{column, Col, Fact};

/// The field name of a header cell: `utilization.gpu [%]` → `utilization.gpu`.
fn field_name(cell: &str) -> &str {
    cell.split('[').next().unwrap_or(cell).trim()
}

/// True when a value is nvidia-smi's "nothing here" (`[N/A]`, `[Not Supported]`, ...).
fn is_missing(v: &str) -> bool {
    v.is_empty()
        || v.eq_ignore_ascii_case("n/a")
        || v.starts_with('[') && v.ends_with(']')
        || v.eq_ignore_ascii_case("not supported")
}

/// A numeric value with its unit stripped: `45 %` → 45, `P2` → 2, `0x4` → 4.
fn number(v: &str) -> Option<f32> {
    let v = v.trim();
    if let Some(hex) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16).ok().map(|x| x as f32);
    }
    if let Some(p) = v
        .strip_prefix('P')
        .filter(|p| p.bytes().all(|b| b.is_ascii_digit()))
    {
        return p.parse().ok();
    }
    let first = v.split_whitespace().next()?;
    first.parse().ok()
}

/// `2026/11/29 11:22:00.123` → seconds since the epoch (UTC taken for local time).
fn timestamp(v: &str) -> Option<f64> {
    let mut it = v.split_whitespace();
    let d = parse_date(it.next()?)?;
    let c = parse_clock(it.next()?)?;
    Some(d + c)
}

fn split(line: &str) -> Vec<&str> {
    line.split(',')
        .map(|c| c.trim().trim_matches('"').trim())
        .collect()
}

/// True when `line` looks like a `--query-gpu` header.
pub(crate) fn is_header(line: &str) -> bool {
    let cells = split(line);
    cells.len() >= 2
        && cells
            .iter()
            .any(|c| !matches!(column(field_name(c)), Col::Ignored))
        && cells
            .iter()
            .all(|c| number(c).is_none() && timestamp(c).is_none())
}

/// Reads a `--query-gpu` CSV log.
pub fn parse(text: &str, opts: &ImportOptions) -> Result<Imported> {
    let mut notes = Vec::new();
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim().is_empty())
        .collect();
    let Some(&first) = lines.first() else {
        return Err(bad(opts, None, "the CSV file is empty"));
    };
    let (mut cols, mut names, start) = columns(first, opts, &mut notes)?;
    let mut rows = Rows::default();
    mark_columns(&mut rows.table, &cols);
    let last_line = lines.last().map_or(0, |l| l.0);
    let mut skipped = Skipped::default();
    // Every row read, with its slot among the data lines (a damaged line keeps its slot, so
    // rows split by their place in a poll stay with their GPU).
    let mut read = Vec::new();
    let mut slot = 0;
    for &(n, line) in &lines[start..] {
        let cells = split(line);
        if is_header(line) {
            // A header repeated mid-file (logs appended by several runs).
            names = cells.iter().map(|c| field_name(c).to_string()).collect();
            cols = names.iter().map(|f| column(f)).collect();
            mark_columns(&mut rows.table, &cols);
            continue;
        }
        match parse_row(&cells, &cols, &names) {
            Ok(r) => read.push((slot, r)),
            Err(why) if n == last_line => notes.push(format!(
                "line {n}: the last line is incomplete ({why}); it was left out"
            )),
            Err(why) => skipped.skip(n, line, why),
        }
        slot += 1;
    }
    skipped.finish(opts, read.len(), "CSV", &mut notes)?;
    let keys = gpu_keys(&read, &mut notes);
    for ((_, r), key) in read.into_iter().zip(keys) {
        rows.push(r, key, opts.interval_s);
    }
    Ok(rows.finish(opts.interval_s, notes))
}

/// The GPU of each row: its `index` column, its UUID or bus id in order of appearance, or
/// — in a log with none of them — its place in the poll ([`polls`]), said in a note.
fn gpu_keys(read: &[(usize, row::Row)], notes: &mut Vec<String>) -> Vec<Option<u32>> {
    if read.len() < 2
        || read
            .iter()
            .any(|(_, r)| r.index.is_some() || r.identity.is_some())
    {
        return vec![None; read.len()];
    }
    let times: Vec<Option<f64>> = read.iter().map(|(_, r)| r.time).collect();
    let slots: Vec<usize> = read.iter().map(|(s, _)| *s).collect();
    let values: Vec<Vec<f32>> = read.iter().map(|(_, r)| r.features()).collect();
    match polls::split(&times, &slots, &values) {
        polls::Split::One => vec![None; read.len()],
        polls::Split::Gpus { n, keys, how } => {
            notes.push(format!(
                "the CSV has no index, pci.bus_id or uuid column, and its rows come in polls of {n} \
                 (read from {how}): they are read as {n} GPUs, GPU i being the i-th row of each poll \
                 (nvidia-smi prints GPUs in index order); add index to --query-gpu to be exact"
            ));
            keys.into_iter().map(Some).collect()
        }
        polls::Split::Unknown => {
            notes.push(
                "the CSV has no index, pci.bus_id or uuid column, and neither its timestamps nor its values \
                 show how many GPUs each poll printed: it is read as one GPU; if it covers several, \
                 add index to --query-gpu (a log of several GPUs read as one mixes their values)"
                    .into(),
            );
            vec![None; read.len()]
        }
    }
}

/// The columns, their names and the first data line's position: from `--fields`, the
/// header, or (without either) inferred from the first line's units.
fn columns(
    (first_n, first): (usize, &str),
    opts: &ImportOptions,
    notes: &mut Vec<String>,
) -> Result<(Vec<Col>, Vec<String>, usize)> {
    let (cols, names, start): (Vec<Col>, Vec<String>, usize) = if let Some(fields) = &opts.fields {
        let names: Vec<String> = fields.iter().map(|f| field_name(f).to_string()).collect();
        let cols = names.iter().map(|f| column(f)).collect();
        (cols, names, usize::from(is_header(first)))
    } else if is_header(first) {
        let names: Vec<String> = split(first)
            .iter()
            .map(|c| field_name(c).to_string())
            .collect();
        let cols = names.iter().map(|f| column(f)).collect();
        (cols, names, 1)
    } else {
        let cols = infer::infer(&split(first), notes);
        let names = cols.iter().map(|c| format!("{c:?}")).collect();
        if !cols.iter().any(|c| matches!(c, Col::Metric(_))) {
            return Err(bad(
                opts,
                Some(first_n),
                "a CSV without a header whose values carry no units (`--format=csv,noheader,nounits`): \
                 the columns cannot be told apart; pass --fields with the --query-gpu list \
                 (e.g. --fields timestamp,index,utilization.gpu,memory.used)",
            ));
        }
        (cols, names, 0)
    };
    let unknown: Vec<&str> = names
        .iter()
        .zip(&cols)
        .filter(|(_, c)| **c == Col::Ignored)
        .map(|(n, _)| n.as_str())
        .collect();
    if !unknown.is_empty() && opts.fields.is_some() || !unknown.is_empty() && start == 1 {
        notes.push(format!(
            "fields read past (gpuwhy has no metric for them): {}",
            unknown.join(" ")
        ));
    }
    Ok((cols, names, start))
}

/// The rows read so far, per GPU.
#[derive(Default)]
struct Rows {
    table: Table,
    /// Rows per GPU key.
    counts: std::collections::BTreeMap<u32, u64>,
    /// GPU identities (UUID, bus id) of a log without an index column, in order of appearance.
    keys: Vec<String>,
    any_time: bool,
    /// The current loop of nvidia-smi: its first time and the GPUs seen in it.
    tick: (f64, Vec<u32>),
}

impl Rows {
    /// Appends row `r` to its GPU: `position` (its place in a poll, for a log without GPU
    /// columns), else its index, else its UUID or bus id in order of appearance.
    fn push(&mut self, r: row::Row, position: Option<u32>, interval: Option<f64>) {
        let key = match (&r.index, &r.identity) {
            _ if position.is_some() => position.unwrap_or(0),
            (Some(i), _) => *i,
            (None, Some(id)) => match self.keys.iter().position(|k| k == id) {
                Some(p) => p as u32,
                None => {
                    self.keys.push(id.clone());
                    (self.keys.len() - 1) as u32
                }
            },
            (None, None) => 0,
        };
        let k = self.counts.entry(key).or_default();
        let t = match r.time {
            Some(t) => {
                self.any_time = true;
                // nvidia-smi prints every GPU once per loop, each with its own timestamp a
                // few ms apart; give the rows of one loop the loop's first time so GPUs line
                // up sample by sample (the cross-GPU signals compare equal times).
                if self.tick.1.contains(&key) || self.tick.1.is_empty() {
                    self.tick = (t, vec![key]);
                } else {
                    self.tick.1.push(key);
                }
                self.tick.0
            }
            None => *k as f64 * interval.unwrap_or(1.0),
        };
        *k += 1;
        self.table.push(key, t, r.row);
        let d = self.table.device(key);
        merge_info(&mut d.info, &r.info);
        if let Some(h) = r.health {
            health::merge(&mut d.info, t, h);
        }
    }

    /// The recording, with its interval: the timestamps' median step, else `interval`,
    /// else 1 s (said in the notes).
    fn finish(mut self, interval: Option<f64>, mut notes: Vec<String>) -> Imported {
        if self.any_time {
            self.table.epoch_ms = Some(0);
        }
        let interval_s = if self.any_time {
            self.table.median_delta().or(interval).unwrap_or(1.0)
        } else {
            match interval {
                Some(i) => i,
                None => {
                    notes.push("the CSV has no timestamp column: samples are taken as 1 s apart; pass --interval with the -l/-lms period it was recorded with".into());
                    1.0
                }
            }
        };
        for d in self.table.devices.values_mut() {
            health::settle(&mut d.info);
        }
        let rows = self.table.max_rows();
        let rec = self.table.into_recording(
            "csv",
            interval_s,
            "not in the CSV (add its field to --query-gpu)",
        );
        Imported {
            recording: rec,
            notes,
            samples: rows,
        }
    }
}

fn mark_columns(table: &mut Table, cols: &[Col]) {
    for c in cols {
        match c {
            Col::Metric(m) => table.columns[m.index()] = true,
            Col::ReasonBit(_) => table.columns[GpuMetric::ClockReasons.index()] = true,
            _ => {}
        }
    }
}

mod columns;
mod health;
mod infer;
mod polls;
mod row;

use super::table::merge_info;
use row::parse_row;

#[cfg(test)]
mod tests;
