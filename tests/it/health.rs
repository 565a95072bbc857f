//! GPU health through the simulator and the real loader: the counters are read at the start,
//! about once a minute and at the stop, a counter rising during the run shows in the
//! readings, what the board lacks is "not supported" with its reason, and each health call
//! failing with each error (the fault matrix) leaves a complete report.

use gpuwhy::collect::{health_counter as counter, HEALTH_PERIOD_S};
use gpuwhy::report::Report;
use gpuwhy_tests::{record, Run};
use serde_json::{json, Value};

use crate::fault_matrix::{assert_complete, assert_each_lost, healthy_gpus, lost_faults, CODES};

/// The bundled `healthy` scenario with `n` GPUs, each given `health`, and `faults`.
fn with_health(n: usize, health: &Value, faults: Vec<Value>) -> String {
    let mut v: Value = serde_json::from_str(&healthy_gpus(n, faults)).expect("json");
    for d in v["devices"].as_array_mut().expect("devices") {
        d["health"] = health.clone();
    }
    v.to_string()
}

fn run(duration_s: f64, speed: f64) -> Run {
    Run {
        duration_s: Some(duration_s),
        speed,
        nvml_samples: Some(false),
        ..Run::default()
    }
}

#[test]
fn health_is_read_at_start_each_minute_and_at_stop_and_a_rising_count_shows() {
    let mut v: Value = serde_json::from_str(&healthy_gpus(2, Vec::new())).expect("json");
    v["devices"][0]["health"] = json!({
        "corrected": {"dram": 5}, "corrected_per_min": {"dram": 10},
        "remap_correctable": 1, "remap_pending": true, "nvlink": {"crc_flit": 7}
    });
    let r = record(&v.to_string(), &run(150.0, 40.0)).expect("records");
    let end = r.run.duration_s;
    let h = r.devices[0]
        .health
        .as_ref()
        .expect("GPU 0's health is read");
    let t: Vec<f64> = h.readings.iter().map(|x| x.t_s).collect();
    assert!(t[0] < 1.0, "read at the start: {t:?}");
    assert!(
        t.last().is_some_and(|l| *l > end - 1.0),
        "and at the stop: {t:?} (end {end})"
    );
    assert!(
        t.windows(2).all(|p| p[1] - p[0] <= HEALTH_PERIOD_S + 1.0),
        "each minute: {t:?}"
    );
    assert!((4..=5).contains(&t.len()), "not on every tick: {t:?}");
    let dram = |i: usize| h.readings[i].ecc_locations["dram"].volatile_corrected;
    let last = h.readings.len() - 1;
    assert_eq!(dram(0), Some(5));
    let expect_last = 5 + (10.0 * t[last] / 60.0).floor() as u64;
    assert_eq!(
        dram(last),
        Some(expect_last),
        "the count rose during the run"
    );
    for x in &h.readings {
        let by_location: u64 = x
            .ecc_locations
            .values()
            .filter_map(|c| c.volatile_corrected)
            .sum();
        assert_eq!(
            x.ecc.volatile_corrected,
            Some(by_location),
            "total = sum of locations"
        );
        let remap = x.remapped_rows.expect("remapped rows read");
        assert_eq!((remap.correctable, remap.pending), (Some(1), Some(true)));
        assert_eq!(x.nvlink_errors.and_then(|n| n.crc_flit), Some(7));
        assert_eq!(x.retired_pages, None, "an H100 retires rows, not pages");
    }
    assert_eq!(h.ecc_enabled, Some(true));
    let why = &h.unavailable[counter::RETIRED_PAGES];
    assert!(
        why.contains("NOT_SUPPORTED") && why.contains("nvmlDeviceGetRetiredPages"),
        "{why}"
    );
    let quiet = r.devices[1]
        .health
        .as_ref()
        .expect("GPU 1's health is read");
    let q = quiet.last().expect("a reading");
    assert_eq!(
        (q.ecc.volatile_corrected, q.ecc.volatile_uncorrected),
        (Some(0), Some(0))
    );
    assert_eq!(r.devices[0].temp_shutdown_c, Some(92.0));
    assert_eq!(r.devices[0].pcie_device_max_gen, Some(5));
    let back = Report::from_slice(r.to_json().as_bytes(), std::path::Path::new("r.json"))
        .expect("reads back");
    assert_eq!(back.devices[0].health, r.devices[0].health);
}

