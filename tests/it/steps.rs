//! Step markers end to end: a training thread marking steps while the simulated GPU is
//! sampled, the journal of a run that never finished, a million steps in bounded memory,
//! and markers from several threads at once.

use std::time::Duration;

use gpuwhy::collect::{Clock, ManualClock, RecorderConfig};
use gpuwhy::report::journal::journal_path;
use gpuwhy::report::Report;
use gpuwhy::session::{Session, RINGS_BOUND_BYTES};
use gpuwhy::signals::steps::StepSignals;
use gpuwhy::steps::{PhaseId, StepLog, EXACT_STEPS, SKETCH_RELATIVE_ERROR};
use gpuwhy_tests::{install_sim, patched, scenario};
use serde_json::Value;

const SCHEMA: &str = include_str!("../../docs/report.schema.json");
const STEPS_DOC: &str = include_str!("../../docs/steps.md");

/// Simulation speed, as `gpuwhy_tests::record` uses.
const SPEED: f64 = 8.0;
/// Steps the training thread marks.
const STEPS: usize = 30;
/// Milliseconds of each phase on the test's clock: data, forward, backward, optimizer.
const PHASE_MS: [u64; 4] = [12, 8, 16, 4];
/// Guards a wait for the sampler against a hang only; a passing test never waits this long.
const HANG: Duration = Duration::from_secs(120);

/// A session on the simulated GPU with a journal flushed every 200 ms, timed by a manual
/// clock that the test advances.
fn sim_session(journal: &std::path::Path) -> (gpuwhy_tests::SimDir, Session, ManualClock) {
    let text = patched(
        scenario("healthy").expect("bundled scenario"),
        &[("speed", Value::from(SPEED))],
    );
    let sim = install_sim(&text, false).expect("simulator installs");
    let cfg = RecorderConfig {
        nvml_path: Some(sim.lib().to_path_buf()),
        time_scale: SPEED,
        host: false,
        journal: Some(journal.to_path_buf()),
        flush_s: 0.2,
        ..RecorderConfig::default()
    };
    let clock = ManualClock::new(SPEED);
    let session = Session::start_with_clock(cfg.into(), Clock::Manual(clock.clone()))
        .expect("session starts");
    assert!(
        session.recorder().wait_probed(HANG),
        "the simulated GPU is opened"
    );
    assert_eq!(session.recorder().gpu_absent_reason(), None);
    (sim, session, clock)
}

/// The training loop: phases of `PHASE_MS` on `clock`, an `eval` every 10 steps, a
/// GPU-measured forward time after each step, a checkpoint at the end.
fn train(s: &Session, clock: &ManualClock) {
    let phases = [
        PhaseId::DATA,
        PhaseId::FORWARD,
        PhaseId::BACKWARD,
        PhaseId::OPTIMIZER,
    ];
    for i in 0..STEPS {
        s.step_begin();
        for (p, ms) in phases.iter().zip(PHASE_MS) {
            s.phase(*p);
            clock.advance(Duration::from_millis(ms));
        }
        s.step_end();
        s.attach_gpu_phase(PhaseId::FORWARD, 0.002);
        if i % 10 == 9 {
            s.event("eval");
        }
    }
    s.event("checkpoint");
}

