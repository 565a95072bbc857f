//! `nvidia-smi dmon` text logs.
//!
//! dmon prints a header line (`# gpu pwr gtemp mtemp sm mem ...`), a units line
//! (`# Idx W C C % % ...`) and one row per GPU per interval; the header is printed again
//! every screenful. Columns depend on `-s` (groups `p u c v m e t`, default `puc`), on the
//! driver (older ones print `temp` where newer ones print `gtemp mtemp`, and lack `jpg ofa`),
//! and on `-o D`/`-o T`/`-o DT`, which put `Date`/`Time` columns first. A value the GPU does
//! not report is `-` (or `N/A`). Reference: `docs/references.md#nvidia-smi-dmon-columns`.
//!
//! Not for: dmon's `--format csv` variant's quoting rules (its fields are read the same way,
//! split on commas) or `pmon` logs.

use super::table::{empty_row, parse_clock, parse_date, Skipped, Table};
use super::{bad, ImportOptions, Imported};
use crate::metric::GpuMetric;
use crate::Result;

/// dmon's default sampling interval (`-d`), seconds, assumed for logs without a time column
/// when no interval is given.
pub const DEFAULT_INTERVAL_S: f64 = 1.0;

/// What one dmon column is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Col {
    Gpu,
    Date,
    Time,
    Metric(GpuMetric),
    /// A column gpuwhy has no metric for (enc, dec, mtemp, ...): read past, not kept.
    Ignored,
}

fn column(name: &str) -> Col {
    match name.to_ascii_lowercase().as_str() {
        "gpu" | "idx" => Col::Gpu,
        "date" => Col::Date,
        "time" => Col::Time,
        "pwr" => Col::Metric(GpuMetric::Power),
        "temp" | "gtemp" => Col::Metric(GpuMetric::Temp),
        "sm" => Col::Metric(GpuMetric::UtilGpu),
        "mem" => Col::Metric(GpuMetric::UtilMem),
        "mclk" => Col::Metric(GpuMetric::MemClock),
        // dmon's pclk is the graphics ("processor") clock, not the SM clock.
        "pclk" => Col::Metric(GpuMetric::GraphicsClock),
        "fb" => Col::Metric(GpuMetric::MemUsed),
        "rxpci" => Col::Metric(GpuMetric::PcieRx),
        "txpci" => Col::Metric(GpuMetric::PcieTx),
        // --gpm-metrics columns.
        "smutil" => Col::Metric(GpuMetric::GpmSmUtil),
        "smocc" => Col::Metric(GpuMetric::GpmSmOccupancy),
        "anyten" | "tensor" => Col::Metric(GpuMetric::GpmTensor),
        "dram" | "drambw" => Col::Metric(GpuMetric::GpmDramBw),
        _ => Col::Ignored,
    }
}

fn tokens(line: &str) -> Vec<&str> {
    line.trim_start_matches('#')
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|t| !t.is_empty())
        .collect()
}

/// True when `line` is a dmon header (`# gpu pwr ...`, `#Date Time gpu ...`).
pub(crate) fn is_header(line: &str) -> bool {
    line.trim_start().starts_with('#') && tokens(line).iter().any(|t| t.eq_ignore_ascii_case("gpu"))
}

fn parse_value(tok: &str) -> Option<f32> {
    match tok {
        "-" | "N/A" | "n/a" | "NA" => Some(f32::NAN),
        _ => tok.parse::<f32>().ok(),
    }
}

/// Reads a dmon log.
pub fn parse(text: &str, opts: &ImportOptions) -> Result<Imported> {
    let mut notes = Vec::new();
    let mut st = Dmon::default();
    let interval = opts.interval_s.unwrap_or(DEFAULT_INTERVAL_S);
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim().is_empty())
        .collect();
    let last_line = lines.last().map_or(0, |l| l.0);
    let mut skipped = Skipped::default();
    for &(n, line) in &lines {
        if line.trim_start().starts_with('#') {
            if is_header(line) {
                st.header(line, n, opts, &mut notes)?;
            }
            // Units lines (`# Idx W C ...`) and other comments carry nothing more.
            continue;
        }
        if st.cols.is_empty() {
            return Err(bad(
                opts,
                Some(n),
                "expected the dmon header line (`# gpu pwr gtemp sm mem ...`) before the first row; \
                 was the start of the log cut off?",
            ));
        }
        match parse_row(&tokens(line), &st.cols, &st.names) {
            Ok((gpu, t, row)) => st.push(gpu, t, row, interval),
            Err(why) if n == last_line => notes.push(format!(
                "line {n}: the last line is incomplete ({why}); it was left out"
            )),
            Err(why) => skipped.skip(n, line, why),
        }
    }
    if st.cols.is_empty() {
        return Err(bad(
            opts,
            None,
            "no dmon header line (`# gpu pwr ...`) found",
        ));
    }
    skipped.finish(
        opts,
        st.counts.values().sum::<u64>() as usize,
        "dmon",
        &mut notes,
    )?;
    Ok(st.finish(opts, notes))
}

/// A dmon log read so far: the current header's columns and the rows under them.
#[derive(Default)]
struct Dmon {
    cols: Vec<Col>,
    names: Vec<String>,
    table: Table,
    /// Rows per GPU.
    counts: std::collections::BTreeMap<u32, u64>,
    /// The latest time-of-day stamp, with the days it wrapped added.
    prev_clock: Option<f64>,
    day_offset: f64,
    /// Columns gpuwhy has no metric for.
    ignored: Vec<String>,
}

