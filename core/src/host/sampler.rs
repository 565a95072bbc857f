//! The stateful host sampler: turns `/proc`'s cumulative counters into per-interval rates.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::open::OpenProcFs;
use super::parse::{parse_diskstats, parse_meminfo, parse_proc_stat, parse_psi, ProcStat};
use super::process::TreeTracker;
use super::source::{ProcFs, ProcSource};

mod sample;

pub use sample::HostSample;
use sample::{PsiMetric, METRICS};

/// The slow-moving host data — disk throughput, pressure and the process tree — is read on
/// every `SLOW_EVERY`-th sample, and its last values are repeated in the samples between
/// (CPU and memory are read every sample). Pressure is already a 10 s average (`avg10`), disk
/// rates then cover the samples since the last read, and the tree's CPU likewise; at the
/// sampler's 0.5 s host period this is every 2 s (docs/architecture.md, "The sampler").
pub const SLOW_EVERY: u32 = 4;

/// Why a missing PSI file is missing, in words a user can act on.
const PSI_HINT: &str = "pressure stall information needs Linux 4.20+ built with CONFIG_PSI \
                        (and the psi=1 boot option where the kernel disables it by default)";

/// Samples the host from `/proc`, keeping the previous counters to compute rates.
///
/// It never fails as a whole and never panics: a file that cannot be read makes its fields NaN
/// and is recorded once in [`unavailable`](Self::unavailable). It is cheap enough to call once
/// a second; the process tree costs one scan of all of `/proc` every
/// [`TREE_RESCAN_EVERY`](super::TREE_RESCAN_EVERY) calls and a few small reads otherwise.
#[derive(Debug, Clone)]
pub struct HostSampler {
    /// `USER_HZ`: the clock ticks per second of `/proc/<pid>/stat` times.
    ticks_per_second: f64,
    tree: Option<TreeTracker>,
    last_instant: Option<Instant>,
    prev_cpu: Option<ProcStat>,
    /// Disk name → cumulative (bytes read, bytes written).
    prev_disks: Option<HashMap<String, (u64, u64)>>,
    unavailable: Vec<(&'static str, String)>,
    /// Read the slow-moving data on every this many samples ([`SLOW_EVERY`]).
    slow_every: u32,
    /// Samples taken so far.
    calls: u64,
    /// Time since the slow-moving data was last read, for its rates.
    slow_elapsed: Duration,
    /// The slow-moving values last read, repeated until the next read.
    held: HostSample,
    /// The real `/proc`, its host-wide files kept open (`None`: opened per read).
    files: Option<OpenProcFs>,
}

impl HostSampler {
    /// A sampler of the whole host and, when `target_pid` is given, of that process and all its
    /// descendants (the training job and its data-loader workers).
    pub fn new(target_pid: Option<u32>) -> Self {
        Self::with_cadence(target_pid, SLOW_EVERY, true)
    }

    /// [`HostSampler::new`] reading the slow-moving data every `slow_every` samples (at
    /// least one) and keeping the host-wide `/proc` files open or not. Every sample with no
    /// file kept open is how the host was sampled before either saving, the baseline of
    /// `cargo xtask bench`.
    pub fn with_cadence(target_pid: Option<u32>, slow_every: u32, keep_open: bool) -> Self {
        let mut s = Self::with_ticks_per_second(target_pid, clock_ticks_per_second());
        s.slow_every = slow_every.max(1);
        s.files = keep_open.then(OpenProcFs::default);
        s
    }

    fn with_ticks_per_second(target_pid: Option<u32>, ticks_per_second: f64) -> Self {
        Self {
            ticks_per_second,
            tree: target_pid.map(TreeTracker::new),
            last_instant: None,
            prev_cpu: None,
            prev_disks: None,
            unavailable: Vec::new(),
            slow_every: 1,
            calls: 0,
            slow_elapsed: Duration::ZERO,
            held: HostSample::missing(),
            files: None,
        }
    }

    /// Samples the real `/proc`; rates cover the time since the previous call, measured with
    /// [`Instant`]. On operating systems other than Linux every field is NaN.
    pub fn sample(&mut self) -> HostSample {
        if !cfg!(target_os = "linux") {
            self.mark(
                &METRICS,
                "not Linux: host sampling reads /proc, which only Linux has",
            );
            return HostSample::missing();
        }
        let now = Instant::now();
        let elapsed = self
            .last_instant
            .map_or(Duration::ZERO, |last| now.saturating_duration_since(last));
        self.last_instant = Some(now);
        match self.files.take() {
            Some(files) => {
                let s = self.sample_with(&files, elapsed);
                self.files = Some(files);
                s
            }
            None => self.sample_with(&ProcFs, elapsed),
        }
    }

