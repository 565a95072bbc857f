//! The signals gpuwhy's rules read, measured straight from a scenario: its devices sampled
//! every 100 ms over `demo.duration_s` (as `gpuwhy demo` samples them) and its workload's
//! steps as the demo trainer marks them. Test-only; `contract.rs` checks them.

use std::collections::BTreeMap;

use nvml_sim_workload::{Schedule, Workload};

use super::{Fault, Scenario};
use crate::metric::Metric::{self, *};

/// Throttle reasons the spec counts: SwPowerCap, HwSlowdown, SwThermal, HwThermal,
/// HwPowerBrake.
const THROTTLE_BITS: u64 = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;
/// Utilization at which a sample counts as "under load".
const LOADED: f64 = 50.0;
/// PCIe MB/s per lane by generation (the spec's table).
const PER_LANE_MBS: [f64; 6] = [0.0, 250.0, 500.0, 985.0, 1969.0, 3938.0];

/// Everything measured about one scenario.
#[derive(Debug, Default)]
pub struct Measured {
    pub devices: usize,
    /// Per device (p5, p50, p95) of `util_gpu`.
    pub util: Vec<(f64, f64, f64)>,
    /// Device 0: share of samples with util < 10 and util >= 80.
    pub frac_lt10: f64,
    pub frac_ge80: f64,
    /// Mean over devices of each one's mean `util_gpu` over its active span (samples are
    /// evenly spaced, so this is the time-weighted busy share in percent).
    pub util_mean: f64,
    /// Device 0: runs of util < 10 (count, spacing coefficient of variation).
    pub dip_runs: usize,
    pub dip_cv: Option<f64>,
    /// Device 0: p50 power / limit; p95 and p95-p5 of memory / total.
    pub power_frac: f64,
    pub mem_p95_frac: f64,
    pub mem_spread_frac: f64,
    /// Device 0 GPM p50s (interval means), when it has GPM.
    pub gpm: Option<[f64; 4]>,
    pub util_mem_p50: f64,
    /// Max over devices of p95 PCIe RX / TX over the current link's capacity.
    pub pcie_rx_frac: f64,
    pub pcie_tx_frac: f64,
    /// Max over devices: share of loaded samples with a throttle reason.
    pub reasons_frac: f64,
    /// Min over devices: p50 SM clock / max while loaded.
    pub clock_ratio: f64,
    /// Max over devices: share of loaded samples with the link below its maximum.
    pub link_below_frac: f64,
    /// Max - min of per-device util p50.
    pub util_spread: f64,
    /// Of samples where any device dips below 20, the share where all do.
    pub dip_alignment: Option<f64>,
    /// Mean NVLink RX during those dips over outside them (device 0).
    pub nvlink_dip_ratio: Option<f64>,
    pub steps: Option<Steps>,
    pub xids: usize,
    pub lost: usize,
    /// Devices whose health counters show a fault level during the run: uncorrected ECC
    /// errors, a pending or failed row remap, pages pending retirement, or a corrected
    /// count that rises (docs/health.md).
    pub health_faults: usize,
    /// A process other than the job's (`"pid": "self"`) on one of the job's GPUs.
    pub shared: bool,
}

/// The scenario cut down to the job's GPUs — those running a process of `"pid": "self"`
/// (the recording's own), or every GPU when none does — as gpuwhy judges only those.
fn job_only(scenario: &Scenario) -> Scenario {
    let me = std::process::id();
    let mine = |d: &super::Device| d.processes.iter().any(|p| p.pid == me);
    let mut out = scenario.clone();
    if scenario.devices.iter().any(mine) {
        out.devices.retain(mine);
    }
    out
}

/// Step and phase timings as the trainer marks them.
#[derive(Debug, Default)]
pub struct Steps {
    pub count: usize,
    pub data_share_p50: f64,
    pub gpu_cpu_p50: Option<f64>,
    pub bwd_fwd_p50: f64,
    pub iqr_over_p50: f64,
    pub p95_over_p50: f64,
    pub outliers: usize,
    pub outlier_cv: Option<f64>,
    pub events: BTreeMap<String, usize>,
}

