//! Which `Section › Key` of an `nvidia-smi -q` GPU block is which metric or fact, and how
//! its value is read.

use super::{reason_bit, Block};
use crate::metric::GpuMetric;

/// Where one value of a GPU block goes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Slot {
    Metric(GpuMetric),
    Name,
    Architecture,
    Uuid,
    BusId,
    MemTotal,
    /// The enforced limit wins over the others (`Power Limit`, `Current Power Limit`).
    PowerLimit {
        enforced: bool,
    },
    MaxSm,
    MaxGraphics,
    MaxMem,
    PcieMaxGen,
    PcieMaxWidth,
    SlowdownTemp,
    ShutdownTemp,
    /// The GPU's own maximum generation (`PCIe Generation › Device Max`).
    PcieDeviceMaxGen,
    Reason(u64),
}

/// The slot of key `key` in section `section` (both lower case; the section is the
/// innermost one, `""` at the block's top). The health sections are `health.rs`'s.
pub(super) fn slot(section: &str, key: &str) -> Option<Slot> {
    use GpuMetric as M;
    Some(match (section, key) {
        ("" | "performance", "performance state") => Slot::Metric(M::Pstate),
        ("", "product name") => Slot::Name,
        ("", "product architecture") => Slot::Architecture,
        ("", "gpu uuid") => Slot::Uuid,
        ("pci", "bus id") => Slot::BusId,
        ("pci", "tx throughput") => Slot::Metric(M::PcieTx),
        ("pci", "rx throughput") => Slot::Metric(M::PcieRx),
        // `Current` is printed before `Device Current` (the GPU's end of the same link) and
        // wins; `Host Max` is the slot's and is left to `Max`, the lower of the two.
        ("pcie generation", "current" | "device current") => Slot::Metric(M::PcieGen),
        ("pcie generation", "max") => Slot::PcieMaxGen,
        ("pcie generation", "device max") => Slot::PcieDeviceMaxGen,
        ("link width", "current") => Slot::Metric(M::PcieWidth),
        ("link width", "max") => Slot::PcieMaxWidth,
        ("clocks event reasons" | "clocks throttle reasons", k) => Slot::Reason(reason_bit(k)?),
        ("fb memory usage", "total") => Slot::MemTotal,
        ("fb memory usage", "used") => Slot::Metric(M::MemUsed),
        ("utilization", "gpu") => Slot::Metric(M::UtilGpu),
        ("utilization", "memory") => Slot::Metric(M::UtilMem),
        ("temperature", "gpu current temp") => Slot::Metric(M::Temp),
        ("temperature", "gpu slowdown temp") => Slot::SlowdownTemp,
        // Not `GPU Shutdown T.Limit Temp`: newer drivers print that one relative to the
        // GPU's T.Limit (`-7 C`), not as a temperature.
        ("temperature", "gpu shutdown temp") => Slot::ShutdownTemp,
        (
            "power readings" | "gpu power readings",
            "power draw" | "instantaneous power draw" | "average power draw",
        ) => Slot::Metric(M::Power),
        ("power readings" | "gpu power readings", "enforced power limit") => {
            Slot::PowerLimit { enforced: true }
        }
        ("power readings" | "gpu power readings", "power limit" | "current power limit") => {
            Slot::PowerLimit { enforced: false }
        }
        ("clocks", "graphics") => Slot::Metric(M::GraphicsClock),
        ("clocks", "sm") => Slot::Metric(M::SmClock),
        ("clocks", "memory") => Slot::Metric(M::MemClock),
        ("max clocks", "graphics") => Slot::MaxGraphics,
        ("max clocks", "sm") => Slot::MaxSm,
        ("max clocks", "memory") => Slot::MaxMem,
        _ => return None,
    })
}

/// A value's number with its unit cut off: `97 %` → 97, `16x` → 16, `P2` → 2; `None` for
/// `N/A`, `[Not Supported]`, `Unknown Error` and other words.
fn number(v: &str) -> Option<f64> {
    let first = v.split_whitespace().next()?;
    let first = first.strip_prefix('P').unwrap_or(first);
    let first = first.strip_suffix('x').unwrap_or(first);
    first.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// Puts value `v` of `slot` into the block; true when it held a value.
pub(super) fn apply(slot: Slot, v: &str, b: &mut Block) -> bool {
    let i = &mut b.info;
    match slot {
        Slot::Name if !v.is_empty() => i.name = Some(v.to_string()),
        Slot::Architecture if !v.is_empty() && !v.eq_ignore_ascii_case("n/a") => {
            i.architecture = Some(v.to_string())
        }
        Slot::Uuid if v.starts_with("GPU-") || v.starts_with("MIG-") => {
            i.uuid = Some(v.to_string())
        }
        // The block's line already named the bus; the section repeats it.
        Slot::BusId => return false,
        Slot::Reason(bit) => {
            let active = match v.to_ascii_lowercase().as_str() {
                "active" => true,
                "not active" => false,
                _ => return false,
            };
            let m = b.reasons.get_or_insert(0);
            if active {
                *m |= bit;
            }
        }
        Slot::Metric(m) => {
            let Some(mut x) = number(v) else {
                return false;
            };
            if matches!(m, GpuMetric::PcieRx | GpuMetric::PcieTx) {
                // Printed in KB/s, like NVML's counter; the metric is MB/s.
                x /= 1000.0;
            }
            let slot = &mut b.row[m.index()];
            if !slot.is_nan() {
                // A second spelling of the same value (average and instantaneous power): the
                // first printed is kept.
                return false;
            }
            *slot = x as f32;
        }
        fact => {
            let Some(x) = number(v) else { return false };
            match fact {
                Slot::MemTotal => i.memory_total_mib = Some(x),
                Slot::PowerLimit { enforced } => {
                    if enforced || i.power_limit_w.is_none() {
                        i.power_limit_w = Some(x);
                    }
                }
                Slot::MaxSm => i.max_sm_clock_mhz = Some(x),
                Slot::MaxGraphics => i.max_graphics_clock_mhz = Some(x),
                Slot::MaxMem => i.max_mem_clock_mhz = Some(x),
                Slot::PcieMaxGen => i.pcie_max_gen = Some(x as u32),
                Slot::PcieMaxWidth => i.pcie_max_width = Some(x as u32),
                Slot::SlowdownTemp => i.temp_slowdown_c = Some(x),
                Slot::ShutdownTemp => i.temp_shutdown_c = Some(x),
                Slot::PcieDeviceMaxGen => i.pcie_device_max_gen = Some(x as u32),
                _ => return false,
            }
        }
    }
    true
}
