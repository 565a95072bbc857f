//! Clock-event shares over a whole stream: the rows' own masks, plus what the buckets
//! counted of the rows they folded (`recording::reasons`), so a share is the same whether
//! the run was kept whole or mostly folded (docs/report-format.md, "Retention").

use crate::metric::reasons::{THROTTLING, THROTTLING_BITS};
use crate::report::SeriesData;

/// Folded loaded samples: (with any throttling bit, per bit of [`THROTTLING_BITS`], all).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Folded {
    /// Loaded samples with a clock-event mask.
    pub loaded: u64,
    /// Of those, with any throttling bit.
    pub throttled: u64,
    /// Of those, with each bit of [`THROTTLING_BITS`].
    pub bits: [u64; THROTTLING_BITS.len()],
}

/// What the buckets of `data` counted; zero for a stream without buckets or counts.
pub fn folded(data: &SeriesData) -> Folded {
    let mut f = Folded::default();
    let Some(c) = data.coarse.as_ref().and_then(|c| c.reasons.as_ref()) else {
        return f;
    };
    let sum = |v: &[u32]| v.iter().map(|x| u64::from(*x)).sum::<u64>();
    f.loaded = sum(&c.loaded);
    f.throttled = sum(&c.throttled);
    for (slot, bit) in f.bits.iter_mut().zip(THROTTLING_BITS) {
        if let Some(j) = c.bits.iter().position(|b| *b == bit) {
            *slot = c.loaded_bits.get(j).map_or(0, |v| sum(v));
        }
    }
    f
}

/// Share (0–1) of the loaded masks `rows` (present values only) and the `extra` folded
/// samples, `(hits, all)`, whose mask satisfies `pred`; `None` when there are none.
fn share_with(rows: &[f64], pred: impl Fn(u64) -> bool, extra: (u64, u64)) -> Option<f64> {
    let (k, n) = super::stats::count(rows.iter().copied(), |r| pred(r as u64));
    let (k, n) = (k + extra.0, n + extra.1);
    (n > 0).then(|| k as f64 / n as f64)
}

/// The share of loaded samples with any throttling bit, and of each bit of
/// [`THROTTLING_BITS`] (those with a share), from the loaded rows' masks `rows` and the
/// folded counts `f`.
pub fn shares(rows: &[f64], f: &Folded) -> (Option<f64>, Vec<(u64, f64)>) {
    let any = share_with(rows, |m| m & THROTTLING != 0, (f.throttled, f.loaded));
    let bits = THROTTLING_BITS
        .iter()
        .zip(f.bits)
        .filter_map(|(bit, k)| share_with(rows, |m| m & bit != 0, (k, f.loaded)).map(|s| (*bit, s)))
        .collect();
    (any, bits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::reasons::{HW_THERMAL, SW_POWER_CAP};

    #[test]
    fn folded_samples_count_beside_the_rows() {
        let rows = [SW_POWER_CAP as f64, 0.0, f64::NAN, 0.0];
        let none = Folded::default();
        assert_eq!(shares(&rows, &none).0, Some(1.0 / 3.0));
        let mut f = Folded {
            loaded: 7,
            throttled: 5,
            ..Folded::default()
        };
        let k = THROTTLING_BITS
            .iter()
            .position(|b| *b == HW_THERMAL)
            .unwrap();
        f.bits[k] = 5;
        let (any, bits) = shares(&rows, &f);
        assert_eq!(any, Some(6.0 / 10.0));
        let at = |bit| bits.iter().find(|(b, _)| *b == bit).map(|(_, s)| *s);
        assert_eq!(at(HW_THERMAL), Some(0.5));
        assert_eq!(at(SW_POWER_CAP), Some(0.1));
        assert_eq!(shares(&[], &Folded::default()).0, None);
    }

    use crate::metric::GpuMetric;

    /// A GPU loaded throughout, power-capped for its first `capped` of `n` samples.
    fn recorded(full_rows: usize, n: usize, capped: usize) -> crate::report::Report {
        use crate::recording::Recording;
        let mut rec = Recording::with_capacity(Default::default(), full_rows, 16);
        let d = rec.add_device(Default::default());
        for i in 0..n {
            let mut row = [f32::NAN; GpuMetric::COUNT];
            row[GpuMetric::UtilGpu.index()] = 90.0;
            row[GpuMetric::ClockReasons.index()] =
                if i < capped { SW_POWER_CAP as f32 } else { 0.0 };
            rec.push_gpu(d, i as f64 * 0.1, &row);
        }
        crate::report::Report::from_recording(&rec)
    }

    fn throttled(r: &crate::report::Report) -> Option<f64> {
        crate::signals::Signals::from_report(r).devices[0].throttled_share
    }

    #[test]
    fn a_throttled_stretch_folded_into_buckets_keeps_its_share() {
        let whole = recorded(100_000, 5_000, 2_000);
        assert!(whole.series[0].data.coarse.is_none(), "kept whole");
        assert_eq!(throttled(&whole), Some(0.4));
        // A small buffer folds the capped start into buckets: the rows alone would say 0.
        let folded = recorded(260, 5_000, 2_000);
        let c = folded.series[0].data.coarse.as_ref().expect("buckets");
        assert!(!c.t_start.is_empty());
        let rows = &folded.series[0].data.metrics[GpuMetric::ClockReasons.name()].0;
        let kept = rows.iter().filter(|m| **m != 0.0).count() as f64 / rows.len() as f64;
        assert!(kept < 0.1, "the rows alone say {kept}");
        assert_eq!(throttled(&folded), Some(0.4));
        let power_cap = |r: &crate::report::Report| {
            crate::signals::Signals::from_report(r).devices[0]
                .reason_shares
                .iter()
                .find(|(b, _)| *b == SW_POWER_CAP)
                .map(|(_, s)| *s)
        };
        assert_eq!(power_cap(&folded), Some(0.4));
        // Through the file, compact and plain.
        for json in [folded.to_json(), folded.to_json_plain()] {
            let back: crate::report::Report = serde_json::from_str(&json).expect("reads");
            assert_eq!(throttled(&back), Some(0.4));
        }
    }
}
