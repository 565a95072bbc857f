//! Each GPU gap attributed to what the CPU was doing across it, on small synthetic traces
//! whose answers are worked out by hand: one CPU activity per trace, at two severities and
//! below the bar.
//!
//! Every trace has ten steps of `PERIOD` µs on one stream. In step k (S = k·PERIOD) four
//! kernels fill [S, S + PERIOD − gap]; the first is launched at S − 10 (after the GPU ran
//! dry: a host wait), the others before they start (queued). So each of the nine gaps is
//! [a, b] = [S + PERIOD − gap, S + PERIOD], and `cover` puts the CPU activity under it.
//! The span is 10·PERIOD − gap and the idle time 9·gap.

use serde_json::{json, Value};

use crate::analysis::diagnose_traced as diagnose;
use crate::report::{Finding, Report};
use crate::trace::*;

const PERIOD: f64 = 10_000.0;
const STEPS: usize = 10;

fn x(cat: &str, name: &str, ts: f64, dur: f64, args: Value) -> Value {
    json!({"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": args})
}

/// A runtime call without a GPU operation (an allocator call, a sync).
pub(super) fn call(name: &str, ts: f64, dur: f64) -> Value {
    x("cuda_runtime", name, ts, dur, json!({}))
}

/// A CPU range: `cpu_op` or `user_annotation`.
pub(super) fn cpu(cat: &str, name: &str, ts: f64, dur: f64) -> Value {
    x(cat, name, ts, dur, json!({}))
}

/// The trace described in the module docs, with `cover(a, b)`'s events under each gap.
fn trace(gap: f64, cover: &dyn Fn(f64, f64) -> Vec<Value>) -> Vec<u8> {
    trace_with(PERIOD, gap, cover)
}

/// [`trace`] with steps of `period` µs.
fn trace_with(period: f64, gap: f64, cover: &dyn Fn(f64, f64) -> Vec<Value>) -> Vec<u8> {
    let mut ev = Vec::new();
    let mut corr = 0;
    let busy = period - gap;
    for k in 0..STEPS {
        let s = k as f64 * period;
        ev.push(cpu(
            "user_annotation",
            &format!("ProfilerStep#{k}"),
            s - 20.0,
            period,
        ));
        for j in 0..4 {
            corr += 1;
            let launch = s - 10.0 + 2.0 * j as f64;
            let args = json!({"correlation": corr});
            ev.push(x("cuda_runtime", "cudaLaunchKernel", launch, 1.0, args));
            let ts = s + j as f64 * busy / 4.0;
            let args = json!({"correlation": corr, "stream": 7, "device": 0});
            let mut k = x("kernel", "gemm", ts, busy / 4.0, args);
            k["pid"] = json!(0);
            ev.push(k);
        }
        if k + 1 < STEPS {
            ev.extend(cover(s + busy, s + period));
        }
    }
    serde_json::to_vec(&json!({ "traceEvents": ev })).expect("json")
}

fn diagnosed(bytes: &[u8]) -> (RankSummary, Report) {
    let r = read_slice(bytes, &ReadOptions::default()).expect("reads");
    let t = TraceSummary::from_ranks(vec![r.clone()], Choices::default());
    let mut rep = report(&t);
    diagnose(&mut rep, &t);
    (r, rep)
}

fn finding<'a>(r: &'a Report, id: &str) -> Option<&'a Finding> {
    r.findings.iter().find(|f| f.id == id)
}

/// `id` is the verdict, costing `covered` µs in each of the nine gaps.
fn check(bytes: &[u8], gap: f64, id: &str, covered: f64) -> RankSummary {
    check_with(PERIOD, bytes, gap, id, covered)
}

/// [`check`] for steps of `period` µs.
fn check_with(period: f64, bytes: &[u8], gap: f64, id: &str, covered: f64) -> RankSummary {
    let (r, rep) = diagnosed(bytes);
    let g = &r.gap_causes;
    assert_eq!(g.gaps, 9);
    assert!((g.idle_us - 9.0 * gap).abs() < 1e-6, "{g:?}");
    let parts = g.data_us
        + g.allocator_us
        + g.sync_us
        + g.cpu_work_us
        + g.launch_us
        + g.other_host_us
        + g.gpu_side_us
        + g.unmatched_us;
    assert!((parts - g.idle_us).abs() < 1e-6, "the parts add up: {g:?}");
    let f = finding(&rep, id).unwrap_or_else(|| panic!("{id} fires: {:?}", rep.findings));
    let want = 9.0 * covered / (STEPS as f64 * period - gap);
    assert_eq!(f.lost_share, Some(crate::rules::round(want)), "{f:?}");
    assert_eq!(rep.verdict.id, id, "{:?}", rep.findings);
    r
}

const LOADER: &str = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";

fn loader(a: f64, b: f64) -> Vec<Value> {
    vec![cpu("user_annotation", LOADER, a, b - 10.0 - a)]
}

