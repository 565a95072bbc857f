//! A simulated GPU's health counters, as a scenario sets them (`"health": {…}` on a device;
//! docs/scenarios.md): ECC mode, ECC errors by memory location (a corrected count may rise
//! at a rate during the run), remapped rows, retired pages and NVLink error counters.
//!
//! The health exports (`exports/health.rs`) answer from this, consistently: the totals are
//! the sums of the locations, the volatile and aggregate counts are the same (the scenario
//! starts with the driver load), and what the board does not have answers NOT_SUPPORTED.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::super::preset::Facts;

/// `nvmlDeviceArchitecture_t` of Ampere, the first with row remapping and the SRAM/DRAM
/// split of ECC locations, and the last without page retirement.
const ARCH_AMPERE: u32 = 7;

/// Memory locations of Ampere and newer (`NVML_MEMORY_LOCATION_*` value, report name).
pub const LOCATIONS_AMPERE: &[(u32, &str)] = &[(2, "dram"), (7, "sram")];
/// Memory locations of older boards.
pub const LOCATIONS_OLDER: &[(u32, &str)] = &[
    (0, "l1_cache"),
    (1, "l2_cache"),
    (2, "dram"),
    (3, "register_file"),
    (4, "texture_memory"),
    (5, "texture_shm"),
    (6, "cbu"),
];

/// `nvmlNvLinkErrorCounter_t` names a scenario may use, by value.
pub const NVLINK_COUNTERS: &[(u32, &str)] = &[
    (0, "replay"),
    (1, "recovery"),
    (2, "crc_flit"),
    (3, "crc_data"),
    (4, "ecc_data"),
];

/// The `health` object of a device in a scenario file; everything optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HealthFile {
    /// ECC mode now (default: on where the board has ECC).
    ecc_enabled: Option<bool>,
    /// ECC mode after the next reboot (default: as now).
    ecc_pending_enabled: Option<bool>,
    /// Corrected errors at the start, by location (`dram`, `sram`, …).
    #[serde(default)]
    corrected: BTreeMap<String, u64>,
    /// Corrected errors added per minute of the run, by location.
    #[serde(default)]
    corrected_per_min: BTreeMap<String, f64>,
    /// Uncorrected errors at the start, by location.
    #[serde(default)]
    uncorrected: BTreeMap<String, u64>,
    /// Rows remapped after correctable errors.
    remap_correctable: Option<u32>,
    /// Rows remapped after uncorrectable errors.
    remap_uncorrectable: Option<u32>,
    /// A remap waits for the next reset.
    remap_pending: Option<bool>,
    /// A remap failed.
    remap_failure: Option<bool>,
    /// Pages retired after multiple single-bit errors.
    retired_single_bit: Option<u32>,
    /// Pages retired after a double-bit error.
    retired_double_bit: Option<u32>,
    /// Pages pending retirement.
    retired_pending: Option<bool>,
    /// NVLink error counters at the start, summed over links (`crc_flit`, `crc_data`,
    /// `replay`, `recovery`, `ecc_data`); the simulator puts them on link 0.
    #[serde(default)]
    nvlink: BTreeMap<String, u64>,
    /// NVLink errors added per minute, by counter.
    #[serde(default)]
    nvlink_per_min: BTreeMap<String, f64>,
}

/// A count at the start and its rise per minute.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counter {
    /// At simulated time 0.
    pub start: u64,
    /// Added per minute.
    pub per_min: f64,
}

impl Counter {
    /// The count at simulated time `t` (whole errors only).
    pub fn at(&self, t: f64) -> u64 {
        self.start + (self.per_min * t.max(0.0) / 60.0).floor() as u64
    }
}

/// A device's health, resolved against its facts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Health {
    /// `None`: the board has no ECC (every ECC call is NOT_SUPPORTED).
    pub ecc: Option<(bool, bool)>,
    /// The locations this architecture reports, with their value.
    pub locations: &'static [(u32, &'static str)],
    /// Corrected errors by location value.
    pub corrected: BTreeMap<u32, Counter>,
    /// Uncorrected errors by location value.
    pub uncorrected: BTreeMap<u32, Counter>,
    /// `(correctable, uncorrectable, pending, failure)`, `None` without row remapping.
    pub remap: Option<(u32, u32, bool, bool)>,
    /// `(single-bit, double-bit, pending)`, `None` without page retirement.
    pub retired: Option<(u32, u32, bool)>,
    /// NVLink counters by value (link 0).
    pub nvlink: BTreeMap<u32, Counter>,
}

impl Health {
    /// ECC on: what the counters answer with.
    pub fn ecc_on(&self) -> bool {
        self.ecc.is_some_and(|(now, _)| now)
    }
}

/// The value of location or counter `name` in `known`, or an error naming the known ones.
fn lookup(known: &[(u32, &str)], name: &str, what: &str) -> Result<u32, String> {
    known
        .iter()
        .find(|(_, n)| *n == name)
        .map(|(v, _)| *v)
        .ok_or_else(|| {
            let names: Vec<&str> = known.iter().map(|(_, n)| *n).collect();
            format!(
                "health: unknown {what} `{name}` (this GPU has: {})",
                names.join(", ")
            )
        })
}

