//! Buffered mode's adaptive cadence: whether a GPU needs its field batch every tick during
//! the next second (docs/nvml-loading.md, "Buffered mode").
//!
//! The rules need tick resolution from the field batch only where something moves within a
//! second: PCIe or NVLink traffic that rises and falls with utilization (`host_transfer`,
//! `comm_sync`) and clock-event reasons held for part of a second (`throttling`). A second
//! without either is read once, at the read tick: the byte and clock-event counters then give
//! exact averages over the whole second, and power comes from the driver's power samples.
//! Steady traffic loses nothing to a per-second average, but traffic that comes in bursts
//! shorter than a second can average the same every second, so a GPU with traffic reads a
//! second every tick again every [`RECHECK_EVERY`] seconds to see whether it is still steady.

use crate::metric::{reasons, GpuMetric as M};

use super::Row;

/// Traffic over PCIe or NVLink, MB/s in either direction, below which a second is quiet.
/// The lowest bar a rule sets on a link is 30 % of it for a fifth of the time
/// (`host_transfer`'s offloaded optimizer); on a PCIe gen3 x8 link (985 MB/s per lane,
/// docs/nvml-loading.md, "Buffered mode") that averages 470 MB/s, so a second below
/// 250 MB/s carries no traffic a rule could see.
pub const TICK_TRAFFIC_MBS: f32 = 250.0;

/// Traffic is steady when no tick of a second read every tick carries more than this many
/// times the second's mean: bursts that the rules compare with utilization dips rise far
/// above their mean (the bundled `host_transfer` and `comm_sync` scenarios: 3× and more).
pub const STEADY_RATIO: f32 = 1.25;

/// Seconds a GPU with steady traffic is read once before a second is read every tick again.
pub const RECHECK_EVERY: u32 = 10;

/// The metrics whose rates decide the cadence.
pub(super) const TRAFFIC: [M; 4] = [M::PcieRx, M::PcieTx, M::NvlinkRx, M::NvlinkTx];

/// What the last second read showed and how long the GPU has been read once.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Cadence {
    /// The second being read now is read once, at its read tick.
    pub once: bool,
    /// Seconds read once in a row.
    pub streak: u32,
    /// The last second's mean of each [`TRAFFIC`] metric.
    pub mean: [f32; 4],
}

/// Clock-event bits that ask for tick resolution: every slowdown the throttling rule counts
/// and sync boost. Idle, application and display clocks are steady states.
fn slowdown_bits() -> u64 {
    reasons::THROTTLING_BITS
        .iter()
        .fold(reasons::SYNC_BOOST, |acc, b| acc | b)
}

/// (mean, max) of metric `m` over `rows`, NaN left out; zeros when none has a value.
fn mean_max(rows: &[&Row], m: M) -> (f32, f32) {
    let (mut sum, mut n, mut max) = (0.0, 0.0, 0.0_f32);
    for v in rows.iter().map(|r| r[m.index()]).filter(|v| v.is_finite()) {
        sum += v;
        n += 1.0;
        max = max.max(v);
    }
    if n == 0.0 {
        (0.0, 0.0)
    } else {
        (sum / n, max)
    }
}

impl Cadence {
    /// Moves on after a read whose rows (the second just read, oldest first, the read
    /// tick's last) are `rows`; `moved` says whether a clock-event counter grew since the
    /// last read. The next second is read every tick after a slowdown, a moved counter, or
    /// traffic at or above [`TICK_TRAFFIC_MBS`] that came in bursts, appeared or changed by
    /// more than [`STEADY_RATIO`] since the last second, or was read once for
    /// [`RECHECK_EVERY`] seconds; once otherwise.
    pub(super) fn next(&mut self, rows: &[&Row], moved: bool) {
        let slow = slowdown_bits();
        let slowed = rows.iter().any(|r| {
            let bits = r[M::ClockReasons.index()];
            bits.is_finite() && (bits as u64) & slow != 0
        });
        let mut ticks = moved || slowed;
        for (k, m) in TRAFFIC.into_iter().enumerate() {
            let (mean, max) = mean_max(rows, m);
            let before = std::mem::replace(&mut self.mean[k], mean);
            if max < TICK_TRAFFIC_MBS {
                continue;
            }
            ticks |= if self.once {
                let changed = (mean - before).abs() > (STEADY_RATIO - 1.0) * mean.max(before);
                changed || self.streak + 1 >= RECHECK_EVERY
            } else {
                max > STEADY_RATIO * mean
            };
        }
        self.streak = if self.once && !ticks {
            self.streak + 1
        } else {
            0
        };
        self.once = !ticks;
    }
}

