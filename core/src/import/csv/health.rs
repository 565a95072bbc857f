//! Health fields of a `--query-gpu` log (`ecc.errors.corrected.volatile.total`,
//! `retired_pages.pending`, `remapped_rows.pending`, `ecc.mode.current`, …) read into the
//! report's [`DeviceHealth`]: one reading for the first row of each GPU, then one whenever a
//! counter changes, and one for its last row, so a counter that rises during the log is seen
//! with its times while a log of hours does not keep a reading per row.
//!
//! `[N/A]` and `[Not Supported]` are never zero: the counter stays `None` and
//! [`DeviceHealth::unavailable`] says why.

use super::super::table::sum_ecc;
use crate::report::{DeviceHealth, DeviceInfo, HealthReading};

/// Most readings kept per GPU: a counter that changes on every row of a long log keeps its
/// first readings and its last (each reading is well under 1 KiB).
const MAX_READINGS: usize = 256;

/// One health field of the query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(in crate::import) enum HealthCol {
    /// `ecc.mode.current` (or `.pending`).
    EccMode {
        pending: bool,
    },
    /// `ecc.errors.{corrected,uncorrected}.{volatile,aggregate}.{location}`.
    Ecc {
        loc: &'static str,
        aggregate: bool,
        uncorrected: bool,
    },
    RetiredSingle,
    RetiredDouble,
    RetiredPending,
    RemapCorrectable,
    RemapUncorrectable,
    RemapPending,
    RemapFailure,
}

impl HealthCol {
    /// The health field named `f` (lower case), if it is one.
    pub(in crate::import) fn of(f: &str) -> Option<HealthCol> {
        use HealthCol as H;
        Some(match f {
            "ecc.mode.current" => H::EccMode { pending: false },
            "ecc.mode.pending" => H::EccMode { pending: true },
            "retired_pages.single_bit_ecc.count" | "retired_pages.sbe" => H::RetiredSingle,
            "retired_pages.double_bit.count" | "retired_pages.dbe" => H::RetiredDouble,
            "retired_pages.pending" => H::RetiredPending,
            "remapped_rows.correctable" => H::RemapCorrectable,
            "remapped_rows.uncorrectable" => H::RemapUncorrectable,
            "remapped_rows.pending" => H::RemapPending,
            "remapped_rows.failure" => H::RemapFailure,
            _ => return ecc(f),
        })
    }

    /// The key of this field's counter in [`DeviceHealth::unavailable`].
    fn group(self) -> &'static str {
        match self {
            HealthCol::EccMode { .. } => "ecc_mode",
            HealthCol::Ecc { .. } => "ecc",
            HealthCol::RetiredSingle | HealthCol::RetiredDouble | HealthCol::RetiredPending => {
                "retired_pages"
            }
            _ => "remapped_rows",
        }
    }
}

fn ecc(f: &str) -> Option<HealthCol> {
    let mut it = f.strip_prefix("ecc.errors.")?.split('.');
    let uncorrected = match it.next()? {
        "corrected" => false,
        "uncorrected" => true,
        _ => return None,
    };
    let aggregate = match it.next()? {
        "volatile" => false,
        "aggregate" => true,
        _ => return None,
    };
    let loc = match it.next()? {
        "total" => "total",
        "sram" => "sram",
        "dram" => "dram",
        "device_memory" => "device_memory",
        "register_file" => "register_file",
        "l1_cache" => "l1_cache",
        "l2_cache" => "l2_cache",
        "texture_memory" => "texture_memory",
        "texture_shm" => "texture_shm",
        "cbu" => "cbu",
        _ => return None,
    };
    it.next().is_none().then_some(HealthCol::Ecc {
        loc,
        aggregate,
        uncorrected,
    })
}