/// Nearest-rank quantile of unsorted values.
pub fn q(values: &[f64], p: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

/// Coefficient of variation of the gaps between successive values (None with < 2 gaps).
fn spacing_cv(at: &[f64]) -> Option<f64> {
    let gaps: Vec<f64> = at.windows(2).map(|w| w[1] - w[0]).collect();
    if gaps.len() < 2 {
        return None;
    }
    let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
    let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
    Some(var.sqrt() / mean)
}

/// Samples `scenario` every 100 ms for `duration_s` and measures it.
pub fn measure(json: &str, scenario: &Scenario, duration_s: f64) -> Measured {
    let job = job_only(scenario);
    let me = std::process::id();
    let sampled = Sampled {
        scenario: &job,
        times: (0..(duration_s * 10.0).round() as usize)
            .map(|i| i as f64 * 0.1)
            .collect(),
    };
    let scenario = &job;
    let n = scenario.devices.len();
    let mut out = Measured {
        devices: n,
        shared: scenario
            .devices
            .iter()
            .any(|d| d.processes.iter().any(|p| p.pid == me))
            && scenario
                .devices
                .iter()
                .any(|d| d.processes.iter().any(|p| p.pid != me)),
        clock_ratio: f64::INFINITY,
        ..Measured::default()
    };
    let utils: Vec<Vec<f64>> = (0..n).map(|d| sampled.series(d, UtilGpu)).collect();
    for (d, util) in utils.iter().enumerate() {
        sampled.device(&mut out, d, util);
    }
    spread(&mut out, &utils);
    sampled.first_device(&mut out, &utils[0]);
    if n >= 2 {
        sampled.together(&mut out, &utils);
    }
    for f in &scenario.faults {
        match f {
            Fault::Xid { at_s, .. } if *at_s < duration_s => out.xids += 1,
            Fault::GpuLost { at_s, .. } | Fault::GpuRemoved { at_s, .. } if *at_s < duration_s => {
                out.lost += 1
            }
            _ => {}
        }
    }
    out.health_faults = scenario
        .devices
        .iter()
        .filter(|d| health_fault(&d.health, duration_s))
        .count();
    out.steps = Workload::from_scenario_json(json)
        .expect("valid workload")
        .map(|w| steps(&Schedule::new(&w, duration_s)));
    out
}

/// Whether a device's health shows a fault level over `[0, duration_s]`.
fn health_fault(h: &super::Health, duration_s: f64) -> bool {
    let uncorrected = h.uncorrected.values().any(|c| c.at(duration_s) > 0);
    let rising = h.corrected.values().any(|c| c.at(duration_s) > c.at(0.0));
    let remap = h
        .remap
        .is_some_and(|(_, _, pending, failure)| pending || failure);
    let retired = h.retired.is_some_and(|(_, _, pending)| pending);
    uncorrected || rising || remap || retired
}

/// The mean utilization while busy and the spread of the GPUs' medians. Start-up and
/// shutdown idling (before the first and after the last sample at 10 % or more) are left
/// out, as gpuwhy's busy shares do.
fn spread(out: &mut Measured, utils: &[Vec<f64>]) {
    let means: Vec<f64> = utils
        .iter()
        .filter_map(|u| {
            let a = u.iter().position(|x| *x >= 10.0)?;
            let b = u.iter().rposition(|x| *x >= 10.0)?;
            Some(u[a..=b].iter().sum::<f64>() / (b + 1 - a) as f64)
        })
        .collect();
    if !means.is_empty() {
        out.util_mean = means.iter().sum::<f64>() / means.len() as f64;
    }
    let p50s: Vec<f64> = out.util.iter().map(|u| u.1).collect();
    out.util_spread = q(&p50s, 1.0) - q(&p50s, 0.0);
}

/// The scenario's job GPUs read every 100 ms, as the recorder would.
struct Sampled<'a> {
    scenario: &'a Scenario,
    times: Vec<f64>,
}

