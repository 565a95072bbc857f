//! Mechanisms the samples alone blur, told apart with the phases the loop marks and the
//! GPUs compared with each other: a CPU-side optimizer, a collective every N micro-steps of
//! gradient accumulation, pipeline stages idling in turn, a server idle between requests.

use super::tests::{constant, diagnosed, find, h100, report, square, GpuMetric};
use crate::report::{Finding, FindingSource, Report, Severity};
use crate::steps::{StepLog, MAX_PHASES};

/// Steps of `step_s` seconds back to back from t = 0, each split into the named phases'
/// seconds in order; every `extra.2`-th step gets the phase `extra.0` of `extra.1` seconds
/// on top.
fn steps(
    n: usize,
    phases: &[(&str, f64)],
    extra: Option<(&str, f64, usize)>,
) -> crate::report::StepsData {
    let mut names: Vec<String> = crate::steps::BUILTIN_PHASES.map(String::from).to_vec();
    for (p, _) in phases
        .iter()
        .chain(extra.as_ref().map(|e| (e.0, e.1)).as_slice())
    {
        if !names.iter().any(|x| x == p) {
            names.push(p.to_string());
        }
    }
    let idx = |p: &str| names.iter().position(|x| x == p).expect("named");
    let mut log = StepLog::new(100_000);
    let mut t = 0.0;
    for i in 0..n {
        let mut p = [f64::NAN; MAX_PHASES];
        let mut d = 0.0;
        for (name, s) in phases {
            p[idx(name)] = *s;
            d += s;
        }
        if let Some((name, s, every)) = extra {
            if i % every == every - 1 {
                p[idx(name)] = s;
                d += s;
            }
        }
        log.push(t, d, &p);
        t += d;
    }
    log.to_data(&names)
}

fn with_steps(mut r: Report, data: crate::report::StepsData) -> Report {
    r.steps = Some(data);
    r
}

fn value(f: &Finding, metric: &str) -> f64 {
    f.evidence
        .iter()
        .find(|e| e.metric.starts_with(metric))
        .unwrap_or_else(|| panic!("{metric} in {:?}", f.evidence))
        .value
}

/// One H100 whose 1 s steps end in an optimizer phase of `opt` seconds (samples every
/// 0.1 s), with `opt_util` utilization and 6 GB/s of PCIe meanwhile, 97 % otherwise.
fn optimizer_loop(opt: f64, opt_util: f32) -> Report {
    let n = 300;
    let k = (opt * 10.0).round() as usize;
    let in_opt = |i: usize| i % 10 >= 10 - k;
    let util = (0..n)
        .map(|i| if in_opt(i) { opt_util } else { 97.0 })
        .collect();
    let pcie = (0..n)
        .map(|i| if in_opt(i) { 6000.0 } else { 300.0 })
        .collect();
    let r = report(vec![(
        h100(0),
        vec![(GpuMetric::UtilGpu, util), (GpuMetric::PcieRx, pcie)],
    )]);
    // Steps start halfway between sampler ticks, as a tick and a marker never meet.
    let mut d = steps(
        30,
        &[
            ("data", 0.01),
            ("forward", (1.0 - opt - 0.01) / 3.0),
            ("backward", (1.0 - opt - 0.01) * 2.0 / 3.0),
            ("optimizer", opt),
        ],
        None,
    );
    d.t.iter_mut().for_each(|t| *t -= 0.05);
    with_steps(r, d)
}

#[test]
fn an_optimizer_phase_the_gpu_idles_through_is_a_cpu_optimizer() {
    let r = diagnosed(optimizer_loop(0.3, 3.0));
    let f = find(&r, "cpu_optimizer").expect("fires from the marked phase");
    assert_eq!(f.source, Some(FindingSource::Steps));
    assert_eq!(f.severity, Severity::High);
    assert!(
        (value(f, "optimizer phase time") - 0.3).abs() < 0.02,
        "{:?}",
        f.evidence
    );
    assert!(value(f, "share of GPU samples in the optimizer phase") > 0.9);
    assert!(value(f, "PCIe traffic in the optimizer phase") >= super::cpu_optimizer::PCIE_BURST);
    let lost = f.lost_share.expect("measured");
    assert!((0.25..=0.32).contains(&lost), "{lost}");
    let idle = find(&r, "unexplained_idle")
        .and_then(|f| f.lost_share)
        .unwrap_or(0.0);
    assert!(idle <= lost + 0.05, "the optimizer explains the idle time");
}

