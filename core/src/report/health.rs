//! A GPU's health counters as DCGM's health watches read them: ECC error counts, remapped
//! rows, retired pages and NVLink error counters, read at the start, about once a minute
//! and at the stop of a recording (once for a dump), so a counter that rises during the run
//! is evidence of its own (docs/health.md).
//!
//! Every counter is optional: `None` is "not read" (the driver does not support it, the
//! dump does not show it), never zero. Why a counter could not be read is kept in
//! [`DeviceHealth::unavailable`], once per counter.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// ECC error counts of one location (or of the whole GPU).
///
/// Volatile counts are since the last driver load; aggregate counts are over the GPU's
/// life (`nvmlDeviceGetTotalEccErrors` with `NVML_VOLATILE_ECC` / `NVML_AGGREGATE_ECC`).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct EccCounts {
    /// Corrected (single-bit) errors since the driver loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub volatile_corrected: Option<u64>,
    /// Uncorrected (double-bit) errors since the driver loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub volatile_uncorrected: Option<u64>,
    /// Corrected errors over the GPU's life.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aggregate_corrected: Option<u64>,
    /// Uncorrected errors over the GPU's life.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aggregate_uncorrected: Option<u64>,
}

impl EccCounts {
    /// True when no count was read.
    pub fn is_empty(&self) -> bool {
        *self == EccCounts::default()
    }
}

/// Row remapping (Ampere and newer data-centre GPUs; `nvmlDeviceGetRemappedRows`).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct RemappedRows {
    /// Rows remapped after correctable errors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub correctable: Option<u64>,
    /// Rows remapped after uncorrectable errors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uncorrectable: Option<u64>,
    /// A remap is pending: it takes effect at the next GPU reset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending: Option<bool>,
    /// A remap failed: the GPU ran out of spare rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<bool>,
}

/// Dynamic page retirement (Kepler to Volta, and still reported by later drivers;
/// `nvmlDeviceGetRetiredPages`, `nvmlDeviceGetRetiredPagesPendingStatus`).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct RetiredPages {
    /// Pages retired after multiple single-bit errors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub single_bit: Option<u64>,
    /// Pages retired after a double-bit error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub double_bit: Option<u64>,
    /// Pages are pending retirement: it takes effect at the next driver reload or reset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending: Option<bool>,
}

/// NVLink error counters, summed over the GPU's links (`nvmlDeviceGetNvLinkErrorCounter`).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct NvlinkErrors {
    /// Data-link CRC errors (flits).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crc_flit: Option<u64>,
    /// Data CRC errors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crc_data: Option<u64>,
    /// Replays after an error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<u64>,
    /// Link recoveries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovery: Option<u64>,
}

/// One reading of every health counter of a GPU.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct HealthReading {
    /// Seconds since the start of the run (0 for a dump).
    pub t_s: f64,
    /// ECC errors of the whole GPU.
    #[serde(skip_serializing_if = "EccCounts::is_empty")]
    pub ecc: EccCounts,
    /// ECC errors by location where the driver splits them: `sram` and `dram` (Ampere and
    /// newer), or `l1_cache`, `l2_cache`, `device_memory`, `register_file`,
    /// `texture_memory`, `texture_shm`, `cbu` (older parts).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub ecc_locations: BTreeMap<String, EccCounts>,
    /// Remapped rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remapped_rows: Option<RemappedRows>,
    /// Retired pages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retired_pages: Option<RetiredPages>,
    /// NVLink error counters (absent without NVLink).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nvlink_errors: Option<NvlinkErrors>,
}

/// A GPU's health: its ECC mode and its counters over the run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct DeviceHealth {
    /// Whether ECC is on (current mode); `None` when not read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecc_enabled: Option<bool>,
    /// Whether ECC is pending a change of mode at the next reboot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecc_pending_enabled: Option<bool>,
    /// Readings in time order: at the start, about once a minute, at the stop.
    pub readings: Vec<HealthReading>,
    /// Counters that could not be read, with why (`remapped_rows`: "not supported").
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub unavailable: BTreeMap<String, String>,
}

impl DeviceHealth {
    /// The first reading.
    pub fn first(&self) -> Option<&HealthReading> {
        self.readings.first()
    }

    /// The last reading.
    pub fn last(&self) -> Option<&HealthReading> {
        self.readings.last()
    }
}

impl DeviceHealth {
    /// What is non-zero or pending in the last reading (and what rose since the first), in
    /// words, one item each; empty when the GPU's counters are clean or were not read. The
    /// one wording the text output and the viewer show.
    pub fn notable(&self) -> Vec<String> {
        let Some(last) = self.last() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let nz = |v: Option<u64>| v.filter(|n| *n > 0);
        let e = &last.ecc;
        for (what, v) in [
            (
                "uncorrected ECC errors since the driver loaded",
                e.volatile_uncorrected,
            ),
            (
                "uncorrected ECC errors over the GPU's life",
                e.aggregate_uncorrected,
            ),
            (
                "corrected ECC errors since the driver loaded",
                e.volatile_corrected,
            ),
            (
                "corrected ECC errors over the GPU's life",
                e.aggregate_corrected,
            ),
        ] {
            if let Some(n) = nz(v) {
                out.push(format!("{n} {what}"));
            }
        }
        if let Some(r) = last.remapped_rows {
            if r.pending == Some(true) {
                out.push("a remapped row pending (reset the GPU)".into());
            }
            if r.failure == Some(true) {
                out.push("a row remap failed".into());
            }
            for (what, v) in [
                ("correctable", r.correctable),
                ("uncorrectable", r.uncorrectable),
            ] {
                if let Some(n) = nz(v) {
                    let rows = if n == 1 { "row" } else { "rows" };
                    out.push(format!("{n} {rows} remapped after {what} errors"));
                }
            }
        }
        if let Some(p) = last.retired_pages {
            if p.pending == Some(true) {
                out.push("pages pending retirement".into());
            }
            let retired = p.single_bit.unwrap_or(0) + p.double_bit.unwrap_or(0);
            if retired > 0 {
                out.push(format!("{retired} retired pages"));
            }
        }
        if let Some(l) = last.nvlink_errors {
            let n = l.crc_flit.unwrap_or(0)
                + l.crc_data.unwrap_or(0)
                + l.replay.unwrap_or(0)
                + l.recovery.unwrap_or(0);
            if n > 0 {
                out.push(format!("{n} NVLink CRC, replay or recovery errors"));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_is_non_zero_or_pending_is_notable() {
        let mut h = DeviceHealth::default();
        assert!(h.notable().is_empty());
        h.readings.push(HealthReading {
            ecc: EccCounts {
                volatile_corrected: Some(0),
                aggregate_corrected: Some(177),
                ..Default::default()
            },
            remapped_rows: Some(RemappedRows {
                correctable: Some(0),
                uncorrectable: Some(0),
                pending: Some(true),
                failure: Some(false),
            }),
            retired_pages: Some(RetiredPages::default()),
            ..Default::default()
        });
        assert_eq!(
            h.notable(),
            [
                "177 corrected ECC errors over the GPU's life",
                "a remapped row pending (reset the GPU)"
            ]
        );
    }
}
