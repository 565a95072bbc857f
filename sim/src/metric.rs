//! The time-varying quantities a simulated device plays, with their JSON names and the
//! range every value is clamped to.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

use crate::abi::*;

macro_rules! metrics {
    ($($variant:ident = $name:literal, $doc:literal, [$lo:expr, $hi:expr];)*) => {
        /// One time-varying quantity of a simulated device.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Metric {
            $(#[doc = $doc] $variant,)*
        }

        impl Metric {
            /// Every metric, in table order (`as usize` indexes this).
            pub const ALL: &'static [Metric] = &[$(Metric::$variant,)*];

            /// The name used in scenario files.
            pub fn name(self) -> &'static str {
                match self { $(Metric::$variant => $name,)* }
            }

            /// The physical range values are clamped to after noise.
            pub fn range(self) -> (f64, f64) {
                match self { $(Metric::$variant => ($lo, $hi),)* }
            }
        }
    };
}

metrics! {
    UtilGpu = "util_gpu", "`nvmlUtilization_t.gpu`, percent.", [0.0, 100.0];
    UtilMem = "util_mem", "`nvmlUtilization_t.memory`, percent.", [0.0, 100.0];
    MemUsedMib = "mem_used_mib", "Allocated device memory, MiB (capped at the total).", [0.0, f64::MAX];
    PowerW = "power_w", "Board power, watts.", [0.0, f64::MAX];
    TempC = "temp_c", "GPU temperature, degrees Celsius.", [-50.0, 200.0];
    SmClockMhz = "sm_clock_mhz", "Current SM clock, MHz.", [0.0, f64::MAX];
    MemClockMhz = "mem_clock_mhz", "Current memory clock, MHz.", [0.0, f64::MAX];
    GraphicsClockMhz = "graphics_clock_mhz", "Current graphics clock, MHz.", [0.0, f64::MAX];
    VideoClockMhz = "video_clock_mhz", "Current video clock, MHz.", [0.0, f64::MAX];
    Pstate = "pstate", "Performance state, 0 (P0) to 15; 32 means unknown.", [0.0, 32.0];
    ClockEventReasons = "clock_event_reasons", "Clock event (throttle) reason bit mask.", [0.0, 9.007_199_254_740_991e15];
    PcieRxKbs = "pcie_rx_kbs", "PCIe receive throughput (host to GPU), KB/s.", [0.0, u32::MAX as f64];
    PcieTxKbs = "pcie_tx_kbs", "PCIe transmit throughput (GPU to host), KB/s.", [0.0, u32::MAX as f64];
    PcieGen = "pcie_gen", "Current PCIe link generation.", [1.0, 64.0];
    PcieWidth = "pcie_width", "Current PCIe link width (lanes).", [1.0, 64.0];
    NvlinkRxKibs = "nvlink_rx_kibs", "NVLink receive rate over all links, KiB/s.", [0.0, f64::MAX];
    NvlinkTxKibs = "nvlink_tx_kibs", "NVLink transmit rate over all links, KiB/s.", [0.0, f64::MAX];
    GpmGraphicsUtil = "gpm_graphics_util", "GPM metric 1, percent.", [0.0, 100.0];
    GpmSmUtil = "gpm_sm_util", "GPM metric 2, percent of SMs busy.", [0.0, 100.0];
    GpmSmOccupancy = "gpm_sm_occupancy", "GPM metric 3, percent of warps resident.", [0.0, 100.0];
    GpmTensorUtil = "gpm_tensor_util", "GPM metric 5, percent of time any tensor pipe was active.", [0.0, 100.0];
    GpmDramBwUtil = "gpm_dram_bw_util", "GPM metric 10, percent of peak DRAM bandwidth.", [0.0, 100.0];
    GpmPcieTxMibs = "gpm_pcie_tx_mibs", "GPM metric 20, PCIe MiB/s from the GPU.", [0.0, f64::MAX];
    GpmPcieRxMibs = "gpm_pcie_rx_mibs", "GPM metric 21, PCIe MiB/s to the GPU.", [0.0, f64::MAX];
    GpmNvlinkRxMibs = "gpm_nvlink_rx_mibs", "GPM metric 60, NVLink MiB/s received.", [0.0, f64::MAX];
    GpmNvlinkTxMibs = "gpm_nvlink_tx_mibs", "GPM metric 61, NVLink MiB/s sent.", [0.0, f64::MAX];
}

/// How many metrics there are.
pub const COUNT: usize = Metric::ALL.len();

impl Metric {
    /// Looks a metric up by its scenario-file name.
    pub fn from_name(name: &str) -> Option<Metric> {
        Metric::ALL.iter().copied().find(|m| m.name() == name)
    }

    /// The metric a GPM metric id reads, for the ids the simulator models.
    #[cfg_attr(feature = "old-driver", allow(dead_code))]
    pub fn for_gpm_id(id: u32) -> Option<Metric> {
        Some(match id {
            GPM_METRIC_GRAPHICS_UTIL => Metric::GpmGraphicsUtil,
            GPM_METRIC_SM_UTIL => Metric::GpmSmUtil,
            GPM_METRIC_SM_OCCUPANCY => Metric::GpmSmOccupancy,
            GPM_METRIC_ANY_TENSOR_UTIL => Metric::GpmTensorUtil,
            GPM_METRIC_DRAM_BW_UTIL => Metric::GpmDramBwUtil,
            GPM_METRIC_PCIE_TX_PER_SEC => Metric::GpmPcieTxMibs,
            GPM_METRIC_PCIE_RX_PER_SEC => Metric::GpmPcieRxMibs,
            GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC => Metric::GpmNvlinkRxMibs,
            GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC => Metric::GpmNvlinkTxMibs,
            _ => return None,
        })
    }

    /// Every metric name, comma-separated, for error messages.
    pub fn known_names() -> String {
        Metric::ALL
            .iter()
            .map(|m| m.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Metric {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NameVisitor;
        impl Visitor<'_> for NameVisitor {
            type Value = Metric;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a metric name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Metric, E> {
                Metric::from_name(v).ok_or_else(|| {
                    E::custom(format_args!(
                        "unknown metric `{v}` (known: {})",
                        Metric::known_names()
                    ))
                })
            }
        }
        deserializer.deserialize_str(NameVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        for (i, m) in Metric::ALL.iter().enumerate() {
            assert_eq!(*m as usize, i, "ALL is in declaration order");
            assert_eq!(Metric::from_name(m.name()), Some(*m));
        }
        assert_eq!(Metric::from_name("power"), None);
    }

    #[test]
    fn unknown_metric_error_lists_the_known_names() {
        let err = serde_json::from_str::<Metric>("\"power\"").expect_err("unknown name");
        let text = err.to_string();
        assert!(text.contains("unknown metric `power`"), "{text}");
        assert!(text.contains("power_w"), "{text}");
    }
}
