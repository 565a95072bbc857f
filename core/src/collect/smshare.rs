//! Each process's share of a GPU's SM time, from the driver's per-process samples
//! (`nvmlDeviceGetProcessUtilization`): what a neighbour on the job's GPU takes from it
//! (`docs/job-gpus.md`, "Per-process SM share").
//!
//! The driver keeps a short ring of samples per GPU; each read asks only for those newer
//! than the last one seen, so every sample is counted once. A GPU that answers
//! NOT_SUPPORTED (MIG-enabled GPUs, older boards) is not asked again.

use std::collections::{BTreeMap, BTreeSet};

use crate::nvml::{Device, Nvml, ProcessUtilization};

use super::cost::CallStats;

/// Most (GPU, pid) sums kept, as [`super::MAX_SEEN`] for the process lists (~32 bytes each).
const MAX_PAIRS: usize = 1024;

/// The SM-share sums of the processes seen so far.
#[derive(Debug, Default)]
pub struct SmShares {
    /// (GPU, pid) → (sum of `smUtil` %, samples).
    sums: BTreeMap<(u32, u32), (f64, u32)>,
    /// Per GPU, the newest sample's timestamp, µs.
    since: BTreeMap<u32, u64>,
    /// GPUs whose driver cannot give per-process samples.
    unreadable: BTreeSet<u32>,
}

impl SmShares {
    /// Adds GPU `device`'s samples.
    pub fn observe(&mut self, device: u32, samples: &[ProcessUtilization]) {
        for s in samples {
            let newest = self.since.entry(device).or_insert(0);
            *newest = (*newest).max(s.timestamp_us);
            let key = (device, s.pid);
            if !self.sums.contains_key(&key) && self.sums.len() >= MAX_PAIRS {
                continue;
            }
            let e = self.sums.entry(key).or_insert((0.0, 0));
            e.0 += f64::from(s.sm_util);
            e.1 += 1;
        }
    }

    /// Reads GPU `device`'s (handle `h`) samples since the last read, once per slow tick.
    pub fn read(&mut self, nvml: &Nvml, device: u32, h: Device, stats: &mut CallStats) {
        if self.unreadable.contains(&device) {
            return;
        }
        let since = self.since.get(&device).copied().unwrap_or(0);
        match stats.time("nvmlDeviceGetProcessUtilization", || {
            nvml.process_utilization(h, since)
        }) {
            Ok(samples) => self.observe(device, &samples),
            Err(e) if e.is_unavailable() => {
                self.unreadable.insert(device);
            }
            // A transient failure: the next slow tick asks again from the same point.
            Err(_) => {}
        }
    }

    /// Process `pid`'s mean share of GPU `device`'s SM time, 0–1, over its samples.
    pub fn share(&self, device: u32, pid: u32) -> Option<f64> {
        self.sums
            .get(&(device, pid))
            .filter(|(_, n)| *n > 0)
            .map(|(sum, n)| (sum / f64::from(*n) / 100.0).clamp(0.0, 1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(pid: u32, t: u64, sm: u32) -> ProcessUtilization {
        ProcessUtilization {
            pid,
            timestamp_us: t,
            sm_util: sm,
            mem_util: 0,
        }
    }

    #[test]
    fn shares_are_the_mean_of_each_process_s_samples_per_gpu() {
        let mut s = SmShares::default();
        s.observe(0, &[at(7, 100, 30), at(8, 100, 60)]);
        s.observe(0, &[at(7, 200, 50)]);
        s.observe(1, &[at(7, 150, 10)]);
        assert_eq!(s.share(0, 7), Some(0.4));
        assert_eq!(s.share(0, 8), Some(0.6));
        assert_eq!(s.share(1, 7), Some(0.1));
        assert_eq!(s.share(1, 8), None, "no sample: unknown, not zero");
        assert_eq!(s.since.get(&0), Some(&200), "the next read starts after it");
    }
}
