//! The health sections of an `nvidia-smi -q` GPU block — `ECC Mode`, `ECC Errors`,
//! `Retired Pages`, `Remapped Rows` — read into the report's [`DeviceHealth`].
//!
//! Wording by driver (from public dumps; docs/importing.md lists the sources):
//! - `ECC Errors › Volatile|Aggregate` holds, on Kepler to Turing drivers, `Single Bit` and
//!   `Double Bit` sections of `Device Memory`, `Register File`, `L1 Cache`, `L2 Cache`,
//!   `Texture Memory`, `Texture Shared`, `CBU` and `Total`; on Ampere and later,
//!   `SRAM Correctable`, `SRAM Uncorrectable`, `DRAM Correctable`, `DRAM Uncorrectable`, the
//!   SRAM uncorrectable count split into `Parity` and `SEC-DED` since R550.
//! - `Retired Pages › Single Bit ECC`, `Double Bit ECC`, `Pending Page Blacklist` (or
//!   `Pending Page Retirement`, `Pending`); in XML, `multiple_single_bit_retirement ›
//!   retired_count` and `double_bit_retirement › retired_count`.
//! - `Remapped Rows › Correctable Error`, `Uncorrectable Error`, `Pending`, `Remapping
//!   Failure Occurred` (its `Bank Remap Availability Histogram` is read past), or `Remapped
//!   Rows : N/A` on GPUs without row remapping.
//!
//! `N/A`, `[N/A]`, `Not Supported` are never zero: the counter stays `None` and
//! [`DeviceHealth::unavailable`] says why.
//!
//! Not for: the dump's metrics and facts (`keys.rs`).

use std::collections::{BTreeMap, BTreeSet};

use super::super::table::sum_ecc;
use crate::report::{DeviceHealth, EccCounts, HealthReading, RemappedRows, RetiredPages};

/// The health counter groups, by their key in [`DeviceHealth::unavailable`].
const GROUPS: [(&str, &str); 4] = [
    ("ecc mode", "ecc_mode"),
    ("ecc errors", "ecc"),
    ("retired pages", "retired_pages"),
    ("remapped rows", "remapped_rows"),
];

/// A count per period (volatile, aggregate) and kind (corrected, uncorrected):
/// `[vol_corr, vol_unc, agg_corr, agg_unc]`.
type Counts = [Option<u64>; 4];

/// One GPU block's health as read so far.
#[derive(Debug, Default)]
pub(super) struct HealthBlock {
    ecc_enabled: Option<bool>,
    ecc_pending: Option<bool>,
    /// ECC counts by location (`total`, `sram`, `dram`, `device_memory`, …; the SRAM
    /// uncorrectable split as `sram_parity` and `sram_secded` until it is summed).
    ecc: BTreeMap<String, Counts>,
    remapped: RemappedRows,
    retired: RetiredPages,
    /// Groups whose section was printed.
    seen: BTreeSet<&'static str>,
    /// Groups of which at least one value was read.
    read: BTreeSet<&'static str>,
    /// Counters printed without a value: `group.field` and the word printed.
    missing: BTreeMap<String, String>,
}

/// What a value says: a number, a yes/no, or nothing (`N/A`, `[Not Supported]`).
enum Value {
    Count(u64),
    Flag(bool),
    Nothing(String),
    Other,
}

fn value(v: &str) -> Value {
    let t = v.trim();
    let bare = t.trim_start_matches('[').trim_end_matches(']');
    match bare.to_ascii_lowercase().as_str() {
        "yes" | "enabled" => return Value::Flag(true),
        "no" | "disabled" => return Value::Flag(false),
        "n/a" | "not supported" | "unknown error" | "" => return Value::Nothing(bare.to_string()),
        _ => {}
    }
    match t.split_whitespace().next().map(str::parse::<u64>) {
        Some(Ok(n)) => Value::Count(n),
        _ => Value::Other,
    }
}

