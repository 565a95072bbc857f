//! The per-lane step state machine: phases, scaled time, stray markers, GPU durations, journal deltas.

use super::*;
use crate::steps::PhaseId;

const MS: u64 = 1_000_000;

fn names() -> Vec<String> {
    crate::steps::BUILTIN_PHASES.map(String::from).to_vec()
}

fn run(f: &mut Folder, lane: usize, records: &[(u64, u64)]) {
    for (a, b) in records {
        f.record(lane, *a, *b, |k| format!("kind{k}"));
    }
}

fn phase(id: PhaseId) -> u64 {
    code(PHASE, id.0)
}

#[test]
fn phases_split_the_step_and_time_is_scaled() {
    let mut f = Folder::new(100, 2, 2.0);
    run(
        &mut f,
        0,
        &[
            (10 * MS, code(STEP_BEGIN, 0)),
            (10 * MS, phase(PhaseId::DATA)),
            (14 * MS, phase(PhaseId::FORWARD)),
            (15 * MS, phase(PhaseId::BACKWARD)),
            (17 * MS, phase(PhaseId::FORWARD)),
            (18 * MS, code(STEP_END, 0)),
        ],
    );
    let d = f.to_data(&names());
    assert_eq!(d.count, 1);
    assert!((d.t[0] - 0.020).abs() < 1e-12, "10 ms × scale 2");
    assert!((d.duration.0[0] - 0.016).abs() < 1e-7);
    assert!((d.phase_durations["data"].0[0] - 0.008).abs() < 1e-7);
    assert!(
        (d.phase_durations["forward"].0[0] - 0.004).abs() < 1e-7,
        "a phase entered twice adds up"
    );
    assert!(!d.phase_durations.contains_key("optimizer"));
}

#[test]
fn markers_that_fit_no_step_are_counted_not_guessed() {
    let mut f = Folder::new(100, 1, 1.0);
    run(
        &mut f,
        0,
        &[
            (MS, code(STEP_END, 0)),
            (MS, code(GPU, 1)),
            (f64::NAN.to_bits(), code(GPU, 1)),
            (2 * MS, phase(PhaseId(40))),
            // A phase without step_begin opens a step; step_begin closes an open one.
            (3 * MS, phase(PhaseId::DATA)),
            (5 * MS, code(STEP_BEGIN, 0)),
            (6 * MS, code(STEP_END, 0)),
            (7 * MS, code(EVENT, 3)),
            (8 * MS, code(STEP_BEGIN, 0)),
            (9 * MS, code(RESET, 0)),
        ],
    );
    assert_eq!(f.log().count(), 2);
    assert_eq!(f.to_data(&names()).ignored_markers, 4);
    let mut ev = Vec::new();
    f.take_events(&mut ev);
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].kind, "kind3");
    assert!((ev[0].t_s - 0.007).abs() < 1e-12);
}

#[test]
fn gpu_durations_go_to_the_current_step_once_its_phase_began_else_the_last() {
    let mut f = Folder::new(100, 1, 1.0);
    let secs = |s: f64| s.to_bits();
    run(
        &mut f,
        0,
        &[
            (0, code(STEP_BEGIN, 0)),
            (MS, phase(PhaseId::FORWARD)),
            (secs(0.0005), code(GPU, 1)),
            (2 * MS, code(STEP_END, 0)),
            // After the step: to the step just completed.
            (secs(0.0003), code(GPU, 2)),
            (3 * MS, code(STEP_BEGIN, 0)),
            // Forward not yet entered in this step: still the previous step's.
            (secs(0.0001), code(GPU, 1)),
            (4 * MS, phase(PhaseId::FORWARD)),
            (5 * MS, code(STEP_END, 0)),
        ],
    );
    f.finish();
    let d = f.to_data(&names());
    let fwd = &d.gpu_phase_durations["forward"].0;
    assert!((fwd[0] - 0.0006).abs() < 1e-8, "{fwd:?}");
    assert!(fwd[1].is_nan());
    assert!((d.gpu_phase_durations["backward"].0[0] - 0.0003).abs() < 1e-8);
}

#[test]
fn journal_deltas_carry_each_row_once() {
    let mut f = Folder::new(100, 1, 1.0);
    let step = |f: &mut Folder, t: u64| {
        run(
            f,
            0,
            &[(t, code(STEP_BEGIN, 0)), (t + MS, code(STEP_END, 0))],
        )
    };
    assert!(f.journal_delta(&names()).is_none());
    step(&mut f, 0);
    step(&mut f, 10 * MS);
    let (first, d) = f.journal_delta(&names()).expect("new steps");
    assert_eq!((first, d.t.len()), (0, 2));
    assert!(f.journal_delta(&names()).is_none());
    step(&mut f, 20 * MS);
    let (first, d) = f.journal_delta(&names()).expect("new steps");
    assert_eq!((first, d.t.len(), d.count), (2, 1, 3));
}

#[test]
fn the_journal_starts_over_when_another_thread_becomes_the_loop() {
    let mut f = Folder::new(100, 2, 1.0);
    run(
        &mut f,
        0,
        &[(0, code(STEP_BEGIN, 0)), (MS, code(STEP_END, 0))],
    );
    let mut merged = None;
    let (first, d) = f.journal_delta(&names()).expect("the helper's step");
    crate::steps::merge_delta(&mut merged, first, d);
    // A thread that marks a data phase: it is the loop from now on.
    run(
        &mut f,
        1,
        &[
            (0, phase(PhaseId::DATA)),
            (5 * MS, phase(PhaseId::FORWARD)),
            (9 * MS, code(STEP_END, 0)),
            (10 * MS, phase(PhaseId::DATA)),
            (15 * MS, code(STEP_END, 0)),
        ],
    );
    let (first, d) = f.journal_delta(&names()).expect("the loop's steps");
    assert_eq!(first, 0, "from the loop's first step");
    crate::steps::merge_delta(&mut merged, first, d);
    let m = merged.expect("steps");
    assert_eq!((m.count, m.t.len()), (2, 2));
    assert_eq!(m.stats["data"].count, 2);
    assert!(f.journal_delta(&names()).is_none());
}

#[test]
fn a_discarded_step_leaves_nothing_and_late_gpu_times_still_reach_the_last_step() {
    let mut f = Folder::new(100, 1, 1.0);
    run(
        &mut f,
        0,
        &[
            (0, phase(PhaseId::DATA)),
            (MS, phase(PhaseId::FORWARD)),
            (2 * MS, code(STEP_END, 0)),
            // The next step's data wait turns out to be the end of the data.
            (3 * MS, phase(PhaseId::DATA)),
            (9 * MS, code(DISCARD, 0)),
            (0.0004f64.to_bits(), code(GPU, 1)),
            // A discard without an open step does nothing.
            (10 * MS, code(DISCARD, 0)),
        ],
    );
    f.finish();
    let d = f.to_data(&names());
    assert_eq!(d.count, 1);
    assert_eq!(d.ignored_markers, 0);
    assert!(
        (d.stats["data"].sum_s - 0.001).abs() < 1e-12,
        "{:?}",
        d.stats["data"]
    );
    assert!((d.gpu_phase_durations["forward"].0[0] - 0.0004).abs() < 1e-8);
}
