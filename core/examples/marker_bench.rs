//! The step-marker benchmark's measuring half, built with optimisations by
//! `cargo xtask bench` (which prints the result): ns per marker beside ns per bare
//! `Instant::now()` in the same process, and a million-step run's memory.
//!
//! Prints one JSON object on stdout.

use std::hint::black_box;
use std::time::Instant;

use gpuwhy::collect::RecorderConfig;
use gpuwhy::session::Session;
use gpuwhy::steps::{PhaseId, StepLog, EXACT_STEPS, MAX_PHASES};

/// Steps per timed batch: 6 markers each, so a batch (6,000 records) fits one ring and the
/// timing covers the markers alone; the batch is folded afterwards, off the clock, as the
/// sampler thread would.
const BATCH_STEPS: usize = 1_000;
/// Batches per round.
const BATCHES: usize = 100;
/// Rounds; the median round is reported, so one disturbed round does not decide.
const ROUNDS: usize = 9;
/// Steps of the long run.
const LONG_STEPS: usize = 1_000_000;

/// One step's six markers.
#[inline(always)]
fn step(s: &Session) {
    s.step_begin();
    s.phase(PhaseId::DATA);
    s.phase(PhaseId::FORWARD);
    s.phase(PhaseId::BACKWARD);
    s.phase(PhaseId::OPTIMIZER);
    s.step_end();
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn session() -> Session {
    let cfg = RecorderConfig {
        no_gpu: true,
        host: false,
        // Slow ticks: in the timed part the benchmark folds between batches itself.
        interval_s: 1.0,
        ..RecorderConfig::default()
    };
    Session::start(cfg.into()).expect("a session without GPU starts")
}

fn main() {
    let s = session();
    step(&s); // claims this thread's lane
    s.fold();
    // Bare clock reads and markers alternate batch by batch, so both see the same machine
    // (other processes, frequency changes); each round reports per-batch medians.
    let per_batch = (BATCH_STEPS * 6) as f64;
    let (mut bare, mut marked, mut ratio, mut fold) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let (mut b, mut m, mut r, mut f) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..BATCHES {
            let t0 = Instant::now();
            for _ in 0..BATCH_STEPS * 6 {
                black_box(Instant::now());
            }
            let t1 = Instant::now();
            for _ in 0..BATCH_STEPS {
                step(black_box(&s));
            }
            let t2 = Instant::now();
            s.fold();
            let bare_ns = (t1 - t0).as_secs_f64() * 1e9 / per_batch;
            let marker_ns = (t2 - t1).as_secs_f64() * 1e9 / per_batch;
            b.push(bare_ns);
            m.push(marker_ns);
            r.push(marker_ns / bare_ns);
            f.push(t2.elapsed().as_secs_f64() * 1e9 / BATCH_STEPS as f64);
        }
        bare.push(median(b));
        marked.push(median(m));
        ratio.push(median(r));
        fold.push(median(f));
    }
    drop(s.finish());

    // A loop far faster than the sampler drains: the marking thread folds its own full ring.
    let s = session();
    let t0 = Instant::now();
    for _ in 0..LONG_STEPS {
        step(black_box(&s));
    }
    let long_ns = t0.elapsed().as_secs_f64() * 1e9 / (LONG_STEPS * 6) as f64;
    let report = s.finish();
    let steps = report.steps.expect("the long run has steps");

    // The step log alone, every phase with CPU and GPU durations: its worst case.
    let mut log = StepLog::new(EXACT_STEPS);
    let all = [0.01; MAX_PHASES];
    for i in 0..LONG_STEPS {
        let idx = log.push(i as f64 * 0.1, 0.1, &all);
        log.set_gpu(idx, &all);
    }

    println!(
        "{}",
        serde_json::json!({
            "bare_ns": median(bare),
            "marker_ns": median(marked),
            "ratio": median(ratio),
            "fold_ns_per_step": median(fold),
            "self_fold_marker_ns": long_ns,
            "long_steps": steps.count,
            "long_kept": steps.exact_steps,
            "long_memory_bytes": steps.memory_bytes,
            "long_memory_bound_bytes": steps.memory_bound_bytes,
            "full_log_bytes": log.heap_bytes(),
            "full_log_bound_bytes": StepLog::worst_case_bytes(EXACT_STEPS),
        })
    );
}
