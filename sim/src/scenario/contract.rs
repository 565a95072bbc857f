//! Every shipped scenario's signals meet the rule specifications its `expect` relies on:
//! a reference reading of each rule's firing condition (the primary signals of the rule
//! table, with the exclusions its near misses name) is applied to the measured signals;
//! `top_finding` and `also` must fire and `absent` must not. This checks the scenarios,
//! not gpuwhy's rules: those are checked end to end by `cargo xtask scenarios`.
//!
//! `cargo test -p nvml-sim contract -- --nocapture` prints the measured values.

use super::measure::{measure, Measured};
use super::tests::shipped;
use super::Scenario;

/// Whether the reference reading of rule `id` fires on `m`.
fn fires(id: &str, m: &Measured) -> bool {
    let st = m.steps.as_ref();
    let data_share = st.map(|s| s.data_share_p50);
    let ratio = st.and_then(|s| s.gpu_cpu_p50);
    let util_p50 = m.util[0].1;
    // A periodic sawtooth: enough idle samples and busy ones, idle runs at a steady pace.
    let sawtooth = m.frac_lt10 >= 0.10
        && m.frac_ge80 >= 0.25
        && m.dip_runs >= 3
        && m.dip_cv.is_some_and(|cv| cv < 0.25);
    let starved = match data_share {
        // Step markers say how long the loop waited for data; they win over samples.
        Some(share) => share >= 0.15 || (share >= 0.10 && sawtooth),
        None => sawtooth,
    };
    let launch = ratio.is_some_and(|r| r <= 0.5);
    let periodic_stall =
        st.is_some_and(|s| s.outliers >= 3 && s.outlier_cv.is_some_and(|cv| cv < 0.2));
    match id {
        // Busy less than 80 % of the time and no other rule's reading holds (memory headroom
        // counts as an explanation of a steadily low GPU).
        "unexplained_idle" => {
            m.util_mean < 80.0
                && RULES
                    .iter()
                    .filter(|r| **r != "unexplained_idle")
                    .all(|r| !fires(r, m))
        }
        "data_starvation" => starved,
        "launch_bound" => launch,
        "busy_not_working" => {
            util_p50 >= 90.0
                && match m.gpm {
                    Some([sm, occ, tensor, _]) => sm < 50.0 || occ < 30.0 || tensor < 10.0,
                    None => m.power_frac < 0.5,
                }
        }
        "memory_bound" => match m.gpm {
            Some([_, _, tensor, dram]) => dram >= 70.0 && tensor < 30.0,
            None => m.util_mem_p50 >= 70.0 && util_p50 >= 80.0,
        },
        "memory_headroom" => m.mem_p95_frac < 0.5 && (util_p50 < 75.0 || starved || launch),
        "small_batch" => {
            (30.0..=80.0).contains(&util_p50)
                && m.power_frac < 0.5
                && m.mem_p95_frac < 0.5
                && data_share.is_none_or(|s| s < 0.10)
                && !sawtooth
                && ratio.is_none_or(|r| r >= 0.8)
        }
        "recompute_overhead" => st.is_some_and(|s| s.bwd_fwd_p50 >= 2.6) && m.mem_p95_frac < 0.7,
        "comm_sync" => {
            m.devices >= 2
                && m.dip_alignment.is_some_and(|a| a >= 0.7)
                && data_share.is_none_or(|s| s < 0.10)
        }
        "rank_imbalance" => m.util_spread > 10.0,
        "host_transfer" => m.pcie_rx_frac.max(m.pcie_tx_frac) >= 0.6,
        "throttling" => m.reasons_frac >= 0.2,
        "pcie_degraded" => m.link_below_frac >= 0.5,
        "periodic_stall" => periodic_stall,
        "dynamic_shapes" => {
            st.is_some_and(|s| s.iqr_over_p50 >= 0.3 || s.p95_over_p50 >= 1.5) && !periodic_stall
        }
        "gpu_fault" => m.xids + m.lost + m.health_faults > 0,
        "shared_gpu" => m.shared,
        other => panic!("unknown rule id `{other}` in an expectation"),
    }
}

