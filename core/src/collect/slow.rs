//! The slow tick's reads: GPU temperature and the NVLink data counters through one
//! `nvmlDeviceGetFieldValues` call, temperature falling back to its own call when its field
//! is not answered (docs/nvml-facts.md, "Sampling periods and call cost": every call is a
//! trip into the driver), then PCIe throughput.
//!
//! PCIe stays on `nvmlDeviceGetPcieThroughput`, a 20 ms window per reading. The byte
//! counters (fields 197/198) would give the average since the previous slow tick instead,
//! which dilutes the bursts the host_transfer rule's thresholds were set on; switching needs
//! those thresholds revisited first.

use crate::metric::{pcie_kbs_to_mbs, GpuMetric as M};
use crate::nvml::field_ids::{ALL_LINKS, GPU_TEMP, NVLINK_DATA_RX, NVLINK_DATA_TX};
use crate::nvml::{FieldValue, Nvml, PcieCounter};

use super::cost::CallStats;
use super::gpu::{Gpu, Outcome};

/// The function that answers metrics read through fields.
pub const FIELDS: &str = "nvmlDeviceGetFieldValues";

/// A counter reading: (timestamp µs, rx, tx).
pub(super) type Counters = Option<(i64, f64, f64)>;

/// Rates per second from two counter readings, in the counter's unit × `scale`; `None` for
/// the first reading, a clock that did not move, or a counter that went back (wrapped).
fn rates(prev: Counters, now: (i64, f64, f64), scale: f64) -> Option<(f32, f32)> {
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
    /// Reads the slow metrics: one field call for those with fields, then the single calls
    /// for the ones whose field was not answered, and PCIe.
    pub(super) fn sample_slow(
        &mut self,
        nvml: &Nvml,
        row: &mut [f32; M::COUNT],
        stats: &mut CallStats,
        out: &mut Vec<Outcome>,
    ) {
        if self.lost {
            return;
        }
        let want = |g: &Gpu, m: M| g.is_on(m) && g.field_ok(m);
        let (temp, nvlink) = (want(self, M::Temp), want(self, M::NvlinkRx));
        let mut fv = Vec::with_capacity(3);
        if temp {
            fv.push(FieldValue::new(GPU_TEMP));
        }
        if nvlink {
            fv.push(FieldValue::with_scope(NVLINK_DATA_RX, ALL_LINKS));
            fv.push(FieldValue::with_scope(NVLINK_DATA_TX, ALL_LINKS));
        }
        if !fv.is_empty() {
            let h = self.handle();
            let r = stats.time(FIELDS, || nvml.field_values(h, &mut fv));
            if let Err(e) = r {
                if e.is_gpu_lost() {
                    self.take::<()>(&[M::Temp], Err(e), out);
                    return;
                }
            }
        }
        let get = |id: u32| fv.iter().find(|f| f.field_id == id).map(|f| f.result);
        let stamp = |id: u32| fv.iter().find(|f| f.field_id == id).map(|f| f.timestamp_us);
        if let Some(Ok(t)) = get(GPU_TEMP) {
            self.answered(&[M::Temp], FIELDS);
            row[M::Temp.index()] = t as f32;
        } else {
            let e = get(GPU_TEMP).and_then(Result::err);
            self.field_failed(&[M::Temp], e.as_ref());
            self.slow_temp(nvml, row, stats, out);
        }
        match (get(NVLINK_DATA_RX), get(NVLINK_DATA_TX)) {
            (Some(Ok(rx)), Some(Ok(tx))) => {
                self.answered(&[M::NvlinkRx, M::NvlinkTx], FIELDS);
                let now = (stamp(NVLINK_DATA_RX).unwrap_or(0), rx, tx);
                // KiB per second → MB/s.
                if let Some((r, t)) = rates(self.nvlink_prev, now, 1.024e-3) {
                    row[M::NvlinkRx.index()] = r;
                    row[M::NvlinkTx.index()] = t;
                }
                self.nvlink_prev = Some(now);
            }
            (Some(Err(e)), _) | (_, Some(Err(e))) => {
                // NVLink has no other call: its field's answer is the metric's.
                self.take::<()>(&[M::NvlinkRx, M::NvlinkTx], Err(e), out);
            }
            _ => {}
        }
        self.slow_pcie(nvml, row, stats, out);
    }

    /// Temperature through its own call (`nvmlDeviceGetTemperatureV`, else the legacy one).
    fn slow_temp(
        &mut self,
        nvml: &Nvml,
        row: &mut [f32; M::COUNT],
        stats: &mut CallStats,
        out: &mut Vec<Outcome>,
    ) {
        if self.lost || !self.is_on(M::Temp) {
            return;
        }
        let h = self.handle();
        let r = stats.time("nvmlDeviceGetTemperature", || nvml.temperature_gpu_c(h));
        if let Some(t) = self.take(&[M::Temp], r, out) {
            self.answered(&[M::Temp], "nvmlDeviceGetTemperature");
            row[M::Temp.index()] = t as f32;
        }
    }

    /// PCIe rates through `nvmlDeviceGetPcieThroughput` (a 20 ms window per call).
    fn slow_pcie(
        &mut self,
        nvml: &Nvml,
        row: &mut [f32; M::COUNT],
        stats: &mut CallStats,
        out: &mut Vec<Outcome>,
    ) {
        let h = self.handle();
        for (m, counter) in [(M::PcieRx, PcieCounter::Rx), (M::PcieTx, PcieCounter::Tx)] {
            if self.lost || !self.is_on(m) {
                continue;
            }
            let call = "nvmlDeviceGetPcieThroughput";
            let r = stats.time(call, || nvml.pcie_throughput_kbs(h, counter));
            if let Some(v) = self.take(&[m], r, out) {
                self.answered(&[m], call);
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
