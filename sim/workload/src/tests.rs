//! Schedules and the trainer on small workloads.

use std::sync::atomic::AtomicBool;
use std::sync::Mutex;

use super::*;

fn workload(json: &str) -> Workload {
    Workload::from_json(json)
        .and_then(|w| w.resolve(7))
        .unwrap_or_else(|e| panic!("{json}: {e}"))
}

const BASIC: &str = r#"{"jitter": 0, "phases": [
    {"name": "data", "ms": 100},
    {"name": "forward", "ms": 200, "gpu_ms": 50},
    {"name": "backward", "ms": 400},
    {"name": "optimizer", "ms": 100},
    {"name": "eval", "ms": 1000, "every": 3, "levels": {"util_gpu": 40}}
]}"#;

#[test]
fn phases_run_back_to_back_and_eval_every_third_step() {
    let s = Schedule::new(&workload(BASIC), 10.0);
    let steps: Vec<_> = s.steps().collect();
    assert_eq!(steps[0].start_s, 0.0);
    assert!((steps[0].duration_s() - 0.8).abs() < 1e-9);
    assert!((steps[2].duration_s() - 1.8).abs() < 1e-9, "eval in step 2");
    for w in steps.windows(2) {
        assert_eq!(w[0].end_s, w[1].start_s);
    }
    for st in &steps {
        assert_eq!(st.phases.len(), if st.index % 3 == 2 { 5 } else { 4 });
        assert_eq!(st.phases[0].start_s, st.start_s);
        assert_eq!(st.phases.last().map(|p| p.end_s), Some(st.end_s));
    }
    // 0.8 + 0.8 + 1.8 per three steps: step 8 would end at 10.2 s, past the horizon.
    assert_eq!(s.len(), 8);
    assert!(s.end_s() <= 10.0);
    let fwd = steps[0].phases[1];
    assert_eq!(fwd.gpu_s, Some(0.05));
    assert_eq!(steps[0].phases[0].gpu_s, None);
}

#[test]
fn state_at_gives_the_phase_and_its_levels() {
    let s = Schedule::new(&workload(BASIC), 10.0);
    let at = |t: f64| s.state_at(t, 0);
    assert_eq!(at(0.05).name(), "data");
    assert_eq!(at(0.05).level("util_gpu"), Some(2.0));
    assert_eq!(at(0.15).name(), "forward");
    assert_eq!(at(0.15).level("util_gpu"), Some(97.0));
    assert_eq!(at(0.5).level("util_gpu"), Some(98.0));
    assert_eq!(at(0.75).name(), "optimizer");
    assert_eq!(at(2.5).name(), "eval");
    assert_eq!(at(2.5).level("util_gpu"), Some(40.0));
    assert_eq!(at(2.5).step, Some(2));
    assert_eq!(
        at(2.5).level("power_w"),
        None,
        "not set: the simulator's default"
    );
    assert_eq!(at(-1.0).name(), IDLE);
    assert_eq!(at(-1.0).level("util_gpu"), Some(0.0));
    // Past the horizon (8 steps, 8.4 s) the timeline replays from step 0.
    assert_eq!(at(8.4 + 2.5).name(), "eval");
    assert_eq!(at(8.4 + 2.5).step, Some(2));
    assert_eq!(at(10.0 * 8.4 + 0.05).name(), "data");
}

