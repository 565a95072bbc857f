//! Guessing the columns of a CSV written with `noheader`, from the units of its values.

use super::{number, timestamp, Col, Fact};
use crate::metric::GpuMetric;

/// Guesses the columns of a headerless log from the values of its first row.
pub(super) fn infer(cells: &[&str], notes: &mut Vec<String>) -> Vec<Col> {
    let (mut pct, mut watts, mut mib) = (0, 0, Vec::new());
    let mut cols = Vec::new();
    let mut guessed = Vec::new();
    for (i, c) in cells.iter().enumerate() {
        let col = if timestamp(c).is_some() {
            Col::Time
        } else if c.starts_with("GPU-") || c.starts_with("MIG-") {
            Col::Uuid
        } else if c.contains(':') && c.contains('.') {
            Col::BusId
        } else if c.ends_with(" %") {
            pct += 1;
            Col::Metric(if pct == 1 {
                GpuMetric::UtilGpu
            } else {
                GpuMetric::UtilMem
            })
        } else if c.ends_with(" W") {
            watts += 1;
            if watts == 1 {
                Col::Metric(GpuMetric::Power)
            } else {
                Col::Fact(Fact::PowerLimit)
            }
        } else if c.ends_with(" MiB") {
            mib.push(i);
            Col::Metric(GpuMetric::MemUsed)
        } else if c.starts_with('P') && number(c).is_some() {
            Col::Metric(GpuMetric::Pstate)
        } else if c.starts_with("0x") {
            Col::Metric(GpuMetric::ClockReasons)
        } else if i == 0 && c.parse::<u32>().is_ok() {
            Col::Index
        } else if c.chars().any(|ch| ch.is_ascii_alphabetic()) && number(c).is_none() {
            Col::Name
        } else {
            Col::Ignored
        };
        cols.push(col);
    }
    // Of two MiB columns the larger is the total (used never exceeds it).
    if mib.len() == 2 {
        let (a, b) = (mib[0], mib[1]);
        let total = if number(cells[a]) >= number(cells[b]) {
            a
        } else {
            b
        };
        cols[total] = Col::Fact(Fact::MemTotal);
    }
    for (c, cell) in cols.iter().zip(cells) {
        let what = match c {
            Col::Time => "timestamp".to_string(),
            Col::Index => "index".to_string(),
            Col::Name => "name".to_string(),
            Col::Uuid => "uuid".to_string(),
            Col::BusId => "pci.bus_id".to_string(),
            Col::Metric(m) => m.name().to_string(),
            Col::Fact(f) => format!("{f:?}"),
            Col::ReasonBit(_) => "reason".to_string(),
            Col::Health(_) => "health".to_string(),
            Col::Ignored => format!("? (`{cell}` not recognised)"),
        };
        guessed.push(what);
    }
    notes.push(format!(
        "the CSV has no header: columns guessed from the values' units as [{}]; pass --fields with the --query-gpu list to be exact",
        guessed.join(", ")
    ));
    cols
}