#[test]
fn markers_from_a_training_thread_land_in_the_report_on_the_gpu_time_axis() {
    let dir = tempfile::tempdir().expect("tempdir");
    let jp = journal_path(&dir.path().join("run.json"));
    let (_sim, session, clock) = sim_session(&jp);
    std::thread::scope(|sc| {
        sc.spawn(|| train(&session, &clock));
    });
    // Let a journal flush pass (tick by tick), then read the journal as if the run had
    // been killed here.
    for _ in 0..10 {
        assert!(clock.advance_and_settle(Duration::from_millis(100), HANG));
    }
    let killed = Report::load(&jp).expect("the journal of a running session reads");
    let report = session.finish();

    let steps = report.steps.as_ref().expect("the report has steps");
    assert_eq!(steps.count, STEPS as u64);
    assert_eq!(steps.t.len(), STEPS);
    assert_eq!(steps.ignored_markers, 0);
    assert_eq!(
        &steps.phases[..4],
        ["data", "forward", "backward", "optimizer"]
    );
    // Step times are on the report's (scaled) time axis, inside the sampled span.
    let total_ms: u64 = PHASE_MS.iter().sum();
    let want = total_ms as f64 / 1000.0 * SPEED;
    let p50 = steps.stats["step"].p50_s;
    assert!(
        (p50 - want).abs() < 1e-4 * want,
        "step p50 {p50} s, phases add up to {want} s"
    );
    assert!(steps.t[0] >= 0.0 && steps.t[STEPS - 1] < report.run.duration_s);
    assert!(!report.series.is_empty() && !report.series[0].data.t.is_empty());
    // Each phase's share of step time is its share of the clock's advances.
    let sig = StepSignals::from_report(&report).expect("step signals");
    for (name, ms) in ["data", "forward", "backward", "optimizer"]
        .iter()
        .zip(PHASE_MS)
    {
        let share = sig
            .phases
            .iter()
            .find(|p| p.name == *name)
            .expect("phase share");
        let want = ms as f64 / total_ms as f64;
        assert!(
            (share.p50 - want).abs() < 1e-3,
            "{name}: share p50 {} vs {want}",
            share.p50
        );
    }
    // GPU-measured durations are scaled like every other time.
    let gpu = &steps.gpu_phase_durations["forward"];
    assert!(gpu
        .0
        .iter()
        .all(|v| (f64::from(*v) - 0.002 * SPEED).abs() < 1e-6));
    let kinds = |r: &Report, k: &str| r.events.iter().filter(|e| e.kind == k).count();
    assert_eq!(kinds(&report, "eval"), 3);
    assert_eq!(kinds(&report, "checkpoint"), 1);

    // The journal of the unfinished run kept every step and event up to its last flush.
    let ks = killed.steps.as_ref().expect("the journal has steps");
    assert_eq!(ks.count, STEPS as u64);
    assert_eq!(ks.t, steps.t);
    assert_eq!(
        ks.phase_durations["backward"],
        steps.phase_durations["backward"]
    );
    assert!((ks.stats["step"].p50_s - p50).abs() < 1e-6);
    assert_eq!(kinds(&killed, "eval"), 3);
    // And the finished journal too.
    let replayed = Report::load(&jp).expect("journal");
    assert_eq!(replayed.steps.as_ref().map(|s| s.count), Some(STEPS as u64));

    // The report with steps is valid against the published schema, which describes every
    // field of the steps section.
    let doc: Value = serde_json::from_str(&report.to_json()).expect("JSON");
    let schema: Value = serde_json::from_str(SCHEMA).expect("schema JSON");
    let v = jsonschema::draft202012::new(&schema).expect("schema compiles");
    let errs: Vec<String> = v.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errs.is_empty(), "the report breaks the schema: {errs:?}");
    let described = |def: &str, obj: &Value| -> Vec<String> {
        let props = &schema["$defs"][def]["properties"];
        obj.as_object()
            .expect("object")
            .keys()
            .filter(|k| props.get(k.as_str()).is_none())
            .cloned()
            .collect()
    };
    assert_eq!(described("steps", &doc["steps"]), Vec::<String>::new());
    assert_eq!(
        described("phase_stats", &doc["steps"]["stats"]["step"]),
        Vec::<String>::new()
    );
    assert!(schema["properties"]["steps"].is_object());
}

#[test]
fn a_million_steps_stay_within_the_documented_memory_bound() {
    let cfg = RecorderConfig {
        no_gpu: true,
        host: false,
        ..RecorderConfig::default()
    };
    let session = Session::start(cfg.into()).expect("session starts");
    let fwd = session.register_phase("forward").expect("built-in");
    assert_eq!(fwd, PhaseId::FORWARD);
    for _ in 0..1_000_000 {
        session.step_begin();
        session.phase(PhaseId::DATA);
        session.phase(fwd);
        session.phase(PhaseId::BACKWARD);
        session.phase(PhaseId::OPTIMIZER);
        session.step_end();
    }
    let report = session.finish();
    let s = report.steps.expect("steps");
    assert_eq!(s.count, 1_000_000);
    assert_eq!(s.t.len(), EXACT_STEPS);
    assert_eq!(s.stats["step"].count, 1_000_000);
    assert_eq!(s.stats["optimizer"].count, 1_000_000);
    assert_eq!(s.quantile_error, SKETCH_RELATIVE_ERROR);
    let bound = StepLog::worst_case_bytes(EXACT_STEPS) + RINGS_BOUND_BYTES;
    assert_eq!(s.memory_bound_bytes, bound as u64);
    assert!(
        s.memory_bytes <= s.memory_bound_bytes,
        "{} bytes used, bound {}",
        s.memory_bytes,
        s.memory_bound_bytes
    );
    eprintln!(
        "1,000,000 steps: {} bytes of step storage, bound {} bytes",
        s.memory_bytes, s.memory_bound_bytes
    );
}

