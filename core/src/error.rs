//! The crate's one error type. Every message says what went wrong and what to do about it.

use std::path::PathBuf;

/// What separates the headline of a "no NVML" message from the places that were tried.
pub const TRIED: &str = "; places tried: ";

/// The first line's worth of a reason such as [`Error::NvmlNotFound`]'s: everything before
/// the list of places tried ([`TRIED`]), or the whole text when it has no such list.
pub fn headline(reason: &str) -> &str {
    reason.split(TRIED).next().unwrap_or(reason)
}

/// Everything that can go wrong in gpuwhy's library.
///
/// A metric a GPU does not support is *not* an error: it is recorded as unavailable with its
/// reason (see [`crate::report::Capability`]). These variants are for things that stop an
/// operation as a whole.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No NVML library could be loaded from any place that was tried. The message is one
    /// headline (what to do) followed by [`TRIED`] and the list of places; [`headline`]
    /// cuts the list off where one line is wanted.
    #[error(
        "no NVIDIA driver found (no NVML library could be loaded); set GPUWHY_NVML_PATH to the full path of libnvidia-ml.so.1 or install the NVIDIA driver{}{}",
        TRIED,
        .tried.iter().map(|(p, why)| format!("{p}: {why}")).collect::<Vec<_>>().join("; ")
    )]
    NvmlNotFound {
        /// Each candidate and why it failed to load.
        tried: Vec<(String, String)>,
    },
    /// A library was loaded but it exports neither `nvmlInit_v2` nor `nvmlInit`.
    #[error("{} is not an NVML library (it exports neither nvmlInit_v2 nor nvmlInit); point GPUWHY_NVML_PATH at libnvidia-ml.so.1 from the NVIDIA driver", .path.display())]
    NvmlNotNvml {
        /// The file that was loaded.
        path: PathBuf,
    },
    /// `nvmlInit` returned an error.
    #[error("NVML failed to initialise ({}: {message}, code {code}); check that the NVIDIA kernel driver is loaded (`nvidia-smi` should work) and that this user may open /dev/nvidia*", .path.display())]
    NvmlInit {
        /// The library that was loaded.
        path: PathBuf,
        /// The `nvmlReturn_t` code.
        code: u32,
        /// NVML's own message for the code.
        message: String,
    },
    /// An NVML call failed in a way that stops the operation (not a per-metric failure).
    #[error("NVML call {function} failed: {message} (code {code})")]
    Nvml {
        /// The NVML function.
        function: &'static str,
        /// The `nvmlReturn_t` code.
        code: u32,
        /// NVML's own message for the code.
        message: String,
    },
    /// Reading or writing a file failed.
    #[error("{action} {}: {source}", .path.display())]
    Io {
        /// What was being done ("cannot write report to", ...).
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A file is not a gpuwhy report, or is damaged.
    #[error("{}: {reason}", .path.display())]
    BadReport {
        /// The file.
        path: PathBuf,
        /// What is wrong and what to do.
        reason: String,
    },
    /// A report was written by a newer gpuwhy with an incompatible schema.
    #[error("{}: report schema {found} is newer than this gpuwhy understands ({supported}); upgrade gpuwhy to read it", .path.display())]
    NewerSchema {
        /// The file.
        path: PathBuf,
        /// The schema string found in the file.
        found: String,
        /// The schema this build reads.
        supported: &'static str,
    },
    /// An argument was out of range.
    #[error("{0}")]
    InvalidArgument(String),
}

/// Shorthand for results in this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_headline_of_no_nvml_is_one_sentence_without_the_places() {
        let e = Error::NvmlNotFound {
            tried: vec![
                ("libnvidia-ml.so.1".into(), "not found".into()),
                ("/usr/lib64/libnvidia-ml.so.1".into(), "not found".into()),
            ],
        };
        let full = e.to_string();
        let line = headline(&full);
        assert!(line.starts_with("no NVIDIA driver found"), "{line}");
        assert!(line.contains("GPUWHY_NVML_PATH"), "{line}");
        assert!(!line.contains("/usr/lib64"), "{line}");
        assert!(
            full.ends_with("/usr/lib64/libnvidia-ml.so.1: not found"),
            "{full}"
        );
        assert_eq!(
            headline("NVML reports no GPU on this machine"),
            "NVML reports no GPU on this machine"
        );
    }
}
