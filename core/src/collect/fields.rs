//! The per-tick field batch: power, GPU temperature, the PCIe and NVLink byte counters and
//! the clock-event counters (`collect::reasons`) in one `nvmlDeviceGetFieldValues` call per
//! GPU, instead of a call each (every NVML call is a
//! trip into the driver, docs/nvml-facts.md, "Sampling periods and call cost").
//!
//! Each metric falls back on its own: a field the driver refuses for good (NOT_SUPPORTED and
//! the like, or no `nvmlDeviceGetFieldValues` at all) is never asked for again on that GPU,
//! and its metric goes to its single call from then on — power every tick, temperature and
//! PCIe throughput on the slow tick, as before fields were used. NVLink has no other call.
//! `GPUWHY_NVML_FIELDS=0` turns the batch off (every metric on its single call), the
//! baseline of `cargo xtask bench`. docs/nvml-loading.md, "Calls per tick", lists the ids.

use crate::metric::GpuMetric as M;
use crate::nvml::field_ids::{
    ALL_LINKS, GPU_TEMP, NVLINK_DATA_RX, NVLINK_DATA_TX, PCIE_COUNT_RX_BYTES, PCIE_COUNT_TX_BYTES,
    POWER_INSTANT,
};
use crate::nvml::{FieldValue, Nvml, NvmlError};

use super::cost::CallStats;
use super::gpu::{Gpu, Outcome};
use super::slow::rates;

/// The function that answers metrics read through fields.
pub const FIELDS: &str = "nvmlDeviceGetFieldValues";

/// The environment variable that turns the field batch off when set to `0`.
pub const ENV_FIELDS: &str = "GPUWHY_NVML_FIELDS";

/// Every metric the batch can read.
pub(super) const BATCHED: [M; 7] = [
    M::ClockReasons,
    M::Power,
    M::Temp,
    M::PcieRx,
    M::PcieTx,
    M::NvlinkRx,
    M::NvlinkTx,
];

/// One group of the batch: the metrics one reading feeds and the fields (id, scope) it asks.
struct Group {
    metrics: &'static [M],
    fields: &'static [(u32, u32)],
}

const POWER: Group = Group {
    metrics: &[M::Power],
    fields: &[(POWER_INSTANT, 0)],
};
const TEMP: Group = Group {
    metrics: &[M::Temp],
    fields: &[(GPU_TEMP, 0)],
};
/// Received first, as the rate helpers take (rx, tx).
const PCIE: Group = Group {
    metrics: &[M::PcieRx, M::PcieTx],
    fields: &[(PCIE_COUNT_RX_BYTES, 0), (PCIE_COUNT_TX_BYTES, 0)],
};
const NVLINK: Group = Group {
    metrics: &[M::NvlinkRx, M::NvlinkTx],
    fields: &[(NVLINK_DATA_RX, ALL_LINKS), (NVLINK_DATA_TX, ALL_LINKS)],
};
const GROUPS: [&Group; 4] = [&POWER, &TEMP, &PCIE, &NVLINK];

/// Whether the batch is on: anything but `GPUWHY_NVML_FIELDS=0`.
pub(super) fn batching_enabled() -> bool {
    enabled(std::env::var_os(ENV_FIELDS).as_deref())
}

/// Whether a value of [`ENV_FIELDS`] leaves the batch on.
fn enabled(value: Option<&std::ffi::OsStr>) -> bool {
    value.is_none_or(|v| v.to_str().map(str::trim) != Some("0"))
}

/// A group's answer: its values with the first one's timestamp, or the first field error.
type Answer = Result<(Vec<f64>, i64), NvmlError>;

/// The answer for `g` from the filled `fv`; `None` when `g` was not asked.
fn answer(g: &Group, fv: &[FieldValue]) -> Option<Answer> {
    let mut values = Vec::with_capacity(g.fields.len());
    let mut stamp = 0;
    for (id, scope) in g.fields {
        let f = fv
            .iter()
            .find(|f| f.field_id == *id && f.scope_id == *scope)?;
        match f.result {
            Ok(v) => values.push(v),
            Err(e) => return Some(Err(e)),
        }
        if stamp == 0 {
            stamp = f.timestamp_us;
        }
    }
    Some(Ok((values, stamp)))
}

impl Gpu {
    /// Whether `g` goes into this tick's batch.
    fn wants(&self, g: &Group) -> bool {
        g.metrics.iter().any(|m| self.is_on(*m)) && g.metrics.iter().all(|m| self.field_ok(*m))
    }

