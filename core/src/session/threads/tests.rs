//! Choosing the training loop among marking threads, and the diagnosis that follows it.

use super::*;
use crate::steps::MAX_PHASES;

fn log(steps: &[(f64, Option<f64>)]) -> StepLog {
    let mut l = StepLog::new(100);
    for (i, (dur, data)) in steps.iter().enumerate() {
        let mut p = [f64::NAN; MAX_PHASES];
        if let Some(d) = data {
            p[PhaseId::DATA.index()] = *d;
        }
        l.push(i as f64, *dur, &p);
    }
    l
}

#[test]
fn the_loop_is_the_named_thread_then_the_data_phase_then_the_most_time() {
    let micro = log(&[(0.001, None); 50]);
    let main = log(&[(0.5, Some(0.2)); 4]);
    let logs = [micro.clone(), main.clone(), StepLog::new(100)];
    assert_eq!(main_lane(&logs, None), (1, MainBy::DataPhase));
    assert_eq!(main_lane(&logs, Some(0)), (0, MainBy::Named));
    // A named lane out of range is no name.
    assert_eq!(main_lane(&logs, Some(9)), (1, MainBy::DataPhase));
    let long = log(&[(1.0, None); 3]);
    assert_eq!(main_lane(&[micro, long], None), (1, MainBy::MostTime));
    assert_eq!(main_lane(&[], None), (0, MainBy::MostTime));
}

#[test]
fn one_thread_gives_no_thread_list_and_two_list_both() {
    let names: Vec<String> = crate::steps::BUILTIN_PHASES.map(String::from).to_vec();
    let one = steps_data(&[log(&[(0.5, Some(0.2)); 4])], None, &names);
    assert!(one.threads.is_empty());
    assert_eq!(one.count, 4);
    let logs = [log(&[(0.001, None); 50]), log(&[(0.5, Some(0.2)); 4])];
    let d = steps_data(&logs, None, &names);
    assert_eq!(d.count, 4, "the loop's steps, not the helper's");
    assert!((d.stats["data"].p50_s - 0.2).abs() < 1e-6);
    assert_eq!(d.threads.len(), 2);
    let helper = &d.threads[0];
    assert_eq!((helper.lane, helper.main, helper.count), (0, false, 50));
    assert!((helper.stats["step"].p50_s - 0.001).abs() < 1e-6);
    assert_eq!(d.threads[1].chosen_by.as_deref(), Some("data_phase"));
    assert_eq!(
        d.memory_bound_bytes,
        2 * StepLog::worst_case_bytes(100) as u64,
        "each marking thread's log counts"
    );
}

const MS: u64 = 1_000_000;

/// A helper thread micro-stepping (1 ms, a 40 ms stall every 10th: the pattern of a
/// `periodic_stall`) beside a training loop whose steps wait 200 ms of 500 ms for data,
/// folded as the sampler folds them, and diagnosed.
fn helper_and_loop(name_helper: bool) -> crate::report::Report {
    use crate::session::fold::{code, Folder, MAIN, PHASE, STEP_BEGIN, STEP_END};
    let mut f = Folder::new(1000, 3, 1.0);
    let mut rec = |lane: usize, t: u64, kind: u64, arg: u16| {
        f.record(lane, t, code(kind, arg), |k| format!("kind{k}"))
    };
    let mut t = 0;
    for i in 0..400u64 {
        let d = if i % 10 == 9 { 40 * MS } else { MS };
        rec(0, t, STEP_BEGIN, 0);
        rec(0, t + d, STEP_END, 0);
        t += d + MS;
    }
    if name_helper {
        rec(0, t, MAIN, 0);
    }
    for i in 0..60u64 {
        let t = i * 500 * MS;
        rec(1, t, STEP_BEGIN, 0);
        rec(1, t, PHASE, PhaseId::DATA.0);
        rec(1, t + 200 * MS, PHASE, PhaseId::FORWARD.0);
        rec(1, t + 350 * MS, PHASE, PhaseId::BACKWARD.0);
        rec(1, t + 500 * MS, STEP_END, 0);
    }
    let names: Vec<String> = crate::steps::BUILTIN_PHASES.map(String::from).to_vec();
    let mut rec = crate::recording::Recording::new(crate::report::RunInfo {
        duration_s: 30.0,
        source: "none".into(),
        complete: true,
        interval_s: 0.1,
        ..Default::default()
    });
    rec.gpu_absent_reason = Some("no GPU in this test".into());
    rec.steps = Some(f.to_data(&names));
    let mut r = crate::report::Report::from_recording(&rec);
    crate::analysis::diagnose(&mut r);
    r
}

#[test]
fn a_helper_threads_micro_steps_do_not_hide_the_loops_data_wait() {
    let r = helper_and_loop(false);
    let ids: Vec<&str> = r.findings.iter().map(|f| f.id.as_str()).collect();
    let st = r.steps.as_ref().expect("steps");
    assert_eq!(st.count, 60, "the loop's steps: {ids:?}");
    assert!((st.stats["data"].p50_s - 0.2).abs() < 1e-6);
    assert!(!ids.contains(&"periodic_stall"), "{ids:?}");
    assert!(ids.contains(&"data_starvation"), "{ids:?}");
    let helper = st
        .threads
        .iter()
        .find(|t| !t.main)
        .expect("the helper is listed");
    assert_eq!(helper.count, 400);
    assert!((helper.stats["step"].max_s - 0.040).abs() < 1e-6);
    // Named by the caller, the helper is what is diagnosed: the choice decides the diagnosis.
    let r = helper_and_loop(true);
    let ids: Vec<&str> = r.findings.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(r.steps.as_ref().map(|s| s.count), Some(400));
    assert!(ids.contains(&"periodic_stall"), "{ids:?}");
    let main = r
        .steps
        .as_ref()
        .and_then(|s| s.threads.iter().find(|t| t.main).cloned());
    assert_eq!(main.and_then(|m| m.chosen_by).as_deref(), Some("named"));
}
