//! A GPU's health counters, read at the start, about once a minute and at the stop of a
//! recording, never on the per-tick path: ECC errors in total and by memory location,
//! remapped rows, retired pages and NVLink error counters (docs/health.md).
//!
//! Each counter fails on its own, as the per-tick metrics do. One that the GPU or driver
//! does not have (NOT_SUPPORTED, a missing symbol, NO_PERMISSION) before it ever answered
//! is recorded once in [`DeviceHealth::unavailable`] with the reason and not asked again; a
//! transient error (or a refusal after it answered) leaves that counter out of that reading
//! and is counted as a fault; GPU_IS_LOST stops the GPU like any call that says so.

use crate::nvml::{
    Device, EccCounter, EccErrorType, NvlinkCounter, Nvml, NvmlError, RetirementCause,
    NVML_MEMORY_LOCATIONS,
};
use crate::report::{
    DeviceHealth, EccCounts, HealthReading, NvlinkErrors, RemappedRows, RetiredPages,
};

use super::gpu::{reason, Outcome};

/// Seconds between two health readings. Counters move over minutes to days; DCGM's health
/// watches poll them on the same order (docs/health.md), and a minute is enough to see a
/// corrected-error count rise during a run of any useful length.
pub const HEALTH_PERIOD_S: f64 = 60.0;

/// Most readings kept per GPU. A reading is a few hundred bytes, so this bounds a GPU's
/// health at ~50 KB for any run length; past it every second reading between the first
/// and the last is dropped, so the readings thin out evenly and the first stays.
pub const MAX_HEALTH_READINGS: usize = 128;

/// Names of the counters in [`DeviceHealth::unavailable`].
pub mod counter {
    /// `nvmlDeviceGetEccMode`.
    pub const ECC_MODE: &str = "ecc_mode";
    /// `nvmlDeviceGetTotalEccErrors`.
    pub const ECC: &str = "ecc";
    /// `nvmlDeviceGetMemoryErrorCounter`, when no location answers.
    pub const ECC_LOCATIONS: &str = "ecc_locations";
    /// `nvmlDeviceGetRemappedRows`.
    pub const REMAPPED_ROWS: &str = "remapped_rows";
    /// `nvmlDeviceGetRetiredPages`.
    pub const RETIRED_PAGES: &str = "retired_pages";
    /// `nvmlDeviceGetRetiredPagesPendingStatus`.
    pub const RETIRED_PAGES_PENDING: &str = "retired_pages_pending";
    /// `nvmlDeviceGetNvLinkErrorCounter`, when no link answers.
    pub const NVLINK_ERRORS: &str = "nvlink_errors";
}

/// One GPU's health as read so far, and which counters are no longer asked for.
#[derive(Debug, Clone, Default)]
pub struct HealthWatch {
    /// What the report gets.
    pub health: DeviceHealth,
    /// NVLinks to sum over (0: none, and no NVLink reading).
    links: u32,
    /// Memory locations that answered "not supported" once.
    locations_off: [bool; NVML_MEMORY_LOCATIONS.len()],
    /// The GPU was lost: no more health reads.
    gone: bool,
    /// Counters that answered at least once.
    seen: std::collections::BTreeSet<&'static str>,
}

/// The four counts of one location through `get(type, counter)`.
fn ecc_counts(mut get: impl FnMut(EccErrorType, EccCounter) -> Option<u64>) -> EccCounts {
    EccCounts {
        volatile_corrected: get(EccErrorType::Corrected, EccCounter::Volatile),
        volatile_uncorrected: get(EccErrorType::Uncorrected, EccCounter::Volatile),
        aggregate_corrected: get(EccErrorType::Corrected, EccCounter::Aggregate),
        aggregate_uncorrected: get(EccErrorType::Uncorrected, EccCounter::Aggregate),
    }
}

impl HealthWatch {
    /// A GPU with `links` NVLinks (`None` when the count could not be read).
    pub fn new(links: Option<u32>) -> Self {
        HealthWatch {
            links: links.unwrap_or(0),
            ..Default::default()
        }
    }

