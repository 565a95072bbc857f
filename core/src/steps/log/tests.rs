use super::*;
use crate::stats::percentile_sorted;
use crate::steps::{PhaseId, SKETCH_RELATIVE_ERROR};

fn names() -> Vec<String> {
    crate::steps::BUILTIN_PHASES.map(String::from).to_vec()
}

fn phases(values: &[(PhaseId, f64)]) -> [f64; MAX_PHASES] {
    let mut p = [f64::NAN; MAX_PHASES];
    for (id, v) in values {
        p[id.index()] = *v;
    }
    p
}

/// splitmix64 → [0, 1): deterministic test data.
fn uniform01(i: u64) -> f64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
}

#[test]
fn totals_and_quantiles_are_exact_while_steps_are_kept() {
    let mut log = StepLog::new(1000);
    // Steps of 1..=100 ms; the data phase only in even steps.
    for i in 1..=100u32 {
        let d = f64::from(i) / 1000.0;
        let p = if i % 2 == 0 {
            phases(&[(PhaseId::DATA, d / 2.0), (PhaseId::FORWARD, d / 4.0)])
        } else {
            phases(&[(PhaseId::FORWARD, d / 4.0)])
        };
        log.push(f64::from(i), d, &p);
    }
    let d = log.to_data(&names());
    assert_eq!(d.count, 100);
    assert_eq!(d.exact_steps, 100);
    assert_eq!(d.quantile_error, 0.0);
    let s = &d.stats[STEP_KEY];
    assert_eq!(s.count, 100);
    assert!((s.sum_s - 5.050).abs() < 1e-9);
    assert_eq!((s.min_s, s.max_s), (0.001, 0.1));
    assert!((s.p50_s - 0.051).abs() < 1e-6, "nearest rank of 100 values");
    assert!((s.p95_s - 0.095).abs() < 1e-6);
    assert!((s.p99_s - 0.099).abs() < 1e-6);
    assert_eq!(d.stats["data"].count, 50);
    assert_eq!(d.stats["forward"].count, 100);
    assert!(
        !d.stats.contains_key("backward"),
        "a phase never seen has no stats"
    );
    let data = &d.phase_durations["data"];
    assert_eq!(data.len(), 100);
    assert!(data.0[0].is_nan(), "step 1 had no data phase: null, not 0");
    assert!((data.0[1] - 0.001).abs() < 1e-7);
    assert_eq!(d.phases, names());
    assert!(d.gpu_phase_durations.is_empty() && d.gpu_stats.is_empty());
}

#[test]
fn gpu_durations_fill_their_step_once() {
    let mut log = StepLog::new(10);
    for i in 0..3u32 {
        log.push(f64::from(i), 0.1, &phases(&[(PhaseId::FORWARD, 0.02)]));
    }
    let g = phases(&[(PhaseId::FORWARD, 0.05)]);
    log.set_gpu(1, &g);
    log.set_gpu(1, &phases(&[(PhaseId::FORWARD, 9.0)]));
    log.set_gpu(7, &g);
    log.push(3.0, 0.1, &phases(&[]));
    let d = log.to_data(&names());
    let col = &d.gpu_phase_durations["forward"];
    assert_eq!(col.len(), 4);
    assert!(col.0[0].is_nan() && col.0[2].is_nan() && col.0[3].is_nan());
    assert!((col.0[1] - 0.05).abs() < 1e-7);
    assert_eq!(d.gpu_stats["forward"].count, 1);
    assert_eq!(d.gpu_stats["forward"].max_s, 0.05);
}

#[test]
fn past_the_exact_window_quantiles_stay_within_the_stated_error() {
    let mut log = StepLog::new(1000);
    let mut all = Vec::new();
    let mut data = Vec::new();
    for i in 0..50_000u64 {
        // Lognormal-ish step times around 100 ms with a long tail; data ~30 % of it.
        let z: f64 = (0..4).map(|k| uniform01(i * 4 + k) - 0.5).sum();
        let step = 0.1 * (1.5 * z).exp();
        let d = step * (0.2 + 0.2 * uniform01(i + 1_000_000));
        log.push(i as f64 * 0.1, step, &phases(&[(PhaseId::DATA, d)]));
        // The kept part is stored as f32; compare against what was stored.
        all.push(if i < 1000 {
            f64::from(step as f32)
        } else {
            step
        });
        data.push(if i < 1000 { f64::from(d as f32) } else { d });
    }
    let out = log.to_data(&names());
    assert_eq!(out.count, 50_000);
    assert_eq!(out.exact_steps, 1000);
    assert_eq!(out.t.len(), 1000);
    assert_eq!(out.quantile_error, SKETCH_RELATIVE_ERROR);
    for (key, values) in [(STEP_KEY, &mut all), ("data", &mut data)] {
        values.sort_by(f64::total_cmp);
        let s = &out.stats[key];
        assert_eq!(s.count, 50_000);
        assert_eq!(s.max_s, values[values.len() - 1]);
        for (q, got) in [(0.5, s.p50_s), (0.95, s.p95_s), (0.99, s.p99_s)] {
            let exact = percentile_sorted(values, q);
            let err = (got - exact).abs() / exact;
            assert!(
                err <= SKETCH_RELATIVE_ERROR + 1e-6,
                "{key} p{q}: exact {exact}, got {got} ({err})"
            );
        }
    }
}

#[test]
fn memory_stays_within_the_documented_bound() {
    assert_eq!(EXACT_STEP_BYTES, 140);
    assert_eq!(StepLog::worst_case_bytes(EXACT_STEPS), 14_845_328);
    // Every phase, CPU and GPU, so every column and sketch exists.
    let mut log = StepLog::new(5_000);
    let all = [0.01; MAX_PHASES];
    for i in 0..20_000u32 {
        let idx = log.push(f64::from(i), 0.2, &all);
        log.set_gpu(idx, &all);
        assert!(log.heap_bytes() <= StepLog::worst_case_bytes(5_000));
    }
    assert_eq!(log.kept(), 5_000);
    assert_eq!(log.to_data(&names()).phases.len(), MAX_PHASES);
    assert_eq!(log.to_data(&names()).phases[15], "phase15");
    // Exactly the bound: full columns and all 33 sketches.
    assert_eq!(log.heap_bytes(), StepLog::worst_case_bytes(5_000));
}