#[test]
fn an_optimizer_on_the_gpu_or_a_short_one_is_not_a_cpu_optimizer() {
    let busy = diagnosed(optimizer_loop(0.3, 90.0));
    assert!(
        find(&busy, "cpu_optimizer").is_none(),
        "GPU busy in the phase"
    );
    let short = diagnosed(optimizer_loop(0.1, 3.0));
    assert!(
        find(&short, "cpu_optimizer").is_none(),
        "a tenth of the step is under the bar"
    );
}

#[test]
fn a_gpu_optimizer_after_which_the_next_batch_is_awaited_is_not_a_cpu_optimizer() {
    // 1 s steps: a 0.3 s data wait at the start (GPU idle), then compute, then a 0.3 s
    // optimizer on the GPU. The next step's idle data phase sits right after the optimizer:
    // aligning markers and samples within one interval must not move the window onto it.
    let n = 300;
    let util = (0..n)
        .map(|i| if i % 10 < 3 { 2.0 } else { 95.0 })
        .collect();
    let r = report(vec![(h100(0), vec![(GpuMetric::UtilGpu, util)])]);
    let mut d = steps(
        30,
        &[
            ("data", 0.3),
            ("forward", 0.13),
            ("backward", 0.27),
            ("optimizer", 0.3),
        ],
        None,
    );
    d.t.iter_mut().for_each(|t| *t -= 0.05);
    let r = diagnosed(with_steps(r, d));
    assert!(find(&r, "cpu_optimizer").is_none());
    assert!(find(&r, "data_starvation").is_some());
}

#[test]
fn a_sawtooth_with_a_data_phase_of_a_few_ms_is_not_read_as_an_input_wait() {
    // 30 % idle at the end of each step in an unmarked stretch; the data phase takes 1 %.
    let n = 300;
    let util: Vec<f32> = (0..n)
        .map(|i| if i % 10 >= 7 { 2.0 } else { 97.0 })
        .collect();
    let bare = diagnosed(report(vec![(
        h100(0),
        vec![(GpuMetric::UtilGpu, util.clone())],
    )]));
    let read = find(&bare, "unexplained_idle").expect("idle");
    assert_eq!(
        read.confidence,
        super::unexplained_idle::READING_CONFIDENCE,
        "no steps: the sawtooth reads as input"
    );
    let mut d = steps(
        30,
        &[
            ("data", 0.01),
            ("forward", 0.2),
            ("backward", 0.49),
            ("other", 0.3),
        ],
        None,
    );
    d.t.iter_mut().for_each(|t| *t -= 0.05);
    let marked = diagnosed(with_steps(
        report(vec![(h100(0), vec![(GpuMetric::UtilGpu, util)])]),
        d,
    ));
    let f = find(&marked, "unexplained_idle").expect("idle");
    assert_eq!(f.confidence, super::unexplained_idle::IDLE_CONFIDENCE);
    let e = f
        .evidence
        .iter()
        .find(|e| e.metric == "data phase time / total step time")
        .expect("data phase");
    assert!(e.agrees && e.value < 0.02, "{e:?}");
    let other = value(f, "phase `other` time / total step time");
    assert!(
        (other - 0.3).abs() < 0.01,
        "the idle's likeliest place: {other}"
    );
    assert!(
        !f.experiment.change.contains("num_workers"),
        "{:?}",
        f.experiment
    );
}

/// splitmix64 → [0, 1): irregular request gaps without a period.
fn uniform01(i: u64) -> f64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
}

