//! Rules that read the step markers: launch storms, recomputation, periodic stalls,
//! changing shapes — and how steps sharpen or silence the sample-based rules.

use super::*;
use crate::rules::{
    DataStarvation, DynamicShapes, LaunchBound, PeriodicStall, RecomputeOverhead, Rule, SmallBatch,
};
use crate::signals::stats::Period;
use crate::signals::{Signals, StepView};

fn view() -> StepView {
    StepView {
        count: 200,
        step_p50_s: 0.5,
        step_p95_s: 0.55,
        data_share_p50: Some(0.02),
        data_share_p95: Some(0.04),
        bwd_fwd_ratio_p50: Some(2.0),
        gpu_cpu_ratio_p50: None,
        iqr_over_p50: 0.05,
        p95_over_p50: 1.1,
        step_period: None,
        outliers: 0,
        outlier_period_steps: None,
        outlier_spacing_cv: None,
        dips_in_data_share: None,
        data_share_total: None,
        fwd_bwd_share_total: None,
        optimizer_share_total: None,
        stall_excess_share: 0.0,
        phase_totals: Vec::new(),
    }
}

fn signals(v: StepView, util: f32) -> Signals {
    let r = report(vec![(
        h100(0),
        vec![
            (GpuMetric::UtilGpu, constant(util, N)),
            (GpuMetric::Power, constant(250.0, N)),
            (GpuMetric::MemUsed, constant(20_000.0, N)),
        ],
    )]);
    let mut s = Signals::from_report(&r);
    s.steps = Some(v);
    s
}

#[test]
fn launch_bound_when_gpu_time_is_far_below_cpu_time() {
    let f = LaunchBound
        .evaluate(&signals(
            StepView {
                gpu_cpu_ratio_p50: Some(0.3),
                ..view()
            },
            55.0,
        ))
        .expect("fires");
    // 1 − 0.3 of forward/backward, but a GPU busy 55% of the time idles only 45% of it:
    // the estimate is capped by what the samples measured.
    assert_eq!(f.lost_share, Some(0.45));
    assert!(f
        .lost_share_basis
        .as_deref()
        .is_some_and(|b| b.contains("capped")));
    assert!(f.confidence >= 0.8, "{}", f.confidence);
    assert!(
        LaunchBound
            .evaluate(&signals(
                StepView {
                    gpu_cpu_ratio_p50: Some(0.9),
                    ..view()
                },
                55.0
            ))
            .is_none(),
        "GPU busy for the whole phase"
    );
    // Small batch steps aside when the launch is the cause, and fires when it is not.
    assert!(SmallBatch
        .evaluate(&signals(
            StepView {
                gpu_cpu_ratio_p50: Some(0.3),
                ..view()
            },
            55.0
        ))
        .is_none());
    assert!(SmallBatch
        .evaluate(&signals(
            StepView {
                gpu_cpu_ratio_p50: Some(0.95),
                ..view()
            },
            55.0
        ))
        .is_some());
}

#[test]
fn recompute_overhead_on_a_long_backward_with_memory_to_spare() {
    let f = RecomputeOverhead
        .evaluate(&signals(
            StepView {
                bwd_fwd_ratio_p50: Some(3.1),
                ..view()
            },
            90.0,
        ))
        .expect("fires");
    assert!((f.lost_share.expect("share") - (1.1 / 4.1)).abs() < 0.01);
    assert!(RecomputeOverhead
        .evaluate(&signals(
            StepView {
                bwd_fwd_ratio_p50: Some(2.0),
                ..view()
            },
            90.0
        ))
        .is_none());
}

#[test]
fn periodic_stall_needs_regular_spacing() {
    let regular = StepView {
        outliers: 10,
        outlier_period_steps: Some(20.0),
        outlier_spacing_cv: Some(0.05),
        step_p95_s: 1.5,
        ..view()
    };
    let f = PeriodicStall
        .evaluate(&signals(regular.clone(), 90.0))
        .expect("fires");
    assert!(f.summary.contains("~20 steps"), "{}", f.summary);
    let random = StepView {
        outlier_spacing_cv: Some(0.8),
        ..regular
    };
    assert!(PeriodicStall.evaluate(&signals(random, 90.0)).is_none());
    let one = StepView {
        outliers: 1,
        outlier_period_steps: None,
        outlier_spacing_cv: None,
        ..view()
    };
    assert!(
        PeriodicStall.evaluate(&signals(one, 90.0)).is_none(),
        "one slow step is not a periodic stall"
    );
}