/// The location of an ECC count key of the newer form (`sram uncorrectable sec-ded`) or a
/// location key under `Single Bit`/`Double Bit` (`l1 cache`), and whether it counts
/// uncorrected errors (`None` for a key of the older form: the section says).
fn ecc_key(key: &str) -> Option<(&'static str, Option<bool>)> {
    let newer = |mem: &'static str| {
        let rest = key.strip_prefix(mem)?.trim_start();
        let (kind, split) = match rest.split_once(' ') {
            Some((k, s)) => (k, Some(s)),
            None => (rest, None),
        };
        let unc = match kind {
            "correctable" => false,
            "uncorrectable" => true,
            _ => return None,
        };
        let loc = match (mem, split) {
            (m, None) => m,
            ("sram", Some("parity")) => "sram_parity",
            ("sram", Some("sec-ded" | "secded")) => "sram_secded",
            _ => return None,
        };
        Some((loc, Some(unc)))
    };
    if let Some(k) = newer("sram").or_else(|| newer("dram")) {
        return Some(k);
    }
    let loc = match key {
        "device memory" => "device_memory",
        "register file" => "register_file",
        "l1 cache" => "l1_cache",
        "l2 cache" => "l2_cache",
        "texture memory" => "texture_memory",
        "texture shared" | "texture shm" => "texture_shm",
        "cbu" => "cbu",
        "total" => "total",
        _ => return None,
    };
    Some((loc, None))
}

impl HealthBlock {
    /// Reads `key : v` under the open sections `path` (lower case, outermost first) when it
    /// is a health counter; true when it was one (so nothing else reads it).
    pub(super) fn line(&mut self, path: &[&str], key: &str, v: &str) -> bool {
        // `Remapped Rows : N/A`: the whole group printed as one value.
        if let Some(&(_, group)) = GROUPS.iter().find(|(title, _)| *title == key) {
            self.seen.insert(group);
            if let Value::Nothing(word) = value(v) {
                self.missing.insert(group.to_string(), word);
            }
            return true;
        }
        let Some((i, group)) = path
            .iter()
            .enumerate()
            .find_map(|(i, s)| GROUPS.iter().find(|(t, _)| t == s).map(|g| (i, g.1)))
        else {
            return false;
        };
        self.seen.insert(group);
        let inner = &path[i + 1..];
        let val = value(v);
        let field = match group {
            "ecc_mode" => self.ecc_mode(key, &val),
            "ecc" => self.ecc_count(inner, key, &val),
            "retired_pages" => self.retired_page(inner, key, &val),
            _ => self.remapped_row(inner, key, &val),
        };
        match (field, val) {
            (Some(f), Value::Nothing(word)) => {
                self.missing.insert(format!("{group}.{f}"), word);
            }
            (Some(_), Value::Count(_) | Value::Flag(_)) => {
                self.read.insert(group);
            }
            _ => {}
        }
        true
    }

