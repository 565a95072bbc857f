//! Watching the GPUs' compute-process lists during a recording, and telling which process is
//! the job's: the input of [`crate::jobgpus::decide`] (`docs/job-gpus.md`).
//!
//! A pid NVML lists is the job's when this machine's `/proc` shows it and its parent chain
//! reaches the recorded root process, or when it is one of the ids (`NSpid`, one per PID
//! namespace) of a process of the root's tree. Each pid is classified once, when first
//! seen; the lists are read every slow tick, so a process that lives less than a second may
//! be missed.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::RecorderConfig;
use crate::host::{parse_pid_stat, tree_of, ProcSource};
use crate::jobgpus::{decide, parse_gpus, Gpu, Inputs, JobEnv, Owner, Seen};
use crate::nvml::ProcessInfo;
use crate::report::{DeviceInfo, JobGpus};

/// Most (GPU, pid) pairs kept: about 100 bytes each, so at most ~100 KiB. Pairs beyond it
/// are not recorded (a node where thousands of processes come and go on the GPUs).
pub const MAX_SEEN: usize = 1024;
/// Longest parent chain followed from a pid towards the root.
const MAX_DEPTH: usize = 256;

/// The processes seen on each GPU, with their owners.
#[derive(Debug, Default)]
pub struct ProcWatch {
    root: Option<u32>,
    owners: HashMap<u32, (Owner, Option<String>)>,
    seen: BTreeMap<(u32, u32), Seen>,
    /// GPUs whose process list cannot be read, and why.
    unreadable: BTreeMap<u32, String>,
    /// Each process's share of SM time, where the driver gives it.
    pub(super) sm: super::smshare::SmShares,
    /// The `/proc` of NVML's PID namespace, when it is not this one (`nsmap.rs`).
    ns: Option<super::nsmap::NsMap>,
}

