//! Static facts: the library's (driver and NVML versions, which symbols it exports) and
//! the calls for a GPU's, which [`Gpu::open`](super::gpu::Gpu::open) makes once.

pub use crate::nvml::{architecture_name, ARCHITECTURES};
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