/// The rule ids of the specification, in catalogue order.
const RULES: &[&str] = &[
    "data_starvation",
    "launch_bound",
    "busy_not_working",
    "memory_bound",
    "memory_headroom",
    "small_batch",
    "recompute_overhead",
    "comm_sync",
    "rank_imbalance",
    "host_transfer",
    "throttling",
    "pcie_degraded",
    "periodic_stall",
    "dynamic_shapes",
    "gpu_fault",
    "shared_gpu",
    "unexplained_idle",
];

fn strings(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn line(name: &str, m: &Measured) -> String {
    let mut s = format!(
        "{name}: util p5/p50/p95 {:.0}/{:.0}/{:.0}, <10 {:.2}, >=80 {:.2}, dip runs {} (cv {}), power {:.2} of limit, mem p95 {:.2} spread {:.3}",
        m.util[0].0,
        m.util[0].1,
        m.util[0].2,
        m.frac_lt10,
        m.frac_ge80,
        m.dip_runs,
        m.dip_cv.map_or("-".into(), |c| format!("{c:.2}")),
        m.power_frac,
        m.mem_p95_frac,
        m.mem_spread_frac,
    );
    if let Some([sm, occ, tensor, dram]) = m.gpm {
        s += &format!(", gpm sm/occ/tensor/dram {sm:.0}/{occ:.0}/{tensor:.0}/{dram:.0}");
    }
    s += &format!(
        ", util_mem {:.0}, pcie rx/tx {:.2}/{:.2}, reasons {:.2}, clock {:.2}, link below {:.2}",
        m.util_mem_p50,
        m.pcie_rx_frac,
        m.pcie_tx_frac,
        m.reasons_frac,
        m.clock_ratio,
        m.link_below_frac
    );
    if m.devices > 1 {
        s += &format!(
            ", {} GPUs: p50 spread {:.1}, dip alignment {}, nvlink in/out dips {}",
            m.devices,
            m.util_spread,
            m.dip_alignment.map_or("-".into(), |a| format!("{a:.2}")),
            m.nvlink_dip_ratio.map_or("-".into(), |r| format!("{r:.1}")),
        );
    }
    if let Some(st) = &m.steps {
        s += &format!(
            "; {} steps: data share {:.2}, gpu/cpu {}, bwd/fwd {:.2}, IQR/p50 {:.2}, p95/p50 {:.2}, outliers {} (cv {}), events {:?}",
            st.count,
            st.data_share_p50,
            st.gpu_cpu_p50.map_or("-".into(), |r| format!("{r:.2}")),
            st.bwd_fwd_p50,
            st.iqr_over_p50,
            st.p95_over_p50,
            st.outliers,
            st.outlier_cv.map_or("-".into(), |c| format!("{c:.2}")),
            st.events,
        );
    }
    if m.xids + m.lost > 0 {
        s += &format!("; xid {}, lost {}", m.xids, m.lost);
    }
    s
}

#[test]
fn every_scenario_shows_the_signals_its_expectation_needs() {
    let mut wrong = Vec::new();
    for (name, text) in shipped() {
        let raw: serde_json::Value = serde_json::from_str(&text).expect("json");
        let scenario = Scenario::from_json(&text).expect("valid");
        let duration = raw["demo"]["duration_s"].as_f64().expect("duration");
        let m = measure(&text, &scenario, duration);
        let fired: Vec<&str> = RULES.iter().copied().filter(|r| fires(r, &m)).collect();
        println!("{}\n    reference rules fire: {fired:?}", line(&name, &m));
        let top = raw["expect"]["top_finding"]
            .as_str()
            .unwrap_or("-")
            .to_owned();
        let mut must: Vec<String> = strings(&raw["expect"]["also"]);
        if top != "none" {
            must.push(top.clone());
        }
        for id in &must {
            if !fires(id, &m) {
                wrong.push(format!(
                    "{name}: expects {id}, but its signals do not meet the spec"
                ));
            }
        }
        for id in strings(&raw["expect"]["absent"]) {
            if fires(&id, &m) {
                wrong.push(format!(
                    "{name}: {id} must be absent, but its signals meet the spec"
                ));
            }
        }
        if top == "none" && !fired.is_empty() {
            wrong.push(format!("{name}: expects no finding, but {fired:?} fire"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