impl Sampled<'_> {
    fn series(&self, d: usize, m: Metric) -> Vec<f64> {
        self.times
            .iter()
            .map(|t| self.scenario.devices[d].value(m, *t))
            .collect()
    }

    /// GPU `d`'s utilization quantiles, and the worst throttling, link and clock shares
    /// under load and PCIe use over all GPUs so far.
    fn device(&self, out: &mut Measured, d: usize, util: &[f64]) {
        let dev = &self.scenario.devices[d];
        out.util.push((q(util, 0.05), q(util, 0.5), q(util, 0.95)));
        let loaded: Vec<usize> = (0..util.len()).filter(|&i| util[i] >= LOADED).collect();
        let reasons = self.series(d, ClockEventReasons);
        let clocks = self.series(d, SmClockMhz);
        let (gen, width) = (self.series(d, PcieGen), self.series(d, PcieWidth));
        if !loaded.is_empty() {
            let share = |f: &dyn Fn(usize) -> bool| {
                loaded.iter().filter(|&&i| f(i)).count() as f64 / loaded.len() as f64
            };
            out.reasons_frac = out
                .reasons_frac
                .max(share(&|i| (reasons[i] as u64) & THROTTLE_BITS != 0));
            let max_gen = f64::from(dev.facts.pcie_max_gen);
            let max_width = f64::from(dev.facts.pcie_max_width);
            out.link_below_frac = out
                .link_below_frac
                .max(share(&|i| gen[i] < max_gen || width[i] < max_width));
            let loaded_clock: Vec<f64> = loaded.iter().map(|&i| clocks[i]).collect();
            out.clock_ratio = out
                .clock_ratio
                .min(q(&loaded_clock, 0.5) / f64::from(dev.facts.max_sm_clock_mhz));
        }
        let capacity: Vec<f64> = (0..self.times.len())
            .map(|i| PER_LANE_MBS[(gen[i] as usize).min(5)] * width[i] * 1000.0)
            .collect();
        let frac = |m: Metric| {
            let v: Vec<f64> = self
                .series(d, m)
                .iter()
                .zip(&capacity)
                .map(|(kbs, cap)| kbs / cap)
                .collect();
            q(&v, 0.95)
        };
        out.pcie_rx_frac = out.pcie_rx_frac.max(frac(PcieRxKbs));
        out.pcie_tx_frac = out.pcie_tx_frac.max(frac(PcieTxKbs));
    }

    /// Device 0 in detail: idle and busy shares, dips, power, memory and GPM.
    fn first_device(&self, out: &mut Measured, util: &[f64]) {
        let times = &self.times;
        let dev = &self.scenario.devices[0];
        let len = util.len() as f64;
        out.frac_lt10 = util.iter().filter(|u| **u < 10.0).count() as f64 / len;
        out.frac_ge80 = util.iter().filter(|u| **u >= 80.0).count() as f64 / len;
        let run_starts: Vec<f64> = (0..util.len())
            .filter(|&i| util[i] < 10.0 && (i == 0 || util[i - 1] >= 10.0))
            .map(|i| times[i])
            .collect();
        out.dip_runs = run_starts.len();
        out.dip_cv = spacing_cv(&run_starts);
        out.power_frac = q(&self.series(0, PowerW), 0.5) / dev.facts.power_limit_w;
        let total = dev.facts.memory_total_mib as f64;
        let mem = self.series(0, MemUsedMib);
        out.mem_p95_frac = q(&mem, 0.95) / total;
        out.mem_spread_frac = (q(&mem, 0.95) - q(&mem, 0.05)) / total;
        out.util_mem_p50 = q(&self.series(0, UtilMem), 0.5);
        if dev.gpm {
            let gpm = |m: Metric| {
                let v: Vec<f64> = times
                    .iter()
                    .map(|t| dev.mean(m, (t - 0.1).max(0.0), t.max(0.1)))
                    .collect();
                q(&v, 0.5)
            };
            out.gpm = Some([
                gpm(GpmSmUtil),
                gpm(GpmSmOccupancy),
                gpm(GpmTensorUtil),
                gpm(GpmDramBwUtil),
            ]);
        }
    }

    /// Across GPUs: how often a dip on one is a dip on all, and NVLink traffic inside the
    /// dips against outside them.
    fn together(&self, out: &mut Measured, utils: &[Vec<f64>]) {
        let times = &self.times;
        let any: Vec<usize> = (0..times.len())
            .filter(|&i| utils.iter().any(|u| u[i] < 20.0))
            .collect();
        if any.is_empty() {
            return;
        }
        let all = any
            .iter()
            .filter(|&&i| utils.iter().all(|u| u[i] < 20.0))
            .count();
        out.dip_alignment = Some(all as f64 / any.len() as f64);
        let nvlink = self.series(0, NvlinkRxKibs);
        let mean = |ix: &mut dyn Iterator<Item = usize>| {
            let v: Vec<f64> = ix.map(|i| nvlink[i]).collect();
            v.iter().sum::<f64>() / v.len().max(1) as f64
        };
        let inside = mean(&mut any.iter().copied());
        let outside = mean(&mut (0..times.len()).filter(|i| !any.contains(i)));
        out.nvlink_dip_ratio = Some(inside / outside.max(1.0));
    }
}

fn steps(s: &Schedule) -> Steps {
    let mut data = Vec::new();
    let mut gpu_cpu = Vec::new();
    let mut bwd_fwd = Vec::new();
    let mut dur = Vec::new();
    let mut events = BTreeMap::new();
    for st in s.steps() {
        let phase = |name: &str| st.phases.iter().find(|p| s.phase(p).name == name).copied();
        dur.push(st.duration_s());
        data.push(phase("data").map_or(0.0, |p| p.duration_s()) / st.duration_s());
        if let (Some(f), Some(b)) = (phase("forward"), phase("backward")) {
            bwd_fwd.push(b.duration_s() / f.duration_s());
            if let (Some(gf), Some(gb)) = (f.gpu_s, b.gpu_s) {
                gpu_cpu.push((gf + gb) / (f.duration_s() + b.duration_s()));
            }
        }
        for p in st.phases {
            if s.phase(p).marks_event() {
                *events.entry(s.phase(p).name.clone()).or_insert(0) += 1;
            }
        }
    }
    let p50 = q(&dur, 0.5);
    let deviations: Vec<f64> = dur.iter().map(|d| (d - p50).abs()).collect();
    let mad = q(&deviations, 0.5);
    let limit = p50 + (3.0 * mad).max(0.5 * p50);
    let outliers: Vec<f64> = (0..dur.len())
        .filter(|&k| dur[k] > limit)
        .map(|k| k as f64)
        .collect();
    Steps {
        count: dur.len(),
        data_share_p50: q(&data, 0.5),
        gpu_cpu_p50: (!gpu_cpu.is_empty()).then(|| q(&gpu_cpu, 0.5)),
        bwd_fwd_p50: if bwd_fwd.is_empty() {
            f64::NAN
        } else {
            q(&bwd_fwd, 0.5)
        },
        iqr_over_p50: (q(&dur, 0.75) - q(&dur, 0.25)) / p50,
        p95_over_p50: q(&dur, 0.95) / p50,
        outliers: outliers.len(),
        outlier_cv: spacing_cv(&outliers),
        events,
    }
}