#[test]
fn a_dataloader_gap_is_data_starvation_at_its_share() {
    // 40 % of each step in the loader (the ResNet case), then 9 % (a short gap: the 10 µs
    // launch after it is Python between launches).
    for gap in [4000.0, 1000.0] {
        let r = check(&trace(gap, &loader), gap, "data_starvation", gap - 10.0);
        assert!((r.gap_causes.data_us - 9.0 * (gap - 10.0)).abs() < 1e-6);
        assert!(r.gap_causes.top_ranges[0].0.contains("DataLoader"));
    }
    let long = check(&trace(4000.0, &loader), 4000.0, "data_starvation", 3990.0);
    assert!((long.gap_causes.other_host_us - 90.0).abs() < 1e-6);
    let (_, rep) = diagnosed(&trace(4000.0, &loader));
    assert!(
        finding(&rep, "launch_bound").is_none(),
        "the loader is not launch overhead: {:?}",
        rep.findings
    );
}

#[test]
fn a_short_loader_wait_is_below_the_bar() {
    // 9 × 290 µs of 99 700: 2.6 %, under the 5 % bar.
    let (r, rep) = diagnosed(&trace(300.0, &loader));
    assert!((r.gap_causes.data_us - 9.0 * 290.0).abs() < 1e-6);
    assert!(
        finding(&rep, "data_starvation").is_none(),
        "{:?}",
        rep.findings
    );
}

#[test]
fn gaps_across_allocator_calls_are_an_allocator_stall() {
    // A cudaFree running when the GPU runs dry (it waits for the device), the launch 10 µs
    // after it returns: the whole gap is the allocator's.
    let free = |a: f64, b: f64| vec![call("cudaFree", a - 100.0, b - 10.0 - (a - 100.0))];
    for gap in [3000.0, 800.0] {
        let r = check(&trace(gap, &free), gap, "allocator_stall", gap);
        assert!(r.gap_causes.top_ranges[0].0 == "cudaFree");
    }
    let hip = |a: f64, b: f64| vec![call("hipMalloc", a + 5.0, b - a - 20.0)];
    let (r, rep) = diagnosed(&trace(3000.0, &hip));
    // Not running when the GPU ran dry: 5 µs before it and 15 after are other host work.
    assert!(
        (r.gap_causes.allocator_us - 9.0 * 2980.0).abs() < 1e-6,
        "{:?}",
        r.gap_causes
    );
    assert!((r.gap_causes.other_host_us - 9.0 * 20.0).abs() < 1e-6);
    assert!(finding(&rep, "allocator_stall").is_some());
    assert!(finding(&rep, "data_starvation").is_none());
}

#[test]
fn gaps_after_a_sync_are_host_sync() {
    // cudaStreamSynchronize returns 3 µs after the GPU ran dry; then Python until the launch.
    let sync = |a: f64, _b: f64| vec![call("cudaStreamSynchronize", a - 500.0, 503.0)];
    for gap in [2000.0, 800.0] {
        check(&trace(gap, &sync), gap, "host_sync", gap);
    }
    // `.item()` is a sync on the CPU side too.
    let item = |a: f64, _b: f64| vec![cpu("cpu_op", "aten::item", a - 40.0, 42.0)];
    check(&trace(800.0, &item), 800.0, "host_sync", 800.0);
}

#[test]
fn a_cpu_optimizer_is_cpu_optimizer() {
    let adam = |a: f64, b: f64| {
        vec![cpu(
            "user_annotation",
            "Optimizer.step#DeepSpeedCPUAdam.step",
            a - 50.0,
            b - 10.0 - (a - 50.0),
        )]
    };
    for gap in [5000.0, 1500.0] {
        let (_, rep) = diagnosed(&trace(gap, &adam));
        let f = check(&trace(gap, &adam), gap, "cpu_optimizer", gap - 10.0);
        assert!(f.gap_causes.top_ranges[0].0.contains("CPUAdam"));
        let top = &rep.findings[0];
        assert!(top.summary.contains("DeepSpeedCPUAdam"), "{}", top.summary);
    }
    // An aten operator computing on the CPU (it starts no runtime call) is the same class.
    let op = |a: f64, b: f64| vec![cpu("cpu_op", "aten::addmm", a + 10.0, b - a - 30.0)];
    check(&trace(3000.0, &op), 3000.0, "cpu_optimizer", 2970.0);
    // One inside which a call starts prepares GPU work: not named.
    let launching = |a: f64, b: f64| {
        vec![
            cpu("cpu_op", "aten::addmm", a + 10.0, b - a - 30.0),
            call("cudaMemsetAsync", b - 200.0, 5.0),
        ]
    };
    let (r, rep) = diagnosed(&trace(3000.0, &launching));
    assert_eq!(r.gap_causes.cpu_work_us, 0.0);
    assert!(
        finding(&rep, "cpu_optimizer").is_none(),
        "{:?}",
        rep.findings
    );
}

#[test]
fn short_gaps_with_only_launches_are_launch_bound() {
    let nothing = |_a: f64, _b: f64| Vec::new();
    for gap in [4000.0, 2000.0] {
        // Gaps over 1 ms hold host work the trace does not name: counted with launches.
        let r = check(&trace(gap, &nothing), gap, "launch_bound", gap);
        assert!((r.gap_causes.other_host_us - 9.0 * gap).abs() < 1e-6);
    }
    // Gaps under 1 ms with nothing but the launch under them: Python between launches.
    for gap in [900.0, 400.0] {
        let r = check_with(
            2000.0,
            &trace_with(2000.0, gap, &nothing),
            gap,
            "launch_bound",
            gap,
        );
        assert!(
            (r.gap_causes.launch_us - 9.0 * gap).abs() < 1e-6,
            "{:?}",
            r.gap_causes
        );
    }
}