/// Parses the `NSpid:` line of `/proc/<pid>/status`: the process's id in each PID namespace
/// it belongs to, from this `/proc`'s namespace inwards.
pub fn parse_nspid(status: &str) -> Vec<u32> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("NSpid:"))
        .map(|rest| {
            rest.split_ascii_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

fn ppid(fs: &dyn ProcSource, pid: u32) -> Option<u32> {
    let text = fs.read(&format!("/proc/{pid}/stat")).ok()?;
    parse_pid_stat(&text)
        .filter(|s| s.pid == pid)
        .map(|s| s.ppid)
}

fn comm(fs: &dyn ProcSource, pid: u32) -> Option<String> {
    fs.read(&format!("/proc/{pid}/comm"))
        .ok()
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
}

/// Whose `pid` is when this `/proc` shows it (its parent chain reaches `root` or not);
/// `None` when it does not.
fn direct(fs: &dyn ProcSource, root: Option<u32>, pid: u32) -> Option<Owner> {
    ppid(fs, pid)?;
    let Some(root) = root else {
        return Some(Owner::Other);
    };
    let mut at = pid;
    for _ in 0..MAX_DEPTH {
        if at == root {
            return Some(Owner::Job);
        }
        match ppid(fs, at) {
            Some(p) if p != 0 && p != at => at = p,
            _ => break,
        }
    }
    Some(Owner::Other)
}

/// Every id (`NSpid`, one per PID namespace) of every process of the tree under `root`: one
/// scan of `/proc`.
fn tree_ids(fs: &dyn ProcSource, root: u32) -> HashSet<u32> {
    let Ok(pids) = fs.list_pids() else {
        return HashSet::new();
    };
    let edges: Vec<(u32, u32)> = pids
        .iter()
        .filter_map(|&p| ppid(fs, p).map(|pp| (p, pp)))
        .collect();
    tree_of(root, &edges)
        .into_iter()
        .filter_map(|m| fs.read(&format!("/proc/{m}/status")).ok())
        .flat_map(|st| parse_nspid(&st))
        .collect()
}

/// Whose `pid` (as NVML reports it) is, for the tree under `root`: by its parent chain when
/// this `/proc` shows it, else by the tree members' ids in other PID namespaces.
pub fn classify(fs: &dyn ProcSource, root: Option<u32>, pid: u32) -> Owner {
    if let Some(o) = direct(fs, root, pid) {
        return o;
    }
    match root {
        Some(r) if tree_ids(fs, r).contains(&pid) => Owner::Job,
        _ => Owner::Unresolved,
    }
}

impl ProcWatch {
    /// A watch for the tree under `root` (`None`: no tree is known, no process is the job's).
    pub fn new(root: Option<u32>) -> ProcWatch {
        ProcWatch {
            root,
            ..Default::default()
        }
    }

    /// NVML's pids are read through `ns`, the `/proc` of their PID namespace.
    pub fn with_ns(mut self, ns: Option<super::nsmap::NsMap>) -> ProcWatch {
        self.ns = ns;
        self
    }

    /// Whether a process tree is known.
    pub fn tree_known(&self) -> bool {
        self.root.is_some()
    }

    /// Notes GPU `device`'s process list read at `t` seconds. New pids are classified once;
    /// those this `/proc` does not show share one scan of the tree's other-namespace ids.
    pub fn observe(&mut self, fs: &dyn ProcSource, device: u32, procs: &[ProcessInfo], t: f64) {
        let mut ids: Option<HashSet<u32>> = None;
        for p in procs {
            let used = p.used_memory.map(|b| b as f64 / 1_048_576.0);
            if let Some(s) = self.seen.get_mut(&(device, p.pid)) {
                s.last_s = t;
                s.used_mib = match (s.used_mib, used) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    (a, b) => a.or(b),
                };
                continue;
            }
            if self.seen.len() >= MAX_SEEN {
                continue;
            }
            let root = self.root;
            // The pid in this /proc's namespace: NVML's own, or mapped through `ns`.
            let local = match &self.ns {
                Some(ns) => ns.inner_pid(p.pid),
                None => Some(p.pid),
            };
            let (owner, name) = self
                .owners
                .entry(p.pid)
                .or_insert_with(|| {
                    let Some(pid) = local else {
                        return (Owner::Unresolved, None);
                    };
                    let owner = direct(fs, root, pid).unwrap_or_else(|| match root {
                        Some(r) if ids.get_or_insert_with(|| tree_ids(fs, r)).contains(&pid) => {
                            Owner::Job
                        }
                        _ => Owner::Unresolved,
                    });
                    (owner, comm(fs, pid))
                })
                .clone();
            self.seen.insert(
                (device, p.pid),
                Seen {
                    device,
                    pid: p.pid,
                    owner,
                    name,
                    used_mib: used,
                    sm_share: None,
                    first_s: t,
                    last_s: t,
                },
            );
        }
    }

    /// Notes that GPU `device`'s process list cannot be read, for good (`why`): it is not
    /// asked again, and the decision says so.
    pub fn unreadable(&mut self, device: u32, why: String) {
        self.unreadable.entry(device).or_insert(why);
    }

    /// Whether GPU `device`'s process list is worth reading.
    pub fn readable(&self, device: u32) -> bool {
        !self.unreadable.contains_key(&device)
    }

    /// Everything seen, by GPU then pid, with each one's SM share where it is known.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen
            .values()
            .map(|s| Seen {
                sm_share: self.sm.share(s.device, s.pid),
                ..s.clone()
            })
            .collect()
    }

    /// The decision at the end of a recording of `devices` (`None` without GPUs).
    pub fn settle(&self, cfg: &RecorderConfig, devices: &[DeviceInfo]) -> Option<JobGpus> {
        if devices.is_empty() {
            return None;
        }
        let gpus: Vec<Gpu> = devices.iter().map(Gpu::from).collect();
        let env = cfg.job.env.clone().unwrap_or_else(JobEnv::of_this_process);
        // `RecorderConfig::validate` refused a list that does not parse.
        let chosen = cfg.job.gpus.as_deref().and_then(|g| parse_gpus(g).ok());
        let seen = self.seen();
        let unreadable: Vec<(u32, String)> = self
            .unreadable
            .iter()
            .map(|(d, w)| (*d, w.clone()))
            .collect();
        Some(decide(&Inputs {
            gpus: &gpus,
            seen: &seen,
            env: &env,
            chosen: chosen.as_deref(),
            tree_known: self.tree_known(),
            unreadable: &unreadable,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::MemProc;

    fn stat(pid: u32, ppid: u32) -> String {
        format!("{pid} (p{pid}) S {ppid} 1 1 0 -1 4194304 0 0 0 0 10 5 0 0 20 0 1 0 100 0 0")
    }

    /// init(1) → shell(10) → root(100) → worker(101); a neighbour (200) under init.
    fn machine() -> MemProc {
        MemProc::new()
            .with("/proc/1/stat", &stat(1, 0))
            .with("/proc/10/stat", &stat(10, 1))
            .with("/proc/100/stat", &stat(100, 10))
            .with("/proc/101/stat", &stat(101, 100))
            .with("/proc/101/comm", "pt_data_worker\n")
            .with("/proc/200/stat", &stat(200, 1))
            .with("/proc/200/comm", "other_job\n")
            .with("/proc/101/status", "Name:\tw\nNSpid:\t101\t7\n")
    }

    #[test]
    fn nspid_lists_every_namespace_id() {
        assert_eq!(parse_nspid("Pid:\t5\nNSpid:\t12345\t1\n"), [12345, 1]);
        assert_eq!(parse_nspid("Pid:\t5\n"), Vec::<u32>::new());
    }

    #[test]
    fn descendants_are_the_job_s_strangers_are_not() {
        let fs = machine();
        assert_eq!(classify(&fs, Some(100), 100), Owner::Job);
        assert_eq!(classify(&fs, Some(100), 101), Owner::Job);
        assert_eq!(classify(&fs, Some(100), 200), Owner::Other);
        assert_eq!(
            classify(&fs, Some(100), 10),
            Owner::Other,
            "a parent is not a member"
        );
        assert_eq!(classify(&fs, None, 101), Owner::Other);
    }

    #[test]
    fn a_pid_from_another_namespace_matches_through_nspid() {
        let fs = machine();
        // Pid 7 is not in this /proc; it is worker 101's id in its inner namespace.
        assert_eq!(classify(&fs, Some(100), 7), Owner::Job);
        assert_eq!(classify(&fs, Some(100), 4_000_000), Owner::Unresolved);
        assert_eq!(classify(&fs, None, 7), Owner::Unresolved);
    }

    #[test]
    fn observations_keep_the_peak_memory_and_the_time_span() {
        let fs = machine();
        let mut w = ProcWatch::new(Some(100));
        let at = |pid, mib: u64| ProcessInfo {
            pid,
            used_memory: Some(mib << 20),
        };
        w.observe(&fs, 0, &[at(101, 1000), at(200, 300)], 1.0);
        w.observe(&fs, 0, &[at(101, 4000), at(200, 200)], 2.0);
        w.observe(&fs, 1, &[at(200, 50)], 3.0);
        let seen = w.seen();
        assert_eq!(seen.len(), 3);
        assert_eq!(
            (seen[0].pid, seen[0].owner, seen[0].used_mib),
            (101, Owner::Job, Some(4000.0))
        );
        assert_eq!(seen[1].name.as_deref(), Some("other_job"));
        assert_eq!((seen[1].first_s, seen[1].last_s), (1.0, 2.0));
        assert_eq!((seen[2].device, seen[2].used_mib), (1, Some(50.0)));
    }

    #[test]
    fn pids_from_other_namespaces_share_one_scan_and_unreadable_gpus_are_skipped() {
        let fs = machine();
        let mut w = ProcWatch::new(Some(100));
        let at = |pid| ProcessInfo {
            pid,
            used_memory: None,
        };
        w.observe(&fs, 0, &[at(7), at(900_001), at(900_002), at(101)], 1.0);
        assert_eq!(
            fs.list_pids_calls(),
            1,
            "one scan for the three pids /proc lacks"
        );
        let owners: Vec<Owner> = w.seen().iter().map(|s| s.owner).collect();
        assert_eq!(
            owners,
            [Owner::Job, Owner::Job, Owner::Unresolved, Owner::Unresolved]
        );
        w.unreadable(
            1,
            "NO_PERMISSION from nvmlDeviceGetComputeRunningProcesses_v3".into(),
        );
        assert!(w.readable(0) && !w.readable(1));
        let j = w
            .settle(
                &RecorderConfig {
                    job: super::super::JobConfig {
                        env: Some(JobEnv::default()),
                        ..Default::default()
                    },
                    ..Default::default()
                },
                &[
                    DeviceInfo {
                        index: 0,
                        ..Default::default()
                    },
                    DeviceInfo {
                        index: 1,
                        ..Default::default()
                    },
                ],
            )
            .expect("GPUs");
        assert_eq!((j.indices, j.others), (vec![0], vec![1]));
        assert_eq!(j.shared.len(), 2, "the unresolved pids on the job's GPU");
    }

    #[test]
    fn host_pids_map_through_the_host_proc_to_the_job_s_processes() {
        // Inside a container: NVML says 4000101 (the host's id of worker 101); this /proc
        // has no such pid, the host's /proc maps it.
        let host = MemProc::new()
            .with("/host/proc/4000101/status", "NSpid:\t4000101\t101\n")
            .with("/host/proc/4000200/status", "NSpid:\t4000200\t200\n");
        let ns = super::super::nsmap::NsMap::with_source(Box::new(host), "/host/proc");
        let mut w = ProcWatch::new(Some(100)).with_ns(Some(ns));
        let at = |pid| ProcessInfo {
            pid,
            used_memory: None,
        };
        w.observe(&machine(), 0, &[at(4000101), at(4000200), at(4000999)], 1.0);
        let seen: Vec<(u32, Owner)> = w.seen().iter().map(|s| (s.pid, s.owner)).collect();
        assert_eq!(
            seen,
            [
                (4000101, Owner::Job),
                (4000200, Owner::Other),
                (4000999, Owner::Unresolved)
            ]
        );
        assert_eq!(w.seen()[0].name.as_deref(), Some("pt_data_worker"));
    }
}
