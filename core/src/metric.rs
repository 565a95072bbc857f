//! The catalogue of per-GPU metrics gpuwhy records: their report names, units and meaning.
//!
//! Every GPU sample is a fixed-size row indexed by [`GpuMetric`]; a value the GPU did not
//! give is `NaN` in memory and `null` in the report, never 0.

/// One per-GPU time series. The discriminant is the column index in a sample row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum GpuMetric {
    /// Percent of the last sample period in which at least one kernel ran (`nvmlUtilization_t.gpu`).
    UtilGpu,
    /// Percent of the last sample period in which device memory was read or written.
    UtilMem,
    /// Device memory in use, MiB.
    MemUsed,
    /// Board power draw, W.
    Power,
    /// GPU core temperature, °C.
    Temp,
    /// SM clock, MHz.
    SmClock,
    /// Memory clock, MHz.
    MemClock,
    /// Graphics clock, MHz.
    GraphicsClock,
    /// Performance state (0 = P0, maximum performance).
    Pstate,
    /// Clock event ("throttle") reason bitmask, see [`reasons`].
    ClockReasons,
    /// PCIe receive (host → GPU) throughput, MB/s.
    PcieRx,
    /// PCIe transmit (GPU → host) throughput, MB/s.
    PcieTx,
    /// Current PCIe link generation.
    PcieGen,
    /// Current PCIe link width (lanes).
    PcieWidth,
    /// NVLink receive payload throughput summed over links, MB/s.
    NvlinkRx,
    /// NVLink transmit payload throughput summed over links, MB/s.
    NvlinkTx,
    /// GPM: percent of SMs busy (Hopper and newer).
    GpmSmUtil,
    /// GPM: percent of active warps against the theoretical maximum.
    GpmSmOccupancy,
    /// GPM: percent of time any tensor pipe was active.
    GpmTensor,
    /// GPM: percent of peak DRAM bandwidth used.
    GpmDramBw,
    /// GPM: PCIe receive, MiB/s.
    GpmPcieRx,
    /// GPM: PCIe transmit, MiB/s.
    GpmPcieTx,
    /// GPM: NVLink receive over all links, MiB/s.
    GpmNvlinkRx,
    /// GPM: NVLink transmit over all links, MiB/s.
    GpmNvlinkTx,
}

impl GpuMetric {
    /// Number of metrics, the width of a sample row.
    pub const COUNT: usize = 24;

    /// All metrics in column order.
    pub const ALL: [GpuMetric; Self::COUNT] = [
        Self::UtilGpu,
        Self::UtilMem,
        Self::MemUsed,
        Self::Power,
        Self::Temp,
        Self::SmClock,
        Self::MemClock,
        Self::GraphicsClock,
        Self::Pstate,
        Self::ClockReasons,
        Self::PcieRx,
        Self::PcieTx,
        Self::PcieGen,
        Self::PcieWidth,
        Self::NvlinkRx,
        Self::NvlinkTx,
        Self::GpmSmUtil,
        Self::GpmSmOccupancy,
        Self::GpmTensor,
        Self::GpmDramBw,
        Self::GpmPcieRx,
        Self::GpmPcieTx,
        Self::GpmNvlinkRx,
        Self::GpmNvlinkTx,
    ];

