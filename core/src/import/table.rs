//! Rows read from a log, per GPU, turned into a [`Recording`] that the usual report,
//! signals and rules read.
//!
//! Both importers fill a [`Table`]; it knows which metric columns the log had and which of
//! them ever held a value, so the devices' capabilities say what was recorded and why the
//! rest is missing (never a 0 in place of a missing value).

use std::collections::BTreeMap;

use crate::metric::GpuMetric;
use crate::recording::Recording;
use crate::report::{rfc3339_utc, Capability, DeviceInfo, RunInfo};

/// One GPU's rows while a log is read.
#[derive(Debug, Default)]
pub(crate) struct DeviceRows {
    /// Static facts found in the log (name, UUID, limits).
    pub info: DeviceInfo,
    /// `(t, row)`, `t` in seconds on the log's clock (absolute or sample-count based).
    pub rows: Vec<(f64, [f32; GpuMetric::COUNT])>,
    /// Metrics that ever held a value.
    pub seen: [bool; GpuMetric::COUNT],
}

/// Everything read from one log.
#[derive(Debug, Default)]
pub(crate) struct Table {
    /// Per device key (NVML index, or position when the log has none).
    pub devices: BTreeMap<u32, DeviceRows>,
    /// Metrics the log has a column for.
    pub columns: [bool; GpuMetric::COUNT],
    /// Wall-clock instant of `t = 0` on the log's clock, ms since the Unix epoch, when the log
    /// carries dates.
    pub epoch_ms: Option<i64>,
}

impl Table {
    /// The rows of device `key`, created on first use.
    pub fn device(&mut self, key: u32) -> &mut DeviceRows {
        self.devices.entry(key).or_insert_with(|| DeviceRows {
            info: DeviceInfo {
                index: key,
                ..Default::default()
            },
            ..Default::default()
        })
    }

    /// Appends a row to device `key`, remembering which metrics had values.
    pub fn push(&mut self, key: u32, t: f64, row: [f32; GpuMetric::COUNT]) {
        let d = self.device(key);
        for (i, v) in row.iter().enumerate() {
            if !v.is_nan() {
                d.seen[i] = true;
            }
        }
        d.rows.push((t, row));
    }

    /// Number of rows of the device with the most.
    pub fn max_rows(&self) -> usize {
        self.devices
            .values()
            .map(|d| d.rows.len())
            .max()
            .unwrap_or(0)
    }

    /// Median spacing of one device's sample times, seconds (`None` with fewer than two
    /// distinct times).
    pub fn median_delta(&self) -> Option<f64> {
        let d = self.devices.values().max_by_key(|d| d.rows.len())?;
        let mut deltas: Vec<f64> = d
            .rows
            .windows(2)
            .map(|w| w[1].0 - w[0].0)
            .filter(|x| *x > 0.0 && x.is_finite())
            .collect();
        crate::stats::select(&mut deltas, 0.5)
    }

    /// The recording: `t` shifted so the first sample is 0, capabilities from the columns.
    /// `source` is `dmon` or `csv`; `missing` says why a metric without a column is absent.
    pub fn into_recording(self, source: &str, interval_s: f64, missing: &str) -> Recording {
        let t0 = self
            .devices
            .values()
            .filter_map(|d| d.rows.first().map(|r| r.0))
            .fold(f64::INFINITY, f64::min);
        let t0 = if t0.is_finite() { t0 } else { 0.0 };
        let t_end = self
            .devices
            .values()
            .filter_map(|d| d.rows.last().map(|r| r.0))
            .fold(t0, f64::max);
        let start_unix_ms = self
            .epoch_ms
            .map(|e| e + (t0 * 1000.0).round() as i64)
            .unwrap_or(0);
        let run = RunInfo {
            start_unix_ms,
            start: if self.epoch_ms.is_some() {
                rfc3339_utc(start_unix_ms)
            } else {
                String::new()
            },
            duration_s: t_end - t0,
            source: source.to_string(),
            complete: true,
            ended_by: Some(format!("imported from {source} log")),
            interval_s,
            ..Default::default()
        };
        // Logs of days at 1 s fit the default full-resolution window several times over;
        // longer ones coarsen exactly like a live recording.
        let mut rec = Recording::new(run);
        for (_, d) in self.devices {
            let mut info = d.info;
            // Health readings were taken on the log's clock, like the rows.
            for r in info.health.iter_mut().flat_map(|h| h.readings.iter_mut()) {
                r.t_s -= t0;
            }
            for m in GpuMetric::ALL {
                let cap = if !self.columns[m.index()] {
                    Capability::unavailable(missing)
                } else if d.seen[m.index()] {
                    Capability::available()
                } else {
                    Capability::unavailable(
                        "the log has this column but never a value for this GPU \
                         ('-', N/A or [Not Supported]): the GPU or driver does not report it",
                    )
                };
                info.capabilities.insert(m.name().to_string(), cap);
            }
            let pos = rec.add_device(info);
            for (t, row) in &d.rows {
                rec.push_gpu(pos, t - t0, row);
            }
        }
        if rec.devices.is_empty() {
            rec.gpu_absent_reason = Some(format!("the {source} log holds no sample rows"));
        }
        rec
    }
}

/// Most line numbers a note about skipped lines lists.
const LISTED_LINES: usize = 5;

/// Damaged or elided lines in the middle of a log (a `...` where a post shortened it, a row
/// cut short by a copy, a value that is not a number), read past rather than refusing the
/// whole log. A log where at least as many lines are damaged as read is refused: it is not
/// a log of this kind, or too little of it is left to diagnose.
#[derive(Debug, Default)]
pub(crate) struct Skipped {
    /// `(line, why)` of the first damaged line, for the refusal's message.
    first: Option<(usize, String)>,
    lines: Vec<usize>,
    count: usize,
}

