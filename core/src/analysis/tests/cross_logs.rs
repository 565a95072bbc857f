//! Cross-GPU evidence read from logs without clock reasons or maximum clocks: `nvidia-smi
//! dmon` and `--query-gpu` CSV logs with stragglers, held-down clocks and independent jobs.

use super::cross::noise;
use super::*;
use crate::analysis::diagnose_log;
use crate::import::{import, ImportOptions, Kind};

/// A dmon log (`-s puc`) of `gpus` GPUs, `n` samples 1 s apart; `row(gpu, i)` gives
/// (sm %, power W, pclk MHz).
fn dmon(gpus: u32, n: usize, row: impl Fn(u32, usize) -> (f32, f32, f32)) -> Report {
    let mut text = String::from(
        "# gpu    pwr  gtemp  mtemp     sm    mem    enc    dec   mclk   pclk\n\
         # Idx      W      C      C      %      %      %      %    MHz    MHz\n",
    );
    for i in 0..n {
        for g in 0..gpus {
            let (sm, pwr, pclk) = row(g, i);
            text.push_str(&format!(
                "    {g}  {pwr:.0}     62      -   {sm:.0}     35      0      0   2619   {pclk:.0}\n"
            ));
        }
    }
    let out = import(Kind::Dmon, text.as_bytes(), &ImportOptions::default()).expect("imports");
    let mut r = Report::from_recording(&out.recording);
    diagnose_log(&mut r);
    r
}

#[test]
fn equal_utilization_at_unequal_clocks_is_throttling_on_the_slow_gpus() {
    // The case: four GPUs at SM 100 %, three at a fraction of GPU 0's clock and about
    // a third of its power; no clock-event reasons or maximum clocks in a dmon log.
    for ratio in [0.3, 0.6, 0.8] {
        let r = dmon(4, 120, |g, _| {
            if g == 0 {
                (100.0, 650.0, 1980.0)
            } else {
                (
                    100.0,
                    650.0 * (0.3 + 0.5 * ratio as f32),
                    1980.0 * ratio as f32,
                )
            }
        });
        assert_eq!(
            r.verdict.id, "throttling",
            "ratio {ratio}: {}",
            r.verdict.summary
        );
        let f = &r.findings[0];
        assert_eq!(f.devices, vec![1, 2, 3]);
        let lost = f.lost_share.expect("lost share");
        assert!(
            (lost - (1.0 - ratio)).abs() < 0.02,
            "ratio {ratio}: lost {lost}"
        );
        assert!(!f.unseen.is_empty(), "says the cause is not visible");
    }
}

#[test]
fn clocks_within_normal_variation_are_not_throttling() {
    let r = dmon(4, 120, |g, i| {
        let wobble = if (i + g as usize) % 2 == 0 { 1.0 } else { 0.97 };
        (99.0, 600.0 * wobble, 1980.0 * wobble - 40.0 * g as f32)
    });
    assert!(find(&r, "throttling").is_none(), "{:?}", r.findings);
    assert!(find(&r, "rank_imbalance").is_none());
}

#[test]
fn one_gpu_drawing_more_power_at_equal_clocks_is_the_straggler() {
    // A 1 s log blurs the waits: the others average lower power at the same utilization.
    let r = dmon(4, 120, |g, _| {
        if g == 2 {
            (99.0, 640.0, 1980.0)
        } else {
            (98.0, 470.0, 1980.0)
        }
    });
    let f = find(&r, "rank_imbalance").expect("fires");
    assert_eq!(f.devices, vec![2]);
    assert!(find(&r, "throttling").is_none());
    assert!((f.lost_share.expect("lost") - (1.0 - 470.0 / 640.0)).abs() < 0.01);
}

#[test]
fn a_dmon_straggler_whose_waits_show_in_samples_is_caught() {
    // Steps of 10 s sampled each second: the other GPUs spin in a collective 2 s of each.
    for wait_s in [1usize, 2, 4] {
        let r = dmon(4, 120, |g, i| {
            if g != 3 && i % 10 >= 10 - wait_s {
                (96.0, 190.0, 1980.0)
            } else {
                (98.0, 610.0, 1980.0)
            }
        });
        let f = find(&r, "rank_imbalance").unwrap_or_else(|| panic!("{wait_s} s: {:?}", r.verdict));
        assert_eq!(f.devices, vec![3]);
        let lost = f.lost_share.expect("lost");
        assert!(
            (lost - wait_s as f64 / 10.0).abs() < 0.02,
            "{wait_s}: {lost}"
        );
    }
}

