//! Support for end-to-end tests and `cargo xtask scenarios`: install the simulated NVML with a
//! scenario in a temporary directory and record it through gpuwhy's real loading path, with
//! the scenario's workload replayed by the demo trainer on the simulated GPU's clock.

pub mod corpus;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use gpuwhy::collect::RecorderConfig;
use gpuwhy::report::Report;
use gpuwhy::session::{Session, SessionConfig};
pub use nvml_sim_workload::{Markers, NoMarkers};
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

/// A scenario's `expect`: the top finding (`none` for no finding at all), the findings that
/// must also be reported, and those that must not be.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Expected {
    /// `expect.top_finding`.
    pub top: String,
    /// `expect.also`.
    pub also: Vec<String>,
    /// `expect.absent`.
    pub absent: Vec<String>,
}

/// The scenario's expectations; `None` without `expect.top_finding`. Missing `also` and
/// `absent` are empty.
pub fn expected(json: &str) -> Option<Expected> {
    let v: Value = serde_json::from_str(json).ok()?;
    let list = |key: &str| -> Vec<String> {
        v["expect"][key]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    Some(Expected {
        top: v["expect"]["top_finding"].as_str()?.to_string(),
        also: list("also"),
        absent: list("absent"),
    })
}

/// How a report measures up to a scenario's [`Expected`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Outcome {
    /// The report's top finding (`none` when nothing fired).
    pub top: String,
    /// Whether it is the expected one.
    pub top_matches: bool,
    /// Expected findings (`also`, and the top one) the report lacks.
    pub missing: Vec<String>,
    /// Findings the report has that `absent` forbids (or any, when `none` is expected).
    pub extra: Vec<String>,
}

impl Outcome {
    /// Whether everything matched.
    pub fn ok(&self) -> bool {
        self.top_matches && self.missing.is_empty() && self.extra.is_empty()
    }

    /// One line: what is wrong, or `ok`.
    pub fn describe(&self, expected: &Expected) -> String {
        if self.ok() {
            return "ok".into();
        }
        let mut parts = Vec::new();
        if !self.top_matches {
            parts.push(format!("top {} instead of {}", self.top, expected.top));
        }
        if !self.missing.is_empty() {
            parts.push(format!("missing {}", self.missing.join(", ")));
        }
        if !self.extra.is_empty() {
            parts.push(format!("unexpected {}", self.extra.join(", ")));
        }
        parts.join("; ")
    }
}

/// Compares a diagnosed report with a scenario's expectations.
pub fn check(expected: &Expected, report: &Report) -> Outcome {
    let ids: Vec<&str> = report.findings.iter().map(|f| f.id.as_str()).collect();
    let mut must: Vec<&str> = expected.also.iter().map(String::as_str).collect();
    if expected.top != "none" {
        must.insert(0, &expected.top);
    }
    let missing = must
        .into_iter()
        .filter(|id| !ids.contains(id))
        .map(str::to_string)
        .collect();
    let extra = if expected.top == "none" {
        ids.iter().map(|id| id.to_string()).collect()
    } else {
        ids.iter()
            .filter(|id| expected.absent.iter().any(|a| a == *id))
            .map(|id| id.to_string())
            .collect()
    };
    Outcome {
        top: report.verdict.id.clone(),
        top_matches: report.verdict.id == expected.top,
        missing,
        extra,
    }
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
    /// `--gpus`: the job's GPUs named by the user.
    pub gpus: Option<String>,
    /// The job's CUDA environment (default: none set; this shell's says nothing of
    /// simulated GPUs).
    pub job_env: gpuwhy::jobgpus::JobEnv,
    /// Buffered mode (`RecorderConfig::nvml_samples`; default: as `GPUWHY_NVML_SAMPLES` says).
    pub nvml_samples: Option<bool>,
    /// Changes the session's configuration before it starts (retention, provisional
    /// diagnosis, ...).
    pub configure: Option<fn(&mut SessionConfig)>,
}

impl Default for Run {
    fn default() -> Self {
        Run {
            duration_s: None,
            speed: 8.0,
            old_driver: false,
            host: false,
            journal: None,
            gpus: None,
            job_env: gpuwhy::jobgpus::JobEnv::default(),
            nvml_samples: None,
            configure: None,
        }
    }
}

/// Records `json` on the simulated GPU and returns the diagnosed report; the scenario's
/// workload, if any, is replayed by the demo trainer (its markers go nowhere yet).
pub fn record(json: &str, run: &Run) -> Result<Report, String> {
    record_session(json, run)
}

/// Records `json` on the simulated GPU through a gpuwhy [`Session`], replaying the
/// scenario's workload (if any) with the demo trainer on another thread, and returns the
/// diagnosed report. Simulated time 0 is the end of the simulated GPU's first `nvmlInit`,
/// on the recorder's sampler thread ([`gpuwhy::collect::Recorder::nvml_ready_at`]); the
/// trainer's schedule counts from that instant.
pub fn record_session(json: &str, run: &Run) -> Result<Report, String> {
    let v: Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
    let duration = run
        .duration_s
        .or_else(|| v["demo"]["duration_s"].as_f64())
        .unwrap_or(12.0);
    let interval = v["demo"]["interval_ms"]
        .as_f64()
        .map_or(0.1, |ms| ms / 1000.0);
    let text = patched(json, &[("speed", Value::from(run.speed))]);
    let schedule = nvml_sim_bundle::trainer::schedule(&text, duration)?;
    let sim = install_sim(&text, run.old_driver).map_err(|e| e.to_string())?;
    let host_proc = nvml_sim_bundle::host_proc(&text, sim.dir()).map_err(|e| e.to_string())?;
    let cfg = RecorderConfig {
        interval_s: interval,
        nvml_path: Some(sim.lib().to_path_buf()),
        time_scale: run.speed,
        host: run.host,
        journal: run.journal.clone(),
        // The trainer runs in this process: a scenario's `"pid": "self"` is the job's.
        job: gpuwhy::collect::JobConfig {
            gpus: run.gpus.clone(),
            pid: Some(std::process::id()),
            env: Some(run.job_env.clone()),
            host_proc,
        },
        ..RecorderConfig::default()
    };
    let cfg = RecorderConfig {
        nvml_samples: run.nvml_samples.unwrap_or(cfg.nvml_samples),
        ..cfg
    };
    let mut session_cfg = SessionConfig::from(cfg);
    if let Some(configure) = run.configure {
        configure(&mut session_cfg);
    }
    let session = Session::start(session_cfg).map_err(|e| e.to_string())?;
    // The simulated GPU's time 0: the end of its init, on the sampler thread.
    let origin = session
        .recorder()
        .nvml_ready_at()
        .unwrap_or_else(Instant::now);
    if let Some(why) = session.recorder().gpu_absent_reason() {
        return Err(why);
    }
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let trainer = schedule.as_ref().map(|sch| {
            s.spawn(|| nvml_sim_bundle::trainer::run(sch, run.speed, origin, &stop, &session))
        });
        let end = origin + Duration::from_secs_f64(duration / run.speed);
        if let Some(left) = end.checked_duration_since(Instant::now()) {
            std::thread::sleep(left);
        }
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(t) = trainer {
            let _ = t.join();
        }
    });
    Ok(session.finish())
}
