//! The health counters of a report's last reading per GPU, under dcgm-exporter's names
//! (`etc/default-counters.csv` of NVIDIA/dcgm-exporter, where they are commented out by
//! default; `DCGM_FI_DEV_ROW_REMAP_PENDING` is DCGM's field of that name). Every counter read
//! is exported, zeros included, so a dashboard sees a GPU that is clean; a counter not read
//! (not supported here) has no line.
//!
//! Types: dcgm-exporter declares the counts `counter`. A textfile holds the last reading,
//! and Prometheus' own lint (`promtool check metrics`) asks a counter's name to end in
//! `_total`, which these names, kept for existing dashboards, do not; so they are
//! declared `gauge`, which PromQL reads the same way.

use std::fmt::Write;

use crate::report::{DeviceInfo, HealthReading};

/// A reading's value for one metric.
type Get = fn(&HealthReading) -> Option<u64>;

fn flag(b: Option<bool>) -> Option<u64> {
    b.map(u64::from)
}

/// (name, help, value). Help texts follow dcgm-exporter's.
const HEALTH: [(&str, &str, Get); 15] = [
    (
        "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
        "Total number of single-bit volatile ECC errors.",
        |h| h.ecc.volatile_corrected,
    ),
    (
        "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
        "Total number of double-bit volatile ECC errors.",
        |h| h.ecc.volatile_uncorrected,
    ),
    (
        "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL",
        "Total number of single-bit persistent ECC errors.",
        |h| h.ecc.aggregate_corrected,
    ),
    (
        "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL",
        "Total number of double-bit persistent ECC errors.",
        |h| h.ecc.aggregate_uncorrected,
    ),
    (
        "DCGM_FI_DEV_RETIRED_SBE",
        "Total number of retired pages due to single-bit errors.",
        |h| h.retired_pages.and_then(|r| r.single_bit),
    ),
    (
        "DCGM_FI_DEV_RETIRED_DBE",
        "Total number of retired pages due to double-bit errors.",
        |h| h.retired_pages.and_then(|r| r.double_bit),
    ),
    (
        "DCGM_FI_DEV_RETIRED_PENDING",
        "Whether pages are pending retirement (1) or not (0).",
        |h| flag(h.retired_pages.and_then(|r| r.pending)),
    ),
    (
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
        "Number of remapped rows for uncorrectable errors",
        |h| h.remapped_rows.and_then(|r| r.uncorrectable),
    ),
    (
        "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
        "Number of remapped rows for correctable errors",
        |h| h.remapped_rows.and_then(|r| r.correctable),
    ),
    (
        "DCGM_FI_DEV_ROW_REMAP_FAILURE",
        "Whether remapping of rows has failed",
        |h| flag(h.remapped_rows.and_then(|r| r.failure)),
    ),
    (
        "DCGM_FI_DEV_ROW_REMAP_PENDING",
        "Whether a row remap is pending (takes effect at the next GPU reset)",
        |h| flag(h.remapped_rows.and_then(|r| r.pending)),
    ),
    (
        "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
        "Total number of NVLink flow-control CRC errors.",
        |h| h.nvlink_errors.and_then(|n| n.crc_flit),
    ),
    (
        "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL",
        "Total number of NVLink data CRC errors.",
        |h| h.nvlink_errors.and_then(|n| n.crc_data),
    ),
    (
        "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL",
        "Total number of NVLink retries.",
        |h| h.nvlink_errors.and_then(|n| n.replay),
    ),
    (
        "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL",
        "Total number of NVLink recovery errors.",
        |h| h.nvlink_errors.and_then(|n| n.recovery),
    ),
];

/// Every health metric with a value on some GPU of `devices`, from each GPU's last reading,
/// as exposition text; `labels` gives a GPU's label set.
pub(super) fn health_text(
    devices: &[DeviceInfo],
    labels: impl Fn(&DeviceInfo) -> String,
) -> String {
    let mut out = String::new();
    for (name, help, get) in HEALTH {
        let lines: Vec<String> = devices
            .iter()
            .filter_map(|d| {
                let last = d.health.as_ref()?.last()?;
                Some(format!("{name}{{{}}} {}", labels(d), get(last)?))
            })
            .collect();
        if !lines.is_empty() {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
            for l in lines {
                let _ = writeln!(out, "{l}");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{DeviceHealth, EccCounts, RemappedRows};

    #[test]
    fn the_last_reading_is_exported_and_a_counter_not_read_has_no_line() {
        let reading = |corrected| HealthReading {
            ecc: EccCounts {
                volatile_corrected: Some(corrected),
                volatile_uncorrected: Some(0),
                ..Default::default()
            },
            remapped_rows: Some(RemappedRows {
                pending: Some(true),
                failure: Some(false),
                ..Default::default()
            }),
            ..Default::default()
        };
        let devices = [
            DeviceInfo {
                health: Some(DeviceHealth {
                    readings: vec![reading(3), reading(8)],
                    ..Default::default()
                }),
                ..Default::default()
            },
            DeviceInfo {
                index: 1,
                ..Default::default()
            },
        ];
        let text = health_text(&devices, |d| format!("gpu=\"{}\"", d.index));
        assert!(
            text.contains("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL{gpu=\"0\"} 8\n"),
            "{text}"
        );
        assert!(
            text.contains("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{gpu=\"0\"} 0\n"),
            "{text}"
        );
        assert!(
            text.contains("DCGM_FI_DEV_ROW_REMAP_PENDING{gpu=\"0\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("DCGM_FI_DEV_ROW_REMAP_FAILURE{gpu=\"0\"} 0\n"),
            "{text}"
        );
        assert!(!text.contains("RETIRED"), "not read, not exported: {text}");
        assert!(!text.contains("gpu=\"1\""), "no health, no line: {text}");
        assert_eq!(
            text.matches("# TYPE DCGM_FI_DEV_ECC_SBE_VOL_TOTAL gauge")
                .count(),
            1
        );
    }
}
