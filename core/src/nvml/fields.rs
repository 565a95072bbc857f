//! Field values (`nvmlDeviceGetFieldValues`): many counters in one driver call.

use std::ffi::c_int;

use super::device::Device;
use super::error::NvmlError;
use super::library::{check, Nvml};
use super::sys::{self, codes, value_type};

/// `NVML_FI_*` field ids gpuwhy reads. None is in 199–273: those were renumbered between
/// driver releases (docs/nvml-facts.md, "Field ids"), so they are not used.
pub mod ids {
    /// `NVML_FI_DEV_PERF_POLICY_POWER` (alias `NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP`):
    /// cumulative ns the power cap held the clocks down.
    pub const PERF_POLICY_POWER: u32 = 74;
    /// `NVML_FI_DEV_PERF_POLICY_SYNC_BOOST` (alias `NVML_FI_DEV_CLOCKS_EVENT_REASON_SYNC_BOOST`):
    /// cumulative ns a sync-boost group held the clocks down.
    pub const PERF_POLICY_SYNC_BOOST: u32 = 76;
    /// `NVML_FI_DEV_PERF_POLICY_BOARD_LIMIT`: cumulative ns the board limit held the clocks
    /// down.
    pub const PERF_POLICY_BOARD_LIMIT: u32 = 77;
    /// `NVML_FI_DEV_PERF_POLICY_RELIABILITY`: cumulative ns the reliability policy held the
    /// clocks down.
    pub const PERF_POLICY_RELIABILITY: u32 = 79;
    /// `NVML_FI_DEV_NVLINK_LINK_COUNT`: number of NVLinks.
    pub const NVLINK_LINK_COUNT: u32 = 91;
    /// `NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX`: payload sent, cumulative KiB.
    pub const NVLINK_DATA_TX: u32 = 138;
    /// `NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX`: payload received, cumulative KiB.
    pub const NVLINK_DATA_RX: u32 = 139;
    /// `NVML_FI_DEV_POWER_INSTANT`: current power draw, mW ("supported on all architectures").
    pub const POWER_INSTANT: u32 = 186;
    /// `NVML_FI_DEV_TEMPERATURE_SHUTDOWN_TLIMIT`: °C at which the GPU may shut down.
    pub const TEMPERATURE_SHUTDOWN_TLIMIT: u32 = 193;
    /// `NVML_FI_DEV_TEMPERATURE_SLOWDOWN_TLIMIT`: °C at which hardware slowdown may begin.
    pub const TEMPERATURE_SLOWDOWN_TLIMIT: u32 = 194;
    /// `NVML_FI_DEV_TEMPERATURE_MEM_MAX_TLIMIT`: °C of memory at which software slowdown
    /// may begin.
    pub const TEMPERATURE_MEM_MAX_TLIMIT: u32 = 195;
    /// `NVML_FI_DEV_TEMPERATURE_GPU_MAX_TLIMIT`: °C above which clocks may drop below base.
    pub const TEMPERATURE_GPU_MAX_TLIMIT: u32 = 196;
    /// `NVML_FI_DEV_PCIE_COUNT_TX_BYTES`: PCIe bytes sent, cumulative ("value can be wrapped").
    pub const PCIE_COUNT_TX_BYTES: u32 = 197;
    /// `NVML_FI_DEV_PCIE_COUNT_RX_BYTES`: PCIe bytes received, cumulative ("value can be
    /// wrapped").
    pub const PCIE_COUNT_RX_BYTES: u32 = 198;
    /// `NVML_FI_DEV_GPU_TEMP`: GPU temperature, °C with sub-degree precision (13.5 header;
    /// new ids are not subject to the 199–273 renumbering, older drivers answer
    /// NOT_SUPPORTED).
    pub const GPU_TEMP: u32 = 308;
    /// The scope id meaning "the sum over all links" for NVLink fields.
    pub const ALL_LINKS: u32 = u32::MAX;

