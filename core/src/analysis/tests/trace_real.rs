//! A real trace: `torch_cpu.json.gz`, recorded by torch.profiler (torch 2.15.0 from PyPI, on a
//! machine without a GPU) with `scripts/record_cpu_trace.py`. Nothing in it was written by
//! gpuwhy's generator, so it checks the reader against what PyTorch itself writes: pretty-
//! printed events, string pids (`"Spans"`, `""`), 16-digit fractional timestamps, metadata
//! keys gpuwhy does not know. The expected values are counted from the file here with
//! serde_json, not copied from gpuwhy's output.

use std::io::Read;

use serde_json::Value;

use crate::analysis::diagnose_traced as diagnose;
use crate::trace::*;

const FIXTURE: &str = "torch_cpu.json.gz";

fn path() -> String {
    format!(
        "{}/tests/fixtures/trace/{FIXTURE}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// The fixture's events, read independently with serde_json.
fn events() -> Vec<Value> {
    let f = std::fs::File::open(path()).expect("fixture");
    let mut text = String::new();
    flate2::read::GzDecoder::new(f)
        .read_to_string(&mut text)
        .expect("gzip");
    let v: Value = serde_json::from_str(&text).expect("JSON");
    v["traceEvents"].as_array().expect("traceEvents").clone()
}

fn summary() -> TraceSummary {
    let f = std::fs::File::open(path()).expect("fixture");
    let opts = ReadOptions {
        label: FIXTURE.into(),
        ..Default::default()
    };
    let rank = read_rank(f, &opts).expect("reads");
    TraceSummary::from_ranks(vec![rank], Choices::default())
}

#[test]
fn a_real_cpu_only_trace_reads_with_its_steps_and_no_gpu_operations() {
    let events = events();
    let cat = |c: &str| events.iter().filter(|e| e["cat"] == c).count();
    // What the file holds: a CPU-only recording of a few training steps.
    assert!(cat("cpu_op") > 100, "{} cpu_op events", cat("cpu_op"));
    assert_eq!(cat("kernel") + cat("gpu_memcpy") + cat("cuda_runtime"), 0);
    let steps: Vec<(i64, f64)> = events
        .iter()
        .filter_map(|e| {
            let n = e["name"].as_str()?.strip_prefix("ProfilerStep#")?;
            Some((n.parse().ok()?, e["dur"].as_f64()?))
        })
        .collect();
    assert_eq!(
        steps.iter().map(|s| s.0).collect::<Vec<_>>(),
        vec![2, 3, 4, 5]
    );

    let t = summary();
    let r = &t.ranks[0];
    assert_eq!(r.events, events.len() as u64, "every event is read");
    assert_eq!(r.step_stats.count, 4);
    for (got, want) in r.steps.iter().zip(&steps) {
        assert_eq!(got.step, want.0);
        assert_eq!(got.cpu_us, want.1, "step {}", want.0);
        assert_eq!((got.kernels, got.gpu_busy_us), (0, 0.0));
    }
    assert_eq!(r.kernels.count, 0);
    assert!(r.streams.is_empty());
    assert_eq!((r.busy_us, r.span_us), (0.0, 0.0));
    assert!(r.busy_us.is_sign_positive(), "no -0 shown as \"-0.00 ms\"");
    assert_eq!(t.busy_share(), None);
}

#[test]
fn diagnosing_a_cpu_only_trace_says_it_has_no_gpu_work() {
    let t = summary();
    let mut report = report(&t);
    diagnose(&mut report, &t);
    let v = &report.verdict.summary;
    assert_eq!(report.verdict.id, "none", "{:#?}", report.findings);
    assert!(v.contains("no GPU operations"), "{v}");
    assert!(v.contains("over 4 profiler steps"), "{v}");
    assert!(v.contains("ProfilerActivity.CUDA"), "{v}");
}
