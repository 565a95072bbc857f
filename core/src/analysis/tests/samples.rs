//! Rules read from GPU samples alone: busy-not-working, memory, batch, PCIe traffic,
//! communication bubbles, launch storms.

use super::*;
use crate::rules::{
    BusyNotWorking, CommSync, HostTransfer, LaunchBound, MemoryBound, MemoryHeadroom, Rule,
    SmallBatch,
};
use crate::signals::Signals;

fn fires(rule: &dyn Rule, r: &Report) -> Option<Finding> {
    rule.evaluate(&Signals::from_report(r))
}

#[test]
fn busy_not_working_needs_low_sm_activity_under_high_utilization() {
    let busy = |sm: f32| {
        report(vec![(
            h100(0),
            vec![
                (GpuMetric::UtilGpu, constant(97.0, N)),
                (GpuMetric::GpmSmUtil, constant(sm, N)),
                (GpuMetric::Power, constant(300.0, N)),
            ],
        )])
    };
    let f = fires(&BusyNotWorking, &busy(25.0)).expect("fires");
    assert_eq!(f.devices, vec![0]);
    assert!(f.unseen.is_empty(), "GPM was there");
    assert!(
        fires(&BusyNotWorking, &busy(85.0)).is_none(),
        "SM utilization 85% is working"
    );
    // Without GPM, low power is the weaker sign, and the finding says what it could not see.
    let no_gpm = report(vec![(
        h100(0),
        vec![
            (GpuMetric::UtilGpu, constant(97.0, N)),
            (GpuMetric::Power, constant(200.0, N)),
        ],
    )]);
    let f = fires(&BusyNotWorking, &no_gpm).expect("fires on power");
    assert!(f.confidence < 0.7 && !f.unseen.is_empty());
    let hot = report(vec![(
        h100(0),
        vec![
            (GpuMetric::UtilGpu, constant(97.0, N)),
            (GpuMetric::Power, constant(560.0, N)),
        ],
    )]);
    assert!(
        fires(&BusyNotWorking, &hot).is_none(),
        "80% of the power limit is real work"
    );
}

#[test]
fn memory_bound_on_dram_bandwidth_not_on_moderate_traffic() {
    let r = |bw: f32| {
        report(vec![(
            h100(0),
            vec![
                (GpuMetric::UtilGpu, constant(95.0, N)),
                (GpuMetric::GpmDramBw, constant(bw, N)),
                (GpuMetric::GpmTensor, constant(8.0, N)),
            ],
        )])
    };
    let f = fires(&MemoryBound, &r(85.0)).expect("fires");
    assert!(f
        .evidence
        .iter()
        .any(|e| e.metric.contains("tensor") && e.agrees));
    assert!(fires(&MemoryBound, &r(40.0)).is_none());
}

#[test]
fn memory_headroom_only_when_memory_idles_and_gpu_is_not_saturated() {
    let r = |mem_mib: f32, util: f32| {
        report(vec![(
            h100(0),
            vec![
                (GpuMetric::UtilGpu, constant(util, N)),
                (GpuMetric::MemUsed, constant(mem_mib, N)),
            ],
        )])
    };
    let f = fires(&MemoryHeadroom, &r(20_000.0, 55.0)).expect("fires");
    assert!(f.summary.contains("75%"), "{}", f.summary);
    assert!(
        fires(&MemoryHeadroom, &r(70_000.0, 55.0)).is_none(),
        "85% used is spent"
    );
    assert!(
        fires(&MemoryHeadroom, &r(20_000.0, 97.0)).is_none(),
        "a saturated GPU gains nothing from a bigger batch"
    );
}

