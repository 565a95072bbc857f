//! The real `/proc` with its fixed host files kept open: each read seeks back to the start
//! and reads again, sparing an open and a close per file per sample. Linux builds a `/proc`
//! file's text anew on every read from offset 0, so a reread after the seek is as fresh as a
//! new open. Per-process files (`/proc/<pid>/…`) are opened per read as before: processes come
//! and go, and their descriptors would pile up.

use std::cell::RefCell;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

use super::source::{ProcFs, ProcSource};

/// The files kept open: the host-wide ones every sample reads.
const KEEP_OPEN: [&str; 6] = [
    "/proc/stat",
    "/proc/meminfo",
    "/proc/diskstats",
    "/proc/pressure/cpu",
    "/proc/pressure/io",
    "/proc/pressure/memory",
];

/// [`ProcFs`] with the files of [`KEEP_OPEN`] held open after their first read.
#[derive(Debug, Default)]
pub struct OpenProcFs {
    open: RefCell<Vec<(&'static str, File)>>,
}

impl Clone for OpenProcFs {
    /// A clone opens its own files when it first reads them (two samplers must not share a
    /// file offset).
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl OpenProcFs {
    /// How many files are held open now.
    pub fn open_files(&self) -> usize {
        self.open.borrow().len()
    }

    fn reread(file: &mut File) -> io::Result<String> {
        file.seek(SeekFrom::Start(0))?;
        let mut bytes = Vec::with_capacity(4096);
        file.read_to_end(&mut bytes)?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}

impl ProcSource for OpenProcFs {
    fn read(&self, path: &str) -> io::Result<String> {
        let Some(kept) = KEEP_OPEN.iter().find(|k| **k == path) else {
            return ProcFs.read(path);
        };
        let mut open = self.open.borrow_mut();
        if let Some((_, f)) = open.iter_mut().find(|(p, _)| p == kept) {
            match Self::reread(f) {
                Ok(text) => return Ok(text),
                // A handle that stopped working is dropped and the file opened afresh.
                Err(_) => open.retain(|(p, _)| p != kept),
            }
        }
        let mut f = File::open(path)?;
        let text = Self::reread(&mut f)?;
        open.push((kept, f));
        Ok(text)
    }

    fn list_pids(&self) -> io::Result<Vec<u32>> {
        ProcFs.list_pids()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_os = "linux")]
    fn kept_files_read_the_same_as_fresh_ones_and_stay_open() {
        let fs = OpenProcFs::default();
        let first = fs.read("/proc/stat").unwrap();
        let again = fs.read("/proc/stat").unwrap();
        assert!(first.starts_with("cpu ") && again.starts_with("cpu "));
        // Same lines in the same order: a reread after the seek is a whole new file.
        let labels = |t: &str| {
            t.lines()
                .map(|l| l.split(' ').next().map(str::to_owned))
                .collect::<Vec<_>>()
        };
        assert_eq!(labels(&first), labels(&again));
        assert_eq!(fs.open_files(), 1);
        fs.read("/proc/self/stat").unwrap();
        assert_eq!(fs.open_files(), 1, "per-process files are not kept");
        assert!(fs.read("/proc/no-such-file").is_err());
    }
}
