//! What the training examples (`examples/train.c`, `examples/train.cpp`) must leave in their
//! report, checked the same way whether they were built here or against an installed copy.
#![allow(dead_code)]

use std::path::Path;
use std::process::Output;

use serde_json::Value;

/// As in the examples: every `EVAL_EVERY` training steps an "eval" event, and the
/// evaluator thread runs `EVAL_BATCHES` steps of its own.
pub const EVAL_EVERY: usize = 20;
pub const EVAL_BATCHES: usize = 5;

/// The GPU-measured forward time the examples attach to training step `i`.
pub fn gpu_forward_s(i: usize) -> f64 {
    0.0015 + 0.0001 * (i % 4) as f64
}

/// What a run was asked for.
pub struct Expect<'a> {
    pub label: &'a str,
    pub steps: usize,
    /// Rank and world size given on the command line.
    pub rank: Option<(u64, u64)>,
    /// GPUs the report has (1 with a simulated GPU, 0 without NVML).
    pub gpus: usize,
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

/// Checks the report an example wrote to `report_path` and what it printed.
pub fn check(out: &Output, report_path: &Path, want: &Expect) -> Value {
    let text = std::fs::read_to_string(report_path)
        .unwrap_or_else(|e| panic!("no report at {}: {e}", report_path.display()));
    let report: Value = serde_json::from_str(&text).expect("the report is JSON");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);

    // The JSON read back with the size-query-then-fill call is the file written by stop.
    assert_eq!(
        stdout.strip_suffix('\n'),
        Some(text.as_str()),
        "the JSON printed differs from the report file"
    );
    assert!(
        !report_path.with_extension("json.partial").exists(),
        "journal left behind"
    );

    let run = &report["run"];
    assert_eq!(run["label"], want.label, "run: {run}");
    match want.rank {
        Some((rank, world)) => {
            assert_eq!(run["rank"], rank, "run: {run}");
            assert_eq!(run["world_size"], world, "run: {run}");
        }
        None => assert!(run["rank"].is_null(), "run: {run}"),
    }
    assert_eq!(
        report["devices"].as_array().map(Vec::len),
        Some(want.gpus),
        "devices"
    );
    if want.gpus == 0 {
        assert!(report["gpu_absent_reason"].is_string());
    } else {
        assert!(report.get("gpu_absent_reason").is_none_or(Value::is_null));
    }

    check_steps(&report["steps"], want.steps);
    check_events(&report, want.steps);
    check_top_finding(&report, &stderr);
    report
}

/// The report's steps are the training thread's (it names itself with
/// gpuwhy_session_set_main_thread), whole, with all five phases, the custom phase's and the
/// GPU-measured phase's statistics; the evaluator thread's own steps (data and forward only)
/// are listed apart in `steps.threads` with their own numbers. (Both threads' steps used to
/// be pooled into one sequence.)
fn check_steps(steps: &Value, train_steps: usize) {
    let eval_steps = train_steps / EVAL_EVERY * EVAL_BATCHES;
    assert_eq!(
        steps["phases"],
        serde_json::json!(["data", "forward", "backward", "optimizer", "allreduce"])
    );
    assert_eq!(steps["count"], train_steps, "step count");
    let pd = &steps["phase_durations"];
    let col = |p: &str| {
        pd[p]
            .as_array()
            .unwrap_or_else(|| panic!("no phase_durations.{p}"))
            .clone()
    };
    let (data, fwd, bwd, ar, opt) = (
        col("data"),
        col("forward"),
        col("backward"),
        col("allreduce"),
        col("optimizer"),
    );
    let gpu_fwd = steps["gpu_phase_durations"]["forward"]
        .as_array()
        .expect("gpu_phase_durations.forward")
        .clone();
    assert_eq!(data.len(), train_steps, "steps kept one by one");
    for i in 0..data.len() {
        assert!(data[i].is_number() && fwd[i].is_number(), "step {i}");
        // Every step is a training step: the evaluator's never leak into the sequence.
        assert!(
            bwd[i].is_number() && ar[i].is_number() && opt[i].is_number(),
            "training step {i}"
        );
        // Attached by the training thread to its own step, in its own order.
        let g = f(&gpu_fwd[i]);
        assert!(
            (g - gpu_forward_s(i)).abs() < 1e-9,
            "training step {i} has GPU forward {g}"
        );
    }
    check_threads(steps, train_steps, eval_steps);

    let stats = &steps["stats"];
    for phase in ["data", "forward", "backward", "allreduce", "optimizer"] {
        assert_eq!(
            stats[phase]["count"], train_steps,
            "stats.{phase}: {}",
            stats[phase]
        );
    }
    // The custom phase sleeps 2 ms: never less, and not absurdly more.
    let ar = &stats["allreduce"];
    assert!(f(&ar["min_s"]) >= 0.0019, "allreduce: {ar}");
    assert!((0.0019..0.25).contains(&f(&ar["p50_s"])), "allreduce: {ar}");

    let g = &steps["gpu_stats"]["forward"];
    let sum: f64 = (0..train_steps).map(gpu_forward_s).sum();
    assert_eq!(g["count"], train_steps, "gpu_stats.forward: {g}");
    assert!(
        (f(&g["sum_s"]) - sum).abs() < 1e-9,
        "gpu_stats.forward: {g}"
    );
    assert!(
        (f(&g["min_s"]) - 0.0015).abs() < 1e-7,
        "gpu_stats.forward: {g}"
    );
    assert!(
        (f(&g["max_s"]) - 0.0018).abs() < 1e-7,
        "gpu_stats.forward: {g}"
    );
    assert!(steps.get("gpu_stats").and_then(|s| s.get("data")).is_none());
    assert_eq!(steps["ignored_markers"], 0);
}

