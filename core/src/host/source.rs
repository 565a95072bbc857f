//! Where the host sampler reads from: the real `/proc`, or an in-memory copy for tests.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::io;

/// A read-only view of `/proc`: the only way the host sampler touches the machine.
///
/// Paths are absolute (`/proc/stat`, `/proc/1234/stat`), exactly as on Linux, so an in-memory
/// source can be filled with text copied from a real machine.
pub trait ProcSource {
    /// Reads the whole file at `path` as text.
    fn read(&self, path: &str) -> io::Result<String>;
    /// Lists the ids of all processes that exist now (the numeric entries of `/proc`).
    fn list_pids(&self) -> io::Result<Vec<u32>>;
}

/// The real `/proc` of this machine.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcFs;

impl ProcSource for ProcFs {
    /// Reads bytes and converts them lossily: a process may set its name (`comm`) to bytes that
    /// are not UTF-8, and that must not make its whole `stat` line unreadable.
    fn read(&self, path: &str) -> io::Result<String> {
        let bytes = std::fs::read(path)?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    fn list_pids(&self) -> io::Result<Vec<u32>> {
        let mut pids = Vec::new();
        for entry in std::fs::read_dir("/proc")? {
            // An entry that fails while listing is a process that exited meanwhile: not an error.
            let Ok(entry) = entry else { continue };
            if let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) {
                pids.push(pid);
            }
        }
        Ok(pids)
    }
}

/// An in-memory `/proc` for tests: a map from path to file text.
///
/// [`ProcSource::list_pids`] lists every `N` for which a `/proc/N/stat` file is present, and
/// counts how often it was called so tests can check how often the sampler scans all of `/proc`;
/// reads are counted per path too ([`MemProc::reads_of`]).
#[derive(Debug, Clone, Default)]
pub struct MemProc {
    files: BTreeMap<String, String>,
    list_calls: Cell<usize>,
    reads: RefCell<BTreeMap<String, usize>>,
}

impl MemProc {
    /// An empty `/proc`: every read fails with `NotFound`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Returns `self` with the file at `path` set to `text` (builder style).
    #[must_use]
    pub fn with(mut self, path: &str, text: &str) -> Self {
        self.set(path, text);
        self
    }

    /// Sets the file at `path` to `text`, replacing what was there.
    pub fn set(&mut self, path: &str, text: impl Into<String>) {
        self.files.insert(path.to_owned(), text.into());
    }

    /// Removes the file at `path`; later reads of it fail with `NotFound`.
    pub fn remove(&mut self, path: &str) {
        self.files.remove(path);
    }

    /// How many times [`ProcSource::list_pids`] has been called on this source.
    pub fn list_pids_calls(&self) -> usize {
        self.list_calls.get()
    }

    /// How many times `path` has been read (found or not).
    pub fn reads_of(&self, path: &str) -> usize {
        self.reads.borrow().get(path).copied().unwrap_or(0)
    }
}

impl ProcSource for MemProc {
    fn read(&self, path: &str) -> io::Result<String> {
        *self.reads.borrow_mut().entry(path.to_owned()).or_default() += 1;
        self.files.get(path).cloned().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                "no such file in the in-memory /proc",
            )
        })
    }

    fn list_pids(&self) -> io::Result<Vec<u32>> {
        self.list_calls.set(self.list_calls.get() + 1);
        let pids = self.files.keys().filter_map(|path| {
            let pid = path.strip_prefix("/proc/")?.strip_suffix("/stat")?;
            pid.parse().ok()
        });
        Ok(pids.collect())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn mem_proc_lists_pids_from_stat_files_only() {
        let fs = MemProc::new()
            .with("/proc/stat", "cpu 1 2 3 4")
            .with("/proc/12/stat", "12 (a) S 1")
            .with("/proc/7/stat", "7 (b) S 1")
            .with("/proc/7/status", "Name: b");
        let mut pids = fs.list_pids().unwrap();
        pids.sort_unstable();
        assert_eq!(pids, [7, 12]);
        assert_eq!(fs.list_pids_calls(), 1);
        assert_eq!(
            fs.read("/proc/nope").unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
    }
}