    /// Reads the batched metrics: one field call, then the single calls of those whose field
    /// was not answered (power now, temperature and PCIe throughput when `slow`).
    pub(super) fn sample_fields(
        &mut self,
        nvml: &Nvml,
        slow: bool,
        row: &mut [f32; M::COUNT],
        stats: &mut CallStats,
        out: &mut Vec<Outcome>,
    ) {
        if self.lost {
            return;
        }
        let mut fv = self.reason_fields();
        for g in GROUPS.into_iter().filter(|g| self.wants(g)) {
            fv.extend(
                g.fields
                    .iter()
                    .map(|(id, s)| FieldValue::with_scope(*id, *s)),
            );
        }
        if !fv.is_empty() {
            let h = self.handle();
            if let Err(e) = stats.time(FIELDS, || nvml.field_values(h, &mut fv)) {
                if e.is_gpu_lost() {
                    self.take::<()>(&[M::Power], Err(e), out);
                    return;
                }
            }
            // The driver's time of the reading: buffered mode places samples by it.
            self.fields_at_us = fv
                .iter()
                .filter(|f| f.result.is_ok())
                .map(|f| f.timestamp_us)
                .max();
        }
        let power = answer(&POWER, &fv);
        if let Some(Ok((v, _))) = self.settle(&POWER, power, out) {
            row[M::Power.index()] = (v[0] / 1000.0) as f32;
        } else {
            self.single_power(nvml, row, stats, out);
        }
        let temp = answer(&TEMP, &fv);
        if let Some(Ok((v, _))) = self.settle(&TEMP, temp, out) {
            row[M::Temp.index()] = v[0] as f32;
        } else if slow {
            self.single_temp(nvml, row, stats, out);
        }
        let pcie = answer(&PCIE, &fv);
        if let Some(Ok((v, ts))) = self.settle(&PCIE, pcie, out) {
            // Bytes per second → MB/s (10⁶ bytes, the unit of the PCIe columns).
            let now = (ts, v[0], v[1]);
            if let Some((rx, tx)) = rates(self.pcie_prev, now, 1e-6) {
                row[M::PcieRx.index()] = rx;
                row[M::PcieTx.index()] = tx;
            }
            self.pcie_prev = Some(now);
        } else if slow {
            self.single_pcie(nvml, row, stats, out);
        }
        let nvlink = answer(&NVLINK, &fv);
        if let Some(Ok((v, ts))) = self.settle(&NVLINK, nvlink, out) {
            // KiB per second → MB/s.
            let now = (ts, v[0], v[1]);
            if let Some((rx, tx)) = rates(self.nvlink_prev, now, 1.024e-3) {
                row[M::NvlinkRx.index()] = rx;
                row[M::NvlinkTx.index()] = tx;
            }
            self.nvlink_prev = Some(now);
        }
        self.sample_reasons(nvml, slow, &fv, row, stats, out);
    }

    /// Books a group's answer: an answer marks its metrics as read through fields; a refusal
    /// for good sends them to their single calls from now on (NVLink, which has none, becomes
    /// unavailable or gets a gap instead). Returns the answer back when it is one.
    fn settle(&mut self, g: &Group, a: Option<Answer>, out: &mut Vec<Outcome>) -> Option<Answer> {
        match a? {
            Ok(v) => {
                self.answered(g.metrics, FIELDS);
                Some(Ok(v))
            }
            Err(e) if std::ptr::eq(g, &NVLINK) => {
                self.take::<()>(g.metrics, Err(e), out);
                None
            }
            Err(e) => {
                self.field_failed(g.metrics, Some(&e));
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filled(id: u32, scope: u32, r: Result<f64, NvmlError>, ts: i64) -> FieldValue {
        let mut f = FieldValue::with_scope(id, scope);
        f.result = r;
        f.timestamp_us = ts;
        f
    }

    #[test]
    fn a_group_answers_only_when_every_field_does() {
        let ok = [
            filled(PCIE_COUNT_RX_BYTES, 0, Ok(5e6), 7),
            filled(PCIE_COUNT_TX_BYTES, 0, Ok(2e6), 8),
        ];
        assert_eq!(answer(&PCIE, &ok), Some(Ok((vec![5e6, 2e6], 7))));
        assert_eq!(answer(&POWER, &ok), None, "power was not asked");
        let refused = [
            filled(PCIE_COUNT_RX_BYTES, 0, Ok(5e6), 7),
            filled(
                PCIE_COUNT_TX_BYTES,
                0,
                Err(NvmlError::new(FIELDS, crate::nvml::codes::NOT_SUPPORTED)),
                8,
            ),
        ];
        let e = answer(&PCIE, &refused).and_then(Result::err);
        assert!(e.is_some_and(|e| e.is_not_supported()));
    }

    #[test]
    fn nvlink_fields_ask_for_the_sum_over_links() {
        let fv = [
            filled(NVLINK_DATA_RX, 0, Ok(1.0), 1),
            filled(NVLINK_DATA_TX, 0, Ok(1.0), 1),
        ];
        assert_eq!(
            answer(&NVLINK, &fv),
            None,
            "scope 0 is link 0, not all links"
        );
    }

    #[test]
    fn only_zero_turns_the_batch_off() {
        use std::ffi::OsStr;
        assert!(enabled(None));
        assert!(enabled(Some(OsStr::new("1"))));
        assert!(enabled(Some(OsStr::new(""))));
        assert!(!enabled(Some(OsStr::new("0"))));
        assert!(!enabled(Some(OsStr::new(" 0 "))));
    }

    #[test]
    fn every_batched_metric_is_in_one_group() {
        // Clock-event reasons have their own reading (`collect::reasons`).
        for m in BATCHED.into_iter().filter(|m| *m != M::ClockReasons) {
            let n = GROUPS.iter().filter(|g| g.metrics.contains(&m)).count();
            assert_eq!(n, 1, "{m:?}");
        }
    }
}
