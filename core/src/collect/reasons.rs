//! Clock-event reasons through the field batch: the perf-policy time counters (fields 74, 76,
//! 77 and 79: power cap, sync boost, board limit, reliability) ride in the tick's one
//! `nvmlDeviceGetFieldValues` call, and the bit mask of
//! `nvmlDeviceGetCurrentClocksEventReasons` is read once a second for the bits no stable
//! field counts (idle, application and display clocks, the hardware slowdowns and software
//! thermal slowdown: their counters, 269–271, lie in the id range that was renumbered between
//! releases, docs/nvml-facts.md, "Field ids").
//!
//! A counted bit is set on a tick when its policy held the clocks down for at least
//! [`HELD_SHARE`] of the time since the last tick; an uncounted bit is the last mask's, held
//! until the next read. A driver that refuses a counter sends that bit back to the mask; one
//! that refuses them all (or `GPUWHY_NVML_FIELDS=0`) gets the mask every tick, as before.
//! docs/nvml-loading.md, "Calls per tick".

use crate::metric::{reasons, GpuMetric as M};
use crate::nvml::field_ids::{
    PERF_POLICY_BOARD_LIMIT, PERF_POLICY_POWER, PERF_POLICY_RELIABILITY, PERF_POLICY_SYNC_BOOST,
};
use crate::nvml::{FieldValue, Nvml};

use super::cost::CallStats;
use super::gpu::{Gpu, Outcome};

/// The single call that reads the whole mask.
const MASK_CALL: &str = "nvmlDeviceGetCurrentClocksEventReasons";

/// Each counter with the reason bit it stands for (the header gives 74 and 76 the aliases
/// `NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP` and `…_SYNC_BOOST`; 77 and 79 carry the
/// names of the 0x200 board-limit and 0x400 reliability policies).
pub(super) const COUNTERS: [(u32, u64); 4] = [
    (PERF_POLICY_POWER, reasons::SW_POWER_CAP),
    (PERF_POLICY_SYNC_BOOST, reasons::SYNC_BOOST),
    (PERF_POLICY_BOARD_LIMIT, reasons::BOARD_LIMIT),
    (PERF_POLICY_RELIABILITY, reasons::RELIABILITY),
];

/// Every bit a counter can stand for.
pub(super) const COUNTED_BITS: u64 =
    reasons::SW_POWER_CAP | reasons::SYNC_BOOST | reasons::BOARD_LIMIT | reasons::RELIABILITY;

/// Share of a tick a policy must hold the clocks for its bit to be set: a majority, so a tick
/// reads as the state it was mostly in, as a mask read at a random moment of it would most
/// often say.
pub const HELD_SHARE: f64 = 0.5;

/// One reading of the counters: (timestamp µs, ns per counter in [`COUNTERS`] order).
pub(super) type Reading = (i64, [f64; COUNTERS.len()]);

/// The counted bits of `asked` between two readings; `None` for the first reading, a clock
/// that did not move, or a counter that went back.
pub(super) fn counted_bits(prev: Option<Reading>, now: Reading, asked: u64) -> Option<u64> {
    let (pts, p) = prev?;
    let (ts, n) = now;
    let dt_ns = (ts - pts) as f64 * 1e3;
    if dt_ns <= 0.0 {
        return None;
    }
    let mut bits = 0;
    for (k, (_, bit)) in COUNTERS.iter().enumerate() {
        if asked & bit == 0 {
            continue;
        }
        let held = n[k] - p[k];
        if held.is_nan() || held < 0.0 {
            return None;
        }
        if held >= HELD_SHARE * dt_ns {
            bits |= bit;
        }
    }
    Some(bits)
}

/// The per-GPU state of the counters.
#[derive(Debug, Clone, Copy)]
pub(super) struct ReasonState {
    /// The bits whose counter is still asked for.
    pub(super) asked: u64,
    /// The last reading of the counters.
    pub(super) prev: Option<Reading>,
    /// The last mask's bits that no asked counter stands for, held between reads.
    pub(super) held: u64,
}

impl Default for ReasonState {
    fn default() -> Self {
        Self {
            asked: COUNTED_BITS,
            prev: None,
            held: 0,
        }
    }
}

