//! Static facts of a few real GPU models, so scenario files can say `"preset": "A100-PCIE-40GB"`
//! instead of repeating a dozen numbers. Every fact can still be overridden per device.
//!
//! Numbers are the ones NVML reports for these boards (PCI ids from go-nvml's mock data,
//! temperatures and clocks as `nvidia-smi -q` prints them).

/// The static facts of one GPU model.
#[derive(Debug, Clone, PartialEq)]
pub struct Facts {
    /// `nvmlDeviceGetName`.
    pub name: &'static str,
    /// `(device id << 16) | 0x10DE`.
    pub pci_device_id: u32,
    /// PCI sub-system id.
    pub pci_subsystem_id: u32,
    /// `nvmlDeviceArchitecture_t` (7 Ampere, 8 Ada, 9 Hopper).
    pub architecture: u32,
    /// CUDA compute capability (major, minor).
    pub compute_capability: (i32, i32),
    /// Total memory, MiB.
    pub memory_total_mib: u64,
    /// Memory reserved by the driver, MiB (`nvmlMemory_v2_t.reserved`).
    pub memory_reserved_mib: u64,
    /// Enforced power limit, W.
    pub power_limit_w: f64,
    /// Max SM clock, MHz.
    pub max_sm_clock_mhz: u32,
    /// Max memory clock, MHz.
    pub max_mem_clock_mhz: u32,
    /// Max graphics clock, MHz.
    pub max_graphics_clock_mhz: u32,
    /// Max video clock, MHz.
    pub max_video_clock_mhz: u32,
    /// Max PCIe generation.
    pub pcie_max_gen: u32,
    /// Max PCIe width.
    pub pcie_max_width: u32,
    /// Shutdown temperature, °C.
    pub temp_shutdown_c: u32,
    /// Slowdown temperature, °C.
    pub temp_slowdown_c: u32,
    /// Max operating GPU temperature, °C.
    pub temp_gpu_max_c: u32,
    /// Max operating memory temperature, °C.
    pub temp_mem_max_c: u32,
    /// NVLink link count (0: no NVLink).
    pub nvlink_links: u32,
}

/// The preset used when a device names none.
pub const DEFAULT: &str = "H100-SXM5-80GB";

/// Every preset name.
pub const NAMES: &[&str] = &[
    "H100-SXM5-80GB",
    "A100-SXM4-80GB",
    "A100-PCIE-40GB",
    "L40S",
    "RTX-3090",
];

/// Presets whose boards have no ECC memory (GeForce): every ECC call is NOT_SUPPORTED.
const WITHOUT_ECC: &[&str] = &["RTX-3090"];

/// Whether the board of preset `name` has ECC memory (case-insensitive).
pub fn has_ecc(name: &str) -> bool {
    !WITHOUT_ECC.iter().any(|n| n.eq_ignore_ascii_case(name))
}

/// The facts of a preset, by name (case-insensitive).
pub fn lookup(name: &str) -> Option<Facts> {
    let name = name.to_ascii_uppercase();
    Some(match name.as_str() {
        "H100-SXM5-80GB" => Facts {
            name: "NVIDIA H100 80GB HBM3",
            pci_device_id: 0x2330_10DE,
            pci_subsystem_id: 0x16C1_10DE,
            architecture: 9,
            compute_capability: (9, 0),
            memory_total_mib: 81_559,
            memory_reserved_mib: 512,
            power_limit_w: 700.0,
            max_sm_clock_mhz: 1980,
            max_mem_clock_mhz: 2619,
            max_graphics_clock_mhz: 1980,
            max_video_clock_mhz: 1755,
            pcie_max_gen: 5,
            pcie_max_width: 16,
            temp_shutdown_c: 92,
            temp_slowdown_c: 89,
            temp_gpu_max_c: 87,
            temp_mem_max_c: 95,
            nvlink_links: 18,
        },
        "A100-SXM4-80GB" => Facts {
            name: "NVIDIA A100-SXM4-80GB",
            pci_device_id: 0x20B2_10DE,
            pci_subsystem_id: 0x1463_10DE,
            architecture: 7,
            compute_capability: (8, 0),
            memory_total_mib: 81_920,
            memory_reserved_mib: 512,
            power_limit_w: 400.0,
            max_sm_clock_mhz: 1410,
            max_mem_clock_mhz: 1593,
            max_graphics_clock_mhz: 1410,
            max_video_clock_mhz: 1290,
            pcie_max_gen: 4,
            pcie_max_width: 16,
            temp_shutdown_c: 92,
            temp_slowdown_c: 89,
            temp_gpu_max_c: 85,
            temp_mem_max_c: 95,
            nvlink_links: 12,
        },
        "A100-PCIE-40GB" => Facts {
            name: "NVIDIA A100-PCIE-40GB",
            pci_device_id: 0x20F1_10DE,
            pci_subsystem_id: 0x145F_10DE,
            architecture: 7,
            compute_capability: (8, 0),
            memory_total_mib: 40_960,
            memory_reserved_mib: 384,
            power_limit_w: 250.0,
            max_sm_clock_mhz: 1410,
            max_mem_clock_mhz: 1215,
            max_graphics_clock_mhz: 1410,
            max_video_clock_mhz: 1290,
            pcie_max_gen: 4,
            pcie_max_width: 16,
            temp_shutdown_c: 92,
            temp_slowdown_c: 89,
            temp_gpu_max_c: 85,
            temp_mem_max_c: 95,
            nvlink_links: 0,
        },
        "L40S" => Facts {
            name: "NVIDIA L40S",
            pci_device_id: 0x26B9_10DE,
            pci_subsystem_id: 0x1851_10DE,
            architecture: 8,
            compute_capability: (8, 9),
            memory_total_mib: 46_068,
            memory_reserved_mib: 448,
            power_limit_w: 350.0,
            max_sm_clock_mhz: 2520,
            max_mem_clock_mhz: 9001,
            max_graphics_clock_mhz: 2520,
            max_video_clock_mhz: 1965,
            pcie_max_gen: 4,
            pcie_max_width: 16,
            temp_shutdown_c: 98,
            temp_slowdown_c: 95,
            temp_gpu_max_c: 88,
            temp_mem_max_c: 95,
            nvlink_links: 0,
        },
        "RTX-3090" => Facts {
            name: "NVIDIA GeForce RTX 3090",
            pci_device_id: 0x2204_10DE,
            pci_subsystem_id: 0x1454_10DE,
            architecture: 7,
            compute_capability: (8, 6),
            memory_total_mib: 24_576,
            memory_reserved_mib: 256,
            power_limit_w: 350.0,
            max_sm_clock_mhz: 2100,
            max_mem_clock_mhz: 9751,
            max_graphics_clock_mhz: 2100,
            max_video_clock_mhz: 1950,
            pcie_max_gen: 4,
            pcie_max_width: 16,
            temp_shutdown_c: 98,
            temp_slowdown_c: 95,
            temp_gpu_max_c: 93,
            temp_mem_max_c: 0,
            nvlink_links: 0,
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_preset_resolves() {
        for name in NAMES {
            let facts = lookup(name).expect(name);
            assert_eq!(
                facts.pci_device_id & 0xFFFF,
                0x10DE,
                "{name}: NVIDIA vendor id"
            );
        }
        assert!(lookup(DEFAULT).is_some());
        assert!(lookup("rtx-3090").is_some(), "case-insensitive");
        assert!(lookup("GTX-480").is_none());
    }
}
