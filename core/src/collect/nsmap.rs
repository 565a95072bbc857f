//! NVML's pids in another PID namespace: mapped through that namespace's `/proc`
//! (`docs/job-gpus.md`, "Containers and PID namespaces").
//!
//! The driver reports the host's pids. A recorder inside a container sees the container's
//! pids in its own `/proc`, where the host's are absent (or, worse, number someone else's
//! process). Given the host's `/proc` (mounted into the container, e.g. at `/host/proc`), a
//! host pid's `NSpid:` line lists its id in each namespace from the host's inwards; the
//! last one is its id in the innermost, the container's, which this `/proc` shows.

use std::path::Path;

use crate::host::{ProcFs, ProcSource};

use super::procwatch::parse_nspid;

/// The `/proc` of the namespace NVML's pids are in.
pub struct NsMap {
    source: Box<dyn ProcSource>,
    root: String,
}

impl std::fmt::Debug for NsMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NsMap({})", self.root)
    }
}

impl NsMap {
    /// The `/proc` mounted at `root` (e.g. `/host/proc`).
    pub fn at(root: &Path) -> NsMap {
        NsMap::with_source(Box::new(ProcFs), &root.to_string_lossy())
    }

    /// `root` read through `source` (tests present one in memory).
    pub fn with_source(source: Box<dyn ProcSource>, root: &str) -> NsMap {
        NsMap {
            source,
            root: root.trim_end_matches('/').to_string(),
        }
    }

    /// The id NVML's `pid` has in the innermost PID namespace it belongs to; `None` when
    /// that `/proc` does not show it.
    pub fn inner_pid(&self, pid: u32) -> Option<u32> {
        let status = self
            .source
            .read(&format!("{}/{pid}/status", self.root))
            .ok()?;
        parse_nspid(&status).last().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::MemProc;

    #[test]
    fn a_host_pid_maps_to_its_innermost_id() {
        let host = MemProc::new()
            .with(
                "/host/proc/4000123/status",
                "Name:\tpython\nNSpid:\t4000123\t57\n",
            )
            .with("/host/proc/900/status", "Name:\tsshd\nNSpid:\t900\n");
        let m = NsMap::with_source(Box::new(host), "/host/proc/");
        assert_eq!(m.inner_pid(4000123), Some(57));
        assert_eq!(m.inner_pid(900), Some(900), "a host process is its own");
        assert_eq!(m.inner_pid(5), None);
    }
}