#[test]
fn dynamic_shapes_on_wide_patternless_step_times() {
    let wide = StepView {
        iqr_over_p50: 0.45,
        p95_over_p50: 1.9,
        step_period: Some(Period {
            lag: 7,
            strength: 0.1,
        }),
        ..view()
    };
    assert!(DynamicShapes
        .evaluate(&signals(wide.clone(), 90.0))
        .is_some());
    let steady = StepView {
        iqr_over_p50: 0.05,
        p95_over_p50: 1.1,
        ..view()
    };
    assert!(DynamicShapes.evaluate(&signals(steady, 90.0)).is_none());
    let periodic = StepView {
        step_period: Some(Period {
            lag: 10,
            strength: 0.8,
        }),
        ..wide
    };
    assert!(
        DynamicShapes.evaluate(&signals(periodic, 90.0)).is_none(),
        "a regular pattern is a stall, not shapes"
    );
}

#[test]
fn data_phase_share_fires_data_starvation_without_a_sawtooth() {
    let f = DataStarvation
        .evaluate(&signals(
            StepView {
                data_share_p50: Some(0.35),
                data_share_p95: Some(0.5),
                ..view()
            },
            60.0,
        ))
        .expect("fires");
    assert_eq!(f.lost_share, Some(0.35));
    assert!(f.unseen.is_empty(), "the data phase was measured");
    assert!(
        DataStarvation.evaluate(&signals(view(), 60.0)).is_none(),
        "2% data wait is not starvation"
    );
}

#[test]
fn cuda_event_times_near_the_cpu_times_do_not_hide_a_launch_storm() {
    // Events recorded around a phase time the gaps between its kernels too, so a
    // launch-starved loop reads GPU ≈ CPU; the samples (steady mid utilization, a saturated
    // launching thread) still show it, and small_batch does not claim it.
    let saturated = |cpu: f64| crate::signals::stats::Dist {
        p5: cpu,
        p50: cpu,
        p95: cpu,
        mean: cpu,
        n: N,
    };
    let mut s = signals(
        StepView {
            gpu_cpu_ratio_p50: Some(0.97),
            ..view()
        },
        55.0,
    );
    s.host_proc_cpu = Some(saturated(98.0));
    let f = LaunchBound.evaluate(&s).expect("fires from the samples");
    assert!(f.confidence < 0.7, "samples path: {}", f.confidence);
    assert!(
        f.unseen.iter().any(|u| u.contains("CUDA events")),
        "{:?}",
        f.unseen
    );
    assert!(SmallBatch.evaluate(&s).is_none(), "the CPU sets the pace");
    // The same loop with an idle launching thread is not launch-bound.
    s.host_proc_cpu = Some(saturated(40.0));
    assert!(LaunchBound.evaluate(&s).is_none());
}

#[test]
fn a_data_wait_names_the_loader_setting_that_is_off() {
    let starved = StepView {
        data_share_p50: Some(0.45),
        data_share_p95: Some(0.5),
        data_share_total: Some(0.45),
        ..view()
    };
    let mut s = signals(starved.clone(), 50.0);
    s.data_loader = Some(crate::report::DataLoaderInfo {
        num_workers: Some(0),
        pin_memory: Some(false),
        batch_size: Some(32),
        ..Default::default()
    });
    let f = DataStarvation.evaluate(&s).expect("fires");
    assert!(
        f.actions[0].text.starts_with("num_workers=0 →"),
        "{:?}",
        f.actions[0]
    );
    assert!(f
        .actions
        .iter()
        .any(|a| a.text.starts_with("pin_memory=False →")));
    assert!(
        f.experiment.change.contains("from 0"),
        "{}",
        f.experiment.change
    );
    // Without the settings the advice stays general.
    let f = DataStarvation
        .evaluate(&signals(starved, 50.0))
        .expect("fires");
    assert!(f.actions[0]
        .text
        .starts_with("Raise DataLoader num_workers"));
}