    /// Every id above with its name in `nvml.h`.
    pub const ALL: [(&str, u32); 16] = [
        ("NVML_FI_DEV_PERF_POLICY_POWER", PERF_POLICY_POWER),
        (
            "NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP",
            PERF_POLICY_POWER,
        ),
        ("NVML_FI_DEV_PERF_POLICY_SYNC_BOOST", PERF_POLICY_SYNC_BOOST),
        (
            "NVML_FI_DEV_PERF_POLICY_BOARD_LIMIT",
            PERF_POLICY_BOARD_LIMIT,
        ),
        (
            "NVML_FI_DEV_PERF_POLICY_RELIABILITY",
            PERF_POLICY_RELIABILITY,
        ),
        ("NVML_FI_DEV_NVLINK_LINK_COUNT", NVLINK_LINK_COUNT),
        ("NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX", NVLINK_DATA_TX),
        ("NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX", NVLINK_DATA_RX),
        (
            "NVML_FI_DEV_TEMPERATURE_SHUTDOWN_TLIMIT",
            TEMPERATURE_SHUTDOWN_TLIMIT,
        ),
        (
            "NVML_FI_DEV_TEMPERATURE_SLOWDOWN_TLIMIT",
            TEMPERATURE_SLOWDOWN_TLIMIT,
        ),
        (
            "NVML_FI_DEV_TEMPERATURE_MEM_MAX_TLIMIT",
            TEMPERATURE_MEM_MAX_TLIMIT,
        ),
        (
            "NVML_FI_DEV_TEMPERATURE_GPU_MAX_TLIMIT",
            TEMPERATURE_GPU_MAX_TLIMIT,
        ),
        ("NVML_FI_DEV_GPU_TEMP", GPU_TEMP),
        ("NVML_FI_DEV_POWER_INSTANT", POWER_INSTANT),
        ("NVML_FI_DEV_PCIE_COUNT_TX_BYTES", PCIE_COUNT_TX_BYTES),
        ("NVML_FI_DEV_PCIE_COUNT_RX_BYTES", PCIE_COUNT_RX_BYTES),
    ];
}

/// The function name in per-field errors.
const FUNCTION: &str = "nvmlDeviceGetFieldValues";

/// One field to read and, after [`Nvml::field_values`], its result.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldValue {
    /// `NVML_FI_*` id. Ids 199-273 were renumbered between driver releases (docs/nvml-facts.md,
    /// "Field ids"); only use them gated on the driver version.
    pub field_id: u32,
    /// NVLink id, `u32::MAX` for the sum over links, or the power scope (0 GPU, 1 module).
    pub scope_id: u32,
    /// The value (every union member converted to `f64`), or this field's own error.
    /// Before the call: NO_DATA.
    pub result: Result<f64, NvmlError>,
    /// When NVML took the reading, microseconds since 1970 (0 before the call).
    pub timestamp_us: i64,
}

impl FieldValue {
    /// A request for `field_id` in scope 0.
    pub fn new(field_id: u32) -> Self {
        Self::with_scope(field_id, 0)
    }

    /// A request for `field_id` in `scope_id`.
    pub fn with_scope(field_id: u32, scope_id: u32) -> Self {
        Self {
            field_id,
            scope_id,
            result: Err(NvmlError::new(FUNCTION, codes::NO_DATA)),
            timestamp_us: 0,
        }
    }
}

/// Reads the member of `v` that `value_type` names, as `f64` (field values and buffered
/// samples alike).
pub(super) fn decode(value_type: u32, v: &sys::nvmlValue_t) -> Result<f64, NvmlError> {
    // Every member is a plain number for which any bit pattern is valid, and the union was
    // fully initialised (8 bytes) before NVML wrote into it, so each read below is sound.
    let x = match value_type {
        // SAFETY: see above.
        value_type::DOUBLE => unsafe { v.dVal },
        // SAFETY: see above.
        value_type::UNSIGNED_INT => f64::from(unsafe { v.uiVal }),
        // SAFETY: see above. `unsigned long` is 8 bytes on Linux, 4 on Windows: read it as
        // the platform's `c_ulong`.
        value_type::UNSIGNED_LONG => (unsafe { v.ulVal }) as f64,
        // SAFETY: see above.
        value_type::UNSIGNED_LONG_LONG => (unsafe { v.ullVal }) as f64,
        // SAFETY: see above.
        value_type::SIGNED_LONG_LONG => (unsafe { v.sllVal }) as f64,
        // SAFETY: see above.
        value_type::SIGNED_INT => f64::from(unsafe { v.siVal }),
        // SAFETY: see above.
        value_type::UNSIGNED_SHORT => f64::from(unsafe { v.usVal }),
        _ => {
            return Err(NvmlError::new(
                "nvmlDeviceGetFieldValues (unknown valueType)",
                codes::UNKNOWN,
            ))
        }
    };
    Ok(x)
}

/// Copies NVML's answer for one element into `out`.
fn fill(out: &mut FieldValue, raw: &sys::nvmlFieldValue_t) {
    out.timestamp_us = raw.timestamp;
    out.result = if raw.nvmlReturn == codes::SUCCESS {
        decode(raw.valueType, &raw.value)
    } else {
        Err(NvmlError::new(FUNCTION, raw.nvmlReturn))
    };
}

