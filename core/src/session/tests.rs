//! Sessions end to end without a GPU: threads, live steps, baselines.

use super::*;

#[test]
fn a_session_can_be_shared_between_threads() {
    fn shared<T: Send + Sync>() {}
    shared::<Session>();
}

#[test]
fn a_thread_marks_through_its_own_lane() {
    let cfg = RecorderConfig {
        no_gpu: true,
        host: false,
        ..RecorderConfig::default()
    };
    let s = Session::start(cfg.into()).expect("starts without a GPU");
    let handle = s.marker_handle();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let mine = handle.for_this_thread();
            for _ in 0..3 {
                mine.step_begin();
                mine.phase(PhaseId::FORWARD);
                mine.attach_gpu_phase(PhaseId::FORWARD, 0.001);
                mine.step_end();
            }
            mine.event("eval");
            // A step left open is closed when the lane goes.
            mine.step_begin();
        });
    });
    let report = s.finish();
    let steps = report.steps.expect("steps");
    assert_eq!(steps.count, 3);
    assert!(report.events.iter().any(|e| e.kind == "eval"));
}

#[test]
fn steps_are_visible_before_the_end_and_in_the_report() {
    let cfg = RecorderConfig {
        no_gpu: true,
        host: false,
        ..RecorderConfig::default()
    };
    let s = Session::start(cfg.into()).expect("starts without a GPU");
    s.step_begin();
    s.phase(PhaseId::DATA);
    s.phase(PhaseId(MAX_PHASES as u16)); // out of range: counted, not recorded
    s.step_end();
    s.step_end(); // no open step
    let live = s.steps();
    assert_eq!(live.count, 1);
    assert_eq!(live.ignored_markers, 2);
    let report = s.finish();
    let steps = report.steps.expect("steps");
    assert_eq!(steps.count, 1);
    assert!(steps.memory_bytes <= steps.memory_bound_bytes);
    assert!(report.gpu_absent_reason.is_some());
    assert!(report.run.complete, "a finished session is a complete run");
}
fn stepped(cfg: SessionConfig, steps: usize) -> Report {
    let s = Session::start(cfg).expect("starts without a GPU");
    for _ in 0..steps {
        s.step_begin();
        s.phase(PhaseId::FORWARD);
        s.step_end();
    }
    s.finish()
}

fn no_gpu() -> RecorderConfig {
    RecorderConfig {
        no_gpu: true,
        host: false,
        ..RecorderConfig::default()
    }
}

#[test]
fn a_session_with_a_baseline_carries_the_comparison() {
    let dir = tempfile::tempdir().expect("temp dir");
    let base = dir.path().join("base.json");
    stepped(no_gpu().into(), 40).save(&base).expect("saves");
    let cfg = SessionConfig {
        baseline: Some(base.clone()),
        ..no_gpu().into()
    };
    let report = stepped(cfg, 40);
    let c = report.comparison.expect("a comparison section");
    assert_eq!(c.baseline, base.display().to_string());
    assert_eq!(c.error, None);
    let result = c.result.expect("compared");
    let steps = result.steps.expect("both runs have steps");
    assert!(
        steps.test.is_some(),
        "40 steps each are enough for the rank test"
    );
    assert!(!result.summary.is_empty());
}

#[test]
fn a_baseline_that_cannot_be_read_costs_the_report_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = dir.path().join("no-such-baseline.json");
    let cfg = SessionConfig {
        baseline: Some(missing),
        ..no_gpu().into()
    };
    let report = stepped(cfg, 5);
    assert_eq!(report.steps.as_ref().map(|s| s.count), Some(5));
    let c = report.comparison.expect("the section says why");
    assert!(c.result.is_none());
    let err = c.error.expect("an error");
    assert!(err.contains("cannot read the baseline"), "{err}");
    assert!(err.contains("no-such-baseline.json"), "{err}");
    // No baseline named: no section at all.
    assert!(stepped(no_gpu().into(), 1).comparison.is_none());
}
