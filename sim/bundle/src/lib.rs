//! The simulated NVML library (`nvml-sim`) built as a shared object and embedded as bytes,
//! with the bundled scenario files, so `gpuwhy demo` and the tests need nothing installed.
//!
//! [`install`] writes a library (and optionally a scenario) into a directory; load it from
//! there through the ordinary NVML loader. This crate does not load anything itself.

mod host_proc;
pub mod trainer;

pub use host_proc::host_proc;

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The simulated `libnvidia-ml.so.1` with the current (R550-era) symbol set.
pub const SIM_LIB: &[u8] = include_bytes!(env!("GPUWHY_SIM_LIB_PATH"));

/// The simulated library built with the `old-driver` feature: an R450-era symbol set without
/// `nvmlInit_v2`, the `_v2` count/handle functions, `nvmlDeviceGetPciInfo_v3`,
/// `nvmlDeviceGetMemoryInfo_v2`, `nvmlDeviceGetTemperatureV`,
/// `nvmlDeviceGetCurrentClocksEventReasons`, `nvmlDeviceGetComputeRunningProcesses_v3`,
/// `nvmlEventSetWait_v2`, `nvmlSystemGetCudaDriverVersion_v2` and the GPM functions. It also
/// reports driver 450.80.02 / CUDA 11.0 unless the scenario says otherwise.
pub const SIM_LIB_OLD_DRIVER: &[u8] = include_bytes!(env!("GPUWHY_SIM_LIB_OLD_DRIVER_PATH"));

/// Every bundled scenario (`sim/scenarios/*.json`) as (name = file stem, JSON text), sorted
/// by name. The names are contracts: tests and `gpuwhy demo` refer to them.
pub const SCENARIOS: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/scenarios.rs"));

/// The file name [`install`] gives the library: the SONAME NVML users load.
pub const LIB_FILE_NAME: &str = "libnvidia-ml.so.1";

/// The file name [`install`] gives the scenario; the library looks for it in its own
/// directory when `GPUWHY_SIM_SCENARIO` is not set.
pub const SCENARIO_FILE_NAME: &str = "scenario.json";

/// The JSON text of a bundled scenario, by name (`"data_starvation"`).
pub fn scenario(name: &str) -> Option<&'static str> {
    SCENARIOS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, json)| *json)
}

/// Writes the simulated library as `dir/libnvidia-ml.so.1` (the `old-driver` variant when
/// `old_driver` is true) and, when `scenario_json` is given, `dir/scenario.json` beside it;
/// returns the library's path. `dir` is created if needed. Without `scenario_json` an
/// existing `scenario.json` in `dir` is left as it is (remove it to get the built-in
/// healthy H100, or set `GPUWHY_SIM_SCENARIO`).
///
/// Files are written to a temporary name and renamed, so another process loading from the
/// same directory never sees half a file. A process that has already loaded a library from
/// this path keeps using that copy (the dynamic loader reuses it by name); give each test
/// its own directory.
pub fn install(dir: &Path, scenario_json: Option<&str>, old_driver: bool) -> io::Result<PathBuf> {
    fs::create_dir_all(dir)?;
    let lib = dir.join(LIB_FILE_NAME);
    let bytes = if old_driver {
        SIM_LIB_OLD_DRIVER
    } else {
        SIM_LIB
    };
    write_atomically(&lib, bytes, 0o755)?;
    if let Some(json) = scenario_json {
        write_atomically(&dir.join(SCENARIO_FILE_NAME), json.as_bytes(), 0o644)?;
    }
    Ok(lib)
}

fn write_atomically(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        set_mode(&tmp, mode)?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        // Best effort: the write already failed, and a stray temp file is harmless.
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _mode: u32) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONTRACT: &[&str] = &[
        "busy_not_working",
        "busy_not_working_near_miss",
        "case_study",
        "comm_sync",
        "comm_sync_near_miss",
        "consumer_gpu",
        "data_starvation",
        "data_starvation_near_miss",
        "dynamic_shapes",
        "dynamic_shapes_near_miss",
        "gpu_fault",
        "gpu_fault_near_miss",
        "gpu_lost",
        "healthy",
        "host_transfer",
        "host_transfer_near_miss",
        "launch_bound",
        "launch_bound_near_miss",
        "memory_bound",
        "memory_bound_near_miss",
        "memory_headroom",
        "memory_headroom_near_miss",
        "pcie_degraded",
        "pcie_degraded_near_miss",
        "periodic_stall",
        "periodic_stall_near_miss",
        "power_cap",
        "rank_imbalance_near_miss",
        "recompute_overhead",
        "recompute_overhead_near_miss",
        "small_batch",
        "small_batch_near_miss",
        "straggler_8gpu",
        "thermal",
        "throttled_and_starved",
        "throttling_near_miss",
    ];

    #[test]
    fn every_contract_scenario_is_bundled_by_name() {
        let names: Vec<&str> = SCENARIOS.iter().map(|(n, _)| *n).collect();
        for name in CONTRACT {
            assert!(names.contains(name), "{name} missing from {names:?}");
            assert!(
                scenario(name).is_some_and(|json| json.contains(&format!("\"name\": \"{name}\"")))
            );
        }
        assert!(scenario("nope").is_none());
    }

    #[test]
    fn both_libraries_are_shared_objects() {
        for lib in [SIM_LIB, SIM_LIB_OLD_DRIVER] {
            assert_eq!(&lib[..4], b"\x7fELF");
        }
        assert_ne!(SIM_LIB, SIM_LIB_OLD_DRIVER);
    }

    #[test]
    fn install_writes_the_library_and_the_scenario() {
        let dir = std::env::temp_dir().join(format!("nvml-sim-bundle-{}", std::process::id()));
        let lib = install(&dir, scenario("healthy"), false).expect("install");
        assert_eq!(lib, dir.join(LIB_FILE_NAME));
        assert_eq!(fs::read(&lib).expect("lib").len(), SIM_LIB.len());
        let json = fs::read_to_string(dir.join(SCENARIO_FILE_NAME)).expect("scenario");
        assert_eq!(Some(json.as_str()), scenario("healthy"));
        install(&dir, None, true).expect("reinstall");
        assert_eq!(fs::read(&lib).expect("lib").len(), SIM_LIB_OLD_DRIVER.len());
        assert!(dir.join(SCENARIO_FILE_NAME).exists(), "left as it was");
        let leftovers = fs::read_dir(&dir)
            .expect("dir")
            .filter_map(Result::ok)
            .count();
        assert_eq!(leftovers, 2, "no temporary files remain");
        fs::remove_dir_all(&dir).expect("cleanup");
    }
}
