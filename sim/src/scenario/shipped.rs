//! The bundled scenarios are contracts: each must show its signal unmistakably over its
//! demo duration, sampled as `gpuwhy demo` samples it (every 100 ms).

use super::tests::shipped;
use super::{Device, Fault, Scenario};
use crate::metric::Metric::{self, *};

/// One scenario sampled every 100 ms over `demo.duration_s`.
struct Run {
    scenario: Scenario,
    times: Vec<f64>,
}

impl Run {
    fn of(name: &str) -> Run {
        let text = shipped()
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t)
            .expect("shipped scenario");
        let raw: serde_json::Value = serde_json::from_str(&text).expect("json");
        let duration = raw["demo"]["duration_s"].as_f64().expect("demo.duration_s");
        let scenario = Scenario::from_json(&text).expect("valid");
        let times = (0..(duration * 10.0) as usize)
            .map(|i| i as f64 * 0.1)
            .collect();
        Run { scenario, times }
    }

    fn device(&self, i: usize) -> &Device {
        &self.scenario.devices[i]
    }

    fn series(&self, i: usize, m: Metric) -> Vec<f64> {
        self.times
            .iter()
            .map(|t| self.device(i).value(m, *t))
            .collect()
    }

    fn p50(&self, i: usize, m: Metric) -> f64 {
        let mut v = self.series(i, m);
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }

    fn share(&self, i: usize, m: Metric, pred: impl Fn(f64) -> bool) -> f64 {
        let v = self.series(i, m);
        v.iter().filter(|x| pred(**x)).count() as f64 / v.len() as f64
    }
}

fn bits(mask: u64) -> impl Fn(f64) -> bool {
    move |v| (v as u64) & mask != 0
}

#[test]
fn healthy_is_busy_at_full_clocks_without_reasons() {
    let r = Run::of("healthy");
    let max_sm = f64::from(r.device(0).facts.max_sm_clock_mhz);
    assert!(r.share(0, UtilGpu, |u| (97.0..=100.0).contains(&u)) == 1.0);
    assert!(
        (580.0..=620.0).contains(&r.p50(0, PowerW)),
        "{}",
        r.p50(0, PowerW)
    );
    assert_eq!(r.share(0, ClockEventReasons, |v| v == 0.0), 1.0);
    assert_eq!(r.share(0, SmClockMhz, |c| c == max_sm), 1.0);
    assert_eq!(r.share(0, Pstate, |p| p == 0.0), 1.0);
    assert_eq!((r.p50(0, PcieGen), r.p50(0, PcieWidth)), (5.0, 16.0));
}

#[test]
fn data_starvation_is_a_sawtooth_with_power_in_phase() {
    let r = Run::of("data_starvation");
    let util = r.series(0, UtilGpu);
    let power = r.series(0, PowerW);
    let rx = r.series(0, PcieRxKbs);
    let idle: Vec<usize> = (0..util.len()).filter(|&i| util[i] <= 5.0).collect();
    let busy: Vec<usize> = (0..util.len()).filter(|&i| util[i] >= 95.0).collect();
    assert_eq!(idle.len() + busy.len(), util.len(), "only the two levels");
    let idle_share = idle.len() as f64 / util.len() as f64;
    assert!((0.40..=0.50).contains(&idle_share), "idle {idle_share}");
    assert!(
        idle.iter().all(|&i| power[i] < 140.0),
        "power drops with utilization"
    );
    assert!(busy.iter().all(|&i| power[i] > 600.0));
    let mean = |ix: &[usize], v: &[f64]| ix.iter().map(|&i| v[i]).sum::<f64>() / ix.len() as f64;
    assert!(
        mean(&idle, &rx) > 10.0 * mean(&busy, &rx),
        "PCIe RX bursts in the idle phase"
    );
    // The period is the step: an idle phase starts every 1.0 s (±1% jitter, sampled
    // every 100 ms).
    let starts: Vec<f64> = (1..util.len())
        .filter(|&i| util[i] <= 5.0 && util[i - 1] >= 95.0)
        .map(|i| r.times[i])
        .collect();
    assert!(starts.len() >= 13, "{starts:?}");
    assert!(
        starts.windows(2).all(|w| (w[1] - w[0] - 1.0).abs() < 0.13),
        "{starts:?}"
    );
}