    /// Samples `fs`, taking `elapsed` as the time since the previous call (tests inject both).
    /// A zero `elapsed` makes the per-second rates NaN.
    ///
    /// The slow-moving data is read on the first call and every [`SLOW_EVERY`]-th after it
    /// (as configured), its rates over the time since its last read; the calls between repeat
    /// its last values.
    pub fn sample_with(&mut self, fs: &dyn ProcSource, elapsed: Duration) -> HostSample {
        let mut out = HostSample::missing();
        self.slow_elapsed += elapsed;
        let slow = self.calls % u64::from(self.slow_every) == 0;
        self.calls += 1;
        let seconds = if slow {
            std::mem::take(&mut self.slow_elapsed).as_secs_f64()
        } else {
            0.0
        };
        self.sample_cpu(fs, &mut out);
        if slow {
            self.sample_disks(fs, seconds, &mut out);
        }
        self.sample_memory(fs, &mut out);
        if slow {
            self.sample_pressure(fs, &mut out);
            self.sample_tree(fs, seconds, &mut out);
            self.held = out.clone();
        } else {
            self.hold(&mut out);
        }
        out
    }

    /// Copies the slow-moving values last read into `out`.
    fn hold(&self, out: &mut HostSample) {
        let h = &self.held;
        out.disk_read_bps = h.disk_read_bps;
        out.disk_write_bps = h.disk_write_bps;
        out.psi_cpu_some = h.psi_cpu_some;
        out.psi_io_some = h.psi_io_some;
        out.psi_io_full = h.psi_io_full;
        out.psi_mem_some = h.psi_mem_some;
        out.psi_mem_full = h.psi_mem_full;
        out.proc_tree_cpu = h.proc_tree_cpu;
        out.proc_tree_count = h.proc_tree_count;
    }