/// The health cells of one row.
#[derive(Debug, Default)]
pub(super) struct RowHealth {
    ecc_enabled: Option<bool>,
    ecc_pending: Option<bool>,
    reading: HealthReading,
    /// Counters the row had no value for: group, word printed.
    missing: Vec<(&'static str, String)>,
}

fn flag(cell: &str) -> Option<bool> {
    match cell.to_ascii_lowercase().as_str() {
        "yes" | "enabled" | "active" => Some(true),
        "no" | "disabled" | "not active" => Some(false),
        _ => None,
    }
}

impl RowHealth {
    /// Reads `cell` of column `col`; `missing` is true for `[N/A]` and the like.
    pub(super) fn cell(&mut self, col: HealthCol, cell: &str, missing: bool) -> Result<(), String> {
        if missing {
            let word = cell.trim_matches(['[', ']']).to_string();
            self.missing.push((col.group(), word));
            return Ok(());
        }
        let count = || {
            cell.split_whitespace()
                .next()
                .and_then(|c| c.parse::<u64>().ok())
                .ok_or_else(|| format!("expected a count, found `{cell}`"))
        };
        let yes_no = || flag(cell).ok_or_else(|| format!("expected Yes or No, found `{cell}`"));
        let r = &mut self.reading;
        match col {
            HealthCol::EccMode { pending } => {
                let v = Some(yes_no()?);
                if pending {
                    self.ecc_pending = v;
                } else {
                    self.ecc_enabled = v;
                }
            }
            HealthCol::Ecc {
                loc,
                aggregate,
                uncorrected,
            } => {
                let c = if loc == "total" {
                    &mut r.ecc
                } else {
                    r.ecc_locations.entry(loc.to_string()).or_default()
                };
                let slot = match (aggregate, uncorrected) {
                    (false, false) => &mut c.volatile_corrected,
                    (false, true) => &mut c.volatile_uncorrected,
                    (true, false) => &mut c.aggregate_corrected,
                    (true, true) => &mut c.aggregate_uncorrected,
                };
                *slot = Some(count()?);
            }
            HealthCol::RetiredSingle => retired(r).single_bit = Some(count()?),
            HealthCol::RetiredDouble => retired(r).double_bit = Some(count()?),
            HealthCol::RetiredPending => retired(r).pending = Some(yes_no()?),
            HealthCol::RemapCorrectable => remapped(r).correctable = Some(count()?),
            HealthCol::RemapUncorrectable => remapped(r).uncorrectable = Some(count()?),
            HealthCol::RemapPending => remapped(r).pending = Some(yes_no()?),
            HealthCol::RemapFailure => remapped(r).failure = Some(count_or_flag(cell)?),
        }
        Ok(())
    }
}

fn retired(r: &mut HealthReading) -> &mut crate::report::RetiredPages {
    r.retired_pages.get_or_insert_with(Default::default)
}

fn remapped(r: &mut HealthReading) -> &mut crate::report::RemappedRows {
    r.remapped_rows.get_or_insert_with(Default::default)
}

/// `remapped_rows.failure` prints `Yes`/`No` on some drivers and a 0/1 count on others.
fn count_or_flag(cell: &str) -> Result<bool, String> {
    flag(cell)
        .or_else(|| cell.trim().parse::<u64>().ok().map(|n| n > 0))
        .ok_or_else(|| format!("expected Yes, No or a count, found `{cell}`"))
}

/// Adds a row's health, read at `t_s`, to the GPU's: a reading when it is the GPU's first or
/// differs from the last kept (the last row of a GPU replaces an unchanged last reading, so
/// the readings span the log).
pub(super) fn merge(info: &mut DeviceInfo, t_s: f64, row: RowHealth) {
    let mut reading = row.reading;
    reading.t_s = t_s;
    if reading.ecc.is_empty() && !reading.ecc_locations.is_empty() {
        reading.ecc = sum_ecc(reading.ecc_locations.values());
    }
    let h = info.health.get_or_insert_with(DeviceHealth::default);
    h.ecc_enabled = row.ecc_enabled.or(h.ecc_enabled);
    h.ecc_pending_enabled = row.ecc_pending.or(h.ecc_pending_enabled);
    for (group, word) in row.missing {
        h.unavailable.entry(group.to_string()).or_insert_with(|| {
            format!("the log prints [{word}]: the GPU or driver does not report it")
        });
    }
    let same = |a: &HealthReading, b: &HealthReading| {
        (a.ecc, &a.ecc_locations, a.remapped_rows, a.retired_pages)
            == (b.ecc, &b.ecc_locations, b.remapped_rows, b.retired_pages)
    };
    let n = h.readings.len();
    // The second of two equal readings in a row moves forward in time: the pair spans the
    // unchanged stretch.
    let unchanged_tail =
        n >= 2 && same(&h.readings[n - 1], &reading) && same(&h.readings[n - 2], &reading);
    if unchanged_tail {
        h.readings[n - 1] = reading;
    } else if n < MAX_READINGS {
        h.readings.push(reading);
    } else {
        h.readings[n - 1] = reading;
    }
}

/// Drops the unavailable entries of counters that some row of the GPU did read (a value
/// `[N/A]` only at times is a gap, not an unsupported counter).
pub(super) fn settle(info: &mut DeviceInfo) {
    let Some(h) = &mut info.health else { return };
    let read = |g: &str, r: &HealthReading| match g {
        "ecc" => !r.ecc.is_empty(),
        "retired_pages" => r.retired_pages.is_some(),
        "remapped_rows" => r.remapped_rows.is_some(),
        _ => false,
    };
    let readings = &h.readings;
    let mode_read = h.ecc_enabled.is_some() || h.ecc_pending_enabled.is_some();
    h.unavailable.retain(|g, _| {
        if g == "ecc_mode" {
            return !mode_read;
        }
        !readings.iter().any(|r| read(g, r))
    });
}
