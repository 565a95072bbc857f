//! What each `--query-gpu` field is: a metric, a static fact of the device, a clock-event
//! reason bit, a health counter, or something gpuwhy does not read. Field names are those of
//! `nvidia-smi --help-query-gpu`.

use super::health::HealthCol;
use crate::metric::{reasons, GpuMetric};

/// What one CSV column is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Col {
    Time,
    Index,
    Name,
    Uuid,
    BusId,
    Metric(GpuMetric),
    /// A static fact of the device, kept as its first value.
    Fact(Fact),
    /// One clock-event reason field (`Active` / `Not Active`), OR-ed into the mask.
    ReasonBit(u64),
    /// A health counter (ECC, retired pages, remapped rows) or the ECC mode.
    Health(HealthCol),
    Ignored,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(in crate::import) enum Fact {
    MemTotal,
    PowerLimit,
    MaxSm,
    MaxGraphics,
    MaxMem,
    PcieMaxGen,
    PcieMaxWidth,
    /// The GPU's own maximum generation (`pcie.link.gen.gpumax`), not the slot's.
    PcieDeviceMaxGen,
}

pub(super) fn column(field: &str) -> Col {
    let f = field.trim().to_ascii_lowercase();
    // Both spellings of the reason fields exist: `clocks_throttle_reasons.*` (older
    // drivers) and `clocks_event_reasons.*` (newer).
    let reason = f
        .strip_prefix("clocks_throttle_reasons.")
        .or_else(|| f.strip_prefix("clocks_event_reasons."));
    if let Some(r) = reason {
        return match r {
            "active" => Col::Metric(GpuMetric::ClockReasons),
            "gpu_idle" => Col::ReasonBit(reasons::GPU_IDLE),
            "applications_clocks_setting" => Col::ReasonBit(reasons::APPLICATIONS_CLOCKS),
            "sw_power_cap" => Col::ReasonBit(reasons::SW_POWER_CAP),
            "hw_slowdown" => Col::ReasonBit(reasons::HW_SLOWDOWN),
            "hw_thermal_slowdown" => Col::ReasonBit(reasons::HW_THERMAL),
            "hw_power_brake_slowdown" => Col::ReasonBit(reasons::HW_POWER_BRAKE),
            "sw_thermal_slowdown" => Col::ReasonBit(reasons::SW_THERMAL),
            "sync_boost" => Col::ReasonBit(reasons::SYNC_BOOST),
            _ => Col::Ignored,
        };
    }
    if let Some(h) = HealthCol::of(&f) {
        return Col::Health(h);
    }
    match f.as_str() {
        "timestamp" => Col::Time,
        "index" => Col::Index,
        "name" | "gpu_name" => Col::Name,
        "uuid" | "gpu_uuid" => Col::Uuid,
        "pci.bus_id" | "gpu_bus_id" => Col::BusId,
        "utilization.gpu" => Col::Metric(GpuMetric::UtilGpu),
        "utilization.memory" => Col::Metric(GpuMetric::UtilMem),
        "memory.used" => Col::Metric(GpuMetric::MemUsed),
        "memory.total" => Col::Fact(Fact::MemTotal),
        "power.draw" | "power.draw.instant" | "power.draw.average" => Col::Metric(GpuMetric::Power),
        "power.limit" | "enforced.power.limit" => Col::Fact(Fact::PowerLimit),
        "temperature.gpu" => Col::Metric(GpuMetric::Temp),
        "clocks.sm" | "clocks.current.sm" => Col::Metric(GpuMetric::SmClock),
        "clocks.gr" | "clocks.current.graphics" => Col::Metric(GpuMetric::GraphicsClock),
        "clocks.mem" | "clocks.current.memory" => Col::Metric(GpuMetric::MemClock),
        "clocks.max.sm" | "clocks.max.sm_clock" => Col::Fact(Fact::MaxSm),
        "clocks.max.gr" | "clocks.max.graphics" => Col::Fact(Fact::MaxGraphics),
        "clocks.max.mem" | "clocks.max.memory" => Col::Fact(Fact::MaxMem),
        "pstate" => Col::Metric(GpuMetric::Pstate),
        "pcie.link.gen.current" | "pcie.link.gen.gpucurrent" => Col::Metric(GpuMetric::PcieGen),
        "pcie.link.width.current" => Col::Metric(GpuMetric::PcieWidth),
        // `max` is the lower of GPU and slot; `gpumax` the GPU's alone.
        "pcie.link.gen.max" => Col::Fact(Fact::PcieMaxGen),
        "pcie.link.gen.gpumax" => Col::Fact(Fact::PcieDeviceMaxGen),
        "pcie.link.width.max" => Col::Fact(Fact::PcieMaxWidth),
        _ => Col::Ignored,
    }
}
