//! The stateful host sampler: turns `/proc`'s cumulative counters into per-interval rates.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::parse::{parse_diskstats, parse_meminfo, parse_proc_stat, parse_psi, ProcStat};
use super::process::TreeTracker;
use super::source::{ProcFs, ProcSource};

/// One host sample. Every value that could not be measured is NaN, never 0.
///
/// Rates cover the interval since the previous call of [`HostSampler::sample`]; on the first
/// call there is no interval yet, so every rate is NaN. Instantaneous values (memory, pressure,
/// process count) are valid from the first call.
#[derive(Debug, Clone, PartialEq)]
pub struct HostSample {
    /// Busy percentage (0–100) of each logical CPU over the interval, indexed by the kernel's
    /// CPU number (`cpuN` of `/proc/stat`); an offline CPU is NaN. Busy is everything but idle
    /// and iowait, so it includes steal time taken by a hypervisor.
    pub cpu_core_util: Vec<f32>,
    /// Busy percentage (0–100) of all CPUs together over the interval.
    pub cpu_total_util: f32,
    /// Percentage (0–100) of all CPU time over the interval spent idle waiting for I/O.
    pub cpu_iowait: f32,
    /// CPU used by the target process and all its descendants over the interval, in percent of
    /// one core (so 250 means two and a half cores). NaN without a target process.
    pub proc_tree_cpu: f32,
    /// Number of processes in the target's tree, the target included. NaN without a target.
    pub proc_tree_count: f32,
    /// Bytes per second read from whole physical disks (partitions and virtual devices are not
    /// counted, so nothing is counted twice).
    pub disk_read_bps: f32,
    /// Bytes per second written to whole physical disks.
    pub disk_write_bps: f32,
    /// Memory available for new work without swapping (`MemAvailable`), in bytes.
    pub mem_available_bytes: f32,
    /// Percentage of the last 10 s in which some runnable task waited for a CPU (PSI `cpu`).
    pub psi_cpu_some: f32,
    /// Percentage of the last 10 s in which some task was stalled on I/O (PSI `io`).
    pub psi_io_some: f32,
    /// Percentage of the last 10 s in which all non-idle tasks were stalled on I/O at once.
    pub psi_io_full: f32,
    /// Percentage of the last 10 s in which some task was stalled on memory (reclaim, swap-in).
    pub psi_mem_some: f32,
    /// Percentage of the last 10 s in which all non-idle tasks were stalled on memory at once.
    pub psi_mem_full: f32,
}

impl HostSample {
    fn missing() -> Self {
        Self {
            cpu_core_util: Vec::new(),
            cpu_total_util: f32::NAN,
            cpu_iowait: f32::NAN,
            proc_tree_cpu: f32::NAN,
            proc_tree_count: f32::NAN,
            disk_read_bps: f32::NAN,
            disk_write_bps: f32::NAN,
            mem_available_bytes: f32::NAN,
            psi_cpu_some: f32::NAN,
            psi_io_some: f32::NAN,
            psi_io_full: f32::NAN,
            psi_mem_some: f32::NAN,
            psi_mem_full: f32::NAN,
        }
    }
}

/// Every metric name [`HostSampler::unavailable`] may report: the field names of [`HostSample`].
const METRICS: [&str; 13] = [
    "cpu_core_util",
    "cpu_total_util",
    "cpu_iowait",
    "proc_tree_cpu",
    "proc_tree_count",
    "disk_read_bps",
    "disk_write_bps",
    "mem_available_bytes",
    "psi_cpu_some",
    "psi_io_some",
    "psi_io_full",
    "psi_mem_some",
    "psi_mem_full",
];

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
}

impl HostSampler {
    /// A sampler of the whole host and, when `target_pid` is given, of that process and all its
    /// descendants (the training job and its data-loader workers).
    pub fn new(target_pid: Option<u32>) -> Self {
        Self::with_ticks_per_second(target_pid, clock_ticks_per_second())
    }

    fn with_ticks_per_second(target_pid: Option<u32>, ticks_per_second: f64) -> Self {
        Self {
            ticks_per_second,
            tree: target_pid.map(TreeTracker::new),
            last_instant: None,
            prev_cpu: None,
            prev_disks: None,
            unavailable: Vec::new(),
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
        self.sample_with(&ProcFs, elapsed)
    }

    /// Samples `fs`, taking `elapsed` as the time since the previous call (tests inject both).
    /// A zero `elapsed` makes the per-second rates NaN.
    pub fn sample_with(&mut self, fs: &dyn ProcSource, elapsed: Duration) -> HostSample {
        let seconds = elapsed.as_secs_f64();
        let mut out = HostSample::missing();
        self.sample_cpu(fs, &mut out);
        self.sample_disks(fs, seconds, &mut out);
        self.sample_memory(fs, &mut out);
        self.sample_pressure(fs, &mut out);
        self.sample_tree(fs, seconds, &mut out);
        out
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

/// One PSI value of a [`HostSample`]: its metric name, which line of its file it comes from,
/// and the field it goes to.
struct PsiMetric {
    name: &'static str,
    full: bool,
    field: fn(&mut HostSample) -> &mut f32,
}

impl PsiMetric {
    const fn some(name: &'static str, field: fn(&mut HostSample) -> &mut f32) -> Self {
        Self {
            name,
            full: false,
            field,
        }
    }

    const fn full(name: &'static str, field: fn(&mut HostSample) -> &mut f32) -> Self {
        Self {
            name,
            full: true,
            field,
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
