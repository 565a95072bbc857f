//! A compute process of a simulated device, as the scenario file writes it.

use serde::Deserialize;

/// A compute process shown on a device while `from_s <= t < until_s`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Process {
    /// Process id; `"self"` in the file is the process that loaded the simulator (the
    /// recording's own process: the job, for an in-process session or the demo).
    #[serde(deserialize_with = "pid_or_self")]
    pub pid: u32,
    /// Device memory it holds, MiB.
    pub used_mib: u64,
    /// When it appears (default 0).
    #[serde(default)]
    pub from_s: f64,
    /// When it exits (default never).
    pub until_s: Option<f64>,
    /// Its share of SM time, %, as `nvmlDeviceGetProcessUtilization` reports it (default:
    /// no samples for it).
    pub sm_util: Option<u32>,
    /// The pid NVML reports for it when it runs in a container's PID namespace: the host's
    /// (default: `pid`).
    pub host_pid: Option<u32>,
}

/// A pid as written in a scenario: a number, or `"self"` for this process's id.
fn pid_or_self<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Pid {
        Number(u32),
        Name(String),
    }
    match Pid::deserialize(d)? {
        Pid::Number(n) => Ok(n),
        Pid::Name(s) if s == "self" => Ok(std::process::id()),
        Pid::Name(s) => Err(serde::de::Error::custom(format!(
            "pid `{s}`: a number, or \"self\" for the process that loads the simulator"
        ))),
    }
}

impl Process {
    /// The pid NVML reports: the host's when it has one.
    pub fn reported_pid(&self) -> u32 {
        self.host_pid.unwrap_or(self.pid)
    }

    /// Whether the process is running at simulated time `t`.
    pub fn alive(&self, t: f64) -> bool {
        t >= self.from_s && self.until_s.is_none_or(|u| t < u)
    }
}