#[test]
fn power_cap_pins_power_and_holds_clocks_down_under_load() {
    let r = Run::of("power_cap");
    let d = r.device(0);
    assert!(r.p50(0, UtilGpu) >= 98.0);
    let limit = d.facts.power_limit_w;
    assert!(r.share(0, PowerW, |p| p >= 0.98 * limit && p <= limit) == 1.0);
    assert!(r.share(0, ClockEventReasons, bits(0x4)) >= 0.8);
    let ratio = r.p50(0, SmClockMhz) / f64::from(d.facts.max_sm_clock_mhz);
    assert!((0.6..=0.7).contains(&ratio), "SM clock at {ratio} of max");
}

#[test]
fn thermal_runs_at_the_slowdown_threshold_with_thermal_reasons() {
    let r = Run::of("thermal");
    let d = r.device(0);
    assert_eq!(d.facts.temp_slowdown_c, 90);
    assert_eq!(r.share(0, TempC, |t| (88.0..=90.0).contains(&t)), 1.0);
    assert!(r.share(0, ClockEventReasons, bits(0x60)) >= 0.8);
    let ratio = r.p50(0, SmClockMhz) / f64::from(d.facts.max_sm_clock_mhz);
    assert!((0.5..=0.6).contains(&ratio), "SM clock at {ratio} of max");
    let p2 = r.share(0, Pstate, |p| p == 2.0);
    assert!((0.1..=0.5).contains(&p2), "P2 sometimes: {p2}");
    assert!(r.p50(0, UtilGpu) >= 97.0, "under load");
}

#[test]
fn pcie_degraded_trains_below_its_capability_under_load() {
    let r = Run::of("pcie_degraded");
    let d = r.device(0);
    assert_eq!((d.facts.pcie_max_gen, d.facts.pcie_max_width), (4, 16));
    assert_eq!((r.p50(0, PcieGen), r.p50(0, PcieWidth)), (1.0, 4.0));
    assert!(r.p50(0, UtilGpu) >= 80.0);
}

#[test]
fn straggler_is_gpu_5_and_stands_out_by_more_than_15_points() {
    let r = Run::of("straggler_8gpu");
    assert_eq!(r.scenario.devices.len(), 8);
    let straggler = r.p50(5, UtilGpu);
    let max_sm = f64::from(r.device(5).facts.max_sm_clock_mhz);
    for i in (0..8).filter(|&i| i != 5) {
        let p50 = r.p50(i, UtilGpu);
        assert!(
            (straggler - p50).abs() >= 15.0,
            "GPU {i} p50 {p50} vs straggler {straggler}"
        );
    }
    // The straggler is slow because of its work, not its hardware: full clocks, no reasons.
    for i in 0..8 {
        assert_eq!(r.share(i, ClockEventReasons, |v| v == 0.0), 1.0);
        assert_eq!(r.p50(i, SmClockMhz), max_sm);
    }
    // The seven others dip together.
    let dips: Vec<Vec<bool>> = (0..8)
        .filter(|&i| i != 5)
        .map(|i| r.series(i, UtilGpu).iter().map(|u| *u < 60.0).collect())
        .collect();
    assert!(dips.windows(2).all(|w| w[0] == w[1]), "in sync");
}

#[test]
fn gpu_lost_loses_gpu_1_at_40_percent_of_the_demo() {
    let r = Run::of("gpu_lost");
    let end = r.times.len() as f64 * 0.1;
    assert_eq!(r.scenario.devices.len(), 2);
    assert_eq!(
        r.scenario.faults,
        [Fault::GpuLost {
            device: Some(1),
            at_s: 0.4 * end
        }]
    );
    assert!(r.p50(1, UtilGpu) >= 95.0, "healthy load before");
}

#[test]
fn consumer_gpu_hides_what_geforce_boards_hide() {
    let r = Run::of("consumer_gpu");
    let d = r.device(0);
    assert_eq!(d.facts.architecture, 7);
    assert!(!d.gpm);
    for f in [
        "nvmlDeviceGetPcieThroughput",
        "nvmlDeviceGetCurrentClocksEventReasons",
        "nvmlDeviceGetCurrentClocksThrottleReasons",
        "nvmlDeviceGetFieldValues",
        "nvmlDeviceGetTemperatureThreshold",
    ] {
        assert!(d.unsupported.iter().any(|u| u == f), "{f}");
    }
    assert!(d
        .no_permission
        .iter()
        .any(|f| f == "nvmlDeviceGetComputeRunningProcesses_v3"));
    assert!(r.p50(0, UtilGpu) >= 90.0);
}
