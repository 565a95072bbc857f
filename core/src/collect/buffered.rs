//! Buffered mode: utilization and the SM clock read once a second from the driver's sample
//! buffers (`nvmlDeviceGetSamples`) instead of by a call each every tick
//! (docs/nvml-loading.md, "Buffered mode").
//!
//! Every tick a buffered GPU makes one call, the field batch (power, temperature, the PCIe and
//! NVLink byte counters and the clock-event counters; `collect::fields`), whose per-tick rates
//! the rules need (a PCIe burst at each utilization dip), and keeps the row. On its read tick
//! (its slow tick, and the last tick when the recording stops) it reads the utilization and
//! SM-clock samples newer than the last ones it saw, memory and the slow metrics, and
//! completes the rows of every tick since the previous read: each sampled metric is the
//! latest sample at or before the row's time (none older than [`MAX_SAMPLE_AGE_S`]), memory
//! is repeated in each row, and the slow metrics stand in the read tick's row only, as in
//! per-tick mode. So a GPU's rows reach the recording up to a second late. A sample type the
//! GPU refuses for good sends that GPU back to per-tick reading for the rest of the run.
//! On by default; `RecorderConfig::nvml_samples = false` or `GPUWHY_NVML_SAMPLES=0` reads
//! every metric every tick instead.

use crate::metric::GpuMetric as M;
use crate::nvml::{Nvml, NvmlError, Sample, SamplingType, SAMPLES_PER_CALL};

use super::cost::CallStats;
use super::gpu::{Gpu, Outcome};

mod cadence;
pub use cadence::{RECHECK_EVERY, STEADY_RATIO, TICK_TRAFFIC_MBS};

/// The environment variable that turns buffered mode off when set to `0` (the default of
/// `RecorderConfig::nvml_samples`).
pub const ENV_SAMPLES: &str = "GPUWHY_NVML_SAMPLES";

/// The function that answers metrics read from sample buffers.
pub const SAMPLES: &str = "nvmlDeviceGetSamples";

/// Oldest a sample may be and still stand for a row, seconds: a buffer that stopped (a
/// transient error, a driver that samples slower than documented) leaves a gap, not a
/// stale value repeated. The longest documented utilization period is 1 s.
pub const MAX_SAMPLE_AGE_S: f64 = 1.0;

/// Most calls per type and read when the answers come back full (a driver sampling far
/// faster than every 1/6 s).
const MAX_CALLS_PER_TYPE: usize = 4;

/// A row of every GPU metric.
type Row = [f32; M::COUNT];

/// Sampled kinds.
const N: usize = 4;

/// The sampled metrics: (type, metric, upper bound, unit factor). Power's samples (mW) are
/// read only for a second read once (`cadence`): a second read every tick has the field
/// batch's instant draw in each row.
const KINDS: [(SamplingType, M, f64, f64); N] = [
    (SamplingType::GpuUtilization, M::UtilGpu, 100.0, 1.0),
    (SamplingType::MemoryUtilization, M::UtilMem, 100.0, 1.0),
    (SamplingType::ProcessorClock, M::SmClock, f64::MAX, 1.0),
    (SamplingType::TotalPower, M::Power, f64::MAX, 1e-3),
];

/// Where power stands in [`KINDS`].
const POWER: usize = 3;

/// Whether buffered mode is on: unless `GPUWHY_NVML_SAMPLES` is `0`, which asks for per-tick
/// reading.
pub(super) fn samples_enabled() -> bool {
    asks(std::env::var_os(ENV_SAMPLES).as_deref())
}

/// Whether a value of [`ENV_SAMPLES`] leaves buffered mode on (anything but `0`).
fn asks(value: Option<&std::ffi::OsStr>) -> bool {
    value.and_then(|v| v.to_str()).map(str::trim) != Some("0")
}

/// One GPU's buffered state.
#[derive(Debug, Default)]
pub struct Buffered {
    /// The ticks since the last read: report time and the row so far (the field batch).
    pending: Vec<(f64, Row)>,
    /// Per kind: the newest sample timestamp seen (`lastSeenTimeStamp` of the next call).
    last_seen: [u64; N],
    /// Per kind: the newest sample of earlier reads, for rows before this read's first.
    last: [Option<Sample>; N],
    /// Per kind: this read's samples, oldest first.
    got: [Vec<Sample>; N],
    /// One call's answer.
    scratch: Vec<Sample>,
    /// A type was refused for good: the rows pending are filled once more, then the GPU
    /// goes back to per-tick reading.
    retiring: bool,
    /// Whether the second being read is read once, at its read tick (`cadence`).
    cadence: cadence::Cadence,
    /// The driver refused power samples: every second is read every tick.
    no_power: bool,
    /// The clock-event counters at the last read, to see whether they moved.
    counters: Option<[f64; super::reasons::COUNTERS.len()]>,
}

impl Gpu {
    /// Reads this GPU in buffered mode from now on.
    pub(super) fn buffer_samples(&mut self) {
        self.buffered = Some(Box::default());
    }

