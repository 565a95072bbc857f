//! Static facts: the library's (driver and NVML versions, which symbols it exports) and
//! the calls for a GPU's, which [`Gpu::open`](super::gpu::Gpu::open) makes once.

use crate::nvml::architecture_name;
use crate::nvml::field_ids::NVLINK_LINK_COUNT;
use crate::nvml::{ClockType, Device, FieldValue, Nvml, NvmlError, TemperatureThreshold};
use crate::report::{DeviceInfo, NvmlInfo};

use super::gpu::MIB;

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

/// A GPU's static facts, read once when it is opened, with the calls that failed other than
/// with "not supported here". `gpm` says whether GPM is wanted and supported by `gpm_probe`
/// (the device whose GPM support decides: the GPU itself, or a MIG slice's parent GPU; its
/// support is not asked for when GPM is not wanted).
pub(super) fn device_info(
    nvml: &Nvml,
    handle: Device,
    index: u32,
    gpm_probe: Option<Device>,
) -> (DeviceInfo, Facts) {
    let mut info = DeviceInfo {
        index,
        ..Default::default()
    };
    let mut f = Facts::default();
    info.name = f.get(nvml.name(handle));
    info.uuid = f.get(nvml.uuid(handle));
    if let Some(pci) = f.get(nvml.pci_info(handle)) {
        info.pci_bus_id = Some(pci.bus_id);
        info.pci_device_id = Some(pci.pci_device_id);
    }
    info.architecture = f.get(nvml.architecture(handle)).map(architecture_name);
    info.compute_capability = f
        .get(nvml.cuda_compute_capability(handle))
        .map(|(a, b)| format!("{a}.{b}"));
    if let Some(m) = f.get(nvml.memory_info(handle)) {
        info.memory_total_mib = Some(m.total as f64 / MIB);
        info.memory_reserved_mib = m.reserved.map(|r| r as f64 / MIB);
    }
    info.power_limit_w = f
        .get(nvml.enforced_power_limit_mw(handle))
        .map(|mw| f64::from(mw) / 1000.0);
    let mut max_clock = |t| f.get(nvml.max_clock_mhz(handle, t)).map(f64::from);
    info.max_sm_clock_mhz = max_clock(ClockType::Sm);
    info.max_mem_clock_mhz = max_clock(ClockType::Mem);
    info.max_graphics_clock_mhz = max_clock(ClockType::Graphics);
    info.pcie_max_gen = f.get(nvml.max_pcie_link_gen(handle));
    info.pcie_max_width = f.get(nvml.max_pcie_link_width(handle));
    info.pcie_device_max_gen = f.get(nvml.gpu_max_pcie_link_gen(handle));
    let mut threshold = |t| {
        f.get(nvml.temperature_threshold_c(handle, t))
            .map(f64::from)
    };
    info.temp_slowdown_c = threshold(TemperatureThreshold::Slowdown);
    info.temp_shutdown_c = threshold(TemperatureThreshold::Shutdown);
    let mut links = [FieldValue::new(NVLINK_LINK_COUNT)];
    if f.get(nvml.field_values(handle, &mut links)).is_some() {
        info.nvlink_links = links[0].result.as_ref().ok().map(|v| *v as u32);
    }
    info.gpm = gpm_probe.is_some_and(|p| f.get(nvml.gpm_supported(p)).unwrap_or(false));
    (info, f)
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