    /// Column index in a sample row.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The name used in reports (`series[].metrics.<name>`) and capabilities.
    pub const fn name(self) -> &'static str {
        match self {
            Self::UtilGpu => "util_gpu",
            Self::UtilMem => "util_mem",
            Self::MemUsed => "mem_used",
            Self::Power => "power",
            Self::Temp => "temp",
            Self::SmClock => "sm_clock",
            Self::MemClock => "mem_clock",
            Self::GraphicsClock => "graphics_clock",
            Self::Pstate => "pstate",
            Self::ClockReasons => "clock_reasons",
            Self::PcieRx => "pcie_rx",
            Self::PcieTx => "pcie_tx",
            Self::PcieGen => "pcie_gen",
            Self::PcieWidth => "pcie_width",
            Self::NvlinkRx => "nvlink_rx",
            Self::NvlinkTx => "nvlink_tx",
            Self::GpmSmUtil => "gpm_sm_util",
            Self::GpmSmOccupancy => "gpm_sm_occupancy",
            Self::GpmTensor => "gpm_tensor",
            Self::GpmDramBw => "gpm_dram_bw",
            Self::GpmPcieRx => "gpm_pcie_rx",
            Self::GpmPcieTx => "gpm_pcie_tx",
            Self::GpmNvlinkRx => "gpm_nvlink_rx",
            Self::GpmNvlinkTx => "gpm_nvlink_tx",
        }
    }

    /// Unit of the values.
    pub const fn unit(self) -> &'static str {
        match self {
            Self::UtilGpu | Self::UtilMem => "%",
            Self::GpmSmUtil | Self::GpmSmOccupancy | Self::GpmTensor | Self::GpmDramBw => "%",
            Self::MemUsed => "MiB",
            Self::Power => "W",
            Self::Temp => "°C",
            Self::SmClock | Self::MemClock | Self::GraphicsClock => "MHz",
            Self::Pstate => "P",
            Self::ClockReasons => "bitmask",
            Self::PcieRx | Self::PcieTx | Self::NvlinkRx | Self::NvlinkTx => "MB/s",
            Self::GpmPcieRx | Self::GpmPcieTx | Self::GpmNvlinkRx | Self::GpmNvlinkTx => "MiB/s",
            Self::PcieGen => "gen",
            Self::PcieWidth => "lanes",
        }
    }

    /// How finely the report's compact form keeps the metric (docs/report-format.md, "The
    /// compact series form"): values are written as whole multiples of 1 / `per_unit`, the
    /// precision NVML gives them in. Integer percentages, MHz, °C, P-states, link states and
    /// bitmasks are whole numbers; power is whole milliwatts (NVML's unit); memory in use is
    /// kept to 0.01 MiB; PCIe and NVLink rates in MB/s to the byte per second (NVML counts
    /// KiB); GPM shares (doubles in NVML) to 0.01 % and GPM rates to 0.001 MiB/s.
    pub const fn per_unit(self) -> u32 {
        match self {
            Self::UtilGpu | Self::UtilMem | Self::Temp | Self::Pstate | Self::ClockReasons => 1,
            Self::SmClock | Self::MemClock | Self::GraphicsClock => 1,
            Self::PcieGen | Self::PcieWidth => 1,
            Self::Power => 1_000,
            Self::MemUsed => 100,
            Self::PcieRx | Self::PcieTx | Self::NvlinkRx | Self::NvlinkTx => 1_000_000,
            Self::GpmSmUtil | Self::GpmSmOccupancy | Self::GpmTensor | Self::GpmDramBw => 100,
            Self::GpmPcieRx | Self::GpmPcieTx | Self::GpmNvlinkRx | Self::GpmNvlinkTx => 1_000,
        }
    }

    /// Looks a metric up by its report name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// Utilization (%) at or above which a sample counts as "under load" for clock, power and
/// link checks: a GPU that is mostly idle legitimately lowers clocks and link speed. The
/// signals judge with it and a recording's buckets count by it (`recording::reasons`).
pub const LOAD_UTIL: f64 = 50.0;

/// NVML's PCIe "KB"/s (`nvmlDeviceGetPcieThroughput`) in the report's MB/s (10⁶ bytes/s).
/// NVML's KB is 1024 bytes, like its other byte counters (NVLink KiB, GPM MiB/s); the
/// choice and its sources are in docs/nvml-loading.md ("Units").
pub fn pcie_kbs_to_mbs(kbs: u32) -> f32 {
    (f64::from(kbs) * 1024.0 / 1e6) as f32
}

/// Clock event reason bits (`nvmlClocksEventReason*`, same values as the older throttle
/// reasons; docs/nvml-loading.md lists them with their source).
pub mod reasons {
    /// Nothing running; clocks dropping to idle.
    pub const GPU_IDLE: u64 = 0x1;
    /// Application clocks set by the user.
    pub const APPLICATIONS_CLOCKS: u64 = 0x2;
    /// Software power capping to stay under the power limit.
    pub const SW_POWER_CAP: u64 = 0x4;
    /// Hardware slowdown (≥ 2× clock cut): temperature, power brake or a fast power trigger.
    pub const HW_SLOWDOWN: u64 = 0x8;
    /// Held to the minimum clock of a sync-boost group.
    pub const SYNC_BOOST: u64 = 0x10;
    /// Software thermal slowdown.
    pub const SW_THERMAL: u64 = 0x20;
    /// Hardware thermal slowdown.
    pub const HW_THERMAL: u64 = 0x40;
    /// External power brake.
    pub const HW_POWER_BRAKE: u64 = 0x80;
    /// Limited by display clocks.
    pub const DISPLAY_CLOCKS: u64 = 0x100;
    /// The board's limit (operating) policy holds the clocks down (12.x headers and later).
    pub const BOARD_LIMIT: u64 = 0x200;
    /// The reliability policy holds the clocks down (12.x headers and later).
    pub const RELIABILITY: u64 = 0x400;
    /// `nvmlClocksEventReasonAll`: every bit the header defines.
    pub const ALL: u64 = 0x7FF;