    /// Whether this GPU is read from sample buffers (the mode is on and nothing was refused).
    pub(super) fn is_buffered(&self) -> bool {
        self.buffered.is_some()
    }

    /// Between reads: the field batch of the tick at report time `t`, kept until the next
    /// read completes its row. Returns what went wrong.
    pub(super) fn sample_between(
        &mut self,
        nvml: &Nvml,
        t: f64,
        stats: &mut CallStats,
    ) -> Vec<Outcome> {
        let mut out = Vec::new();
        if self.quiet_between() {
            // A quiet second: no call, the read tick completes the row.
            self.slept_through(t);
            return out;
        }
        let mut row = [f32::NAN; M::COUNT];
        self.sample_fields(nvml, false, &mut row, stats, &mut out);
        if let Some(b) = self.buffered.as_mut() {
            b.pending.push((t, row));
        }
        out
    }

    /// Whether the ticks between this GPU's reads need no call: it is buffered and the
    /// second being read is read once (a lost GPU needs none either).
    pub(super) fn quiet_between(&self) -> bool {
        self.lost || self.buffered.as_ref().is_some_and(|b| b.cadence.once)
    }

    /// A tick at report time `t` between reads in a second read once (the sampler slept
    /// through it, or [`Gpu::sample_between`] found it quiet): its row waits, empty, for the
    /// next read to fill it.
    pub(super) fn slept_through(&mut self, t: f64) {
        if let Some(b) = self.buffered.as_mut().filter(|b| b.cadence.once) {
            b.pending.push((t, [f32::NAN; M::COUNT]));
        }
    }

    /// Reads the sample buffers, then everything else once (`Gpu::sample_rest`), into `row`
    /// (the read tick's). Returns what went wrong and whether the GPU stays buffered.
    pub(super) fn sample_buffered(
        &mut self,
        nvml: &Nvml,
        row: &mut Row,
        stats: &mut CallStats,
    ) -> Vec<Outcome> {
        let mut out = Vec::new();
        let Some(mut b) = self.buffered.take() else {
            return self.sample(nvml, true, row, stats);
        };
        self.fields_at_us = None;
        let mut refused = false;
        for (k, (kind, metric, _, _)) in KINDS.into_iter().enumerate() {
            b.got[k].clear();
            if self.lost || !self.is_on(metric) || (k == POWER && (!b.cadence.once || b.no_power)) {
                continue;
            }
            match read_kind(nvml, self, kind, &mut b, k, stats) {
                Ok(()) => {}
                Err(e) if k == POWER && e.is_unavailable() && !e.is_gpu_lost() => {
                    b.no_power = true;
                }
                Err(e) if e.is_unavailable() && !e.is_gpu_lost() => refused = true,
                Err(e) => {
                    self.take::<()>(&[metric], Err(e), &mut out);
                }
            }
        }
        self.sample_rest(nvml, true, row, stats, &mut out);
        if refused && !self.lost {
            // Back to per-tick reading for good: this tick's row through the single calls.
            self.sample_fast(nvml, row, stats, &mut out);
        }
        b.retiring = refused;
        self.buffered = Some(b);
        out
    }

    /// After [`Gpu::sample_buffered`]: the rows of the ticks since the last read and of this
    /// one (report time `t`, whose reading `row` holds), into `rows` as (position, time,
    /// row). A GPU not buffered gives `row` alone.
    pub(super) fn fill_rows(&mut self, t: f64, row: &Row, rows: &mut Vec<(usize, f64, Row)>) {
        let Some(mut b) = self.buffered.take() else {
            rows.push((self.pos, t, *row));
            return;
        };
        let first = rows.len();
        let used = fill(&mut b, self.pos, t, self.fields_at_us, row, rows);
        for (k, (_, metric, _, _)) in KINDS.iter().enumerate() {
            if used[k] {
                self.answered(&[*metric], SAMPLES);
            }
        }
        self.next_cadence(&mut b, &rows[first..]);
        if !b.retiring {
            self.buffered = Some(b);
        }
    }
}

impl Gpu {
    /// After a read that completed `rows` (the read tick's last): whether the next second
    /// is read every tick or once. The first read (no second behind it) keeps every tick.
    fn next_cadence(&mut self, b: &mut Buffered, rows: &[(usize, f64, Row)]) {
        let now = self.reasons.prev.map(|p| p.1);
        let moved = cadence::counters_moved(b.counters, now);
        b.counters = now;
        if rows.len() < 2 {
            return;
        }
        let was_once = b.cadence.once;
        let rows: Vec<&Row> = rows.iter().map(|r| &r.2).collect();
        b.cadence.next(&rows, moved);
        if b.no_power {
            b.cadence.once = false;
        }
        if b.cadence.once && !was_once {
            // Power samples from now on only: the driver's time of this read.
            if let Some(now_us) = self.fields_at_us {
                b.last_seen[POWER] = b.last_seen[POWER].max(now_us.max(0) as u64);
            }
        }
    }
}

