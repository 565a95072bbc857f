//! Pure parsers for the system-wide `/proc` files the host sampler reads. No I/O: each function
//! takes a file's text and returns what it understood, skipping lines it cannot parse, so one odd
//! line from a future kernel costs one value rather than the whole file.
//!
//! Per-process files (`/proc/<pid>/stat`) are parsed in the `process` module.

use std::collections::BTreeSet;

/// Cumulative time of one `cpu` line of `/proc/stat`, in clock ticks (`USER_HZ`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
    pub guest: u64,
    pub guest_nice: u64,
}

impl CpuTimes {
    /// All the time this CPU accounted for. `guest` and `guest_nice` are left out because the
    /// kernel already counts them inside `user` and `nice`.
    pub fn total(&self) -> u64 {
        [
            self.user,
            self.nice,
            self.system,
            self.idle,
            self.iowait,
            self.irq,
            self.softirq,
            self.steal,
        ]
        .iter()
        .fold(0u64, |sum, t| sum.saturating_add(*t))
    }

    /// Time the CPU had nothing to run: `idle` plus `iowait` (waiting for I/O is still idle).
    pub fn idle_all(&self) -> u64 {
        self.idle.saturating_add(self.iowait)
    }

    /// Percentage (0..=100) of the interval since `prev` that this CPU was busy; NaN when no
    /// tick passed. Counters that went backwards (the kernel's per-CPU `iowait` can) are clamped.
    pub fn busy_percent_since(&self, prev: &CpuTimes) -> f32 {
        let total = self.total().saturating_sub(prev.total());
        if total == 0 {
            return f32::NAN;
        }
        let idle = self.idle_all().saturating_sub(prev.idle_all()).min(total);
        (100.0 * (total - idle) as f64 / total as f64) as f32
    }

    /// Percentage (0..=100) of the interval since `prev` spent idle waiting for I/O; NaN when
    /// no tick passed.
    pub fn iowait_percent_since(&self, prev: &CpuTimes) -> f32 {
        let total = self.total().saturating_sub(prev.total());
        if total == 0 {
            return f32::NAN;
        }
        let iowait = self.iowait.saturating_sub(prev.iowait).min(total);
        (100.0 * iowait as f64 / total as f64) as f32
    }
}

/// The `cpu` lines of `/proc/stat`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ProcStat {
    /// The aggregate `cpu` line, summed over all CPUs.
    pub total: Option<CpuTimes>,
    /// Each `cpuN` line as (N, times), in file order. Offline CPUs have no line.
    pub cores: Vec<(usize, CpuTimes)>,
}

/// CPU numbers at or above this are taken for corruption and their lines skipped, so that a bad
/// line cannot make the sampler allocate a per-core vector of billions of entries. Linux's own
/// ceiling (`CONFIG_NR_CPUS`) is 8192 on every architecture today.
const MAX_CPU_NUMBER: usize = 1 << 16;

/// Parses the `cpu` and `cpuN` lines of `/proc/stat`. A line needs at least the four fields
/// every kernel has (user nice system idle); fields that older kernels lack count as 0.
pub(crate) fn parse_proc_stat(text: &str) -> ProcStat {
    let mut stat = ProcStat::default();
    for line in text.lines() {
        let mut fields = line.split_ascii_whitespace();
        let Some(suffix) = fields.next().and_then(|label| label.strip_prefix("cpu")) else {
            continue;
        };
        let Some(times) = parse_cpu_times(fields) else {
            continue;
        };
        if suffix.is_empty() {
            stat.total = Some(times);
        } else if let Some(n) = suffix.parse().ok().filter(|&n| n < MAX_CPU_NUMBER) {
            stat.cores.push((n, times));
        }
    }
    stat
}

fn parse_cpu_times<'a>(fields: impl Iterator<Item = &'a str>) -> Option<CpuTimes> {
    let mut v = [0u64; 10];
    let mut n = 0;
    for (slot, field) in v.iter_mut().zip(fields) {
        *slot = field.parse().ok()?;
        n += 1;
    }
    if n < 4 {
        return None;
    }
    let [user, nice, system, idle, iowait, irq, softirq, steal, guest, guest_nice] = v;
    Some(CpuTimes {
        user,
        nice,
        system,
        idle,
        iowait,
        irq,
        softirq,
        steal,
        guest,
        guest_nice,
    })
}

/// What the sampler uses from `/proc/meminfo`, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct MemInfo {
    pub total: Option<u64>,
    /// Absent before Linux 3.14.
    pub available: Option<u64>,
}

/// Parses `MemTotal` and `MemAvailable` from `/proc/meminfo` (given in kB, returned in bytes).
pub(crate) fn parse_meminfo(text: &str) -> MemInfo {
    let mut info = MemInfo::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let slot = match key.trim() {
            "MemTotal" => &mut info.total,
            "MemAvailable" => &mut info.available,
            _ => continue,
        };
        let mut parts = value.split_ascii_whitespace();
        let Some(number) = parts.next().and_then(|n| n.parse::<u64>().ok()) else {
            continue;
        };
        // The kernel writes "kB" and means KiB.
        *slot = match parts.next() {
            Some("kB") => number.checked_mul(1024),
            None => Some(number),
            Some(_) => continue,
        };
    }
    info
}