impl Nvml {
    /// Reads every field in `values` in one call, filling in each `result` and
    /// `timestamp_us`. Per-field failures (NOT_SUPPORTED is common) land in that field's
    /// `result`; the returned error is for the call as a whole, in which case every field
    /// carries it too.
    pub fn field_values(&self, d: Device, values: &mut [FieldValue]) -> Result<(), NvmlError> {
        if values.is_empty() {
            return Ok(());
        }
        let h = self.raw(d)?;
        let count = c_int::try_from(values.len()).map_err(|_| {
            NvmlError::new(
                "nvmlDeviceGetFieldValues (too many fields)",
                codes::INVALID_ARGUMENT,
            )
        })?;
        let mut raw: Vec<sys::nvmlFieldValue_t> = values
            .iter()
            .map(|v| sys::nvmlFieldValue_t::request(v.field_id, v.scope_id))
            .collect();
        let res = self.syms.field_values.call(|symbol, f| {
            // SAFETY: `f` is `nvmlReturn_t (nvmlDevice_t, int, nvmlFieldValue_t*)`; `raw` holds
            // exactly `count` initialised elements with their ids set.
            let rc = unsafe { f(h, count, raw.as_mut_ptr()) };
            check(symbol, rc)
        });
        match res {
            Ok(()) => {
                for (out, r) in values.iter_mut().zip(&raw) {
                    fill(out, r);
                }
                Ok(())
            }
            Err(e) => {
                for out in values.iter_mut() {
                    out.result = Err(e);
                }
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn element(value_type: u32, ret: u32, value: sys::nvmlValue_t) -> sys::nvmlFieldValue_t {
        let mut r = sys::nvmlFieldValue_t::request(185, 0);
        r.valueType = value_type;
        r.nvmlReturn = ret;
        r.value = value;
        r.timestamp = 1_700_000_000_000_000;
        r
    }

    #[test]
    fn union_is_decoded_by_value_type() {
        let cases = [
            (value_type::DOUBLE, sys::nvmlValue_t { dVal: 1.5 }, 1.5),
            (
                value_type::UNSIGNED_INT,
                sys::nvmlValue_t { uiVal: 350_000 },
                350_000.0,
            ),
            (
                value_type::UNSIGNED_LONG_LONG,
                sys::nvmlValue_t { ullVal: 1 << 40 },
                (1u64 << 40) as f64,
            ),
            (
                value_type::SIGNED_LONG_LONG,
                sys::nvmlValue_t { sllVal: -5 },
                -5.0,
            ),
            (
                value_type::SIGNED_INT,
                sys::nvmlValue_t { siVal: -40 },
                -40.0,
            ),
            (
                value_type::UNSIGNED_SHORT,
                sys::nvmlValue_t { usVal: 65535 },
                65535.0,
            ),
            (
                value_type::UNSIGNED_LONG,
                sys::nvmlValue_t { ulVal: 7 },
                7.0,
            ),
        ];
        for (t, v, want) in cases {
            let mut out = FieldValue::new(185);
            fill(&mut out, &element(t, 0, v));
            assert_eq!(out.result, Ok(want), "type {t}");
            assert_eq!(out.timestamp_us, 1_700_000_000_000_000);
        }
    }

    #[test]
    fn a_narrow_value_ignores_the_rest_of_the_union() {
        // A u32 reading with garbage in the upper half must not come out as ~5e18
        // (icl-utk-edu/papi#564 read the wrong member and printed that for power).
        let mut v = sys::nvmlValue_t {
            ullVal: 0xDEAD_BEEF_0000_0000,
        };
        v.uiVal = 250_000;
        let mut out = FieldValue::new(186);
        fill(&mut out, &element(value_type::UNSIGNED_INT, 0, v));
        assert_eq!(out.result, Ok(250_000.0));
    }

    #[test]
    fn per_field_errors_and_unknown_types_are_errors_of_that_field() {
        let mut out = FieldValue::new(82);
        fill(
            &mut out,
            &element(0, codes::NOT_SUPPORTED, sys::nvmlValue_t { ullVal: 0 }),
        );
        assert!(out.result.unwrap_err().is_not_supported());
        fill(&mut out, &element(42, 0, sys::nvmlValue_t { ullVal: 0 }));
        assert_eq!(out.result.unwrap_err().code, codes::UNKNOWN);
        assert_eq!(
            FieldValue::with_scope(138, u32::MAX)
                .result
                .unwrap_err()
                .code,
            codes::NO_DATA
        );
    }
}