/// One type's samples newer than the last seen into `b.got[k]`.
fn read_kind(
    nvml: &Nvml,
    g: &Gpu,
    kind: SamplingType,
    b: &mut Buffered,
    k: usize,
    stats: &mut CallStats,
) -> Result<(), NvmlError> {
    b.got[k].clear();
    for _ in 0..MAX_CALLS_PER_TYPE {
        let since = b.last_seen[k];
        let scratch = &mut b.scratch;
        stats.time(SAMPLES, || nvml.samples(g.handle(), kind, since, scratch))?;
        let full = b.scratch.len() == SAMPLES_PER_CALL;
        b.got[k].extend(b.scratch.iter().filter(|s| s.timestamp_us > since));
        if let Some(newest) = b.got[k].last() {
            b.last_seen[k] = newest.timestamp_us;
        }
        if !full {
            break;
        }
    }
    Ok(())
}

/// Completes the rows of the pending ticks and adds `t`'s for device `pos`; `now_us` is the
/// driver's time at report time `t` (the field batch's timestamp), µs. Returns which kinds
/// gave a value.
fn fill(
    b: &mut Buffered,
    pos: usize,
    t: f64,
    now_us: Option<i64>,
    row: &Row,
    rows: &mut Vec<(usize, f64, Row)>,
) -> [bool; N] {
    b.pending.push((t, *row));
    let now_us = now_us.or_else(|| newest(b)).unwrap_or(0);
    let mut used = [false; N];
    let mem = M::MemUsed.index();
    for (tp, r) in &mut b.pending {
        r[mem] = row[mem];
        if b.cadence.once {
            for m in cadence::CARRIED {
                r[m.index()] = row[m.index()];
            }
        }
        let at_us = now_us - ((t - *tp) * 1e6).round() as i64;
        for (k, (_, metric, max, unit)) in KINDS.iter().enumerate() {
            // A second read once takes power from the samples in every row, the read
            // tick's too, so the report's `via` says which cadence the last second had.
            let sampled_power = k == POWER && b.cadence.once;
            if !r[metric.index()].is_nan() && !sampled_power {
                continue;
            }
            if let Some(v) = value_at(b.last[k].iter().chain(&b.got[k]), at_us, *max) {
                r[metric.index()] = (v * unit) as f32;
                used[k] = true;
            }
        }
        rows.push((pos, *tp, *r));
    }
    b.pending.clear();
    for k in 0..N {
        if let Some(s) = b.got[k].last() {
            b.last[k] = Some(*s);
        }
    }
    used
}

/// The newest sample timestamp of this read, µs: the driver's "now" when no field
/// timestamp says better (up to one sample period early).
fn newest(b: &Buffered) -> Option<i64> {
    b.got
        .iter()
        .filter_map(|g| g.last())
        .map(|s| s.timestamp_us as i64)
        .max()
}

/// The latest sample at or before `at_us` (samples oldest first), if not older than
/// [`MAX_SAMPLE_AGE_S`] and not above `max`.
fn value_at<'a>(samples: impl Iterator<Item = &'a Sample>, at_us: i64, max: f64) -> Option<f64> {
    let s = samples
        .take_while(|s| s.timestamp_us as i64 <= at_us)
        .last()?;
    let fresh = (at_us - s.timestamp_us as i64) as f64 <= MAX_SAMPLE_AGE_S * 1e6;
    (fresh && s.value <= max).then_some(s.value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(timestamp_us: u64, value: f64) -> Sample {
        Sample {
            timestamp_us,
            value,
        }
    }

    #[test]
    fn a_row_takes_the_latest_sample_at_or_before_it() {
        let got = [s(100, 1.0), s(200, 2.0), s(300, 3.0)];
        assert_eq!(value_at(got.iter(), 99, 100.0), None);
        assert_eq!(value_at(got.iter(), 100, 100.0), Some(1.0));
        assert_eq!(value_at(got.iter(), 299, 100.0), Some(2.0));
        assert_eq!(value_at(got.iter(), 10_000, 100.0), Some(3.0));
    }

    #[test]
    fn stale_or_implausible_samples_leave_a_gap() {
        let got = [s(0, 50.0), s(1_000_000, 150.0)];
        assert_eq!(value_at(got.iter(), 999_999, 100.0), Some(50.0));
        assert_eq!(value_at(got.iter(), 1_000_001, 100.0), None, "above 100 %");
        assert_eq!(
            value_at(got[..1].iter(), 1_000_001, 100.0),
            None,
            "older than 1 s"
        );
    }

    #[test]
    fn only_zero_turns_buffered_mode_off() {
        use std::ffi::OsStr;
        assert!(asks(None));
        assert!(asks(Some(OsStr::new(" 1 "))));
        assert!(!asks(Some(OsStr::new("0"))));
        assert!(!asks(Some(OsStr::new(" 0"))));
    }
}