/// Cumulative bytes read and written by one whole disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DiskBytes {
    pub name: String,
    pub read: u64,
    pub written: u64,
}

/// `/proc/diskstats` counts in 512-byte sectors whatever the device's real sector size.
const DISKSTATS_SECTOR_BYTES: u64 = 512;

/// Parses `/proc/diskstats`, keeping whole physical disks only.
///
/// Partitions are dropped because their parent disk already counts their traffic, and so are
/// virtual block devices (`loop*`, `ram*`, `zram*`, device-mapper `dm-*`, software RAID `mdN`):
/// they are either not disks at all or layered on disks that are already counted.
pub(crate) fn parse_diskstats(text: &str) -> Vec<DiskBytes> {
    let mut disks = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_ascii_whitespace().collect();
        // major minor name reads merged sectors_read ms writes merged sectors_written ...
        let (Some(name), Some(read), Some(written)) = (fields.get(2), fields.get(5), fields.get(9))
        else {
            continue;
        };
        let (Ok(read), Ok(written)) = (read.parse::<u64>(), written.parse::<u64>()) else {
            continue;
        };
        disks.push(DiskBytes {
            name: (*name).to_owned(),
            read: read.saturating_mul(DISKSTATS_SECTOR_BYTES),
            written: written.saturating_mul(DISKSTATS_SECTOR_BYTES),
        });
    }
    let names: Vec<String> = disks.iter().map(|d| d.name.clone()).collect();
    disks.retain(|d| {
        !is_virtual_disk(&d.name) && !names.iter().any(|parent| is_partition_of(&d.name, parent))
    });
    disks
}

fn is_virtual_disk(name: &str) -> bool {
    let md = name
        .strip_prefix("md")
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()));
    md || ["loop", "ram", "zram", "dm-"]
        .iter()
        .any(|prefix| name.starts_with(prefix))
}

/// `sda1` is a partition of `sda`; `nvme0n1p1` of `nvme0n1` (a parent whose name ends in a
/// digit separates the partition number with `p`, so `nvme0n12` is not a partition of `nvme0n1`).
fn is_partition_of(name: &str, parent: &str) -> bool {
    let Some(rest) = name.strip_prefix(parent) else {
        return false;
    };
    let number = if parent.ends_with(|c: char| c.is_ascii_digit()) {
        match rest.strip_prefix('p') {
            Some(number) => number,
            None => return false,
        }
    } else {
        rest
    };
    !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit())
}

/// The 10-second averages of one `/proc/pressure/*` file, in percent of wall time.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Psi {
    /// Share of time at least one task was stalled on the resource.
    pub some_avg10: Option<f32>,
    /// Share of time all non-idle tasks were stalled at once.
    pub full_avg10: Option<f32>,
}

/// Parses a pressure stall information file such as `/proc/pressure/io`.
pub(crate) fn parse_psi(text: &str) -> Psi {
    let mut psi = Psi::default();
    for line in text.lines() {
        let mut fields = line.split_ascii_whitespace();
        let slot = match fields.next() {
            Some("some") => &mut psi.some_avg10,
            Some("full") => &mut psi.full_avg10,
            _ => continue,
        };
        let avg10 = fields.find_map(|f| f.strip_prefix("avg10="));
        if let Some(value) = avg10.and_then(|v| v.parse::<f32>().ok()) {
            *slot = Some(value);
        }
    }
    psi
}

/// What host facts use from `/proc/cpuinfo`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CpuInfo {
    pub model: Option<String>,
    /// Distinct (physical id, core id) pairs; `None` where the kernel does not report them
    /// (most ARM machines, some VMs).
    pub physical_cores: Option<usize>,
}

/// Parses `/proc/cpuinfo`: one block per logical CPU, blocks separated by blank lines.
pub(crate) fn parse_cpuinfo(text: &str) -> CpuInfo {
    let mut model = None;
    let mut cores = BTreeSet::new();
    let (mut physical_id, mut core_id) = (None, None);
    for line in text.lines().chain(std::iter::once("")) {
        if line.trim().is_empty() {
            if let (Some(p), Some(c)) = (physical_id.take(), core_id.take()) {
                cores.insert((p, c));
            }
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match key.trim() {
            // "Processor" is what older ARM kernels call the model.
            "model name" | "Processor" if model.is_none() && !value.is_empty() => {
                model = Some(value.to_owned());
            }
            "physical id" => physical_id = value.parse::<u32>().ok(),
            "core id" => core_id = value.parse::<u32>().ok(),
            _ => {}
        }
    }
    CpuInfo {
        model,
        physical_cores: (!cores.is_empty()).then_some(cores.len()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
