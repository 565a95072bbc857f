//! [`NvmlError`]: one failed NVML call, and how to classify it.
//!
//! Most failures are about one metric on one device (NOT_SUPPORTED on a GeForce card, a
//! symbol an old driver lacks) and must not stop a recording; the classification methods
//! let the sampler decide whether to stop asking ([`NvmlError::is_unavailable`]), to try
//! again next tick ([`NvmlError::is_transient`]) or to give the device up
//! ([`NvmlError::is_gpu_lost`]).

use std::fmt;

use super::sys::codes;

/// A failed NVML call: which function, and the `nvmlReturn_t` it gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NvmlError {
    /// The NVML symbol that was called (or, for a missing binding, the one that was wanted).
    /// Checks gpuwhy makes itself say what they rejected in parentheses after the name.
    pub function: &'static str,
    /// The `nvmlReturn_t` code; see [`codes`](super::codes).
    pub code: u32,
    /// True when the library does not export the function at all (code is then
    /// `FUNCTION_NOT_FOUND`).
    pub missing_symbol: bool,
}

impl NvmlError {
    /// An error `code` returned by `function`.
    pub const fn new(function: &'static str, code: u32) -> Self {
        Self {
            function,
            code,
            missing_symbol: false,
        }
    }

    /// The error for a binding the loaded library does not export.
    pub const fn missing(function: &'static str) -> Self {
        Self {
            function,
            code: codes::FUNCTION_NOT_FOUND,
            missing_symbol: true,
        }
    }

    /// The device or product lacks the feature.
    pub fn is_not_supported(&self) -> bool {
        self.code == codes::NOT_SUPPORTED
    }

    /// The GPU fell off the bus or needs a reset: stop querying it.
    pub fn is_gpu_lost(&self) -> bool {
        matches!(
            self.code,
            codes::GPU_IS_LOST | codes::RESET_REQUIRED | codes::GPU_NOT_FOUND
        )
    }

    /// Asking again will not help: the metric is unavailable for this device and library
    /// (missing symbol, NOT_SUPPORTED, FUNCTION_NOT_FOUND, DEPRECATED, NO_PERMISSION).
    pub fn is_unavailable(&self) -> bool {
        self.missing_symbol
            || matches!(
                self.code,
                codes::NOT_SUPPORTED
                    | codes::FUNCTION_NOT_FOUND
                    | codes::DEPRECATED
                    | codes::NO_PERMISSION
                    | codes::ARGUMENT_VERSION_MISMATCH
            )
    }

    /// The next attempt may succeed (TIMEOUT, UNKNOWN, NOT_FOUND, NO_DATA, NOT_READY,
    /// IN_USE, INSUFFICIENT_RESOURCES, MEMORY, IRQ_ISSUE).
    pub fn is_transient(&self) -> bool {
        !self.missing_symbol
            && matches!(
                self.code,
                codes::TIMEOUT
                    | codes::UNKNOWN
                    | codes::NOT_FOUND
                    | codes::NO_DATA
                    | codes::NOT_READY
                    | codes::IN_USE
                    | codes::INSUFFICIENT_RESOURCES
                    | codes::MEMORY
                    | codes::IRQ_ISSUE
            )
    }

    /// The `NVML_ERROR_` suffix of the code ("NOT_SUPPORTED", ...), "UNKNOWN_CODE" for a
    /// code newer than this build.
    pub fn code_name(&self) -> &'static str {
        code_name(self.code)
    }
}

/// Whether a failure through a newer symbol should be retried through its older fallback:
/// the newer entry point is absent in the driver (FUNCTION_NOT_FOUND), has been removed
/// (DEPRECATED), or does not accept our struct version (ARGUMENT_VERSION_MISMATCH).
pub(super) fn wants_fallback(code: u32) -> bool {
    matches!(
        code,
        codes::FUNCTION_NOT_FOUND | codes::DEPRECATED | codes::ARGUMENT_VERSION_MISMATCH
    )
}

