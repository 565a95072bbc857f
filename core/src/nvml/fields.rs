//! Field values (`nvmlDeviceGetFieldValues`): many counters in one driver call.

use std::ffi::c_int;

use super::device::Device;
use super::error::NvmlError;
use super::library::{check, Nvml};
use super::sys::{self, codes, value_type};

/// `NVML_FI_*` field ids gpuwhy reads (the binding crate's).
pub use super::sys::field_ids as ids;

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
