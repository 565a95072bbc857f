//! The `gpuwhy` command as a user runs it: real binary, real simulated NVML library.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod commands;
mod compare;
mod crash;
mod export;
mod import;
mod jobgpus;
mod merge;
mod ranks;
mod summary;
mod view;

/// The built `gpuwhy` binary.
pub fn gpuwhy() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gpuwhy"))
}

/// Runs and captures.
pub fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("gpuwhy runs")
}

/// Text of stdout and stderr together.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A scenario's text with top-level fields replaced.
pub fn scenario_with(name: &str, fields: &[(&str, serde_json::Value)]) -> String {
    let text = nvml_sim_bundle::SCENARIOS
        .iter()
        .find(|(n, _)| *n == name)
        .expect("bundled scenario")
        .1;
    let mut v: serde_json::Value = serde_json::from_str(text).expect("json");
    for (k, val) in fields {
        v[*k] = val.clone();
    }
    v.to_string()
}

/// Installs the simulator with `scenario` into `dir`; returns the library path.
pub fn sim(dir: &Path, scenario: &str) -> PathBuf {
    nvml_sim_bundle::install(dir, Some(scenario), false).expect("install simulator")
}

/// Polls `ready` until it returns something, for a test that waits on another process:
/// the condition is what the test needs (a file, a count in it), never a fixed time.
/// `hang` only turns a hang into a failure; a passing test returns long before it.
pub fn wait_for<T>(hang: std::time::Duration, mut ready: impl FnMut() -> Option<T>) -> Option<T> {
    let end = std::time::Instant::now() + hang;
    loop {
        if let Some(v) = ready() {
            return Some(v);
        }
        if std::time::Instant::now() >= end {
            return None;
        }
        // The one sleep allowed in tests: a poll between looks at another process.
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
