//! Journal deltas of a real step log merged back (`crate::recording::merge_delta`, which the
//! journal's writer and replay use): the kept steps and their statistics come back.

use super::{StepLog, MAX_PHASES, STEP_KEY};
use crate::recording::merge_delta;

fn phases(data: f64, fwd: f64) -> [f64; MAX_PHASES] {
    let mut p = [f64::NAN; MAX_PHASES];
    p[0] = data;
    p[1] = fwd;
    p
}

#[test]
fn deltas_rebuild_the_kept_steps_and_exact_stats() {
    let names: Vec<String> = ["data", "forward"].map(String::from).to_vec();
    let mut log = StepLog::new(1000);
    let mut merged = None;
    let mut sent = 0;
    for i in 0..10u32 {
        let d = f64::from(i) * 0.01;
        log.push(f64::from(i), 0.1 + d, &phases(d, 0.05));
        if i == 3 || i == 9 {
            merge_delta(
                &mut merged,
                sent as u64,
                log.delta(&names, sent, log.kept()),
            );
            sent = log.kept();
        }
    }
    let mut gpu = [f64::NAN; MAX_PHASES];
    gpu[1] = 0.04;
    log.set_gpu(9, &gpu);
    let got = merged.expect("merged");
    let want = log.to_data(&names);
    assert_eq!(got.t, want.t);
    assert_eq!(got.count, 10);
    assert_eq!(got.phase_durations, want.phase_durations);
    for (k, s) in &want.stats {
        let g = &got.stats[k];
        // The rows are f32; the log's totals are f64.
        assert_eq!(g.count, s.count, "{k}");
        assert!((g.min_s - s.min_s).abs() < 1e-6 && (g.max_s - s.max_s).abs() < 1e-6);
        assert!((g.p50_s - s.p50_s).abs() < 1e-6, "{k}");
        assert!((g.sum_s - s.sum_s).abs() < 1e-6, "{k}");
    }
    // A gap (a lost delta) keeps the rows that were continuous.
    let mut gappy = None;
    merge_delta(&mut gappy, 0, log.delta(&names, 0, 2));
    merge_delta(&mut gappy, 5, log.delta(&names, 5, 10));
    assert_eq!(gappy.expect("merged").t.len(), 2);
}

#[test]
fn past_the_exact_window_the_totals_come_from_the_latest_delta() {
    let names: Vec<String> = vec!["data".into()];
    let mut log = StepLog::new(4);
    for i in 0..20u32 {
        log.push(f64::from(i), 1.0 + f64::from(i), &phases(0.5, f64::NAN));
    }
    let mut merged = None;
    merge_delta(&mut merged, 0, log.delta(&names, 0, log.kept()));
    let d = merged.expect("merged");
    assert_eq!(d.t.len(), 4);
    assert_eq!(d.count, 20);
    assert_eq!(d.stats[STEP_KEY].max_s, 20.0);
    assert!(d.quantile_error > 0.0);
}
