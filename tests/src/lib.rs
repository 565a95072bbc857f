//! Support for end-to-end tests and `cargo xtask scenarios`: install the simulated NVML with a
//! scenario in a temporary directory and record it through gpuwhy's real loading path.

use std::path::{Path, PathBuf};
use std::time::Duration;

use gpuwhy::analysis::diagnose;
use gpuwhy::collect::{Recorder, RecorderConfig};
use gpuwhy::report::Report;
use serde_json::Value;

/// A simulated NVML installed in a temporary directory (removed on drop).
pub struct SimDir {
    dir: tempfile::TempDir,
    lib: PathBuf,
}

impl SimDir {
    /// Path of the installed `libnvidia-ml.so.1`.
    pub fn lib(&self) -> &Path {
        &self.lib
    }

    /// The temporary directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

/// Installs the simulator (the R450-era build without newer symbols when `old_driver`) with
/// `scenario_json` beside it.
pub fn install_sim(scenario_json: &str, old_driver: bool) -> std::io::Result<SimDir> {
    let dir = tempfile::Builder::new()
        .prefix("gpuwhy-test-sim-")
        .tempdir()?;
    let lib = nvml_sim_bundle::install(dir.path(), Some(scenario_json), old_driver)?;
    Ok(SimDir { dir, lib })
}

/// The text of a bundled scenario.
pub fn scenario(name: &str) -> Option<&'static str> {
    nvml_sim_bundle::SCENARIOS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| *t)
}

/// Names of the bundled scenarios.
pub fn scenario_names() -> Vec<&'static str> {
    nvml_sim_bundle::SCENARIOS.iter().map(|(n, _)| *n).collect()
}

/// The scenario's expected top finding.
pub fn expected_top(json: &str) -> Option<String> {
    let v: Value = serde_json::from_str(json).ok()?;
    v["expect"]["top_finding"].as_str().map(str::to_string)
}

/// A copy of `json` with top-level fields replaced.
pub fn patched(json: &str, fields: &[(&str, Value)]) -> String {
    let mut v: Value = serde_json::from_str(json).expect("bundled scenarios are valid JSON");
    for (k, val) in fields {
        v[*k] = val.clone();
    }
    v.to_string()
}

/// How to record a scenario in a test.
#[derive(Debug, Clone)]
pub struct Run {
    /// Simulated seconds to record (default: the scenario's `demo.duration_s`).
    pub duration_s: Option<f64>,
    /// Simulation speed (overrides the scenario's).
    pub speed: f64,
    /// Use the old-driver build of the simulator.
    pub old_driver: bool,
    /// Sample the host too.
    pub host: bool,
    /// Journal path.
    pub journal: Option<PathBuf>,
}

impl Default for Run {
    fn default() -> Self {
        Run {
            duration_s: None,
            speed: 8.0,
            old_driver: false,
            host: false,
            journal: None,
        }
    }
}

/// Records `json` on the simulated GPU and returns the diagnosed report.
pub fn record(json: &str, run: &Run) -> Result<Report, String> {
    let v: Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
    let duration = run
        .duration_s
        .or_else(|| v["demo"]["duration_s"].as_f64())
        .unwrap_or(12.0);
    let interval = v["demo"]["interval_ms"]
        .as_f64()
        .map_or(0.1, |ms| ms / 1000.0);
    let text = patched(json, &[("speed", Value::from(run.speed))]);
    let sim = install_sim(&text, run.old_driver).map_err(|e| e.to_string())?;
    let cfg = RecorderConfig {
        interval_s: interval,
        nvml_path: Some(sim.lib().to_path_buf()),
        time_scale: run.speed,
        host: run.host,
        journal: run.journal.clone(),
        ..RecorderConfig::default()
    };
    let rec = Recorder::start(cfg).map_err(|e| e.to_string())?;
    if let Some(why) = rec.gpu_absent_reason() {
        return Err(why);
    }
    std::thread::sleep(Duration::from_secs_f64(duration / run.speed));
    let recording = rec.stop();
    let mut report = Report::from_recording(&recording);
    diagnose(&mut report);
    Ok(report)
}