    /// Reads every counter still asked for, at report time `t`, and keeps the reading; the
    /// ECC mode is read until it answers once. Returns the transient errors, to be counted
    /// as faults, and a lost GPU.
    pub fn read(&mut self, nvml: &Nvml, h: Device, t: f64) -> Vec<Outcome> {
        let mut out = Vec::new();
        if self.gone {
            return out;
        }
        if self.health.ecc_enabled.is_none() {
            let mode = self.get(counter::ECC_MODE, &mut out, || nvml.ecc_mode(h));
            if let Some((current, pending)) = mode {
                self.health.ecc_enabled = Some(current);
                self.health.ecc_pending_enabled = Some(pending);
            }
        }
        let reading = HealthReading {
            t_s: t,
            ecc: self.read_ecc(nvml, h, &mut out),
            ecc_locations: self.read_locations(nvml, h, &mut out),
            remapped_rows: self.read_remap(nvml, h, &mut out),
            retired_pages: self.read_retired(nvml, h, &mut out),
            nvlink_errors: self.read_nvlink(nvml, h, &mut out),
        };
        if !self.gone {
            self.keep(reading);
        }
        out
    }

    /// Appends `r`, thinning the middle readings when the bound is reached.
    fn keep(&mut self, r: HealthReading) {
        let readings = &mut self.health.readings;
        readings.push(r);
        if readings.len() > MAX_HEALTH_READINGS {
            let last = readings.len() - 1;
            let mut i = 0;
            readings.retain(|_| {
                let keep = i == 0 || i == last || i % 2 == 0;
                i += 1;
                keep
            });
        }
    }

    /// One call for counter `key`, unless it is off; decides what its failure means.
    fn get<T>(
        &mut self,
        key: &'static str,
        out: &mut Vec<Outcome>,
        call: impl FnOnce() -> Result<T, NvmlError>,
    ) -> Option<T> {
        if self.gone || self.health.unavailable.contains_key(key) {
            return None;
        }
        match call() {
            Ok(v) => {
                self.seen.insert(key);
                Some(v)
            }
            Err(e) => {
                self.failed(Some(key), e, out);
                None
            }
        }
    }

    /// What a failed call means: the counter `key` is off for good (a refusal before it
    /// ever answered), the GPU is lost, or a fault to count.
    fn failed(&mut self, key: Option<&'static str>, e: NvmlError, out: &mut Vec<Outcome>) {
        if e.is_gpu_lost() {
            self.gone = true;
            out.push(Outcome::Lost(e));
            return;
        }
        match key.filter(|k| e.is_unavailable() && !self.seen.contains(k)) {
            Some(k) => {
                self.health.unavailable.insert(k.to_string(), reason(&e));
            }
            None => out.push(Outcome::Transient(e)),
        }
    }

    fn read_ecc(&mut self, nvml: &Nvml, h: Device, out: &mut Vec<Outcome>) -> EccCounts {
        ecc_counts(|kind, c| self.get(counter::ECC, out, || nvml.total_ecc_errors(h, kind, c)))
    }

    /// Per location: a location whose first call is "not supported" is skipped for good;
    /// when every location is, the whole counter is off.
    fn read_locations(
        &mut self,
        nvml: &Nvml,
        h: Device,
        out: &mut Vec<Outcome>,
    ) -> std::collections::BTreeMap<String, EccCounts> {
        let mut by = std::collections::BTreeMap::new();
        if self.gone || self.health.unavailable.contains_key(counter::ECC_LOCATIONS) {
            return by;
        }
        let mut last_off = None;
        for (i, (_, loc, name)) in NVML_MEMORY_LOCATIONS.iter().enumerate() {
            if self.locations_off[i] || self.gone {
                continue;
            }
            let mut off = false;
            let counts = ecc_counts(|kind, c| {
                if off || self.gone {
                    return None;
                }
                match nvml.memory_error_counter(h, kind, c, *loc) {
                    Ok(v) => Some(v),
                    Err(e) if e.is_unavailable() => {
                        off = true;
                        last_off = Some(e);
                        None
                    }
                    Err(e) => {
                        self.failed(None, e, out);
                        None
                    }
                }
            });
            self.locations_off[i] = off && counts.is_empty();
            if !counts.is_empty() {
                by.insert((*name).to_string(), counts);
            }
        }
        if let (true, Some(e)) = (self.locations_off.iter().all(|o| *o), last_off) {
            self.health
                .unavailable
                .insert(counter::ECC_LOCATIONS.into(), reason(&e));
        }
        by
    }