/// The two marking threads, each with its own numbers: the training thread (named) and the
/// evaluator.
fn check_threads(steps: &Value, train_steps: usize, eval_steps: usize) {
    let threads = steps["threads"].as_array().expect("steps.threads");
    assert_eq!(threads.len(), 2, "{}", steps["threads"]);
    let main: Vec<&Value> = threads.iter().filter(|t| t["main"] == true).collect();
    assert_eq!(main.len(), 1, "{}", steps["threads"]);
    assert_eq!(main[0]["chosen_by"], "named");
    assert_eq!(main[0]["count"], train_steps);
    let eval = threads
        .iter()
        .find(|t| t["main"] == false)
        .expect("the evaluator");
    assert_eq!(eval["count"], eval_steps, "{eval}");
    for phase in ["data", "forward"] {
        assert_eq!(eval["stats"][phase]["count"], eval_steps, "{eval}");
    }
    for phase in ["backward", "allreduce", "optimizer"] {
        assert!(eval["stats"].get(phase).is_none(), "{eval}");
    }
    assert!(eval.get("gpu_stats").is_none(), "{eval}");
}

/// One "eval" event per `EVAL_EVERY` training steps, in time order.
fn check_events(report: &Value, train_steps: usize) {
    let evals: Vec<f64> = report["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["kind"] == "eval")
        .map(|e| f(&e["t_s"]))
        .collect();
    assert_eq!(evals.len(), train_steps / EVAL_EVERY, "eval events");
    assert!(
        evals.windows(2).all(|w| w[0] < w[1]),
        "eval times {evals:?}"
    );
    let duration = f(&report["run"]["duration_s"]);
    assert!(evals.iter().all(|t| (0.0..=duration).contains(t)));
}

/// The top finding printed through gpuwhy_session_top_finding is the report's first.
fn check_top_finding(report: &Value, stderr: &str) {
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix("gpuwhy: top finding: "))
        .unwrap_or_else(|| panic!("no top finding printed:\n{stderr}"));
    let id = line.split(' ').next().unwrap_or_default();
    let first = report["findings"]
        .as_array()
        .and_then(|a| a.first())
        .map_or("none", |f| f["id"].as_str().unwrap_or_default());
    assert_eq!(id, first, "printed: {line}");
    if let Some(top) = report["findings"].as_array().and_then(|a| a.first()) {
        let conf = line.rsplit("confidence ").next().unwrap_or_default();
        assert_eq!(
            conf.trim_end_matches(')'),
            format!("{:.2}", f(&top["confidence"])),
            "printed: {line}"
        );
        assert!(
            line.contains(top["title"].as_str().unwrap_or("?")),
            "{line}"
        );
    }
}
