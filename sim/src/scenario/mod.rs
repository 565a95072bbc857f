//! Scenario files: what the simulated driver reports, per device and over time.
//!
//! The file format is documented for users in `docs/scenarios.md`. The top level accepts
//! unknown fields (gpuwhy keeps its own `expect` and `demo` there); everything below it —
//! devices, metrics, patterns, faults — refuses them, so a typo is reported rather than
//! silently playing a default.

mod address;
mod defaults;
mod device;
mod fault;
mod preset;
mod source;

use std::sync::Arc;

use nvml_sim_workload::{Schedule, Workload};
use serde::Deserialize;

use crate::metric::Metric;
pub use device::{Device, Health, Process};
pub use fault::Fault;
#[cfg(test)]
pub use source::test_override as source_test_override;
pub use source::{read, speed_override};

/// The scenario played when none is found: one healthy H100.
pub const BUILTIN: &str = include_str!("../../scenarios/healthy.json");

/// The longest `init_delay_ms` accepted: a minute is already far past any real driver.
const MAX_INIT_DELAY_MS: u64 = 60_000;

/// The most devices one scenario may expand to.
const MAX_DEVICES: u32 = 256;

/// Driver facts reported when the scenario does not set them: an R550 driver, or an R450
/// one for the `old-driver` build whose symbol set it imitates.
#[cfg(not(feature = "old-driver"))]
const DEFAULT_DRIVER: (&str, u32, i32) = ("550.54.15", 12, 12040);
#[cfg(feature = "old-driver")]
const DEFAULT_DRIVER: (&str, u32, i32) = ("450.80.02", 11, 11000);

/// The file as written.
#[derive(Deserialize)]
struct ScenarioFile {
    #[serde(default)]
    name: Option<String>,
    speed: Option<f64>,
    seed: Option<u64>,
    driver_version: Option<String>,
    nvml_version: Option<String>,
    cuda_driver_version: Option<i32>,
    init_error: Option<u32>,
    init_delay_ms: Option<u64>,
    #[serde(default)]
    devices: Vec<device::DeviceFile>,
    #[serde(default)]
    faults: Vec<fault::FaultFile>,
    workload: Option<Workload>,
}

/// A validated scenario, ready to be played.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Simulated seconds per wall second.
    pub speed: f64,
    /// `nvmlSystemGetDriverVersion`.
    pub driver_version: String,
    /// `nvmlSystemGetNVMLVersion`.
    pub nvml_version: String,
    /// `nvmlSystemGetCudaDriverVersion`.
    pub cuda_driver_version: i32,
    /// When set, `nvmlInit*` fails with this code.
    pub init_error: Option<u32>,
    /// Wall milliseconds the first `nvmlInit*` takes (a driver without persistence mode
    /// takes seconds to bring the GPUs up); 0 for an instant init.
    pub init_delay_ms: u64,
    /// The device table, in index order (entries with `count` expanded).
    pub devices: Vec<Device>,
    /// Scripted faults.
    pub faults: Vec<Fault>,
    /// The training loop's timeline when the scenario has a `workload`.
    #[cfg_attr(not(test), allow(dead_code))]
    pub schedule: Option<Arc<Schedule>>,
}

impl Scenario {
    /// Parses and validates a scenario. Errors name the line and column (syntax and types)
    /// or the path of the offending entry (cross-field checks).
    pub fn from_json(text: &str) -> Result<Scenario, String> {
        let file: ScenarioFile = serde_json::from_str(text).map_err(|e| e.to_string())?;
        file.resolve()
    }
}

/// Parses and validates scenario text exactly as `nvmlInit*` does before it plays a file,
/// without playing it: `Err` is the message the simulator would report (the line and
/// column, or the path of the offending entry). For tools that check scenario files and for
/// the fuzz target; the `Scenario` type itself stays private to the simulator.
pub fn check(text: &str) -> Result<(), String> {
    Scenario::from_json(text).map(|_| ())
}