#[test]
fn jitter_stays_within_its_bounds_and_repeats() {
    let w = workload(r#"{"jitter": 0.1, "phases": [{"name": "forward", "ms": 100}]}"#);
    let s = Schedule::new(&w, 50.0);
    let d: Vec<f64> = s.steps().map(|st| st.duration_s()).collect();
    assert!(d.iter().all(|x| (0.09..=0.11).contains(x)), "{d:?}");
    let min = d.iter().copied().fold(f64::MAX, f64::min);
    let max = d.iter().copied().fold(0.0, f64::max);
    assert!(max - min > 0.015, "jitter varies: {min}..{max}");
    assert_eq!(s, Schedule::new(&w, 50.0), "deterministic");
    let other = w.clone().resolve(8).expect("valid");
    assert_eq!(other.seed(), 7, "an explicit seed is kept");
    let mut reseeded = w.clone();
    reseeded.seed = Some(8);
    assert_ne!(
        Schedule::new(&reseeded, 50.0).step(0),
        s.step(0),
        "the seed changes the draws"
    );
}

#[test]
fn a_longer_horizon_keeps_the_same_first_steps() {
    let w = workload(
        r#"{"shapes": {"sigma": 0.4}, "phases": [{"name": "data", "ms": 20}, {"name": "forward", "ms": 100}]}"#,
    );
    let short = Schedule::new(&w, 10.0);
    let long = Schedule::new(&w, 100.0);
    assert!(long.len() > short.len());
    for k in 0..short.len() {
        assert_eq!(short.step(k), long.step(k));
    }
}

#[test]
fn shapes_spread_step_times_lognormally_and_memory_follows() {
    let w = workload(
        r#"{"jitter": 0, "shapes": {"sigma": 0.4}, "memory": {"base_mib": 20000, "shape_mib": 10000},
            "phases": [{"name": "data", "ms": 10}, {"name": "forward", "ms": 100}, {"name": "backward", "ms": 200}, {"name": "optimizer", "ms": 40}]}"#,
    );
    let s = Schedule::new(&w, 600.0);
    let mut shapes: Vec<f64> = s.steps().map(|st| st.shape).collect();
    shapes.sort_by(f64::total_cmp);
    let q = |p: f64| shapes[(p * (shapes.len() - 1) as f64) as usize];
    assert!((q(0.5) - 1.0).abs() < 0.05, "median {}", q(0.5));
    let p95 = q(0.95) / q(0.5);
    assert!(
        (1.75..=2.1).contains(&p95),
        "p95/p50 {p95} (exp(1.645 × 0.4) = 1.93)"
    );
    let st = s.step(3).expect("step 3");
    assert!(
        (st.phases[0].duration_s() - 0.010).abs() < 1e-12,
        "data not shaped"
    );
    assert!((st.phases[1].duration_s() - 0.1 * st.shape).abs() < 1e-12);
    assert!(
        (st.phases[3].duration_s() - 0.040).abs() < 1e-12,
        "optimizer not shaped"
    );
    let mid = (st.phases[1].start_s + st.phases[1].end_s) / 2.0;
    let mem = s.state_at(mid, 0).level("mem_used_mib").expect("memory");
    assert!((mem - (20000.0 + 10000.0 * st.shape)).abs() < 1e-6);
}

#[test]
fn a_straggler_stretches_compute_phases_and_the_others_wait() {
    let w = workload(
        r#"{"jitter": 0, "phases": [{"name": "data", "ms": 100}, {"name": "forward", "ms": 200, "gpu_ms": 200}, {"name": "backward", "ms": 400}],
            "wait": {"util_gpu": 30},
            "devices": [{"device": 2, "compute_scale": 2, "levels": {"forward": {"sm_clock_mhz": 1350}}}]}"#,
    );
    let s = Schedule::new(&w, 10.0);
    let st = s.step(0).expect("step");
    assert!(
        (st.duration_s() - (0.1 + 0.4 + 0.8)).abs() < 1e-9,
        "lockstep at the slowest"
    );
    assert_eq!(st.phases[1].gpu_s, Some(0.2), "the trainer's own GPU time");
    // Forward runs 0.1..0.5: device 0 is busy until 0.3, then waits; device 2 is busy.
    assert_eq!(s.state_at(0.2, 0).name(), "forward");
    assert_eq!(s.state_at(0.4, 0).name(), WAIT);
    assert_eq!(s.state_at(0.4, 0).level("util_gpu"), Some(30.0));
    assert_eq!(s.state_at(0.4, 2).name(), "forward");
    assert_eq!(s.state_at(0.4, 2).level("sm_clock_mhz"), Some(1350.0));
    assert_eq!(s.state_at(0.4, 0).level("sm_clock_mhz"), None);
    // Data is not a compute phase: nobody waits there.
    assert_eq!(s.state_at(0.09, 0).name(), "data");
}

#[test]
fn devices_can_lag_and_offset_utilization() {
    let w = workload(
        r#"{"jitter": 0, "phases": [{"name": "forward", "ms": 300}, {"name": "sync", "ms": 100, "levels": {"util_gpu": 15}}],
            "devices": [{"device": 1, "time_offset_s": 0.1, "util_offset": -5}]}"#,
    );
    let s = Schedule::new(&w, 10.0);
    assert_eq!(s.state_at(0.35, 0).name(), "sync");
    assert_eq!(s.state_at(0.35, 1).name(), "forward", "device 1 lags 0.1 s");
    assert_eq!(s.state_at(0.35, 1).level("util_gpu"), Some(92.0));
    assert_eq!(s.state_at(0.45, 1).level("util_gpu"), Some(10.0));
    assert_eq!(s.state_at(0.05, 1).name(), IDLE);
    assert_eq!(
        s.state_at(0.05, 1).level("util_gpu"),
        Some(0.0),
        "no offset while idle"
    );
}