/// Counters by value from a start map and a rate map.
fn counters(
    known: &[(u32, &str)],
    start: &BTreeMap<String, u64>,
    per_min: &BTreeMap<String, f64>,
    what: &str,
) -> Result<BTreeMap<u32, Counter>, String> {
    let mut out: BTreeMap<u32, Counter> = BTreeMap::new();
    for (name, n) in start {
        out.entry(lookup(known, name, what)?).or_default().start = *n;
    }
    for (name, r) in per_min {
        if !(r.is_finite() && *r >= 0.0) {
            return Err(format!("health: the rate of `{name}` must be ≥ 0"));
        }
        out.entry(lookup(known, name, what)?).or_default().per_min = *r;
    }
    Ok(out)
}

impl HealthFile {
    /// The health of a device with `facts` on a board with ECC memory or not (`ecc`): what
    /// the board has, with the scenario's counts.
    pub fn resolve(&self, facts: &Facts, board_ecc: bool) -> Result<Health, String> {
        let ampere = facts.architecture >= ARCH_AMPERE;
        let locations = if ampere {
            LOCATIONS_AMPERE
        } else {
            LOCATIONS_OLDER
        };
        let ecc_now = self.ecc_enabled.unwrap_or(board_ecc);
        let ecc = (board_ecc || self.ecc_enabled.is_some())
            .then(|| (ecc_now, self.ecc_pending_enabled.unwrap_or(ecc_now)));
        let any_remap = self.remap_correctable.is_some()
            || self.remap_uncorrectable.is_some()
            || self.remap_pending.is_some()
            || self.remap_failure.is_some();
        let remap = (ampere && board_ecc || any_remap).then(|| {
            (
                self.remap_correctable.unwrap_or(0),
                self.remap_uncorrectable.unwrap_or(0),
                self.remap_pending.unwrap_or(false),
                self.remap_failure.unwrap_or(false),
            )
        });
        let any_retired = self.retired_single_bit.is_some()
            || self.retired_double_bit.is_some()
            || self.retired_pending.is_some();
        let retired = (!ampere && board_ecc || any_retired).then(|| {
            (
                self.retired_single_bit.unwrap_or(0),
                self.retired_double_bit.unwrap_or(0),
                self.retired_pending.unwrap_or(false),
            )
        });
        let counts = !self.corrected.is_empty()
            || !self.corrected_per_min.is_empty()
            || !self.uncorrected.is_empty();
        if counts && ecc.is_none() {
            return Err("health: ECC counts on a GPU without ECC (set `ecc_enabled`)".into());
        }
        if (!self.nvlink.is_empty() || !self.nvlink_per_min.is_empty()) && facts.nvlink_links == 0 {
            return Err("health: NVLink errors on a GPU without NVLink (`nvlink_links`)".into());
        }
        Ok(Health {
            ecc,
            locations,
            corrected: counters(
                locations,
                &self.corrected,
                &self.corrected_per_min,
                "location",
            )?,
            uncorrected: counters(locations, &self.uncorrected, &BTreeMap::new(), "location")?,
            remap,
            retired,
            nvlink: counters(
                NVLINK_COUNTERS,
                &self.nvlink,
                &self.nvlink_per_min,
                "NVLink counter",
            )?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::preset;

    fn file(json: &str) -> HealthFile {
        serde_json::from_str(json).expect("a valid health object")
    }

    #[test]
    fn a_data_centre_gpu_has_ecc_and_remapping_a_geforce_has_neither() {
        let h100 = preset::lookup("H100-SXM5-80GB").expect("preset");
        let h = HealthFile::default()
            .resolve(&h100, true)
            .expect("resolves");
        assert_eq!(h.ecc, Some((true, true)));
        assert_eq!(h.remap, Some((0, 0, false, false)));
        assert_eq!(h.retired, None, "Ampere and newer retire rows, not pages");
        assert_eq!(h.locations, LOCATIONS_AMPERE);
        let rtx = preset::lookup("RTX-3090").expect("preset");
        let h = HealthFile::default()
            .resolve(&rtx, false)
            .expect("resolves");
        assert_eq!((h.ecc, h.remap, h.retired), (None, None, None));
        let e = file(r#"{"corrected": {"dram": 1}}"#)
            .resolve(&rtx, false)
            .unwrap_err();
        assert!(e.contains("without ECC"), "{e}");
    }

    #[test]
    fn corrected_errors_rise_at_their_rate_and_names_are_checked() {
        let h100 = preset::lookup("H100-SXM5-80GB").expect("preset");
        let h = file(r#"{"corrected": {"dram": 10}, "corrected_per_min": {"dram": 6}}"#)
            .resolve(&h100, true)
            .expect("resolves");
        let dram = h.corrected[&2];
        assert_eq!((dram.at(0.0), dram.at(60.0), dram.at(125.0)), (10, 16, 22));
        let e = file(r#"{"corrected": {"l1_cache": 1}}"#)
            .resolve(&h100, true)
            .unwrap_err();
        assert!(
            e.contains("unknown location `l1_cache`") && e.contains("dram, sram"),
            "{e}"
        );
        let e = file(r#"{"nvlink": {"crc": 1}}"#)
            .resolve(&h100, true)
            .unwrap_err();
        assert!(e.contains("unknown NVLink counter `crc`"), "{e}");
    }

    #[test]
    fn a_scenario_can_give_an_older_feature_to_a_newer_board() {
        let h100 = preset::lookup("H100-SXM5-80GB").expect("preset");
        let h = file(r#"{"retired_pending": true}"#)
            .resolve(&h100, true)
            .expect("resolves");
        assert_eq!(h.retired, Some((0, 0, true)));
    }
}