    fn ecc_mode(&mut self, key: &str, v: &Value) -> Option<&'static str> {
        let slot = match key {
            "current" => &mut self.ecc_enabled,
            "pending" => &mut self.ecc_pending,
            _ => return None,
        };
        if let Value::Flag(b) = v {
            *slot = Some(*b);
        }
        Some(if key == "current" {
            "current"
        } else {
            "pending"
        })
    }

    fn ecc_count(&mut self, inner: &[&str], key: &str, v: &Value) -> Option<&'static str> {
        let period = match inner.first() {
            Some(&"volatile") => 0,
            Some(&"aggregate") => 2,
            // `Aggregate Uncorrectable SRAM Sources` breaks the aggregate SRAM count down by
            // unit: counted already.
            _ => return None,
        };
        let (loc, unc) = ecc_key(key)?;
        let unc = match (unc, inner.get(1)) {
            (Some(u), _) => u,
            (None, Some(&"single bit")) => false,
            (None, Some(&"double bit")) => true,
            _ => return None,
        };
        if let Value::Count(n) = v {
            // The first printed is kept, as for the metrics: a section pasted twice into one
            // fragment is not counted twice.
            let c = &mut self.ecc.entry(loc.to_string()).or_default()[period + usize::from(unc)];
            c.get_or_insert(*n);
        }
        Some("counts")
    }

    fn retired_page(&mut self, inner: &[&str], key: &str, v: &Value) -> Option<&'static str> {
        let r = &mut self.retired;
        let (slot, field) = match (inner.last().copied(), key) {
            (None, "single bit ecc")
            | (Some("multiple single bit retirement"), "retired count") => {
                (&mut r.single_bit, "single_bit")
            }
            (None, "double bit ecc") | (Some("double bit retirement"), "retired count") => {
                (&mut r.double_bit, "double_bit")
            }
            (None, k) if k.starts_with("pending") => {
                if let Value::Flag(b) = v {
                    r.pending = Some(*b);
                }
                return Some("pending");
            }
            _ => return None,
        };
        if let Value::Count(n) = v {
            *slot = Some(*n);
        }
        Some(field)
    }

    fn remapped_row(&mut self, inner: &[&str], key: &str, v: &Value) -> Option<&'static str> {
        if !inner.is_empty() {
            // The bank availability histogram.
            return None;
        }
        let r = &mut self.remapped;
        let (count, flag, field) = match key {
            "correctable error" | "remapped row corr" => {
                (Some(&mut r.correctable), None, "correctable")
            }
            "uncorrectable error" | "remapped row unc" => {
                (Some(&mut r.uncorrectable), None, "uncorrectable")
            }
            "pending" | "remapped row pending" => (None, Some(&mut r.pending), "pending"),
            "remapping failure occurred" | "remapped row failure" => {
                (None, Some(&mut r.failure), "failure")
            }
            _ => return None,
        };
        match (v, count, flag) {
            (Value::Count(n), Some(c), _) => *c = Some(*n),
            (Value::Flag(b), _, Some(f)) => *f = Some(*b),
            _ => {}
        }
        Some(field)
    }

    /// The health the block showed, as one reading at `t_s`; `None` when it printed no health
    /// section.
    pub(super) fn finish(self, t_s: f64) -> Option<DeviceHealth> {
        if self.seen.is_empty() {
            return None;
        }
        let mut unavailable = BTreeMap::new();
        for &(title, group) in &GROUPS {
            let why = if !self.seen.contains(group) {
                format!("not in the nvidia-smi -q output (its `{title}` section was not printed)")
            } else if self.read.contains(group) {
                continue;
            } else {
                let word = self.missing.get(group).map_or("N/A", String::as_str);
                format!("the dump prints {word}: the GPU or driver does not report it")
            };
            unavailable.insert(group.to_string(), why);
        }
        for (field, word) in &self.missing {
            let group = field.split('.').next().unwrap_or(field);
            if field.contains('.') && self.read.contains(group) && field != "ecc.counts" {
                unavailable.insert(field.clone(), format!("the dump prints {word}"));
            }
        }
        let (ecc, ecc_locations) = ecc_counts(self.ecc);
        let reading = HealthReading {
            t_s,
            ecc,
            ecc_locations,
            remapped_rows: self.read.contains("remapped_rows").then_some(self.remapped),
            retired_pages: self.read.contains("retired_pages").then_some(self.retired),
            nvlink_errors: None,
        };
        Some(DeviceHealth {
            ecc_enabled: self.ecc_enabled,
            ecc_pending_enabled: self.ecc_pending,
            readings: vec![reading],
            unavailable,
        })
    }
}

/// The whole GPU's counts and those by location: the printed `Total` where there is one
/// (older drivers), else the sum of SRAM and DRAM (newer) or of the locations.
fn ecc_counts(mut by: BTreeMap<String, Counts>) -> (EccCounts, BTreeMap<String, EccCounts>) {
    // Since R550 the SRAM uncorrectable count is printed as parity + SEC-DED only.
    let parity = by.remove("sram_parity");
    let secded = by.remove("sram_secded");
    if parity.is_some() || secded.is_some() {
        let sram = by.entry("sram".to_string()).or_default();
        for i in [1, 3] {
            if sram[i].is_none() {
                let parts = [parity.and_then(|p| p[i]), secded.and_then(|s| s[i])];
                if parts.iter().any(Option::is_some) {
                    sram[i] = Some(parts.iter().flatten().sum());
                }
            }
        }
    }
    let total = by.remove("total");
    let counts = |c: Counts| EccCounts {
        volatile_corrected: c[0],
        volatile_uncorrected: c[1],
        aggregate_corrected: c[2],
        aggregate_uncorrected: c[3],
    };
    let locations: BTreeMap<String, EccCounts> = by
        .into_iter()
        .map(|(k, c)| (k, counts(c)))
        .filter(|(_, c)| !c.is_empty())
        .collect();
    let whole = total.map_or_else(|| sum_ecc(locations.values()), counts);
    (whole, locations)
}

#[cfg(test)]
#[path = "health_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "health_more_tests.rs"]
mod more_tests;