#[test]
fn start_s_idles_first_and_at_steps_picks_steps() {
    let w = workload(
        r#"{"jitter": 0, "start_s": 2, "idle": {"util_gpu": 1, "pcie_gen": 1},
            "phases": [{"name": "forward", "ms": 100}, {"name": "gc", "ms": 500, "at_steps": [1, 4]}]}"#,
    );
    let s = Schedule::new(&w, 10.0);
    assert_eq!(s.state_at(1.0, 0).level("pcie_gen"), Some(1.0));
    assert_eq!(s.state_at(1.0, 0).name(), IDLE);
    assert_eq!(s.state_at(2.05, 0).name(), "forward");
    assert_eq!(s.state_at(1.0, 0).level("util_gpu"), Some(1.0));
    let slow: Vec<u64> = s
        .steps()
        .filter(|st| st.duration_s() > 0.2)
        .map(|st| st.index)
        .collect();
    assert_eq!(slow, [1, 4]);
    assert!(s
        .step(1)
        .is_some_and(|st| s.phase(&st.phases[1]).marks_event()));
}

#[test]
fn metric_names_and_noise_defaults() {
    let w = workload(
        r#"{"memory": {"base_mib": 1}, "noise": {"power_w": 5}, "wait": {"nvlink_rx_kibs": 1},
            "phases": [{"name": "forward", "ms": 100, "levels": {"gpm_sm_util": 30}}]}"#,
    );
    assert_eq!(
        w.metric_names(),
        [
            "gpm_sm_util",
            "mem_used_mib",
            "nvlink_rx_kibs",
            "power_w",
            "util_gpu"
        ]
    );
    assert_eq!(w.noise_of("util_gpu"), Some(DEFAULT_UTIL_NOISE));
    assert_eq!(w.noise_of("power_w"), Some(5.0));
    assert_eq!(w.noise_of("temp_c"), None);
}

#[test]
fn the_workload_of_a_scenario_takes_its_seed() {
    let w = Workload::from_scenario_json(
        r#"{"seed": 42, "devices": [], "workload": {"phases": [{"name": "forward", "ms": 100}]}}"#,
    )
    .expect("valid")
    .expect("has a workload");
    assert_eq!(w.seed(), 42);
    assert!(Workload::from_scenario_json(r#"{"devices": []}"#)
        .expect("valid")
        .is_none());
}

#[test]
fn mistakes_are_explained() {
    for (json, needle) in [
        (r#"{"phases": []}"#, "at least one phase"),
        (r#"{"phases": [{"name": "forward", "ms": -1}]}"#, "`ms`"),
        (
            r#"{"phases": [{"name": "forward", "ms": 1, "every": 2}]}"#,
            "built-in phases run every step",
        ),
        (
            r#"{"phases": [{"name": "forward", "ms": 10}, {"name": "eval", "ms": 1, "every": 2, "offset": 2}]}"#,
            "`offset` must be below",
        ),
        (
            r#"{"phases": [{"name": "forward", "ms": 10}, {"name": "forward", "ms": 1}]}"#,
            "used twice",
        ),
        (
            r#"{"phases": [{"name": "eval", "ms": 10, "every": 5}]}"#,
            "at least 1 ms",
        ),
        (
            r#"{"phases": [{"name": "forward", "ms": 10}], "devices": [{"device": 1, "compute_scale": 0.5}]}"#,
            "compute_scale",
        ),
        (
            r#"{"phases": [{"name": "forward", "ms": 10}], "devices": [{"device": 1, "levels": {"fwd": {}}}]}"#,
            "no phase named `fwd`",
        ),
        (
            r#"{"phases": [{"name": "forward", "ms": 2}], "duration_s": 1e9}"#,
            "steps",
        ),
        (
            r#"{"phases": [{"name": "forward", "ms": 10, "msec": 1}]}"#,
            "unknown field `msec`",
        ),
        (
            r#"{"phases": [{"name": "forward", "ms": 10}], "jitter": 2}"#,
            "jitter",
        ),
    ] {
        let err = Workload::from_json(json)
            .and_then(|w| w.resolve(0))
            .expect_err(json)
            .to_string();
        assert!(err.contains(needle), "{json}: {err}");
    }
}

mod trainer;
