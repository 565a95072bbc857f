//! Checking a finding's confirming experiment against the candidate run: each rule's
//! experiment predicts which metric moves, and in which direction.

use crate::report::{Finding, Report};
use crate::signals::Signals;

pub use crate::report::{ExperimentCheck, Outcome};

/// Relative change below which a metric "did not move" (sampling noise of medians).
pub const NOISE: f64 = 0.05;

/// A metric's name, whether the experiment should move it up, and how to read it.
type Prediction = (&'static str, bool, fn(&Signals) -> Option<f64>);

/// The metric each rule's experiment moves, and which way, read from the signals.
fn metric(id: &str) -> Option<Prediction> {
    fn max_over<F: Fn(&crate::signals::DeviceSignals) -> Option<f64>>(
        s: &Signals,
        f: F,
    ) -> Option<f64> {
        s.devices.iter().filter_map(f).reduce(f64::max)
    }
    Some(match id {
        "data_starvation" => ("share of samples with util_gpu < 10%", false, |s| {
            s.steps
                .as_ref()
                .and_then(|st| st.data_share_p50)
                .or_else(|| max_over(s, |d| d.util_near_zero))
        }),
        "launch_bound" => ("GPU/CPU forward+backward ratio", true, |s| {
            s.steps.as_ref().and_then(|st| st.gpu_cpu_ratio_p50)
        }),
        "busy_not_working" | "small_batch" => ("power p50 / limit", true, |s| {
            max_over(s, |d| d.power_over_limit)
        }),
        "memory_bound" => ("GPM DRAM bandwidth p50", false, |s| {
            max_over(s, |d| d.gpm_dram_bw.map(|x| x.p50))
        }),
        "memory_headroom" => ("mem_used p95 / total", true, |s| {
            max_over(s, |d| d.mem_used_ratio.map(|m| m.p95))
        }),
        "recompute_overhead" => ("backward / forward ratio", false, |s| {
            s.steps.as_ref().and_then(|st| st.bwd_fwd_ratio_p50)
        }),
        "comm_sync" => ("share of dip times with all GPUs dipping", false, |s| {
            s.cross.dip_agreement
        }),
        "rank_imbalance" => ("spread of per-GPU util_gpu p50", false, |s| {
            s.cross.util_p50_spread
        }),
        "host_transfer" => ("pcie_rx p95 / link capacity", false, |s| {
            max_over(s, |d| {
                d.pcie_rx.zip(d.pcie_capacity_mbs).map(|(r, c)| r.p95 / c)
            })
        }),
        "throttling" => ("sm_clock p50 under load / max", true, |s| {
            max_over(s, |d| d.sm_clock_ratio_loaded)
        }),
        "pcie_degraded" => ("pcie_gen p50 under load", true, |s| {
            max_over(s, |d| d.pcie_gen_loaded)
        }),
        "periodic_stall" => ("step-time outliers", false, |s| {
            s.steps.as_ref().map(|st| st.outliers as f64)
        }),
        "dynamic_shapes" => ("step time IQR / p50", false, |s| {
            s.steps.as_ref().map(|st| st.iqr_over_p50)
        }),
        "gpu_fault" => ("XID and GPU-lost events", false, |s| {
            Some(
                s.events
                    .iter()
                    .filter(|e| e.kind == "xid" || e.kind == "gpu_lost")
                    .count() as f64,
            )
        }),
        _ => return None,
    })
}

/// Checks one baseline finding's prediction.
pub fn check(f: &Finding, a: &Signals, b: &Signals, _ra: &Report, _rb: &Report) -> ExperimentCheck {
    let Some((name, up, get)) = metric(&f.id) else {
        return ExperimentCheck {
            finding: f.id.clone(),
            metric: f.experiment.metric.clone(),
            expected: "-".into(),
            baseline: None,
            candidate: None,
            outcome: Outcome::Unknown,
        };
    };
    let (x, y) = (get(a), get(b));
    let outcome = match (x, y) {
        (Some(x), Some(y)) => {
            let scale = x.abs().max(1e-9);
            let moved = (y - x) / scale;
            let held = if up {
                moved > NOISE
            } else {
                moved < -NOISE || (x > 0.0 && y == 0.0)
            };
            if held {
                Outcome::Held
            } else {
                Outcome::NotHeld
            }
        }
        _ => Outcome::Unknown,
    };
    ExperimentCheck {
        finding: f.id.clone(),
        metric: name.into(),
        expected: if up { "up".into() } else { "down".into() },
        baseline: x,
        candidate: y,
        outcome,
    }
}
