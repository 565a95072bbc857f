//! GPU gaps attributed on traces shaped like a real PyTorch training loop: a main thread
//! with the DataLoader, nested `aten::` operators that launch kernels, a GPU optimizer step
//! of many small kernels, and backward launched from the autograd thread; the GPU runs each
//! kernel when it has been launched and the previous one is done (one stream, in order).
//! The numbers are checked against a few lines of arithmetic on the same timeline.

use serde_json::{json, Value};

use super::trace_cpu::{call, cpu};
use crate::analysis::diagnose_traced as diagnose;
use crate::report::Report;
use crate::trace::*;

/// A loop under construction: events, and the GPU stream's state.
struct Loop {
    ev: Vec<Value>,
    corr: i64,
    gpu_free: f64,
    /// The GPU's busy intervals, for the expected numbers.
    busy: Vec<(f64, f64)>,
}

impl Loop {
    fn new() -> Loop {
        Loop {
            ev: Vec::new(),
            corr: 0,
            gpu_free: 0.0,
            busy: Vec::new(),
        }
    }

    /// An `aten::` operator on thread `tid` at `t` that launches one kernel of `dur` µs.
    fn op(&mut self, tid: i64, t: f64, dur: f64) {
        self.corr += 1;
        let mut o = cpu("cpu_op", "aten::mul", t, 12.0);
        o["tid"] = json!(tid);
        self.ev.push(o);
        let mut l = call("cudaLaunchKernel", t + 4.0, 5.0);
        l["tid"] = json!(tid);
        l["args"] = json!({"correlation": self.corr});
        self.ev.push(l);
        let start = (t + 10.0).max(self.gpu_free);
        self.gpu_free = start + dur;
        self.busy.push((start, start + dur));
        self.ev.push(
            json!({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7,
            "ts": start, "dur": dur, "args": {"correlation": self.corr, "stream": 7, "device": 0}}),
        );
    }

    /// One step from `s`: the loader for `load` µs, 100 forward and 200 backward kernels of
    /// 60 µs launched every 15 µs, 100 optimizer kernels of 8 µs launched every 20 µs.
    /// `extra` runs on the CPU after backward is launched and returns when it is done.
    /// Returns when the CPU is done with the step.
    fn step(&mut self, k: usize, s: f64, load: f64, extra: &dyn Fn(&mut Loop, f64) -> f64) -> f64 {
        let loader = "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__";
        self.ev.push(cpu("user_annotation", loader, s, load));
        let mut t = s + load + 5.0;
        for _ in 0..100 {
            self.op(1, t, 60.0);
            t += 15.0;
        }
        for _ in 0..200 {
            self.op(2, t, 60.0);
            t += 15.0;
        }
        t = extra(self, t) + 50.0;
        self.ev
            .push(cpu("user_annotation", "Optimizer.step#SGD.step", t, 2000.0));
        for _ in 0..100 {
            self.op(1, t, 8.0);
            t += 20.0;
        }
        let end = t + 5.0;
        let step = cpu("user_annotation", &format!("ProfilerStep#{k}"), s, end - s);
        self.ev.push(step);
        end
    }

    fn bytes(&self) -> Vec<u8> {
        serde_json::to_vec(&json!({ "traceEvents": self.ev })).expect("json")
    }

    /// GPU idle time of the span.
    fn idle(&self) -> f64 {
        let span = self.busy.last().map_or(0.0, |l| l.1) - self.busy[0].0;
        span - self.busy.iter().map(|b| b.1 - b.0).sum::<f64>()
    }
}

fn diagnosed(l: &Loop) -> (RankSummary, Report) {
    let r = read_slice(&l.bytes(), &ReadOptions::default()).expect("reads");
    let t = TraceSummary::from_ranks(vec![r.clone()], Choices::default());
    let mut rep = report(&t);
    diagnose(&mut rep, &t);
    (r, rep)
}

fn ids(rep: &Report) -> Vec<&str> {
    rep.findings.iter().map(|f| f.id.as_str()).collect()
}

#[test]
fn a_loader_starved_loop_is_data_starvation_not_launch_bound() {
    // Forward and backward queue 18 ms of GPU work in 4.5 ms of launches and the optimizer's
    // 0.8 ms queues behind them, so the GPU is still busy 12 255 µs into the next step's
    // loader wait; it idles for the rest of the wait and the 15 µs to the first kernel.
    for load in [20_000.0, 15_000.0] {
        let mut l = Loop::new();
        let mut s = 0.0;
        for k in 0..8 {
            s = l.step(k, s, load, &|_, t| t);
        }
        let (r, rep) = diagnosed(&l);
        let g = &r.gap_causes;
        assert!(
            (g.idle_us - l.idle()).abs() < 1e-6,
            "{} vs {}",
            g.idle_us,
            l.idle()
        );
        assert!((g.data_us - 7.0 * (load - 12_255.0)).abs() < 1e-6, "{g:?}");
        assert!((g.other_host_us - 7.0 * 15.0).abs() < 1e-6, "{g:?}");
        let f = rep.findings.first().expect("a finding");
        assert_eq!(f.id, "data_starvation", "{:?}", ids(&rep));
        let data = g.data_us / r.span_us;
        assert_eq!(f.lost_share, Some(crate::rules::round(data)));
        assert_eq!(
            g.cpu_work_us, 0.0,
            "a GPU optimizer's launch gaps are not CPU work"
        );
        assert!(!ids(&rep).contains(&"cpu_optimizer") && !ids(&rep).contains(&"launch_bound"));
    }
}

#[test]
fn a_loop_freeing_memory_every_step_is_an_allocator_stall_beside_its_loader() {
    // As above with a 5 ms loader, and a cudaFree (the caching allocator off) after
    // backward is launched: it waits for the queued backward to finish, then takes 3 ms.
    // The GPU idles 3 ms + 50 µs + 10 µs to the optimizer's first kernel: all the
    // allocator's (3 ms under the cudaFree, the rest after it, the gap having opened in it;
    // the SGD step is no CPU work, its kernels keep the GPU busy for most of it); then 12 µs
    // between its small kernels (launches); then, in the next step, 5 ms under the loader
    // with 7 + 15 µs around it (unnamed host work).
    let free = |l: &mut Loop, t: f64| {
        let drained = l.gpu_free;
        l.ev.push(call("cudaFree", t, drained - t + 3000.0));
        drained + 3000.0
    };
    let mut l = Loop::new();
    let mut s = 0.0;
    for k in 0..8 {
        s = l.step(k, s, 5_000.0, &free);
    }
    let (r, rep) = diagnosed(&l);
    let g = &r.gap_causes;
    assert!((g.idle_us - l.idle()).abs() < 1e-6);
    assert!((g.allocator_us - 8.0 * 3060.0).abs() < 1e-6, "{g:?}");
    assert_eq!(g.cpu_work_us, 0.0, "{g:?}");
    assert!((g.launch_us - 8.0 * 99.0 * 12.0).abs() < 1e-6, "{g:?}");
    assert!((g.data_us - 7.0 * 5000.0).abs() < 1e-6, "{g:?}");
    assert!((g.other_host_us - 7.0 * 22.0).abs() < 1e-6, "{g:?}");
    let got = ids(&rep);
    assert!(
        got.contains(&"allocator_stall") && got.contains(&"data_starvation"),
        "{got:?}"
    );
}