/// One H100 serving: `wait(i)` seconds of no work, then a steady 0.05 s forward pass
/// (`fwd(i)` when it varies), sampled every 0.01 s.
fn serving(fwd: impl Fn(usize) -> f64) -> Report {
    let mut log = StepLog::new(100_000);
    let mut names: Vec<String> = crate::steps::BUILTIN_PHASES.map(String::from).to_vec();
    names.push("queue_wait".into());
    let (mut t, mut util) = (0.0, Vec::new());
    for i in 0..200 {
        let wait = 0.01 + 0.1 * uniform01(i as u64);
        let f = fwd(i);
        let mut p = [f64::NAN; MAX_PHASES];
        p[4] = wait;
        p[1] = f;
        log.push(t, wait + f, &p);
        let end = t + wait + f;
        while (util.len() as f64) * 0.01 < end {
            util.push(if (util.len() as f64) * 0.01 < t + wait {
                0.0
            } else {
                95.0
            });
        }
        t = end;
    }
    let n = util.len();
    let mut r = report(vec![(
        h100(0),
        vec![
            (GpuMetric::UtilGpu, util),
            (GpuMetric::MemUsed, constant(62_000.0, n)),
        ],
    )]);
    for s in &mut r.series {
        s.data.t = (0..n).map(|i| i as f64 * 0.01).collect();
    }
    r.run.interval_s = 0.01;
    r.run.duration_s = n as f64 * 0.01;
    with_steps(r, log.to_data(&names))
}

#[test]
fn a_server_idle_between_requests_is_waiting_for_load_not_shapes() {
    let r = diagnosed(serving(|_| 0.05));
    assert!(
        find(&r, "dynamic_shapes").is_none(),
        "steady forward passes, flat memory"
    );
    let f = find(&r, "unexplained_idle").expect("idle between requests");
    assert_eq!(f.severity, Severity::Low);
    assert!(
        value(f, "step time outside forward passes") >= 0.3,
        "{:?}",
        f.evidence
    );
    // The same spread carried by the forward passes themselves is shape variation.
    let varying = diagnosed(serving(|i| 0.02 + 0.1 * uniform01(1000 + i as u64)));
    assert!(
        find(&varying, "dynamic_shapes").is_some(),
        "forward time varies"
    );
}

/// `gpus` H100 whose utilization is a square wave of period 20 samples, idle 6 of them,
/// GPU k's shifted by `shift(k)` samples.
fn staggered(gpus: u32, shift: impl Fn(u32) -> usize) -> Report {
    staggered_idle(gpus, 6, shift)
}

fn staggered_idle(gpus: u32, idle: usize, shift: impl Fn(u32) -> usize) -> Report {
    let n = 400;
    report(
        (0..gpus)
            .map(|k| {
                let wave = square(n + 40, 20, idle, 3.0, 97.0);
                let util = wave[40 - shift(k) % 20..][..n].to_vec();
                (h100(k), vec![(GpuMetric::UtilGpu, util)])
            })
            .collect(),
    )
}

#[test]
fn gpus_idle_in_turn_at_a_fixed_lag_are_a_pipeline_bubble() {
    let r = diagnosed(staggered(4, |k| 2 * k as usize));
    let f = find(&r, "pipeline_bubble").expect("stages idle in turn");
    assert_eq!(f.devices, [0, 1, 2, 3]);
    assert_eq!(f.severity, Severity::Medium);
    assert!((f.lost_share.expect("bubble") - 0.3).abs() < 0.02);
    assert!(value(f, "share of time all GPUs dip at once") < 0.05);
    let span = value(f, "span of resolved neighbour lags");
    assert!(
        (span - 1.0).abs() < 0.1,
        "3 lags of 0.2 s over 0.6 s idle: {span}"
    );
    for id in ["comm_sync", "rank_imbalance"] {
        assert!(find(&r, id).is_none(), "{id}");
    }
}

/// Four GPUs on an exact GPipe schedule: 4 micro-batches, forward slots of 2 samples,
/// backward slots of 4. Stage k works forward in slots k..k+4, then backward from slot
/// 7 + (3 − k) of the backward wave; each idles 18 of 42 samples, in blocks of different
/// shapes (stage 0 once in the middle, stage 3 at the start and the end).
#[test]
fn an_exact_gpipe_schedule_is_a_pipeline_bubble() {
    let (p, m, tf, tb) = (4usize, 4usize, 2usize, 4usize);
    let cycle = (m + p - 1) * (tf + tb);
    let n = 420;
    let gpus = (0..p)
        .map(|k| {
            let bwd = (m + p - 1) * tf + (p - 1 - k) * tb;
            let busy = |i: usize| {
                let c = i % cycle;
                (k * tf..(k + m) * tf).contains(&c) || (bwd..bwd + m * tb).contains(&c)
            };
            let util = (0..n).map(|i| if busy(i) { 97.0 } else { 3.0 }).collect();
            (h100(k as u32), vec![(GpuMetric::UtilGpu, util)])
        })
        .collect();
    let r = diagnosed(report(gpus));
    let f = find(&r, "pipeline_bubble").expect("GPipe's bubble");
    assert!((f.lost_share.expect("bubble") - 18.0 / 42.0).abs() < 0.02);
    assert_eq!(f.severity, Severity::High);
}