    /// The bits that mean "the hardware runs slower than it could", each counted on its own
    /// by the throttling rule.
    pub const THROTTLING_BITS: [u64; 7] = [
        SW_POWER_CAP,
        HW_SLOWDOWN,
        SW_THERMAL,
        HW_THERMAL,
        HW_POWER_BRAKE,
        BOARD_LIMIT,
        RELIABILITY,
    ];

    /// Bits that mean "the hardware runs slower than it could" (what the throttling rule counts).
    pub const THROTTLING: u64 = SW_POWER_CAP
        | HW_SLOWDOWN
        | SW_THERMAL
        | HW_THERMAL
        | HW_POWER_BRAKE
        | BOARD_LIMIT
        | RELIABILITY;

    /// Every bit with its name in evidence text and its macro in `nvml.h`.
    pub const NAMED: [(u64, &str, &str); 11] = [
        (GPU_IDLE, "gpu_idle", "nvmlClocksEventReasonGpuIdle"),
        (
            APPLICATIONS_CLOCKS,
            "applications_clocks",
            "nvmlClocksEventReasonApplicationsClocksSetting",
        ),
        (
            SW_POWER_CAP,
            "sw_power_cap",
            "nvmlClocksEventReasonSwPowerCap",
        ),
        (
            HW_SLOWDOWN,
            "hw_slowdown",
            "nvmlClocksThrottleReasonHwSlowdown",
        ),
        (SYNC_BOOST, "sync_boost", "nvmlClocksEventReasonSyncBoost"),
        (
            SW_THERMAL,
            "sw_thermal_slowdown",
            "nvmlClocksEventReasonSwThermalSlowdown",
        ),
        (
            HW_THERMAL,
            "hw_thermal_slowdown",
            "nvmlClocksThrottleReasonHwThermalSlowdown",
        ),
        (
            HW_POWER_BRAKE,
            "hw_power_brake",
            "nvmlClocksThrottleReasonHwPowerBrakeSlowdown",
        ),
        (
            DISPLAY_CLOCKS,
            "display_clocks",
            "nvmlClocksEventReasonDisplayClockSetting",
        ),
        (
            BOARD_LIMIT,
            "board_limit",
            "nvmlClocksEventReasonBoardLimit",
        ),
        (
            RELIABILITY,
            "reliability",
            "nvmlClocksEventReasonReliability",
        ),
    ];

    /// Human names of the set bits, for evidence text.
    pub fn names(mask: u64) -> Vec<&'static str> {
        NAMED
            .iter()
            .filter(|(b, _, _)| mask & b != 0)
            .map(|(_, n, _)| *n)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_order_matches_discriminants_and_names_are_unique() {
        for (i, m) in GpuMetric::ALL.iter().enumerate() {
            assert_eq!(m.index(), i);
            assert_eq!(GpuMetric::from_name(m.name()), Some(*m));
        }
    }

    #[test]
    fn pcie_kb_is_1024_bytes() {
        // 1,000,000 KB/s = 1,024,000,000 B/s = 1024 MB/s.
        assert_eq!(pcie_kbs_to_mbs(1_000_000), 1024.0);
        assert_eq!(pcie_kbs_to_mbs(0), 0.0);
    }

    #[test]
    fn reason_names() {
        assert_eq!(
            reasons::names(0x24),
            vec!["sw_power_cap", "sw_thermal_slowdown"]
        );
        assert!(reasons::names(0).is_empty());
        // The 12.x headers added board-limit and reliability policies that hold clocks down.
        assert_eq!(reasons::names(0x600), vec!["board_limit", "reliability"]);
        assert_ne!(reasons::THROTTLING & reasons::BOARD_LIMIT, 0);
        assert_ne!(reasons::THROTTLING & reasons::RELIABILITY, 0);
        let all = reasons::NAMED.iter().fold(0, |m, (b, _, _)| m | b);
        assert_eq!(all, reasons::ALL);
        let bits = reasons::THROTTLING_BITS.iter().fold(0, |m, b| m | b);
        assert_eq!(bits, reasons::THROTTLING);
    }
}