#[test]
fn independent_jobs_that_wait_different_amounts_are_not_stragglers() {
    // Four single-GPU jobs out of step: GPU 0 waits 20 % of the time, the others 35 %, but
    // their waits never line up, so nobody waits for GPU 0.
    let period = 20usize;
    let devs = (0..4u32)
        .map(|g| {
            let wait_n = if g == 0 { 4 } else { 7 };
            let util: Vec<f32> = (0..N)
                .map(|i| {
                    if (i + period - 5 * g as usize) % period < wait_n {
                        3.0
                    } else {
                        97.0
                    }
                })
                .collect();
            (h100(g), vec![(GpuMetric::UtilGpu, util)])
        })
        .collect();
    let r = diagnosed(report(devs));
    assert!(find(&r, "rank_imbalance").is_none(), "{:?}", r.findings);
    assert!(find(&r, "comm_sync").is_none());
}

/// A `--query-gpu` CSV log of four GPUs, one row each per second, each GPU's row stamped a
/// few milliseconds after the previous one's; `row(gpu, i)` gives (util %, power W, SM MHz).
fn csv(n: usize, row: impl Fn(u32, usize) -> (f32, f32, f32)) -> Report {
    let mut text = String::from(
        "timestamp, index, name, utilization.gpu [%], power.draw [W], power.limit [W], clocks.sm [MHz]\n",
    );
    for i in 0..n {
        for g in 0..4u32 {
            let (u, p, c) = row(g, i);
            text.push_str(&format!(
                "2026/11/29 11:{:02}:{:02}.{:03}, {g}, NVIDIA H100 80GB HBM3, {u:.0} %, {p:.2} W, 700.00 W, {c:.0} MHz\n",
                i / 60,
                i % 60,
                100 + 3 * g
            ));
        }
    }
    let out = import(Kind::Csv, text.as_bytes(), &ImportOptions::default()).expect("imports");
    let mut r = Report::from_recording(&out.recording);
    diagnose_log(&mut r);
    r
}

#[test]
fn a_csv_log_without_max_clocks_names_the_slow_gpu_and_the_straggler() {
    let slow = csv(120, |g, _| {
        if g == 3 {
            (99.0, 380.0, 1100.0)
        } else {
            (99.0, 650.0, 1980.0)
        }
    });
    let f = find(&slow, "throttling").expect("fires");
    assert_eq!(f.devices, vec![3]);
    assert!((f.lost_share.expect("lost") - (1.0 - 1100.0 / 1980.0)).abs() < 0.02);
    // Rows stamped apart still line up: the others spin 3 s of every 10 s step.
    let straggler = csv(120, |g, i| {
        if g != 3 && i % 10 >= 7 {
            (95.0, 190.0, 1980.0)
        } else {
            (98.0, 620.0, 1980.0)
        }
    });
    let f = find(&straggler, "rank_imbalance").expect("fires");
    assert_eq!(f.devices, vec![3]);
    assert!((f.lost_share.expect("lost") - 0.3).abs() < 0.02);
    assert!(f
        .evidence
        .iter()
        .any(|e| e.metric.contains("works while all others wait") && e.agrees));
}

#[test]
fn reasons_without_a_max_clock_measure_the_loss_against_the_fastest_peer() {
    let gpu = |i: u32, clock: f32, reasons_bits: f32| {
        let info = DeviceInfo {
            max_sm_clock_mhz: None,
            ..h100(i)
        };
        let cols = vec![
            (GpuMetric::UtilGpu, constant(99.0, N)),
            (GpuMetric::SmClock, constant(clock, N)),
            (GpuMetric::ClockReasons, constant(reasons_bits, N)),
            (
                GpuMetric::Power,
                constant(if reasons_bits > 0.0 { 700.0 } else { 690.0 }, N),
            ),
        ];
        (info, cols)
    };
    let r = diagnosed(report(vec![
        gpu(0, 1980.0, 0.0),
        gpu(1, 1300.0, reasons::SW_POWER_CAP as f32),
    ]));
    let f = find(&r, "throttling").expect("fires on the reasons");
    assert_eq!(f.devices, vec![1]);
    let lost = f.lost_share.expect("measured against GPU 0");
    assert!((lost - (1.0 - 1300.0 / 1980.0)).abs() < 0.01, "{lost}");
}

#[test]
fn noisy_but_even_gpus_in_a_dmon_log_are_neither_stragglers_nor_throttled() {
    // Eight GPUs whose utilization wanders independently between ~65 % and 100 %, power
    // following it, clocks within a few percent of each other.
    let seeds = std::cell::RefCell::new(11u64);
    let r = dmon(8, 300, |g, _| {
        let mut s = seeds.borrow_mut();
        let u = 82.0 + 17.0 * noise(&mut s);
        let p = 150.0 + 5.0 * u + 30.0 * noise(&mut s);
        let c = 1980.0 - 15.0 * g as f32 - 40.0 * noise(&mut s).abs();
        (u, p, c)
    });
    for id in ["rank_imbalance", "throttling", "comm_sync"] {
        assert!(find(&r, id).is_none(), "{id}: {:?}", r.findings);
    }
}