impl Gpu {
    /// The counter fields this tick asks for (none once they all were refused or the mask is
    /// off).
    pub(super) fn reason_fields(&self) -> Vec<FieldValue> {
        if !self.is_on(M::ClockReasons) || !self.field_ok(M::ClockReasons) {
            return Vec::new();
        }
        let asked = self.reasons.asked;
        COUNTERS
            .iter()
            .filter(|(_, bit)| asked & bit != 0)
            .map(|(id, _)| FieldValue::new(*id))
            .collect()
    }

    /// The counters' bits for this tick from the filled `fv`, updating the state; `None` when
    /// they give none this tick (first reading, a transient error, every counter refused).
    fn counted(&mut self, fv: &[FieldValue]) -> Option<u64> {
        if !self.field_ok(M::ClockReasons) {
            return None;
        }
        let mut now = [f64::NAN; COUNTERS.len()];
        let mut stamp = 0;
        let mut complete = true;
        for (k, (id, bit)) in COUNTERS.iter().enumerate() {
            if self.reasons.asked & bit == 0 {
                continue;
            }
            let f = fv.iter().find(|f| f.field_id == *id && f.scope_id == 0)?;
            match &f.result {
                Ok(v) => {
                    now[k] = *v;
                    stamp = stamp.max(f.timestamp_us);
                }
                Err(e) if e.is_unavailable() => self.reasons.asked &= !bit,
                Err(_) => complete = false,
            }
        }
        if self.reasons.asked == 0 {
            let refused = crate::nvml::NvmlError::new(
                super::fields::FIELDS,
                crate::nvml::codes::NOT_SUPPORTED,
            );
            self.field_failed(&[M::ClockReasons], Some(&refused));
            return None;
        }
        if !complete || stamp == 0 {
            return None;
        }
        let bits = counted_bits(self.reasons.prev, (stamp, now), self.reasons.asked);
        self.reasons.prev = Some((stamp, now));
        bits
    }

    /// The `clock_reasons` of this tick: counted bits with the held mask, and the mask call on
    /// the slow tick or whenever the counters give nothing.
    pub(super) fn sample_reasons(
        &mut self,
        nvml: &Nvml,
        slow: bool,
        fv: &[FieldValue],
        row: &mut [f32; M::COUNT],
        stats: &mut CallStats,
        out: &mut Vec<Outcome>,
    ) {
        if self.lost {
            return;
        }
        let counted = self.counted(fv);
        if counted.is_none() || slow {
            let h = self.handle();
            let mask = self.call(&[M::ClockReasons], MASK_CALL, stats, out, || {
                nvml.clock_event_reasons(h)
            });
            if let Some(m) = mask {
                self.reasons.held = m & !self.reasons.asked;
                row[M::ClockReasons.index()] = m as f32;
            }
        }
        if let Some(bits) = counted {
            row[M::ClockReasons.index()] = (bits | self.reasons.held) as f32;
            self.answered(&[M::ClockReasons], super::fields::FIELDS);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bit_is_set_when_its_policy_held_most_of_the_tick() {
        let prev = Some((1_000_000, [0.0, 0.0, 0.0, 0.0]));
        // 100 ms later: power cap held 80 ms, sync boost 10 ms, board limit exactly half.
        let now = (1_100_000, [80e6, 10e6, 50e6, 0.0]);
        let bits = counted_bits(prev, now, COUNTED_BITS);
        assert_eq!(bits, Some(reasons::SW_POWER_CAP | reasons::BOARD_LIMIT));
        assert_eq!(
            counted_bits(prev, now, reasons::SYNC_BOOST),
            Some(0),
            "only asked bits count"
        );
    }

    #[test]
    fn counters_need_two_readings_a_forward_clock_and_no_wrap() {
        let now = (1_100_000, [80e6, 0.0, 0.0, 0.0]);
        assert_eq!(counted_bits(None, now, COUNTED_BITS), None);
        let same_time = Some((1_100_000, [0.0; 4]));
        assert_eq!(counted_bits(same_time, now, COUNTED_BITS), None);
        let ahead = Some((1_000_000, [90e6, 0.0, 0.0, 0.0]));
        assert_eq!(counted_bits(ahead, now, COUNTED_BITS), None, "went back");
    }

    #[test]
    fn counters_stand_for_throttling_bits_only_and_once() {
        let mut seen = 0;
        for (_, bit) in COUNTERS {
            assert_eq!(seen & bit, 0, "bit {bit:#x} twice");
            seen |= bit;
        }
        assert_eq!(seen, COUNTED_BITS);
        assert_eq!(
            COUNTED_BITS & !(reasons::THROTTLING | reasons::SYNC_BOOST),
            0
        );
    }
}
