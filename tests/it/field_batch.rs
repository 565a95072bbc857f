//! The slow tick's temperature and NVLink through one `nvmlDeviceGetFieldValues` call,
//! temperature falling back to its own call when the field is not answered; the report says
//! which path each metric took.

use gpuwhy::report::Report;
use gpuwhy_tests::{patched, record, Run};
use serde_json::{json, Value};

/// One H100 moving a steady 2,000,000 KB/s in and 500,000 KB/s out over PCIe.
fn steady_pcie(faults: Value) -> String {
    let base = json!({
        "devices": [{"metrics": {
            "util_gpu": {"constant": 90},
            "pcie_rx_kbs": {"constant": 2000000},
            "pcie_tx_kbs": {"constant": 500000}
        }}],
        "demo": {"duration_s": 4}
    });
    patched(&base.to_string(), &[("faults", faults)])
}

fn via(r: &Report, metric: &str) -> Option<String> {
    r.devices[0].capabilities[metric].via.clone()
}

fn median(r: &Report, metric: &str) -> f32 {
    let mut v: Vec<f32> = r.series[0].data.metrics[metric].present().collect();
    assert!(!v.is_empty(), "{metric} has values");
    v.sort_by(f32::total_cmp);
    v[v.len() / 2]
}

#[test]
fn temperature_comes_from_the_field_call_and_each_metric_names_its_function() {
    let r = record(&steady_pcie(json!([])), &Run::default()).expect("records");
    assert_eq!(via(&r, "temp").as_deref(), Some("nvmlDeviceGetFieldValues"));
    assert_eq!(
        via(&r, "pcie_rx").as_deref(),
        Some("nvmlDeviceGetPcieThroughput")
    );
    assert_eq!(
        via(&r, "util_gpu").as_deref(),
        Some("nvmlDeviceGetUtilizationRates")
    );
    // 2,000,000 KB/s × 1024 bytes = 2048 MB/s; 500,000 KB/s = 512 MB/s.
    assert!(
        (median(&r, "pcie_rx") - 2048.0).abs() < 2.0,
        "{}",
        median(&r, "pcie_rx")
    );
    assert!(
        (median(&r, "pcie_tx") - 512.0).abs() < 1.0,
        "{}",
        median(&r, "pcie_tx")
    );
}

#[test]
fn without_field_values_each_metric_falls_back_to_its_own_call() {
    let refused = json!([{"kind": "error", "function": "nvmlDeviceGetFieldValues", "code": 3}]);
    let r = record(&steady_pcie(refused), &Run::default()).expect("records");
    assert_eq!(via(&r, "temp").as_deref(), Some("nvmlDeviceGetTemperature"));
    assert_eq!(
        via(&r, "pcie_rx").as_deref(),
        Some("nvmlDeviceGetPcieThroughput")
    );
    assert!(
        (median(&r, "pcie_rx") - 2048.0).abs() < 2.0,
        "{}",
        median(&r, "pcie_rx")
    );
}