#[test]
fn markers_from_four_threads_at_once_keep_exact_counts() {
    let cfg = RecorderConfig {
        no_gpu: true,
        host: false,
        interval_s: 0.01,
        ..RecorderConfig::default()
    };
    let session = Session::start(cfg.into()).expect("session starts");
    let custom = session.register_phase("allreduce").expect("custom phase");
    assert_eq!(custom, PhaseId(PhaseId::FIRST_CUSTOM));
    const PER_THREAD: usize = 20_000;
    std::thread::scope(|sc| {
        for _ in 0..4 {
            sc.spawn(|| {
                for i in 0..PER_THREAD {
                    session.step_begin();
                    session.phase(PhaseId::DATA);
                    session.phase(PhaseId::FORWARD);
                    session.phase(custom);
                    session.step_end();
                    session.attach_gpu_phase(PhaseId::FORWARD, 1e-4);
                    if i % 1000 == 0 {
                        session.event("log");
                    }
                }
            });
        }
    });
    let report = session.finish();
    let s = report.steps.as_ref().expect("steps");
    // Each thread's steps are its own sequence (they used to be pooled into one, which let a
    // helper thread's steps pass for the training loop's): the section is one thread's, and
    // `threads` lists all four with their exact counts.
    let n = PER_THREAD as u64;
    assert_eq!(s.count, n);
    assert_eq!(s.ignored_markers, 0);
    for phase in ["data", "forward", "allreduce"] {
        assert_eq!(s.stats[phase].count, n, "{phase}");
    }
    assert_eq!(s.gpu_stats["forward"].count, n);
    assert_eq!(s.phases[4], "allreduce");
    assert_eq!(s.threads.len(), 4);
    assert_eq!(s.threads.iter().filter(|t| t.main).count(), 1);
    for t in &s.threads {
        assert_eq!(t.count, n, "lane {}", t.lane);
        assert_eq!(t.stats["allreduce"].count, n);
        assert_eq!(t.gpu_stats["forward"].count, n);
    }
    // The thread list is valid against the published schema and fully described by it.
    let doc: Value = serde_json::from_str(&report.to_json()).expect("JSON");
    let schema: Value = serde_json::from_str(SCHEMA).expect("schema JSON");
    let v = jsonschema::draft202012::new(&schema).expect("schema compiles");
    let errs: Vec<String> = v.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errs.is_empty(), "the report breaks the schema: {errs:?}");
    let props = &schema["$defs"]["thread_steps"]["properties"];
    for t in doc["steps"]["threads"].as_array().expect("threads") {
        let keys = t.as_object().expect("object").keys();
        let missing: Vec<&String> = keys.filter(|k| props.get(k.as_str()).is_none()).collect();
        assert!(missing.is_empty(), "not in the schema: {missing:?}");
    }
    // Each step's phases fit inside it: no step was cut by another thread's markers.
    for i in 0..s.t.len() {
        let phases: f32 = ["data", "forward", "allreduce"]
            .iter()
            .map(|p| s.phase_durations[*p].0[i])
            .sum();
        assert!(phases <= s.duration.0[i] * 1.0001 + 1e-9, "step {i}");
    }
    assert_eq!(
        report.events.iter().filter(|e| e.kind == "log").count(),
        4 * 20
    );
}

#[test]
fn phase_registration_reuses_names_and_refuses_too_many() {
    let cfg = RecorderConfig {
        no_gpu: true,
        host: false,
        ..RecorderConfig::default()
    };
    let session = Session::start(cfg.into()).expect("session starts");
    assert_eq!(session.register_phase("data").ok(), Some(PhaseId::DATA));
    let a = session.register_phase("eval_forward").expect("custom");
    assert_eq!(session.register_phase("eval_forward").ok(), Some(a));
    assert!(session.register_phase("step").is_err(), "reserved");
    assert!(session.register_phase("").is_err());
    for i in 0..11 {
        session
            .register_phase(&format!("p{i}"))
            .expect("room for 12 custom");
    }
    let err = session.register_phase("one_more").expect_err("17th phase");
    assert!(err.to_string().contains("at most 16 phases"), "{err}");
    // No marker was used: no steps section.
    assert!(session.finish().steps.is_none());
}

#[test]
fn docs_state_the_bounds_the_code_computes() {
    let grouped = |n: usize| {
        let digits: Vec<char> = n.to_string().chars().rev().collect();
        let groups: Vec<String> = digits
            .chunks(3)
            .map(|g| g.iter().rev().collect())
            .rev()
            .collect();
        groups.join(",")
    };
    let log = StepLog::worst_case_bytes(EXACT_STEPS);
    for (what, n) in [
        ("EXACT_STEPS", EXACT_STEPS),
        ("StepLog bound", log),
        ("ring bound", RINGS_BOUND_BYTES),
        ("total bound", log + RINGS_BOUND_BYTES),
    ] {
        assert!(
            STEPS_DOC.contains(&grouped(n)),
            "docs/steps.md does not state {what} = {}",
            grouped(n)
        );
    }
    assert!(STEPS_DOC.contains("1/128"), "the sketch's relative error");
}
