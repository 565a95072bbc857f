//! The demo trainer connected to gpuwhy: the scenario's workload replayed with real sleeps,
//! its step markers going to a gpuwhy [`Session`] — the job a user would run, in miniature.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;
use std::time::Instant;

use gpuwhy::session::Session;
use gpuwhy::steps::PhaseId;
pub use nvml_sim_workload::Schedule;
use nvml_sim_workload::{run_trainer_from, Markers, TrainerRun, Workload};

/// Sends the trainer's markers to a session, registering custom phases on first use.
pub struct SessionMarkers<'s> {
    session: &'s Session,
    ids: Mutex<HashMap<String, Option<PhaseId>>>,
}

impl<'s> SessionMarkers<'s> {
    /// Markers for `session`.
    pub fn new(session: &'s Session) -> Self {
        SessionMarkers {
            session,
            ids: Mutex::new(HashMap::new()),
        }
    }

    fn id(&self, name: &str) -> Option<PhaseId> {
        let mut ids = self.ids.lock().unwrap_or_else(|p| p.into_inner());
        *ids.entry(name.to_string())
            .or_insert_with(|| self.session.register_phase(name).ok())
    }
}

impl Markers for SessionMarkers<'_> {
    fn step_begin(&self) {
        self.session.step_begin();
    }

    fn phase(&self, name: &str) {
        if let Some(id) = self.id(name) {
            self.session.phase(id);
        }
    }

    fn step_end(&self) {
        self.session.step_end();
    }

    fn event(&self, name: &str) {
        self.session.event(name);
    }

    fn gpu_phase(&self, name: &str, seconds: f64) {
        if let Some(id) = self.id(name) {
            self.session.attach_gpu_phase(id, seconds);
        }
    }
}

/// The schedule of a scenario's workload over `duration_s` simulated seconds, if it has one.
pub fn schedule(scenario_json: &str, duration_s: f64) -> Result<Option<Schedule>, String> {
    let w = Workload::from_scenario_json(scenario_json)
        .map_err(|e| format!("the scenario's workload is invalid: {e}"))?;
    Ok(w.map(|w| Schedule::new(&w, duration_s)))
}

/// Replays `schedule` on the calling thread into `session` until it ends or `stop` is set.
/// `origin` is the instant the session's recorder started (simulated time 0).
pub fn run(
    schedule: &Schedule,
    speed: f64,
    origin: Instant,
    stop: &AtomicBool,
    session: &Session,
) -> TrainerRun {
    run_trainer_from(schedule, speed, origin, stop, &SessionMarkers::new(session))
}