impl Dmon {
    /// A header line: the columns from here on (a changed layout is noted).
    fn header(
        &mut self,
        line: &str,
        n: usize,
        opts: &ImportOptions,
        notes: &mut Vec<String>,
    ) -> Result<()> {
        let toks = tokens(line);
        let new: Vec<Col> = toks.iter().map(|t| column(t)).collect();
        if !self.cols.is_empty() && new != self.cols {
            notes.push(format!(
                "line {n}: the column layout changes here; reading on with the new header"
            ));
        }
        self.cols = new;
        self.names = toks.iter().map(|t| t.to_string()).collect();
        for (c, name) in self.cols.iter().zip(&self.names) {
            match c {
                Col::Metric(m) => self.table.columns[m.index()] = true,
                Col::Ignored if !self.ignored.contains(name) => self.ignored.push(name.clone()),
                _ => {}
            }
        }
        if !self.cols.contains(&Col::Gpu) {
            return Err(bad(opts, Some(n), "a dmon header without a `gpu` column"));
        }
        Ok(())
    }

    /// A row of GPU `gpu`, at its stamp (or its position times `interval`).
    fn push(&mut self, gpu: u32, t: Stamp, row: [f32; GpuMetric::COUNT], interval: f64) {
        let k = self.counts.entry(gpu).or_default();
        let t = match t {
            Stamp::Absolute(t) => t,
            Stamp::Clock(c) => {
                // A time-of-day column wraps at midnight.
                if self
                    .prev_clock
                    .is_some_and(|p| c + self.day_offset < p - 43_200.0)
                {
                    self.day_offset += 86_400.0;
                }
                self.prev_clock = Some(c + self.day_offset);
                c + self.day_offset
            }
            Stamp::None => *k as f64 * interval,
        };
        *k += 1;
        self.table.push(gpu, t, row);
    }

    /// The recording, with its interval: the stamps' median step, else `--interval`, else
    /// dmon's default (said in the notes).
    fn finish(mut self, opts: &ImportOptions, mut notes: Vec<String>) -> Imported {
        let timed = stamp_kind(&self.cols);
        if let Stamp::Absolute(_) = timed {
            // Times are seconds since the epoch already (the date taken as UTC).
            self.table.epoch_ms = Some(0);
        }
        let interval_s = match (timed, opts.interval_s) {
            (Stamp::None, Some(i)) => i,
            (Stamp::None, None) => {
                notes.push(format!(
                    "the log has no time column: samples are taken as {DEFAULT_INTERVAL_S} s apart (dmon's default -d); \
                     pass --interval if it was recorded with another -d"
                ));
                DEFAULT_INTERVAL_S
            }
            _ => match self.table.median_delta() {
                Some(d) => d,
                None => opts.interval_s.unwrap_or(DEFAULT_INTERVAL_S),
            },
        };
        if !self.ignored.is_empty() {
            notes.push(format!(
                "columns read past (gpuwhy has no metric for them): {}",
                self.ignored.join(" ")
            ));
        }
        let rows = self.table.max_rows();
        let rec = self.table.into_recording(
            "dmon",
            interval_s,
            "not in the dmon log (not in its -s selection, or dmon has no such column)",
        );
        Imported {
            recording: rec,
            notes,
            samples: rows,
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Stamp {
    Absolute(f64),
    Clock(f64),
    None,
}

fn stamp_kind(cols: &[Col]) -> Stamp {
    match (cols.contains(&Col::Date), cols.contains(&Col::Time)) {
        (true, true) => Stamp::Absolute(0.0),
        (false, true) => Stamp::Clock(0.0),
        _ => Stamp::None,
    }
}

type Row = (u32, Stamp, [f32; GpuMetric::COUNT]);

fn parse_row(toks: &[&str], cols: &[Col], names: &[String]) -> Result<Row, String> {
    if toks.len() != cols.len() {
        return Err(format!(
            "expected {} values ({}), found {}",
            cols.len(),
            names.join(" "),
            toks.len()
        ));
    }
    let mut row = empty_row();
    let mut gpu = None;
    let (mut date, mut clock) = (None, None);
    for ((tok, col), name) in toks.iter().zip(cols).zip(names) {
        match col {
            Col::Gpu => {
                gpu =
                    Some(tok.parse::<u32>().map_err(|_| {
                        format!("expected a GPU index in column `gpu`, found `{tok}`")
                    })?)
            }
            Col::Date => {
                date = Some(parse_date(tok).ok_or_else(|| {
                    format!("expected a date (YYYYMMDD) in column `Date`, found `{tok}`")
                })?)
            }
            Col::Time => {
                clock = Some(parse_clock(tok).ok_or_else(|| {
                    format!("expected a time (HH:MM:SS) in column `Time`, found `{tok}`")
                })?)
            }
            Col::Metric(m) => {
                row[m.index()] = parse_value(tok).ok_or_else(|| {
                    format!("expected a number, `-` or `N/A` in column `{name}`, found `{tok}`")
                })?
            }
            Col::Ignored => {}
        }
    }
    let stamp = match (date, clock) {
        (Some(d), Some(c)) => Stamp::Absolute(d + c),
        (None, Some(c)) => Stamp::Clock(c),
        _ => Stamp::None,
    };
    // `gpu` is always among the columns (checked at the header).
    Ok((gpu.unwrap_or(0), stamp, row))
}

#[cfg(test)]
mod tests;