impl ScenarioFile {
    fn resolve(self) -> Result<Scenario, String> {
        let speed = self.speed.unwrap_or(1.0);
        if !(speed > 0.0 && speed.is_finite()) {
            return Err(format!("`speed` must be a positive number, got {speed}"));
        }
        if self.init_error == Some(0) {
            return Err("`init_error` 0 is NVML_SUCCESS; leave it out for a working init".into());
        }
        let init_delay_ms = self.init_delay_ms.unwrap_or(0);
        if init_delay_ms > MAX_INIT_DELAY_MS {
            return Err(format!(
                "`init_delay_ms` {init_delay_ms} is more than {MAX_INIT_DELAY_MS} (one minute)"
            ));
        }
        let name = self.name.unwrap_or_default();
        let seed = self.seed.unwrap_or(0);
        let schedule = self.workload.map(|w| schedule(w, seed)).transpose()?;
        let mut devices = Vec::new();
        for (i, entry) in self.devices.iter().enumerate() {
            for _ in 0..entry.count() {
                let index = u32::try_from(devices.len()).unwrap_or(u32::MAX);
                if index >= MAX_DEVICES {
                    return Err(format!("devices: more than {MAX_DEVICES} devices"));
                }
                let device = entry
                    .resolve(index, seed, &name, schedule.as_ref())
                    .map_err(|e| format!("devices[{i}]: {e}"))?;
                devices.push(device);
            }
        }
        let count = devices.len() as u32;
        if let Some(s) = &schedule {
            if let Some(m) = s.workload().devices.iter().find(|m| m.device >= count) {
                return Err(format!(
                    "workload.devices: there is no device {} (the scenario has {count})",
                    m.device
                ));
            }
        }
        let faults = self
            .faults
            .iter()
            .enumerate()
            .map(|(i, f)| f.resolve(count).map_err(|e| format!("faults[{i}]: {e}")))
            .collect::<Result<Vec<_>, _>>()?;
        let (default_driver, api_major, default_cuda) = DEFAULT_DRIVER;
        let driver_version = self
            .driver_version
            .unwrap_or_else(|| default_driver.to_owned());
        let nvml_version = self
            .nvml_version
            .unwrap_or_else(|| format!("{api_major}.{driver_version}"));
        Ok(Scenario {
            speed,
            driver_version,
            nvml_version,
            cuda_driver_version: self.cuda_driver_version.unwrap_or(default_cuda),
            init_error: self.init_error,
            init_delay_ms,
            devices,
            faults,
            schedule,
        })
    }
}

/// Checks a workload (its metric names included) and computes its timeline over its
/// horizon. `nvml_sim_workload::Workload::from_scenario_json` reads it the same way, so a
/// demo trainer replays this very timeline.
fn schedule(workload: Workload, seed: u64) -> Result<Arc<Schedule>, String> {
    let w = workload
        .resolve(seed)
        .map_err(|e| format!("workload: {e}"))?;
    if let Some(bad) = w
        .metric_names()
        .into_iter()
        .find(|n| Metric::from_name(n).is_none())
    {
        return Err(format!(
            "workload: unknown metric `{bad}` (known: {})",
            Metric::known_names()
        ));
    }
    Ok(Arc::new(Schedule::new(&w, w.horizon_s())))
}

/// Accepts only names of functions the simulator exports (in either build).
fn check_function_name(name: &str) -> Result<(), String> {
    let sample_quirk = crate::exports::samples::TYPE_QUIRKS
        .iter()
        .any(|(n, _)| *n == name);
    if crate::exports::FUNCTIONS.contains(&name) || sample_quirk {
        Ok(())
    } else {
        Err(format!(
            "unknown NVML function `{name}` (use an exported name such as \
             `nvmlDeviceGetPowerUsage`; docs/scenarios.md lists them all)"
        ))
    }
}

#[cfg(test)]
mod contract;
#[cfg(test)]
mod measure;
#[cfg(test)]
mod shipped;

#[cfg(test)]
mod tests {
    use super::*;

