//! Tests of resolving device entries.

use super::*;

fn device(json: &str) -> Result<Device, String> {
    let file: DeviceFile = serde_json::from_str(json).map_err(|e| e.to_string())?;
    file.resolve(0, 0, "test", None)
}

#[test]
fn defaults_come_from_the_preset_and_follow_utilization() {
    let d = device(r#"{"metrics": {"util_gpu": 100}}"#).expect("valid");
    assert_eq!(d.name, "NVIDIA H100 80GB HBM3");
    assert!(d.gpm, "Hopper has GPM by default");
    assert_eq!(d.value(Metric::PowerW, 0.0), 0.85 * 700.0);
    assert_eq!(d.value(Metric::SmClockMhz, 0.0), 1980.0);
    assert_eq!(d.value(Metric::GraphicsClockMhz, 0.0), 1980.0);
    assert_eq!(d.value(Metric::VideoClockMhz, 0.0), 1755.0);
    assert_eq!(d.value(Metric::PcieGen, 0.0), 5.0);
}

#[test]
fn overrides_win_over_the_preset() {
    let d = device(
        r#"{"preset": "rtx-3090", "name": "Custom", "power_limit_w": 300, "pci_device_id": "0x220410DE",
            "pci_bus_id": "0000:41:00.0", "uuid": "GPU-1"}"#,
    )
    .expect("valid");
    assert_eq!(d.name, "Custom");
    assert_eq!(d.facts.power_limit_w, 300.0);
    assert_eq!(d.facts.architecture, 7);
    assert!(!d.gpm);
    assert_eq!(
        d.pci,
        PciAddress {
            domain: 0,
            bus: 0x41,
            device: 0
        }
    );
    assert_eq!(d.uuid, "GPU-1");
}

#[test]
fn values_are_clamped_to_the_metric_range() {
    let d = device(r#"{"metrics": {"util_gpu": 180, "mem_used_mib": 1e9}}"#).expect("valid");
    assert_eq!(d.value(Metric::UtilGpu, 0.0), 100.0);
    assert_eq!(d.value(Metric::MemUsedMib, 0.0), (81_559 - 512) as f64);
}

#[test]
fn follow_cycles_are_rejected() {
    let err = device(
        r#"{"metrics": {"power_w": {"follow": "temp_c"}, "temp_c": {"follow": "power_w"}}}"#,
    )
    .expect_err("cycle");
    assert!(err.contains("circle"), "{err}");
}

#[test]
fn mistakes_are_explained() {
    for (json, needle) in [
        (r#"{"preset": "GTX-480"}"#, "unknown preset"),
        (r#"{"pci_bus_id": "18:00"}"#, "pci_bus_id"),
        (r#"{"count": 2, "uuid": "GPU-1"}"#, "count"),
        (
            r#"{"unsupported": ["nvmlDeviceGetPower"]}"#,
            "unknown NVML function",
        ),
        (r#"{"power_limit": 300}"#, "unknown field `power_limit`"),
        (r#"{"metrics": {"power": 1}}"#, "unknown metric `power`"),
        (r#"{"pci_device_id": "0xZZ"}"#, "not a 32-bit number"),
    ] {
        let err = device(json).expect_err(json);
        assert!(err.contains(needle), "{json}: {err}");
    }
}

#[test]
fn a_process_of_self_is_the_loading_process() {
    let d =
        device(r#"{"processes": [{"pid": "self", "used_mib": 10}, {"pid": 7, "used_mib": 1}]}"#)
            .expect("valid");
    let pids: Vec<u32> = d.processes_at(0.0).map(|p| p.pid).collect();
    assert_eq!(pids, [std::process::id(), 7]);
    let err = device(r#"{"processes": [{"pid": "me", "used_mib": 1}]}"#).expect_err("not a pid");
    assert!(err.contains("self"), "{err}");
}

#[test]
fn processes_appear_and_exit_on_time() {
    let d = device(r#"{"processes": [{"pid": 1, "used_mib": 10}, {"pid": 2, "used_mib": 20, "from_s": 5, "until_s": 8}]}"#)
        .expect("valid");
    let pids = |t| d.processes_at(t).map(|p| p.pid).collect::<Vec<_>>();
    assert_eq!(pids(0.0), [1]);
    assert_eq!(pids(6.0), [1, 2]);
    assert_eq!(pids(8.0), [1]);
    assert_eq!(
        d.value(Metric::MemUsedMib, 0.0),
        30.0,
        "default memory = sum of processes"
    );
}
