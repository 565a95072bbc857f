//! The slow tick's reads (once a second per GPU): the P-state, the memory and graphics
//! clocks, the PCIe
//! link state, and the single calls of the batched metrics whose field the driver does not
//! answer (temperature and PCIe throughput; power falls back every tick, in
//! `collect::fields`).
//!
//! PCIe through `nvmlDeviceGetPcieThroughput` is a 20 ms window per reading; through the byte
//! counters (fields 197/198) it is the average over the tick, so short bursts read lower
//! there. Both land in the same MB/s columns (docs/nvml-loading.md, "Calls per tick").

use crate::metric::{pcie_kbs_to_mbs, GpuMetric as M};
use crate::nvml::{ClockType, Nvml, PcieCounter};

use super::cost::CallStats;
use super::gpu::{Gpu, Outcome};

/// A counter reading: (timestamp µs, rx, tx).
pub(super) type Counters = Option<(i64, f64, f64)>;

/// Rates per second from two counter readings, in the counter's unit × `scale`; `None` for
/// the first reading, a clock that did not move, or a counter that went back (wrapped).
pub(super) fn rates(prev: Counters, now: (i64, f64, f64), scale: f64) -> Option<(f32, f32)> {
    let (pts, prx, ptx) = prev?;
    let (ts, rx, tx) = now;
    let dt = (ts - pts) as f64 / 1e6;
    (dt > 0.0 && rx >= prx && tx >= ptx).then(|| {
        (
            ((rx - prx) * scale / dt) as f32,
            ((tx - ptx) * scale / dt) as f32,
        )
    })
}

impl Gpu {
    /// Reads the slow metrics that have their own calls.
    pub(super) fn sample_slow(
        &mut self,
        nvml: &Nvml,
        row: &mut [f32; M::COUNT],
        stats: &mut CallStats,
        out: &mut Vec<Outcome>,
    ) {
        let h = self.handle();
        let clock = "nvmlDeviceGetClockInfo";
        for (m, t) in [
            (M::MemClock, ClockType::Mem),
            (M::GraphicsClock, ClockType::Graphics),
        ] {
            if let Some(c) = self.call(&[m], clock, stats, out, || nvml.clock_mhz(h, t)) {
                row[m.index()] = c as f32;
            }
        }
        let pstate = "nvmlDeviceGetPerformanceState";
        if let Some(p) = self.call(&[M::Pstate], pstate, stats, out, || {
            nvml.performance_state(h)
        }) {
            // P-state 32 is "unknown": a gap, not a value.
            if p <= 15 {
                row[M::Pstate.index()] = p as f32;
            }
        }
        let gen = "nvmlDeviceGetCurrPcieLinkGeneration";
        if let Some(g) = self.call(&[M::PcieGen], gen, stats, out, || nvml.pcie_link_gen(h)) {
            row[M::PcieGen.index()] = g as f32;
        }
        let width = "nvmlDeviceGetCurrPcieLinkWidth";
        if let Some(w) = self.call(&[M::PcieWidth], width, stats, out, || {
            nvml.pcie_link_width(h)
        }) {
            row[M::PcieWidth.index()] = w as f32;
        }
    }

    /// Power through its own call, when its field is not answered.
    pub(super) fn single_power(
        &mut self,
        nvml: &Nvml,
        row: &mut [f32; M::COUNT],
        stats: &mut CallStats,
        out: &mut Vec<Outcome>,
    ) {
        let h = self.handle();
        let f = "nvmlDeviceGetPowerUsage";
        if let Some(p) = self.call(&[M::Power], f, stats, out, || nvml.power_usage_mw(h)) {
            row[M::Power.index()] = p as f32 / 1000.0;
        }
    }

    /// Temperature through its own call (`nvmlDeviceGetTemperatureV`, else the legacy one).
    pub(super) fn single_temp(
        &mut self,
        nvml: &Nvml,
        row: &mut [f32; M::COUNT],
        stats: &mut CallStats,
        out: &mut Vec<Outcome>,
    ) {
        let h = self.handle();
        let f = "nvmlDeviceGetTemperature";
        if let Some(t) = self.call(&[M::Temp], f, stats, out, || nvml.temperature_gpu_c(h)) {
            row[M::Temp.index()] = t as f32;
        }
    }

    /// PCIe rates through `nvmlDeviceGetPcieThroughput` (a 20 ms window per call).
    pub(super) fn single_pcie(
        &mut self,
        nvml: &Nvml,
        row: &mut [f32; M::COUNT],
        stats: &mut CallStats,
        out: &mut Vec<Outcome>,
    ) {
        let h = self.handle();
        for (m, counter) in [(M::PcieRx, PcieCounter::Rx), (M::PcieTx, PcieCounter::Tx)] {
            let f = "nvmlDeviceGetPcieThroughput";
            if let Some(v) = self.call(&[m], f, stats, out, || nvml.pcie_throughput_kbs(h, counter))
            {
                row[m.index()] = pcie_kbs_to_mbs(v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_rates_need_two_readings_and_a_forward_clock() {
        assert_eq!(rates(None, (1_000_000, 5.0, 5.0), 1.0), None);
        // 2 MB received and 1 MB sent in half a second.
        let prev = Some((1_000_000, 1e6, 1e6));
        assert_eq!(rates(prev, (1_500_000, 3e6, 2e6), 1e-6), Some((4.0, 2.0)));
        assert_eq!(
            rates(prev, (1_000_000, 3e6, 2e6), 1e-6),
            None,
            "no time passed"
        );
        assert_eq!(rates(prev, (2_000_000, 0.0, 2e6), 1e-6), None, "wrapped");
    }
}