    /// Every shipped scenario (`sim/scenarios/*.json`) as (file stem, text), by name.
    pub(super) fn shipped() -> Vec<(String, String)> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios");
        let mut all: Vec<(String, String)> = std::fs::read_dir(dir)
            .expect("scenarios dir")
            .map(|e| e.expect("dir entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .map(|p| {
                let stem = p.file_stem().and_then(|s| s.to_str()).expect("utf-8 name");
                let text = std::fs::read_to_string(&p).expect("readable");
                (stem.to_owned(), text)
            })
            .collect();
        all.sort();
        all
    }

    #[test]
    fn every_shipped_scenario_parses_and_states_its_contract() {
        let all = shipped();
        assert!(all.len() >= 36, "{} scenarios", all.len());
        for (name, text) in &all {
            let s = Scenario::from_json(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!s.devices.is_empty(), "{name}");
            let raw: serde_json::Value = serde_json::from_str(text).expect("json");
            assert_eq!(
                raw["name"],
                name.as_str(),
                "{name}: `name` matches the file name"
            );
            assert!(
                raw["expect"]["top_finding"].is_string(),
                "{name}: expect.top_finding"
            );
            for key in ["also", "absent"] {
                assert!(
                    raw["expect"][key]
                        .as_array()
                        .is_some_and(|a| a.iter().all(|v| v.is_string())),
                    "{name}: expect.{key} is a list of rule ids"
                );
            }
            if name.ends_with("_near_miss") {
                let rule = name.trim_end_matches("_near_miss");
                assert!(
                    raw["expect"]["absent"]
                        .as_array()
                        .is_some_and(|a| a.iter().any(|v| v == rule)),
                    "{name}: a near miss lists its rule in expect.absent"
                );
                assert!(
                    raw["description"]
                        .as_str()
                        .is_some_and(|d| d.contains(&format!("Near miss of {rule}"))),
                    "{name}: the description says what it is a near miss of"
                );
            }
            let duration = raw["demo"]["duration_s"].as_f64().expect("demo.duration_s");
            assert!(
                (10.0..=20.0).contains(&duration),
                "{name}: demo.duration_s {duration}"
            );
            assert_eq!(raw["demo"]["interval_ms"], 100, "{name}");
            assert!(
                raw["description"].as_str().is_some_and(|d| !d.is_empty()),
                "{name}"
            );
        }
    }

    #[test]
    fn the_user_documentation_matches_the_code() {
        let doc = include_str!("../../../docs/scenarios.md");
        let example = doc
            .split("## Example")
            .nth(1)
            .and_then(|rest| rest.split("```json\n").nth(1))
            .and_then(|rest| rest.split("```").next())
            .expect("docs/scenarios.md has a json example");
        let s = Scenario::from_json(example).unwrap_or_else(|e| panic!("the example: {e}"));
        assert_eq!((s.devices.len(), s.faults.len()), (2, 3));
        let workload = doc
            .split("### Workload")
            .nth(1)
            .and_then(|rest| rest.split("```json\n").nth(1))
            .and_then(|rest| rest.split("```").next())
            .expect("docs/scenarios.md has a workload example");
        let with_workload = format!("{{{workload}, \"devices\": [{{\"count\": 6}}]}}");
        let s = Scenario::from_json(&with_workload)
            .unwrap_or_else(|e| panic!("the workload example: {e}"));
        assert!(s.schedule.is_some_and(|w| w.len() > 100));
        for m in crate::metric::Metric::ALL {
            assert!(
                doc.contains(&format!("`{}`", m.name())),
                "metric {m} undocumented"
            );
        }
        for p in preset::NAMES {
            assert!(doc.contains(&format!("`{p}`")), "preset {p} undocumented");
        }
        for f in crate::exports::FUNCTIONS {
            assert!(
                doc.contains(&format!("{f} ")) || doc.contains(&format!("{f}\n")),
                "{f} undocumented"
            );
        }
        for (name, _) in shipped() {
            assert!(
                doc.contains(&format!("| `{name}` |")),
                "scenario {name} not in the table"
            );
        }
        for key in nvml_sim_workload::KEYS {
            assert!(
                doc.contains(&format!("`{key}`")),
                "workload key `{key}` undocumented"
            );
        }
    }

    #[test]
    fn the_builtin_default_is_one_h100() {
        let s = Scenario::from_json(BUILTIN).expect("builtin");
        assert_eq!(s.devices.len(), 1);
        assert_eq!(s.devices[0].facts.architecture, 9);
        assert_eq!(s.speed, 1.0);
    }

    #[test]
    fn top_level_defaults_and_unknown_fields() {
        let s = Scenario::from_json(r#"{"expect": {"top_finding": "x"}, "whatever": [1, 2]}"#)
            .expect("valid");
        assert!(s.devices.is_empty(), "devices default to none");
        #[cfg(not(feature = "old-driver"))]
        {
            assert_eq!(s.driver_version, "550.54.15");
            assert_eq!(s.nvml_version, "12.550.54.15");
            assert_eq!(s.cuda_driver_version, 12040);
        }
        let s = Scenario::from_json(r#"{"driver_version": "535.1", "devices": [{"count": 3}]}"#)
            .expect("valid");
        assert!(s.nvml_version.ends_with(".535.1"));
        assert_eq!(s.devices.len(), 3);
        assert_eq!(s.devices[2].index, 2);
        assert_ne!(s.devices[0].uuid, s.devices[1].uuid);
    }

    #[test]
    fn errors_carry_a_position_or_a_path() {
        let syntax = Scenario::from_json("{\n  \"speed\": fast\n}").expect_err("syntax");
        assert!(syntax.contains("line 2 column"), "{syntax}");
        let path =
            Scenario::from_json(r#"{"devices": [{}, {"preset": "nope"}]}"#).expect_err("preset");
        assert!(path.starts_with("devices[1]: unknown preset"), "{path}");
        let fault =
            Scenario::from_json(r#"{"faults": [{"kind": "gpu_lost", "at_s": 1, "device": 0}]}"#)
                .expect_err("no device 0");
        assert!(fault.starts_with("faults[0]:"), "{fault}");
        assert!(Scenario::from_json(r#"{"speed": 0}"#).is_err());
        assert!(Scenario::from_json(r#"{"init_error": 0}"#).is_err());
        let slow = Scenario::from_json(r#"{"init_delay_ms": 2500}"#).expect("slow init");
        assert_eq!(slow.init_delay_ms, 2500);
        let too_slow = Scenario::from_json(r#"{"init_delay_ms": 60001}"#).expect_err("capped");
        assert!(too_slow.contains("one minute"), "{too_slow}");
    }
}
