use super::*;
use crate::report::{Column, SeriesData};
use crate::steps::{PhaseId, StepLog, MAX_PHASES};

fn names() -> Vec<String> {
    BUILTIN_PHASES.map(String::from).to_vec()
}

/// splitmix64 → [0, 1).
fn uniform01(i: u64) -> f64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
}

/// Steps back to back of `step(i)` seconds split 30/20/40/10 between data, forward,
/// backward and optimizer, with `gap(i)` seconds after each.
fn run(n: usize, step: impl Fn(usize) -> f64, gap: impl Fn(usize) -> f64) -> StepsData {
    let mut log = StepLog::new(100_000);
    let mut t = 0.0;
    for i in 0..n {
        let d = step(i);
        let mut p = [f64::NAN; MAX_PHASES];
        for (id, share) in [
            (PhaseId::DATA, 0.3),
            (PhaseId::FORWARD, 0.2),
            (PhaseId::BACKWARD, 0.4),
            (PhaseId::OPTIMIZER, 0.1),
        ] {
            p[id.index()] = d * share;
        }
        log.push(t, d, &p);
        t += d + gap(i);
    }
    log.to_data(&names())
}

fn steady(i: usize) -> f64 {
    0.1 * (1.0 + 0.05 * (uniform01(i as u64) - 0.5))
}

#[test]
fn percentiles_shares_and_ratios_of_a_steady_loop() {
    let d = run(500, steady, |_| 0.0);
    let s = StepSignals::compute(&d, &[], &[]);
    assert_eq!((s.count, s.kept), (500, 500));
    assert!((s.step_p50_s - 0.1).abs() < 0.003);
    assert!(s.p95_over_p50 < 1.05);
    let share = |n: &str| s.phases.iter().find(|p| p.name == n).expect(n).clone();
    assert!((share("data").p50 - 0.3).abs() < 1e-4);
    assert!((share("data").p95 - 0.3).abs() < 1e-4);
    assert!((share("backward").total - 0.4).abs() < 1e-4);
    assert_eq!(share("optimizer").steps, 500);
    assert!((s.bwd_fwd_ratio_p50.expect("ratio") - 2.0).abs() < 1e-4);
    assert_eq!(s.gpu_bwd_fwd_ratio_p50, None);
    assert_eq!(s.gpu_cpu_ratio_p50, None);
    assert_eq!(s.outliers.count, 0);
    assert!(s.iqr_over_p50.expect("iqr") < 0.05);
    assert!(s.between_steps_share.expect("share") < 1e-6);
    assert!(s.period.is_none_or(|p| p.strength < 0.3));
}

#[test]
fn a_stall_every_fifty_steps_is_periodic_and_names_its_events() {
    // Every 50th step waits 0.4 s after it (an evaluation between steps).
    let d = run(1000, steady, |i| if i % 50 == 49 { 0.4 } else { 0.0 });
    let evals: Vec<Event> = (0..20)
        .map(|k| Event {
            t_s: d.t[k * 50 + 49] + 0.1,
            device: None,
            kind: "eval".into(),
            code: None,
            detail: String::new(),
        })
        .collect();
    let s = StepSignals::compute(&d, &evals, &[]);
    // The last step's cycle is its duration, so 19 of the 20 stalls are seen.
    assert_eq!(s.outliers.count, 19);
    assert_eq!(s.outliers.period_steps, Some(50.0));
    assert!(s.outliers.spacing_cv.expect("cv") < 1e-9);
    assert_eq!(s.outliers.event_kinds, vec![("eval".to_string(), 19)]);
    assert!((s.outliers.excess_share - 19.0 * 0.4 / (1000.0 * 0.1 + 19.0 * 0.4)).abs() < 0.01);
    assert!(s.between_steps_share.expect("share") > 0.05);
    assert_eq!(s.period.expect("periodic").lag, 50);
    // The steps themselves are steady.
    assert!(s.p95_over_p50 < 1.05);
}

#[test]
fn one_slow_step_is_an_outlier_without_a_period() {
    let d = run(300, |i| if i == 120 { 1.0 } else { steady(i) }, |_| 0.0);
    let s = StepSignals::compute(&d, &[], &[]);
    assert_eq!(s.outliers.count, 1);
    assert_eq!(s.outliers.period_steps, None);
    assert_eq!(s.outliers.spacing_cv, None);
    assert!(s.step_p99_s < 0.2, "one step in 300 does not move p99");
}

