//! Static facts about the host, read once per recording for the report's header
//! ([`HostFacts`], a type of the report model).

use std::num::NonZeroUsize;

use super::parse::{parse_cpuinfo, parse_meminfo, parse_proc_stat};
use super::source::{ProcFs, ProcSource};
use crate::report::HostFacts;

/// Facts about this machine, read from the real `/proc`.
pub fn host_facts() -> HostFacts {
    host_facts_from(&ProcFs)
}

/// Facts about the machine whose `/proc` is `fs`.
pub fn host_facts_from(fs: &dyn ProcSource) -> HostFacts {
    let line = |path: &str| {
        fs.read(path)
            .map(|text| text.trim().to_owned())
            .unwrap_or_default()
    };
    let cpu = fs
        .read("/proc/cpuinfo")
        .map(|text| parse_cpuinfo(&text))
        .unwrap_or_default();
    let mem_total = fs
        .read("/proc/meminfo")
        .ok()
        .and_then(|text| parse_meminfo(&text).total);
    HostFacts {
        hostname: line("/proc/sys/kernel/hostname"),
        kernel: line("/proc/sys/kernel/osrelease"),
        cpu_model: cpu.model.unwrap_or_default(),
        logical_cpus: logical_cpus_from(fs),
        physical_cores: cpu.physical_cores,
        mem_total_bytes: mem_total.unwrap_or(0),
    }
}

/// Logical CPUs online on this machine: the `cpuN` lines of `/proc/stat`, so it always equals
/// the length of [`HostSample::cpu_core_util`](super::HostSample::cpu_core_util) unless CPUs
/// have gaps in their numbering.
///
/// This counts the machine, not this process's share of it: a job restricted by CPU affinity
/// or a cgroup may use fewer (see [`std::thread::available_parallelism`], which is also the
/// fallback where `/proc/stat` cannot be read). Never 0.
pub fn cpu_count_logical() -> usize {
    logical_cpus_from(&ProcFs)
}

fn logical_cpus_from(fs: &dyn ProcSource) -> usize {
    let from_stat = fs
        .read("/proc/stat")
        .map(|text| parse_proc_stat(&text).cores.len())
        .unwrap_or(0);
    if from_stat > 0 {
        return from_stat;
    }
    std::thread::available_parallelism().map_or(1, NonZeroUsize::get)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::host::MemProc;

    #[test]
    fn facts_from_a_fixture() {
        let fs = MemProc::new()
            .with("/proc/sys/kernel/hostname", "node-7\n")
            .with("/proc/sys/kernel/osrelease", "6.8.0-45-generic\n")
            .with(
                "/proc/cpuinfo",
                "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\nphysical id\t: 0\n\
                 core id\t\t: 0\n\nprocessor\t: 1\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n\
                 physical id\t: 0\ncore id\t\t: 0\n",
            )
            .with("/proc/meminfo", "MemTotal:       2048 kB\n")
            .with("/proc/stat", "cpu 1 1 1 1\ncpu0 1 1 1 1\ncpu1 0 0 0 0\n");
        let facts = host_facts_from(&fs);
        assert_eq!(
            facts,
            HostFacts {
                hostname: "node-7".into(),
                kernel: "6.8.0-45-generic".into(),
                cpu_model: "Intel(R) Xeon(R) Platinum 8480+".into(),
                logical_cpus: 2,
                physical_cores: Some(1),
                mem_total_bytes: 2048 * 1024,
            }
        );
        let json = serde_json::to_string(&facts).unwrap();
        let back: HostFacts = serde_json::from_str(&json).unwrap();
        assert_eq!(back, facts);
    }

    #[test]
    fn facts_of_an_empty_proc_are_empty_not_a_failure() {
        let facts = host_facts_from(&MemProc::new());
        assert_eq!(facts.hostname, "");
        assert_eq!(facts.physical_cores, None);
        assert_eq!(facts.mem_total_bytes, 0);
        assert!(facts.logical_cpus >= 1);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn facts_of_this_machine() {
        let facts = host_facts();
        assert!(!facts.kernel.is_empty());
        assert!(facts.mem_total_bytes > 0);
        assert_eq!(facts.logical_cpus, cpu_count_logical());
    }
}