/// Every `nvmlReturn_t` value with its `NVML_ERROR_` suffix (`SUCCESS` for 0).
pub(super) const CODES: &[(&str, u32)] = &[
    ("SUCCESS", codes::SUCCESS),
    ("UNINITIALIZED", codes::UNINITIALIZED),
    ("INVALID_ARGUMENT", codes::INVALID_ARGUMENT),
    ("NOT_SUPPORTED", codes::NOT_SUPPORTED),
    ("NO_PERMISSION", codes::NO_PERMISSION),
    ("ALREADY_INITIALIZED", codes::ALREADY_INITIALIZED),
    ("NOT_FOUND", codes::NOT_FOUND),
    ("INSUFFICIENT_SIZE", codes::INSUFFICIENT_SIZE),
    ("INSUFFICIENT_POWER", codes::INSUFFICIENT_POWER),
    ("DRIVER_NOT_LOADED", codes::DRIVER_NOT_LOADED),
    ("TIMEOUT", codes::TIMEOUT),
    ("IRQ_ISSUE", codes::IRQ_ISSUE),
    ("LIBRARY_NOT_FOUND", codes::LIBRARY_NOT_FOUND),
    ("FUNCTION_NOT_FOUND", codes::FUNCTION_NOT_FOUND),
    ("CORRUPTED_INFOROM", codes::CORRUPTED_INFOROM),
    ("GPU_IS_LOST", codes::GPU_IS_LOST),
    ("RESET_REQUIRED", codes::RESET_REQUIRED),
    ("OPERATING_SYSTEM", codes::OPERATING_SYSTEM),
    ("LIB_RM_VERSION_MISMATCH", codes::LIB_RM_VERSION_MISMATCH),
    ("IN_USE", codes::IN_USE),
    ("MEMORY", codes::MEMORY),
    ("NO_DATA", codes::NO_DATA),
    ("VGPU_ECC_NOT_SUPPORTED", codes::VGPU_ECC_NOT_SUPPORTED),
    ("INSUFFICIENT_RESOURCES", codes::INSUFFICIENT_RESOURCES),
    ("FREQ_NOT_SUPPORTED", codes::FREQ_NOT_SUPPORTED),
    (
        "ARGUMENT_VERSION_MISMATCH",
        codes::ARGUMENT_VERSION_MISMATCH,
    ),
    ("DEPRECATED", codes::DEPRECATED),
    ("NOT_READY", codes::NOT_READY),
    ("GPU_NOT_FOUND", codes::GPU_NOT_FOUND),
    ("INVALID_STATE", codes::INVALID_STATE),
    ("RESET_TYPE_NOT_SUPPORTED", codes::RESET_TYPE_NOT_SUPPORTED),
    ("UNKNOWN", codes::UNKNOWN),
];

/// The `NVML_ERROR_` suffix for `code`, or "UNKNOWN_CODE".
pub(super) fn code_name(code: u32) -> &'static str {
    CODES
        .iter()
        .find(|(_, c)| *c == code)
        .map_or("UNKNOWN_CODE", |(n, _)| n)
}

impl fmt::Display for NvmlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.missing_symbol {
            write!(
                f,
                "{} is not exported by this NVML library (too old or too new a driver)",
                self.function
            )
        } else {
            write!(
                f,
                "{} failed: {} (code {})",
                self.function,
                self.code_name(),
                self.code
            )
        }
    }
}

impl std::error::Error for NvmlError {}

impl From<NvmlError> for crate::Error {
    /// For a failure that stops a whole operation. The message is the code's name, since no
    /// library is at hand for `nvmlErrorString`; use [`Nvml::error`](super::Nvml::error) to get
    /// NVML's own text.
    fn from(e: NvmlError) -> Self {
        let message = if e.missing_symbol {
            "function not exported by this NVML library".to_string()
        } else {
            e.code_name().to_string()
        };
        crate::Error::Nvml {
            function: e.function,
            code: e.code,
            message,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification_separates_permanent_transient_and_lost() {
        let e = |code| NvmlError::new("nvmlX", code);
        assert!(e(codes::NOT_SUPPORTED).is_not_supported());
        assert!(e(codes::NOT_SUPPORTED).is_unavailable());
        assert!(!e(codes::NOT_SUPPORTED).is_transient());
        for c in [
            codes::FUNCTION_NOT_FOUND,
            codes::DEPRECATED,
            codes::NO_PERMISSION,
        ] {
            assert!(e(c).is_unavailable(), "{c}");
            assert!(!e(c).is_transient(), "{c}");
        }
        for c in [
            codes::TIMEOUT,
            codes::UNKNOWN,
            codes::NOT_FOUND,
            codes::NO_DATA,
            codes::NOT_READY,
            codes::IN_USE,
            codes::INSUFFICIENT_RESOURCES,
        ] {
            assert!(e(c).is_transient(), "{c}");
            assert!(!e(c).is_unavailable(), "{c}");
        }
        assert!(e(codes::GPU_IS_LOST).is_gpu_lost());
        assert!(!e(codes::GPU_IS_LOST).is_transient());
        assert!(!e(codes::TIMEOUT).is_gpu_lost());
    }

    #[test]
    fn missing_symbol_is_unavailable_never_transient() {
        let e = NvmlError::missing("nvmlDeviceGetTemperatureV");
        assert_eq!(e.code, codes::FUNCTION_NOT_FOUND);
        assert!(e.is_unavailable());
        assert!(!e.is_transient());
        assert!(e.to_string().contains("not exported"));
    }

    #[test]
    fn code_names_cover_every_documented_code_and_flag_new_ones() {
        for c in 0..=30 {
            assert_ne!(code_name(c), "UNKNOWN_CODE", "code {c}");
        }
        assert_eq!(code_name(999), "UNKNOWN");
        assert_eq!(code_name(31), "UNKNOWN_CODE");
        assert_eq!(NvmlError::new("f", 3).code_name(), "NOT_SUPPORTED");
        assert_eq!(
            NvmlError::new("nvmlDeviceGetPowerUsage", 15).to_string(),
            "nvmlDeviceGetPowerUsage failed: GPU_IS_LOST (code 15)"
        );
    }

    #[test]
    fn only_absent_or_retired_entry_points_trigger_fallback() {
        assert!(wants_fallback(codes::FUNCTION_NOT_FOUND));
        assert!(wants_fallback(codes::DEPRECATED));
        assert!(wants_fallback(codes::ARGUMENT_VERSION_MISMATCH));
        assert!(!wants_fallback(codes::NOT_SUPPORTED));
        assert!(!wants_fallback(codes::GPU_IS_LOST));
    }
}