#[test]
fn varying_shapes_are_dispersed_without_a_period() {
    // Step time anywhere from 50 to 250 ms, no pattern.
    let d = run(2000, |i| 0.05 + 0.2 * uniform01(i as u64 + 7), |_| 0.0);
    let s = StepSignals::compute(&d, &[], &[]);
    assert!(s.iqr_over_p50.expect("iqr") > 0.5);
    assert!(s.p95_over_p50 > 1.5);
    assert!(s.period.is_none_or(|p| p.strength < 0.3));
    assert!(s.outliers.period_steps.is_none() || s.outliers.spacing_cv.expect("cv") > 0.5);
}

#[test]
fn gpu_durations_give_the_gpu_ratios() {
    let mut log = StepLog::new(1000);
    for i in 0..100u32 {
        let mut cpu = [f64::NAN; MAX_PHASES];
        cpu[PhaseId::FORWARD.index()] = 0.010;
        cpu[PhaseId::BACKWARD.index()] = 0.012;
        let idx = log.push(f64::from(i) * 0.05, 0.05, &cpu);
        let mut gpu = [f64::NAN; MAX_PHASES];
        gpu[PhaseId::FORWARD.index()] = 0.004;
        gpu[PhaseId::BACKWARD.index()] = 0.007;
        log.set_gpu(idx, &gpu);
    }
    let s = StepSignals::compute(&log.to_data(&names()), &[], &[]);
    assert!((s.bwd_fwd_ratio_p50.expect("cpu") - 1.2).abs() < 1e-4);
    assert!((s.gpu_bwd_fwd_ratio_p50.expect("gpu") - 1.75).abs() < 1e-4);
    assert!((s.gpu_cpu_ratio_p50.expect("gpu/cpu") - 0.5).abs() < 1e-4);
    assert!(s.phases.iter().all(|p| p.name != "data"), "no data phase");
    assert_eq!(s.dips_in_data_share, None);
}

fn util_series(d: &StepsData, busy: impl Fn(f64) -> bool) -> DeviceSeries {
    let end = d.t[d.t.len() - 1] + 0.2;
    let t: Vec<f64> = (0..)
        .map(|k| f64::from(k) * 0.01 + 0.005)
        .take_while(|t| *t < end)
        .collect();
    let util = Column(
        t.iter()
            .map(|t| if busy(*t) { 97.0 } else { 1.0 })
            .collect(),
    );
    let mut data = SeriesData {
        t,
        ..Default::default()
    };
    data.metrics.insert("util_gpu".into(), util);
    DeviceSeries { device: 0, data }
}

#[test]
fn idle_gpu_samples_inside_data_phases_are_attributed_to_input() {
    // 100 ms steps whose first 30 ms wait for data; the GPU idles exactly then (samples
    // every 10 ms, half-way between step boundaries).
    let d = run(100, |_| 0.1, |_| 0.0);
    let starved = util_series(&d, |t| (t % 0.1) > 0.03);
    let s = StepSignals::compute(&d, &[], &[starved]);
    assert!(s.dip_samples > 200);
    assert!(s.dips_in_data_share.expect("share") > 0.95);
    assert!((s.dips_in_data_expected.expect("expected") - 0.3).abs() < 0.01);
    // Idle in the optimizer instead (last 10 ms): not the data phase.
    let other = util_series(&d, |t| (t % 0.1) < 0.09);
    let s = StepSignals::compute(&d, &[], &[other]);
    assert!(s.dips_in_data_share.expect("share") < 0.05);
}

#[test]
fn a_report_without_steps_has_no_step_signals() {
    let r = Report::from_recording(&crate::recording::Recording::new(Default::default()));
    assert!(StepSignals::from_report(&r).is_none());
}

#[test]
fn small_hiccups_between_stalls_do_not_break_their_period() {
    // An eval every 10 steps costing 4.5 steps, plus three scheduler hiccups of 0.7 of a
    // step at odd places: the period is still 10, regular.
    let hiccups = [13, 37, 61];
    let d = run(
        100,
        |i| {
            let base = steady(i);
            if i % 10 == 9 {
                base * 5.5
            } else if hiccups.contains(&i) {
                base * 1.7
            } else {
                base
            }
        },
        |_| 0.0,
    );
    let s = StepSignals::compute(&d, &[], &[]);
    assert_eq!(s.outliers.count, 13, "every spike is an outlier");
    assert_eq!(s.outliers.period_steps, Some(10.0));
    assert!(
        s.outliers.spacing_cv.is_some_and(|cv| cv < 0.05),
        "{:?}",
        s.outliers.spacing_cv
    );
}
