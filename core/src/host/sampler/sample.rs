//! What one host sample holds, and the table of its pressure values.

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
    pub(super) fn missing() -> Self {
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
pub(super) const METRICS: [&str; 13] = [
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

/// One PSI value of a [`HostSample`]: its metric name, which line of its file it comes from,
/// and the field it goes to.
pub(super) struct PsiMetric {
    pub(super) name: &'static str,
    pub(super) full: bool,
    pub(super) field: fn(&mut HostSample) -> &mut f32,
}

impl PsiMetric {
    pub(super) const fn some(name: &'static str, field: fn(&mut HostSample) -> &mut f32) -> Self {
        Self {
            name,
            full: false,
            field,
        }
    }

    pub(super) const fn full(name: &'static str, field: fn(&mut HostSample) -> &mut f32) -> Self {
        Self {
            name,
            full: true,
            field,
        }
    }
}
