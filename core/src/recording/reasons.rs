//! Clock-event reasons over buckets. The throttling checks count the loaded samples (those
//! with `util_gpu` at or above [`LOAD_UTIL`]) whose clock-event mask has a throttling bit
//! set; a bucket's min, mean and max of a bitmask cannot say that, so a GPU stream's buckets
//! also count, per bucket, its loaded samples with a mask, those with any throttling bit and
//! those with each bit of [`THROTTLING_BITS`]. With the rows' own counts, the shares are
//! exact over a whole run however much of it was folded (docs/report-format.md,
//! "Retention").

use crate::metric::reasons::{THROTTLING, THROTTLING_BITS};
use crate::metric::LOAD_UTIL;

/// Bits counted one by one: [`THROTTLING_BITS`], in its order.
pub const REASON_BITS: usize = THROTTLING_BITS.len();

/// The clock-event column and the utilization column whose rows a bucket counts by reason.
pub(super) type ReasonCols = Option<(usize, usize)>;

/// One bucket's loaded samples, by clock-event reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReasonCounts {
    /// Loaded samples with a clock-event mask.
    pub loaded: u32,
    /// Of those, samples with any throttling bit set.
    pub throttled: u32,
    /// Of those, samples with each bit of [`THROTTLING_BITS`] set.
    pub bits: [u32; REASON_BITS],
}

impl ReasonCounts {
    /// Counts one row whose mask is `mask` and utilization `util` (`NaN`: missing).
    pub(super) fn add(&mut self, mask: f32, util: f32) {
        if !mask.is_finite() || !util.is_finite() || f64::from(util) < LOAD_UTIL {
            return;
        }
        let m = mask as u64;
        self.loaded += 1;
        self.throttled += u32::from(m & THROTTLING != 0);
        for (c, b) in self.bits.iter_mut().zip(THROTTLING_BITS) {
            *c += u32::from(m & b != 0);
        }
    }

    /// Adds another bucket's counts (exact).
    pub(super) fn merge(&mut self, o: &ReasonCounts) {
        self.loaded += o.loaded;
        self.throttled += o.throttled;
        for (a, b) in self.bits.iter_mut().zip(o.bits) {
            *a += b;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::reasons::{GPU_IDLE, HW_THERMAL, SW_POWER_CAP};

    #[test]
    fn only_loaded_samples_with_a_mask_count_and_each_bit_on_its_own() {
        let mut c = ReasonCounts::default();
        c.add((SW_POWER_CAP | HW_THERMAL) as f32, 90.0);
        c.add(GPU_IDLE as f32, 95.0);
        c.add(SW_POWER_CAP as f32, 10.0);
        c.add(f32::NAN, 90.0);
        c.add(SW_POWER_CAP as f32, f32::NAN);
        assert_eq!((c.loaded, c.throttled), (2, 1));
        let at = |bit: u64| c.bits[THROTTLING_BITS.iter().position(|b| *b == bit).unwrap()];
        assert_eq!((at(SW_POWER_CAP), at(HW_THERMAL)), (1, 1));
        let mut d = c;
        d.merge(&c);
        assert_eq!(
            (d.loaded, d.throttled, d.bits.iter().sum::<u32>()),
            (4, 2, 4)
        );
    }
}