    /// Metrics that were missing at least once, each with the first reason, in the order they
    /// were first missed. Metric names are [`HostSample`]'s field names.
    pub fn unavailable(&self) -> &[(&'static str, String)] {
        &self.unavailable
    }

    /// Records `why` for each metric that has no reason yet.
    fn mark(&mut self, metrics: &[&'static str], why: impl Into<String>) {
        let why = why.into();
        for &metric in metrics {
            if !self.unavailable.iter().any(|(m, _)| *m == metric) {
                self.unavailable.push((metric, why.clone()));
            }
        }
    }

    fn sample_cpu(&mut self, fs: &dyn ProcSource, out: &mut HostSample) {
        const ALL: [&str; 3] = ["cpu_core_util", "cpu_total_util", "cpu_iowait"];
        let stat = match fs.read("/proc/stat") {
            Ok(text) => parse_proc_stat(&text),
            Err(e) => {
                self.mark(&ALL, format!("cannot read /proc/stat: {e}"));
                self.prev_cpu = None;
                return;
            }
        };
        if stat.total.is_none() {
            self.mark(&ALL[1..], "/proc/stat has no aggregate cpu line");
        }
        if stat.cores.is_empty() {
            self.mark(&ALL[..1], "/proc/stat has no cpuN lines");
        }
        let cores = stat.cores.iter().map(|&(n, _)| n + 1).max().unwrap_or(0);
        out.cpu_core_util = vec![f32::NAN; cores];
        if let Some(prev) = &self.prev_cpu {
            if let (Some(cur), Some(before)) = (&stat.total, &prev.total) {
                out.cpu_total_util = cur.busy_percent_since(before);
                out.cpu_iowait = cur.iowait_percent_since(before);
            }
            for (n, cur) in &stat.cores {
                let before = prev.cores.iter().find(|(m, _)| m == n);
                if let (Some((_, before)), Some(slot)) = (before, out.cpu_core_util.get_mut(*n)) {
                    *slot = cur.busy_percent_since(before);
                }
            }
        }
        self.prev_cpu = Some(stat);
    }

    fn sample_disks(&mut self, fs: &dyn ProcSource, seconds: f64, out: &mut HostSample) {
        const ALL: [&str; 2] = ["disk_read_bps", "disk_write_bps"];
        let disks = match fs.read("/proc/diskstats") {
            Ok(text) => parse_diskstats(&text),
            Err(e) => {
                self.mark(&ALL, format!("cannot read /proc/diskstats: {e}"));
                self.prev_disks = None;
                return;
            }
        };
        if disks.is_empty() {
            self.mark(&ALL, "/proc/diskstats lists no physical disk");
            self.prev_disks = None;
            return;
        }
        let now: HashMap<String, (u64, u64)> = disks
            .into_iter()
            .map(|d| (d.name, (d.read, d.written)))
            .collect();
        if let Some(prev) = self.prev_disks.as_ref().filter(|_| seconds > 0.0) {
            let (mut read, mut written) = (0u64, 0u64);
            for (name, &(r, w)) in &now {
                // A disk that appeared since the last call has no interval yet; one whose
                // counters went backwards was reset (removed and re-added) and is skipped too.
                match prev.get(name) {
                    Some(&(pr, pw)) if r >= pr && w >= pw => {
                        read = read.saturating_add(r - pr);
                        written = written.saturating_add(w - pw);
                    }
                    _ => {}
                }
            }
            out.disk_read_bps = (read as f64 / seconds) as f32;
            out.disk_write_bps = (written as f64 / seconds) as f32;
        }
        self.prev_disks = Some(now);
    }

    fn sample_memory(&mut self, fs: &dyn ProcSource, out: &mut HostSample) {
        const METRIC: [&str; 1] = ["mem_available_bytes"];
        match fs.read("/proc/meminfo").map(|text| parse_meminfo(&text)) {
            Ok(info) => match info.available {
                Some(bytes) => out.mem_available_bytes = bytes as f32,
                None => self.mark(
                    &METRIC,
                    "/proc/meminfo has no MemAvailable (Linux before 3.14 does not report it)",
                ),
            },
            Err(e) => self.mark(&METRIC, format!("cannot read /proc/meminfo: {e}")),
        }
    }

    fn sample_pressure(&mut self, fs: &dyn ProcSource, out: &mut HostSample) {
        // The kernel's cpu file had only a "some" line before 5.13, and its "full" line is
        // not a useful signal for a training host, so only "some" is read there.
        let files: [(&str, &[PsiMetric]); 3] = [
            (
                "/proc/pressure/cpu",
                &[PsiMetric::some("psi_cpu_some", |s| &mut s.psi_cpu_some)],
            ),
            (
                "/proc/pressure/io",
                &[
                    PsiMetric::some("psi_io_some", |s| &mut s.psi_io_some),
                    PsiMetric::full("psi_io_full", |s| &mut s.psi_io_full),
                ],
            ),
            (
                "/proc/pressure/memory",
                &[
                    PsiMetric::some("psi_mem_some", |s| &mut s.psi_mem_some),
                    PsiMetric::full("psi_mem_full", |s| &mut s.psi_mem_full),
                ],
            ),
        ];
        for (path, metrics) in files {
            let psi = match fs.read(path) {
                Ok(text) => parse_psi(&text),
                Err(e) => {
                    let names: Vec<&'static str> = metrics.iter().map(|m| m.name).collect();
                    self.mark(&names, format!("cannot read {path}: {e}; {PSI_HINT}"));
                    continue;
                }
            };
            for metric in metrics {
                let (value, line) = if metric.full {
                    (psi.full_avg10, "full")
                } else {
                    (psi.some_avg10, "some")
                };
                match value {
                    Some(v) => *(metric.field)(out) = v,
                    None => self.mark(
                        &[metric.name],
                        format!("{path} has no '{line} avg10=' line"),
                    ),
                }
            }
        }
    }

    fn sample_tree(&mut self, fs: &dyn ProcSource, seconds: f64, out: &mut HostSample) {
        let Some(tree) = self.tree.as_mut() else {
            return;
        };
        match tree.read(fs) {
            Ok(reading) => {
                out.proc_tree_count = reading.count as f32;
                if let Some(ticks) = reading.ticks_delta.filter(|_| seconds > 0.0) {
                    let cpu_seconds = ticks as f64 / self.ticks_per_second;
                    out.proc_tree_cpu = (100.0 * cpu_seconds / seconds) as f32;
                }
            }
            Err(why) => self.mark(&["proc_tree_cpu", "proc_tree_count"], why),
        }
    }
}

/// `USER_HZ`, the unit of the times in `/proc/<pid>/stat`.
fn clock_ticks_per_second() -> f64 {
    crate::os::clock_ticks_per_second()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
