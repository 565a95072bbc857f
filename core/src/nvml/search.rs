//! Where to look for the NVML library, in order (docs/nvml-facts.md, "Library locations").
//!
//! Pure functions over the explicit path and the environment value, so the order can be
//! tested without touching the process environment or the file system.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Environment variable naming the NVML library file to load.
pub const ENV_NVML_PATH: &str = "GPUWHY_NVML_PATH";

/// The SONAME the NVIDIA driver installs; the unversioned `libnvidia-ml.so` is a
/// development symlink that is often absent.
#[cfg(not(windows))]
pub(super) const SONAME: &str = "libnvidia-ml.so.1";

/// Absolute places the driver's library lives on common Linux layouts, tried after the
/// system loader's own search.
#[cfg(not(windows))]
const LINUX_DIRS: &[&str] = &[
    "/usr/lib/x86_64-linux-gnu",  // Debian, Ubuntu
    "/usr/lib64",                 // RHEL, SUSE
    "/usr/lib/aarch64-linux-gnu", // arm64 Debian, Ubuntu
    "/usr/lib",                   // Arch
    "/run/opengl-driver/lib",     // NixOS
    "/usr/lib/wsl/lib",           // WSL2
    "/usr/local/nvidia/lib64",    // Kubernetes device-plugin mount
];

/// One place to try.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Candidate {
    /// A bare name handed to the system loader, which searches its usual paths.
    #[cfg_attr(windows, allow(dead_code))]
    Name(&'static str),
    /// A file path.
    Path(PathBuf),
}

impl Candidate {
    /// How the candidate is shown in error messages.
    pub(super) fn display(&self) -> String {
        match self {
            Candidate::Name(n) => format!("{n} (system loader search)"),
            Candidate::Path(p) => p.display().to_string(),
        }
    }
}

/// The candidates to try and whether a failure means "stop": an explicit path or the
/// environment variable names the one file the user wants, so nothing else is tried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Plan {
    /// Candidates in order.
    pub(super) candidates: Vec<Candidate>,
    /// Where the single candidate came from, when the user named it.
    pub(super) chosen_by: Option<&'static str>,
}

/// Builds the search plan from an explicit path and the value of [`ENV_NVML_PATH`]
/// (an empty value counts as unset).
pub(super) fn plan(explicit: Option<&Path>, env: Option<OsString>) -> Plan {
    if let Some(p) = explicit {
        return Plan {
            candidates: vec![Candidate::Path(p.to_path_buf())],
            chosen_by: Some("explicit path"),
        };
    }
    if let Some(v) = env.filter(|v| !v.is_empty()) {
        return Plan {
            candidates: vec![Candidate::Path(PathBuf::from(v))],
            chosen_by: Some(ENV_NVML_PATH),
        };
    }
    Plan {
        candidates: default_candidates(),
        chosen_by: None,
    }
}

#[cfg(not(windows))]
fn default_candidates() -> Vec<Candidate> {
    let mut c = vec![Candidate::Name(SONAME)];
    c.extend(
        LINUX_DIRS
            .iter()
            .map(|d| Candidate::Path(Path::new(d).join(SONAME))),
    );
    c
}

/// Windows: `%WINDIR%\System32\nvml.dll` first (where DCH drivers put it), then the NVSMI folder
/// under Program Files, which is not on `PATH` by default (docs/nvml-facts.md, "Library
/// locations"). Untested: gpuwhy is only tested on Linux.
#[cfg(windows)]
fn default_candidates() -> Vec<Candidate> {
    let windir = std::env::var_os("WINDIR").unwrap_or_else(|| "C:\\Windows".into());
    let mut c = vec![Candidate::Path(
        Path::new(&windir).join("System32").join("nvml.dll"),
    )];
    for var in ["ProgramW6432", "ProgramFiles"] {
        if let Some(pf) = std::env::var_os(var) {
            let p = Path::new(&pf)
                .join("NVIDIA Corporation")
                .join("NVSMI")
                .join("nvml.dll");
            if !c.contains(&Candidate::Path(p.clone())) {
                c.push(Candidate::Path(p));
            }
        }
    }
    c
}

/// Why `path` must not be loaded, if it must not: the CUDA toolkit's stub library
/// (`.../stubs/libnvidia-ml.so`) is for linking only and cannot talk to the driver.
pub(super) fn refusal(path: &Path) -> Option<String> {
    let s = path.to_string_lossy().replace('\\', "/");
    s.contains("/stubs/").then(|| {
        "refused: a CUDA toolkit stub (link-time only, it cannot reach the driver); use the driver's libnvidia-ml.so.1".to_string()
    })
}

#[cfg(all(test, not(windows)))]
mod tests {
    use super::*;

    #[test]
    fn default_search_starts_with_the_loader_and_never_lists_a_stub() {
        let p = plan(None, None);
        assert_eq!(p.chosen_by, None);
        assert_eq!(p.candidates[0], Candidate::Name("libnvidia-ml.so.1"));
        for c in &p.candidates[1..] {
            let Candidate::Path(path) = c else {
                panic!("only the first is by name")
            };
            assert!(path.is_absolute());
            assert!(path.ends_with("libnvidia-ml.so.1"));
            assert_eq!(refusal(path), None);
        }
        let all: Vec<String> = p.candidates.iter().map(Candidate::display).collect();
        for dir in [
            "/usr/lib/x86_64-linux-gnu/",
            "/usr/lib64/",
            "/run/opengl-driver/lib/",
            "/usr/lib/wsl/lib/",
            "/usr/local/nvidia/lib64/",
        ] {
            assert!(
                all.iter().any(|c| c.starts_with(dir)),
                "{dir} missing from {all:?}"
            );
        }
    }

    #[test]
    fn explicit_path_wins_over_environment_and_is_the_only_candidate() {
        let p = plan(
            Some(Path::new("/opt/x/libnvidia-ml.so.1")),
            Some("/env/lib.so".into()),
        );
        assert_eq!(
            p.candidates,
            [Candidate::Path("/opt/x/libnvidia-ml.so.1".into())]
        );
        assert_eq!(p.chosen_by, Some("explicit path"));
        let p = plan(None, Some("/env/lib.so".into()));
        assert_eq!(p.candidates, [Candidate::Path("/env/lib.so".into())]);
        assert_eq!(p.chosen_by, Some(ENV_NVML_PATH));
        assert_eq!(plan(None, Some("".into())).chosen_by, None);
    }

    #[test]
    fn stub_libraries_are_refused() {
        assert!(refusal(Path::new("/usr/local/cuda/lib64/stubs/libnvidia-ml.so")).is_some());
        assert!(refusal(Path::new(
            "/usr/local/cuda/targets/x86_64-linux/lib/stubs/libnvidia-ml.so.1"
        ))
        .is_some());
        assert!(refusal(Path::new("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1")).is_none());
    }
}
