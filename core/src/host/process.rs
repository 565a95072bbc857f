//! The target process tree: parsing `/proc/<pid>/stat` and following a training job's children
//! (data-loader workers, compile workers, launched ranks) so their CPU time is counted with it.

use std::collections::{HashMap, HashSet};

use super::source::ProcSource;

/// How many calls of [`HostSampler::sample`](super::HostSampler::sample) share one scan of all
/// of `/proc`.
///
/// Finding a tree's members means reading the `stat` file of every process on the machine
/// (thousands on a busy node), so that scan runs on the first call and then on every tenth;
/// the calls in between read only the `stat` files of the members already known. The price is
/// latency: a child started just after a scan is counted from the next scan on (about ten
/// seconds at the usual one-second sampling interval), and its CPU time before that is not.
pub const TREE_RESCAN_EVERY: u32 = 10;

/// What the sampler uses from one `/proc/<pid>/stat` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PidStat {
    pub pid: u32,
    pub ppid: u32,
    /// `utime + stime`, in clock ticks. Children's time (`cutime`, `cstime`) is left out: the
    /// children that still run are members of the tree and counted on their own.
    pub ticks: u64,
    /// Start time after boot, in clock ticks: with the pid it identifies a process even when
    /// the pid is later reused.
    pub start: u64,
}

/// Parses `/proc/<pid>/stat`.
///
/// The second field, the command name in parentheses, may itself contain spaces and
/// parentheses (`1234 (my (weird) proc) S 1 ...`), so the fields after it are found from the
/// *last* `)` of the line.
pub(crate) fn parse_pid_stat(text: &str) -> Option<PidStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    if close < open {
        return None;
    }
    let pid = text[..open].trim().parse().ok()?;
    let after: Vec<&str> = text[close + 1..].split_ascii_whitespace().collect();
    // Field numbers as in proc(5): field 3 (state) is the first one after the command name.
    let field = |n: usize| after.get(n - 3).and_then(|f| f.parse::<u64>().ok());
    let utime = field(14)?;
    let stime = field(15)?;
    Some(PidStat {
        pid,
        ppid: u32::try_from(field(4)?).ok()?,
        ticks: utime.saturating_add(stime),
        start: field(22)?,
    })
}

/// `root` followed by all its descendants (children, grandchildren, ...) given every process's
/// (pid, parent pid). `root` is listed even when it is not among `procs`.
pub(crate) fn tree_of(root: u32, procs: &[(u32, u32)]) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for &(pid, ppid) in procs {
        children.entry(ppid).or_default().push(pid);
    }
    let mut tree = vec![root];
    let mut seen = HashSet::from([root]);
    let mut next = 0;
    while let Some(&pid) = tree.get(next) {
        next += 1;
        for &child in children.get(&pid).map_or(&[][..], Vec::as_slice) {
            // `seen` guards against a cycle in inconsistent input (pids reused mid-scan).
            if seen.insert(child) {
                tree.push(child);
            }
        }
    }
    tree
}

/// One reading of the tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TreeReading {
    /// Processes in the tree now.
    pub count: usize,
    /// Ticks used since the previous reading by the members present both then and now; `None`
    /// when no member has a previous reading (the first call).
    pub ticks_delta: Option<u64>,
}

/// Follows one process tree across calls (see [`TREE_RESCAN_EVERY`]).
#[derive(Debug, Clone)]
pub(crate) struct TreeTracker {
    root: u32,
    /// The root's start time once seen, so that a new process reusing its pid is not adopted.
    root_start: Option<u64>,
    calls_since_scan: u32,
    /// Members at the previous call: pid → (start, ticks).
    prev: HashMap<u32, (u64, u64)>,
}

impl TreeTracker {
    pub fn new(root: u32) -> Self {
        Self {
            root,
            root_start: None,
            calls_since_scan: 0,
            prev: HashMap::new(),
        }
    }

    /// Reads the tree's members; `Err` says why the tree cannot be measured now.
    pub fn read(&mut self, fs: &dyn ProcSource) -> Result<TreeReading, String> {
        let scan = self.calls_since_scan == 0;
        self.calls_since_scan = (self.calls_since_scan + 1) % TREE_RESCAN_EVERY;
        let members = if scan {
            self.scan(fs)?
        } else {
            // Between scans only known members are read; one that vanished has exited, and one
            // whose start time changed is a stranger that reused the pid.
            self.prev
                .iter()
                .filter_map(|(&pid, &(start, _))| read_pid(fs, pid).filter(|s| s.start == start))
                .collect()
        };
        let mut delta = None;
        let mut next = HashMap::with_capacity(members.len());
        for s in &members {
            if let Some(&(start, ticks)) = self.prev.get(&s.pid) {
                if start == s.start {
                    *delta.get_or_insert(0u64) += s.ticks.saturating_sub(ticks);
                }
            }
            next.insert(s.pid, (s.start, s.ticks));
        }
        self.prev = next;
        if members.is_empty() {
            return Err(format!(
                "process {} is not running (no /proc/{}/stat)",
                self.root, self.root
            ));
        }
        Ok(TreeReading {
            count: members.len(),
            ticks_delta: delta,
        })
    }

    /// Reads every process's `stat` and keeps the root's tree.
    fn scan(&mut self, fs: &dyn ProcSource) -> Result<Vec<PidStat>, String> {
        let pids = fs
            .list_pids()
            .map_err(|e| format!("cannot list the processes in /proc: {e}"))?;
        let all: Vec<PidStat> = pids.into_iter().filter_map(|p| read_pid(fs, p)).collect();
        let root = all.iter().find(|s| s.pid == self.root);
        let root_is_ours = match (root, self.root_start) {
            (None, _) => false,
            (Some(r), Some(start)) => r.start == start,
            (Some(r), None) => {
                self.root_start = Some(r.start);
                true
            }
        };
        if !root_is_ours {
            return Ok(Vec::new());
        }
        let edges: Vec<(u32, u32)> = all.iter().map(|s| (s.pid, s.ppid)).collect();
        let tree: HashSet<u32> = tree_of(self.root, &edges).into_iter().collect();
        Ok(all.into_iter().filter(|s| tree.contains(&s.pid)).collect())
    }
}

/// Reads and parses one process's `stat`; `None` when it has exited (or the text is unusable).
fn read_pid(fs: &dyn ProcSource, pid: u32) -> Option<PidStat> {
    let text = fs.read(&format!("/proc/{pid}/stat")).ok()?;
    parse_pid_stat(&text).filter(|s| s.pid == pid)
}

/// Tests, and fixture helpers the sampler's tests share.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod tests;