    fn read_remap(
        &mut self,
        nvml: &Nvml,
        h: Device,
        out: &mut Vec<Outcome>,
    ) -> Option<RemappedRows> {
        let r = self.get(counter::REMAPPED_ROWS, out, || nvml.remapped_rows(h))?;
        Some(RemappedRows {
            correctable: Some(u64::from(r.correctable)),
            uncorrectable: Some(u64::from(r.uncorrectable)),
            pending: Some(r.pending),
            failure: Some(r.failure),
        })
    }

    fn read_retired(
        &mut self,
        nvml: &Nvml,
        h: Device,
        out: &mut Vec<Outcome>,
    ) -> Option<RetiredPages> {
        let key = counter::RETIRED_PAGES;
        let single = self.get(key, out, || {
            nvml.retired_pages(h, RetirementCause::MultipleSingleBit)
        });
        let double = self.get(key, out, || {
            nvml.retired_pages(h, RetirementCause::DoubleBit)
        });
        let pending = self.get(counter::RETIRED_PAGES_PENDING, out, || {
            nvml.retired_pages_pending(h)
        });
        let r = RetiredPages {
            single_bit: single.map(u64::from),
            double_bit: double.map(u64::from),
            pending,
        };
        (r != RetiredPages::default()).then_some(r)
    }

    /// Each counter summed over the links that answer; a link that does not (not trained,
    /// not supported) is left out of that sum.
    fn read_nvlink(
        &mut self,
        nvml: &Nvml,
        h: Device,
        out: &mut Vec<Outcome>,
    ) -> Option<NvlinkErrors> {
        if self.links == 0
            || self.gone
            || self.health.unavailable.contains_key(counter::NVLINK_ERRORS)
        {
            return None;
        }
        let mut last_off = None;
        let links = self.links.min(crate::nvml::NVML_NVLINK_MAX_LINKS);
        let mut sum = |c: NvlinkCounter, this: &mut Self| -> Option<u64> {
            let mut total: Option<u64> = None;
            for link in 0..links {
                if this.gone {
                    break;
                }
                match nvml.nvlink_error_counter(h, link, c) {
                    Ok(v) => total = Some(total.unwrap_or(0).saturating_add(v)),
                    Err(e)
                        if e.is_unavailable() || e.code == crate::nvml::codes::INVALID_ARGUMENT =>
                    {
                        last_off = Some(e);
                    }
                    Err(e) => this.failed(None, e, out),
                }
            }
            total
        };
        let r = NvlinkErrors {
            crc_flit: sum(NvlinkCounter::CrcFlit, self),
            crc_data: sum(NvlinkCounter::CrcData, self),
            replay: sum(NvlinkCounter::Replay, self),
            recovery: sum(NvlinkCounter::Recovery, self),
        };
        if r == NvlinkErrors::default() {
            if let Some(e) = last_off {
                self.health
                    .unavailable
                    .insert(counter::NVLINK_ERRORS.into(), reason(&e));
            }
            return None;
        }
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_stay_bounded_keeping_the_first_and_the_last() {
        let mut w = HealthWatch::new(None);
        for i in 0..1000 {
            w.keep(HealthReading {
                t_s: f64::from(i) * 60.0,
                ..Default::default()
            });
            assert!(w.health.readings.len() <= MAX_HEALTH_READINGS);
        }
        let t: Vec<f64> = w.health.readings.iter().map(|r| r.t_s).collect();
        assert_eq!(t.first(), Some(&0.0));
        assert_eq!(t.last(), Some(&(999.0 * 60.0)));
        assert!(t.windows(2).all(|p| p[0] < p[1]), "in time order");
        assert!(
            t.len() >= MAX_HEALTH_READINGS / 2,
            "thinned, not emptied: {}",
            t.len()
        );
    }
}
