//! The host's `/proc` of a scenario whose job runs in a container's PID namespace, as a
//! recorder inside the container would see it mounted (docs/job-gpus.md, "Containers and
//! PID namespaces"). Tests and the demo cannot create PID namespaces, so a scenario's
//! `"pid": "self"` process with a `host_pid` (the pid the simulated NVML reports) comes with
//! this stand-in: `<dir>/host-proc/<host_pid>/status` whose `NSpid` line maps it to this
//! process.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// Writes the host `/proc` for `scenario_json` under `dir` and returns its path; `None` when
/// no `"self"` process of the scenario has a `host_pid`.
pub fn host_proc(scenario_json: &str, dir: &Path) -> io::Result<Option<PathBuf>> {
    let v: Value = serde_json::from_str(scenario_json).map_err(io::Error::other)?;
    let devices = v["devices"].as_array().cloned().unwrap_or_default();
    let host_pids: Vec<u64> = devices
        .iter()
        .flat_map(|d| {
            let slices = d["mig"].as_array().cloned().unwrap_or_default();
            std::iter::once(d.clone()).chain(slices)
        })
        .flat_map(|d| d["processes"].as_array().cloned().unwrap_or_default())
        .filter(|p| p["pid"] == "self")
        .filter_map(|p| p["host_pid"].as_u64())
        .collect();
    if host_pids.is_empty() {
        return Ok(None);
    }
    let root = dir.join("host-proc");
    let me = std::process::id();
    for h in host_pids {
        let d = root.join(h.to_string());
        std::fs::create_dir_all(&d)?;
        std::fs::write(
            d.join("status"),
            format!("Name:\ttrainer\nNSpid:\t{h}\t{me}\n"),
        )?;
    }
    Ok(Some(root))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_job_s_host_pid_maps_to_this_process() {
        let dir = std::env::temp_dir().join(format!("nvml-sim-host-proc-{}", std::process::id()));
        let json = r#"{"devices": [{"processes": [{"pid": "self", "host_pid": 4000123, "used_mib": 1}]},
                                   {"processes": [{"pid": 7, "used_mib": 1}]}]}"#;
        let root = host_proc(json, &dir)
            .expect("written")
            .expect("one host pid");
        let status = std::fs::read_to_string(root.join("4000123/status")).expect("status");
        assert_eq!(
            status.lines().nth(1),
            Some(format!("NSpid:\t4000123\t{}", std::process::id()).as_str())
        );
        let none = host_proc(
            r#"{"devices": [{"processes": [{"pid": "self", "used_mib": 1}]}]}"#,
            &dir,
        );
        assert_eq!(none.expect("read"), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