#[test]
fn a_board_without_ecc_or_nvlink_says_not_supported_once_and_records_on() {
    let v = json!({"devices": [{"preset": "RTX-3090", "metrics": {"util_gpu": 90}}]});
    let r = record(&v.to_string(), &run(3.0, 4.0)).expect("records");
    let h = r.devices[0].health.as_ref().expect("health is read");
    for key in [
        counter::ECC_MODE,
        counter::ECC,
        counter::ECC_LOCATIONS,
        counter::REMAPPED_ROWS,
    ] {
        assert!(
            h.unavailable[key].contains("NOT_SUPPORTED"),
            "{key}: {:?}",
            h.unavailable
        );
    }
    assert_eq!(h.ecc_enabled, None);
    assert!(h
        .readings
        .iter()
        .all(|x| x.ecc.is_empty() && x.nvlink_errors.is_none()));
    assert!(
        r.faults.is_empty(),
        "not supported is no fault: {:?}",
        r.faults
    );
}

/// The health calls, with the counter each one feeds.
const HEALTH_FUNCTIONS: [(&str, &str); 7] = [
    ("nvmlDeviceGetEccMode", counter::ECC_MODE),
    ("nvmlDeviceGetTotalEccErrors", counter::ECC),
    ("nvmlDeviceGetMemoryErrorCounter", counter::ECC_LOCATIONS),
    ("nvmlDeviceGetRemappedRows", counter::REMAPPED_ROWS),
    ("nvmlDeviceGetRetiredPages", counter::RETIRED_PAGES),
    (
        "nvmlDeviceGetRetiredPagesPendingStatus",
        counter::RETIRED_PAGES_PENDING,
    ),
    ("nvmlDeviceGetNvLinkErrorCounter", counter::NVLINK_ERRORS),
];

/// Page retirement on too, so every health call is made on the H100s.
fn every_call() -> Value {
    json!({"retired_pending": false})
}

/// Every health call failing on GPU 0 from the start with each error: a refusal makes that
/// counter "not supported" with the call and the code, a transient error is a listed fault
/// and a gap in that counter, and GPU 1 and the samples are untouched.
#[test]
fn every_health_call_failing_with_every_error_leaves_a_complete_report() {
    for code in CODES {
        let faults: Vec<Value> = HEALTH_FUNCTIONS
            .iter()
            .map(|(f, _)| json!({"kind": "error", "device": 0, "function": f, "code": code}))
            .collect();
        let r = record(&with_health(2, &every_call(), faults), &run(12.0, 4.0))
            .unwrap_or_else(|e| panic!("code {code}: records: {e}"));
        let transient = [10, 999].contains(&code);
        assert_complete(&r, if transient { HEALTH_FUNCTIONS.len() } else { 0 });
        let h = r.devices[0].health.as_ref().expect("health read");
        for (f, key) in HEALTH_FUNCTIONS {
            if transient {
                assert!(
                    !h.unavailable.contains_key(key),
                    "code {code}: {key} stays asked for"
                );
                assert!(
                    r.faults.iter().any(|x| x.function == f && x.code == code),
                    "code {code}: {f} listed as a fault: {:?}",
                    r.faults
                );
            } else {
                let why = h
                    .unavailable
                    .get(key)
                    .map(String::as_str)
                    .unwrap_or_default();
                assert!(
                    why.contains(f),
                    "code {code}: {key} not supported via {f}: {why:?}"
                );
            }
        }
        let x = h.last().expect("a reading");
        assert!(
            x.ecc.is_empty() && x.ecc_locations.is_empty(),
            "code {code}: {x:?}"
        );
        assert!(
            x.remapped_rows.is_none() && x.nvlink_errors.is_none(),
            "code {code}: {x:?}"
        );
        let ok = r.devices[1].health.as_ref().expect("GPU 1's health");
        assert!(
            ok.unavailable.is_empty(),
            "code {code}: GPU 1 untouched: {:?}",
            ok.unavailable
        );
    }
}

/// Each health call answering GPU_IS_LOST on a GPU of its own from 50 s on: the read at
/// a minute finds it and the GPU stops there, as when a per-tick call says so. (The ECC
/// mode is read once, at the start, so it is not in this matrix.)
#[test]
fn gpu_is_lost_from_a_health_call_stops_only_that_gpu() {
    let functions: Vec<&str> = HEALTH_FUNCTIONS[1..].iter().map(|(f, _)| *f).collect();
    let faults = lost_faults(&functions, 50.0);
    let json = with_health(functions.len() + 1, &every_call(), faults);
    let r = record(&json, &run(75.0, 30.0)).expect("records");
    assert_each_lost(&r, &functions, 50.0);
}