impl Skipped {
    /// Reads past line `n` of `text`, damaged for the reason `why`.
    pub fn skip(&mut self, n: usize, text: &str, why: String) {
        if self.first.is_none() {
            let shown: String = text.trim().chars().take(40).collect();
            self.first = Some((n, format!("{why} (the line reads `{shown}`)")));
        }
        if self.lines.len() < LISTED_LINES {
            self.lines.push(n);
        }
        self.count += 1;
    }

    /// With `read` rows read: the note saying what was skipped, or the refusal when the
    /// damaged lines are as many as the rows read (`kind` names the log in the message).
    pub fn finish(
        self,
        opts: &super::ImportOptions,
        read: usize,
        kind: &str,
        notes: &mut Vec<String>,
    ) -> crate::Result<()> {
        let Some((n, why)) = self.first else {
            return Ok(());
        };
        if self.count >= read {
            return Err(super::bad(
                opts,
                Some(n),
                &format!(
                    "{why}; {} of {} lines after the header are not {kind} rows, so this is not a {kind} log gpuwhy can read",
                    self.count,
                    self.count + read
                ),
            ));
        }
        let more = if self.count > self.lines.len() {
            ", …"
        } else {
            ""
        };
        let list: Vec<String> = self.lines.iter().map(|l| l.to_string()).collect();
        notes.push(format!(
            "{} damaged or elided line{} skipped (line{} {}{more}; first: line {n}: {why}); the rows around {} were read",
            self.count,
            if self.count == 1 { " was" } else { "s were" },
            if self.count == 1 { "" } else { "s" },
            list.join(", "),
            if self.count == 1 { "it" } else { "them" },
        ));
        Ok(())
    }
}

/// Fills the static facts `into` lacks from `from` (a later row or block of the same GPU):
/// the first value seen wins.
pub(crate) fn merge_info(into: &mut DeviceInfo, from: &DeviceInfo) {
    macro_rules! first {
        ($($f:ident),*) => { $( if into.$f.is_none() { into.$f = from.$f.clone(); } )* };
    }
    first!(
        name,
        architecture,
        uuid,
        pci_bus_id,
        memory_total_mib,
        power_limit_w,
        max_sm_clock_mhz,
        max_graphics_clock_mhz,
        max_mem_clock_mhz,
        pcie_max_gen,
        pcie_max_width,
        temp_slowdown_c,
        temp_shutdown_c,
        pcie_device_max_gen,
        pcie_device_max_width
    );
}

/// The sum of ECC counts over locations (the whole GPU where the log gives no total), each
/// count `None` where no location had it.
pub(crate) fn sum_ecc<'a>(
    counts: impl Iterator<Item = &'a crate::report::EccCounts>,
) -> crate::report::EccCounts {
    let add = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    };
    counts.fold(Default::default(), |s, c| crate::report::EccCounts {
        volatile_corrected: add(s.volatile_corrected, c.volatile_corrected),
        volatile_uncorrected: add(s.volatile_uncorrected, c.volatile_uncorrected),
        aggregate_corrected: add(s.aggregate_corrected, c.aggregate_corrected),
        aggregate_uncorrected: add(s.aggregate_uncorrected, c.aggregate_uncorrected),
    })
}

/// An empty sample row (every metric missing).
pub(crate) fn empty_row() -> [f32; GpuMetric::COUNT] {
    [f32::NAN; GpuMetric::COUNT]
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
pub(crate) fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Seconds since midnight of `HH:MM:SS[.fff]`.
pub(crate) fn parse_clock(s: &str) -> Option<f64> {
    let mut it = s.split(':');
    let h: u32 = it.next()?.parse().ok()?;
    let m: u32 = it.next()?.parse().ok()?;
    let sec: f64 = it.next()?.parse().ok()?;
    if it.next().is_some() || h > 23 || m > 59 || !(0.0..61.0).contains(&sec) {
        return None;
    }
    Some(f64::from(h * 3600 + m * 60) + sec)
}

/// Seconds since the Unix epoch of a date (`YYYYMMDD`, `YYYY/MM/DD` or `YYYY-MM-DD`), taken as
/// UTC: nvidia-smi prints local time without a zone. Years outside 1..=9999 are not dates
/// nvidia-smi prints (and would overflow the day count), so they are not dates.
pub(crate) fn parse_date(s: &str) -> Option<f64> {
    let (y, m, d) = if s.len() == 8 && s.bytes().all(|b| b.is_ascii_digit()) {
        (
            s[..4].parse().ok()?,
            s[4..6].parse().ok()?,
            s[6..].parse().ok()?,
        )
    } else {
        let mut it = s.split(['/', '-']);
        let y = it.next()?.parse().ok()?;
        let m = it.next()?.parse().ok()?;
        let d = it.next()?.parse().ok()?;
        if it.next().is_some() {
            return None;
        }
        (y, m, d)
    };
    if !(1..=9999).contains(&y) || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    Some(days_from_civil(y, m, d) as f64 * 86_400.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_clocks() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 2, 29), 11_016);
        assert_eq!(parse_date("20000229"), Some(11_016.0 * 86_400.0));
        assert_eq!(parse_date("2000/02/29"), parse_date("2000-02-29"));
        assert_eq!(parse_clock("01:02:03.5"), Some(3723.5));
        assert!(parse_clock("25:00:00").is_none() && parse_date("2000/13/01").is_none());
        // Found by the csv fuzz target: the day count overflowed i64.
        assert!(parse_date("49999999999999926/1/1").is_none());
        assert!(parse_date("-5/1/1").is_none() && parse_date("0000/01/01").is_none());
        assert!(parse_date("9999-12-31").is_some());
    }
}