/// Whether any clock-event counter grew between two readings (ns per counter).
pub(super) fn counters_moved<const K: usize>(
    before: Option<[f64; K]>,
    now: Option<[f64; K]>,
) -> bool {
    match (before, now) {
        (Some(a), Some(b)) => a.iter().zip(&b).any(|(x, y)| y - x > 0.0),
        _ => false,
    }
}

/// The metrics a second read once carries from its read tick into each of its rows: the
/// field batch's values, which are averages over the whole second for the rates and the
/// counted clock-event bits, and the last reading for temperature.
pub(super) const CARRIED: [M; 6] = [
    M::Temp,
    M::PcieRx,
    M::PcieTx,
    M::NvlinkRx,
    M::NvlinkTx,
    M::ClockReasons,
];

#[cfg(test)]
mod tests {
    use super::*;

    fn row() -> Row {
        [f32::NAN; M::COUNT]
    }

    fn with(m: M, v: f32) -> Row {
        let mut r = row();
        r[m.index()] = v;
        r
    }

    /// A second of ten rows of `m` at `v` (the last `burst` at `v * 4`).
    fn second(m: M, v: f32, burst: usize) -> Vec<Row> {
        (0..10)
            .map(|i| with(m, if i >= 10 - burst { v * 4.0 } else { v }))
            .collect()
    }

    fn next(c: &mut Cadence, rows: &[Row], moved: bool) -> bool {
        c.next(&rows.iter().collect::<Vec<_>>(), moved);
        c.once
    }

    #[test]
    fn quiet_seconds_are_read_once() {
        let mut c = Cadence::default();
        let mut idle = with(M::PcieRx, 100.0);
        idle[M::ClockReasons.index()] = (reasons::GPU_IDLE | reasons::APPLICATIONS_CLOCKS) as f32;
        assert!(next(&mut c, &[idle, row()], false));
        assert!(next(&mut c, &[idle], false), "still quiet");
    }

    #[test]
    fn slowdowns_or_moving_counters_ask_for_ticks() {
        let mut c = Cadence::default();
        let thermal = with(M::ClockReasons, reasons::SW_THERMAL as f32);
        assert!(!next(&mut c, &[thermal], false));
        assert!(!next(&mut c, &[row()], true));
        assert!(next(&mut c, &[row()], false));
    }

    #[test]
    fn bursts_keep_every_tick_steady_traffic_is_read_once() {
        let mut c = Cadence::default();
        assert!(
            !next(&mut c, &second(M::NvlinkRx, 5_000.0, 3), false),
            "bursts"
        );
        assert!(
            next(&mut c, &second(M::NvlinkRx, 5_000.0, 0), false),
            "steady"
        );
        // Read once: the same mean stays once, until the recheck is due.
        let carried = [with(M::NvlinkRx, 5_000.0)];
        for s in 1..RECHECK_EVERY {
            assert!(next(&mut c, &carried, false), "second {s} read once");
        }
        assert!(
            !next(&mut c, &carried, false),
            "the recheck reads every tick"
        );
        assert!(next(&mut c, &second(M::NvlinkRx, 5_000.0, 0), false));
    }

    #[test]
    fn traffic_that_appears_or_changes_reads_every_tick_again() {
        let mut c = Cadence::default();
        assert!(next(&mut c, &[row(), row()], false));
        assert!(
            !next(&mut c, &[with(M::PcieTx, TICK_TRAFFIC_MBS)], false),
            "appears"
        );
        assert!(next(&mut c, &second(M::PcieTx, 1_000.0, 0), false));
        assert!(
            next(&mut c, &[with(M::PcieTx, 1_100.0)], false),
            "within 25 %"
        );
        assert!(!next(&mut c, &[with(M::PcieTx, 3_000.0)], false), "changed");
    }

    #[test]
    fn a_counter_moved_only_when_it_grew() {
        assert!(!counters_moved(None, Some([1.0, 2.0])));
        assert!(!counters_moved(Some([1.0, 2.0]), Some([1.0, 2.0])));
        assert!(counters_moved(Some([1.0, 2.0]), Some([1.0, 2.5])));
    }
}