#[test]
fn small_batch_when_nothing_else_explains_moderate_utilization() {
    let r = |power: f32| {
        report(vec![(
            h100(0),
            vec![
                (GpuMetric::UtilGpu, constant(55.0, N)),
                (GpuMetric::Power, constant(power, N)),
                (GpuMetric::MemUsed, constant(12_000.0, N)),
                (GpuMetric::SmClock, constant(1980.0, N)),
            ],
        )])
    };
    assert!(fires(&SmallBatch, &r(250.0)).is_some());
    assert!(
        fires(&SmallBatch, &r(600.0)).is_none(),
        "85% of the power limit: the GPU is filled"
    );
    // A sawtooth is input, not batch size.
    let saw = report(vec![(
        h100(0),
        vec![
            (GpuMetric::UtilGpu, square(N, 10, 4, 2.0, 90.0)),
            (GpuMetric::Power, constant(250.0, N)),
            (GpuMetric::MemUsed, constant(12_000.0, N)),
        ],
    )]);
    assert!(fires(&SmallBatch, &saw).is_none());
}

#[test]
fn host_transfer_against_the_link_capacity() {
    let r = |rx_mbs: f32| {
        report(vec![(
            h100(0),
            vec![
                (GpuMetric::UtilGpu, constant(80.0, N)),
                (GpuMetric::PcieRx, constant(rx_mbs, N)),
                (GpuMetric::PcieGen, constant(4.0, N)),
                (GpuMetric::PcieWidth, constant(16.0, N)),
            ],
        )])
    };
    // Gen 4 x16 ≈ 31.5 GB/s per direction.
    let f = fires(&HostTransfer, &r(25_000.0)).expect("fires");
    assert!(f.summary.contains("79%"), "{}", f.summary);
    assert!(
        fires(&HostTransfer, &r(3_000.0)).is_none(),
        "10% of the link"
    );
}

#[test]
fn comm_sync_needs_dips_that_line_up_across_gpus() {
    let dips = square(N, 10, 3, 5.0, 95.0);
    let shifted: Vec<f32> = (0..N).map(|i| dips[(i + 5) % N]).collect();
    let together = report(
        (0..4)
            .map(|i| (h100(i), vec![(GpuMetric::UtilGpu, dips.clone())]))
            .collect(),
    );
    let f = fires(&CommSync, &together).expect("fires");
    assert_eq!(f.devices.len(), 4);
    assert!((f.lost_share.expect("share") - 0.3).abs() < 0.02);
    let apart = report(vec![
        (h100(0), vec![(GpuMetric::UtilGpu, dips.clone())]),
        (h100(1), vec![(GpuMetric::UtilGpu, shifted)]),
    ]);
    assert!(
        fires(&CommSync, &apart).is_none(),
        "dips at different times are not a collective"
    );
    let one = report(vec![
        (h100(0), vec![(GpuMetric::UtilGpu, dips)]),
        (h100(1), vec![(GpuMetric::UtilGpu, constant(95.0, N))]),
    ]);
    assert!(
        fires(&CommSync, &one).is_none(),
        "one GPU dipping alone is not communication"
    );
}

#[test]
fn launch_bound_from_samples_needs_a_saturated_launching_thread() {
    let mut r = report(vec![(
        h100(0),
        vec![(GpuMetric::UtilGpu, constant(55.0, N))],
    )]);
    assert!(
        fires(&LaunchBound, &r).is_none(),
        "without host samples there is no evidence of a CPU limit"
    );
    let host = |cpu: f32| crate::report::HostData {
        data: SeriesData {
            t: (0..N).map(|i| i as f64 * 0.1).collect(),
            metrics: [("proc_cpu".to_string(), Column(constant(cpu, N)))]
                .into_iter()
                .collect(),
            coarse: None,
        },
        ..Default::default()
    };
    r.host = Some(host(99.0));
    let f = fires(&LaunchBound, &r).expect("fires");
    assert!(
        f.confidence < 0.7,
        "samples alone: lower confidence ({})",
        f.confidence
    );
    assert!(!f.unseen.is_empty());
    r.host = Some(host(30.0));
    assert!(fires(&LaunchBound, &r).is_none());
}
