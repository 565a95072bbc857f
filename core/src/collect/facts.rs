//! Static facts: the library's (driver and NVML versions, which symbols it exports) and
//! the calls for a GPU's, which [`Gpu::open`](super::gpu::Gpu::open) makes once.

use crate::nvml::{Nvml, NvmlError};
use crate::report::NvmlInfo;

/// NVML facts about the library, for the report.
pub fn nvml_info(nvml: &Nvml) -> NvmlInfo {
    let cuda = nvml
        .cuda_driver_version()
        .ok()
        .map(|v| format!("{}.{}", v / 1000, (v % 1000) / 10));
    NvmlInfo {
        path: nvml.path().display().to_string(),
        driver_version: nvml.driver_version().ok(),
        nvml_version: nvml.nvml_version().ok(),
        cuda_driver_version: cuda,
        symbols: nvml
            .resolved_symbols()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.map(str::to_string)))
            .collect(),
    }
}

/// `nvmlDeviceArchitecture_t` values with gpuwhy's name for each: the header's
/// `NVML_DEVICE_ARCH_<NAME>` in lower case (checked against `nvml.h` by the header test).
/// 11, 12 and 15 are the DLA and NPU engines of the 13.x header, not GPUs.
pub const ARCHITECTURES: [(u32, &str); 14] = [
    (2, "kepler"),
    (3, "maxwell"),
    (4, "pascal"),
    (5, "volta"),
    (6, "turing"),
    (7, "ampere"),
    (8, "ada"),
    (9, "hopper"),
    (10, "blackwell"),
    (11, "dla"),
    (12, "dla2"),
    (13, "rubin"),
    (15, "npu3"),
    (0xFFFF_FFFF, "unknown"),
];

/// Architecture name for `nvmlDeviceArchitecture_t` (docs/nvml-loading.md); "unknown" for
/// values newer than this build.
pub fn architecture_name(a: u32) -> String {
    ARCHITECTURES
        .iter()
        .find(|(id, _)| *id == a)
        .map_or("unknown", |(_, n)| n)
        .to_string()
}

/// The static facts' calls: a fact this GPU or driver does not have is simply absent, any
/// other failure (a timeout, UNKNOWN, a lost GPU) is also kept, to be counted as a fault.
#[derive(Default)]
pub(super) struct Facts {
    pub(super) errors: Vec<NvmlError>,
}

impl Facts {
    pub(super) fn get<T>(&mut self, r: Result<T, NvmlError>) -> Option<T> {
        r.map_err(|e| {
            if !e.is_unavailable() {
                self.errors.push(e);
            }
        })
        .ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn architecture_ids_follow_the_13x_header() {
        assert_eq!(architecture_name(9), "hopper");
        assert_eq!(architecture_name(11), "dla");
        assert_eq!(architecture_name(12), "dla2");
        assert_eq!(architecture_name(15), "npu3");
        assert_eq!(architecture_name(14), "unknown");
    }
}
