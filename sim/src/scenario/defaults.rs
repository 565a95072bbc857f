//! The patterns metrics play when a scenario does not set them.

use super::preset::Facts;
use crate::metric::Metric;
use crate::pattern::{Follow, Kind, Pattern};

/// What a metric plays when the scenario does not say: an idle-looking device whose
/// secondary metrics follow `util_gpu`, so setting utilization alone gives coherent power,
/// temperature and GPM readings.
pub fn default_pattern(m: Metric, facts: &Facts, used_mib: u64) -> Pattern {
    use Metric::*;
    let limit = facts.power_limit_w;
    let per_mib = |source: Metric| Pattern {
        kind: Kind::Follow(Follow {
            metric: source,
            from: (0.0, 1024.0),
            scale: Some((0.0, 1.0)),
        }),
        noise: None,
        min: None,
        max: None,
    };
    match m {
        UtilGpu | Pstate | ClockEventReasons | PcieRxKbs | PcieTxKbs | NvlinkRxKibs
        | NvlinkTxKibs => Pattern::constant(0.0),
        UtilMem => Pattern::follow(UtilGpu, Some((0.0, 40.0))),
        MemUsedMib => Pattern::constant(used_mib as f64),
        PowerW => Pattern::follow(UtilGpu, Some((0.12 * limit, 0.85 * limit))),
        TempC => Pattern::follow(UtilGpu, Some((32.0, 68.0))),
        SmClockMhz => Pattern::constant(f64::from(facts.max_sm_clock_mhz)),
        MemClockMhz => Pattern::constant(f64::from(facts.max_mem_clock_mhz)),
        GraphicsClockMhz => Pattern::follow(SmClockMhz, None),
        VideoClockMhz => Pattern::of(Kind::Follow(Follow {
            metric: GraphicsClockMhz,
            from: (0.0, f64::from(facts.max_graphics_clock_mhz.max(1))),
            scale: Some((0.0, f64::from(facts.max_video_clock_mhz))),
        })),
        PcieGen => Pattern::constant(f64::from(facts.pcie_max_gen)),
        PcieWidth => Pattern::constant(f64::from(facts.pcie_max_width)),
        GpmGraphicsUtil => Pattern::follow(UtilGpu, None),
        GpmSmUtil => Pattern::follow(UtilGpu, Some((0.0, 90.0))),
        GpmSmOccupancy => Pattern::follow(UtilGpu, Some((0.0, 50.0))),
        GpmTensorUtil => Pattern::follow(UtilGpu, Some((0.0, 45.0))),
        GpmDramBwUtil => Pattern::follow(UtilMem, None),
        GpmPcieTxMibs => per_mib(PcieTxKbs),
        GpmPcieRxMibs => per_mib(PcieRxKbs),
        GpmNvlinkRxMibs => per_mib(NvlinkRxKibs),
        GpmNvlinkTxMibs => per_mib(NvlinkTxKibs),
    }
}