#[test]
fn gpus_idle_together_out_of_order_or_two_are_not_a_pipeline() {
    let together = diagnosed(staggered(4, |_| 0));
    assert!(find(&together, "pipeline_bubble").is_none());
    let shuffled = diagnosed(staggered(4, |k| if k % 2 == 1 { 8 } else { 0 }));
    assert!(
        find(&shuffled, "pipeline_bubble").is_none(),
        "lags both ways"
    );
    let two = diagnosed(staggered(2, |k| 3 * k as usize));
    assert!(
        find(&two, "pipeline_bubble").is_none(),
        "two GPUs out of step"
    );
    // Unrelated jobs out of step: ordered lags of 0.5 s, 1.5 s from first to last, but each
    // GPU idles 0.4 s a period; a later stage cannot start more than its idle time late.
    let apart = diagnosed(staggered_idle(4, 4, |k| 5 * k as usize));
    assert!(
        find(&apart, "pipeline_bubble").is_none(),
        "lags span beyond the idle time"
    );
    // Unrelated jobs at their own paces: periods of 2.0, 2.2, 2.4 and 2.6 s.
    let paces = report(
        (0..4u32)
            .map(|k| {
                (
                    h100(k),
                    vec![(
                        GpuMetric::UtilGpu,
                        square(400, 20 + 2 * k as usize, 6, 3.0, 97.0),
                    )],
                )
            })
            .collect(),
    );
    assert!(
        find(&diagnosed(paces), "pipeline_bubble").is_none(),
        "periods differ"
    );
}

/// Two H100 stepping every 0.5 s with a 0.5 s all-reduce every 4th step, both dipping to
/// 8 % in it; NVLink carries `burst` MB/s in it and 1000 outside.
fn accumulation(burst: f32) -> Report {
    // Cycle of 4 steps = 2.5 s = 25 samples; the all-reduce is the last 5 of each.
    let n = 300;
    let in_ar = |i: usize| i % 25 >= 20;
    let cols = || {
        vec![
            (
                GpuMetric::UtilGpu,
                (0..n).map(|i| if in_ar(i) { 8.0 } else { 97.0 }).collect(),
            ),
            (
                GpuMetric::NvlinkRx,
                (0..n)
                    .map(|i| if in_ar(i) { burst } else { 1000.0 })
                    .collect(),
            ),
            (
                GpuMetric::NvlinkTx,
                (0..n)
                    .map(|i| if in_ar(i) { burst } else { 1000.0 })
                    .collect(),
            ),
        ]
    };
    let r = report(vec![(h100(0), cols()), (h100(1), cols())]);
    let mut d = steps(
        48,
        &[("data", 0.01), ("forward", 0.16), ("backward", 0.33)],
        Some(("allreduce", 0.5, 4)),
    );
    d.t.iter_mut().for_each(|t| *t -= 0.05);
    with_steps(r, d)
}

#[test]
fn a_collective_every_n_micro_steps_is_communication_not_a_periodic_stall() {
    let r = diagnosed(accumulation(150_000.0));
    assert!(find(&r, "periodic_stall").is_none());
    let f = find(&r, "comm_sync").expect("synchronized dips with NVLink bursts");
    assert!(
        (f.lost_share.expect("measured") - 0.2).abs() < 0.03,
        "{:?}",
        f.lost_share
    );
    assert!(value(f, "NVLink+PCIe traffic in dips") >= super::comm_sync::TRAFFIC_RATIO);
    // Without the burst the same stall is not known to be a collective.
    let quiet = diagnosed(accumulation(1000.0));
    let p = find(&quiet, "periodic_stall").expect("a stall every 4 steps");
    assert_eq!(value(p, "outlier period"), 4.0);
}
