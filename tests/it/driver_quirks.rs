//! What real drivers do that the header documents and the simulator now plays: a CUDA
//! version call that needs libcuda, temperature thresholds moved to field ids, and memory
//! figures whose `used` means different things per call (docs/nvml-loading.md).

use gpuwhy::nvml::{Nvml, TemperatureThreshold};
use gpuwhy_tests::{install_sim, patched, record, scenario, Run};
use serde_json::{json, Value};

/// The healthy scenario with `faults` set.
fn with_faults(faults: Value) -> String {
    patched(scenario("healthy").expect("bundled"), &[("faults", faults)])
}

#[test]
fn cuda_version_falls_back_to_v1_when_v2_cannot_find_libcuda() {
    // nvmlSystemGetCudaDriverVersion_v2 answers LIBRARY_NOT_FOUND (12) without libcuda.so.1.
    let text = with_faults(json!([
        {"kind": "error", "function": "nvmlSystemGetCudaDriverVersion_v2", "code": 12}
    ]));
    let sim = install_sim(&text, false).expect("install");
    let nvml = Nvml::load_from(sim.lib()).expect("loads");
    let v = nvml.cuda_driver_version().expect("v1 answers");
    assert!(v >= 11000, "{v}");
    let resolved = nvml.resolved_symbols();
    assert!(
        resolved.contains(&(
            "nvmlSystemGetCudaDriverVersion",
            Some("nvmlSystemGetCudaDriverVersion")
        )),
        "{resolved:?}"
    );
}

#[test]
fn temperature_thresholds_come_from_the_tlimit_fields_where_the_old_call_is_gone() {
    // A Hopper whose driver no longer answers nvmlDeviceGetTemperatureThreshold (the header
    // says it may be removed for Ada and later): the T.Limit field still gives the value.
    let text = with_faults(json!([
        {"kind": "error", "function": "nvmlDeviceGetTemperatureThreshold", "code": 3}
    ]));
    let sim = install_sim(&text, false).expect("install");
    let nvml = Nvml::load_from(sim.lib()).expect("loads");
    let d = nvml.device_by_index(0).expect("device 0");
    assert_eq!(
        nvml.temperature_threshold_c(d, TemperatureThreshold::Slowdown),
        Ok(89)
    );
}

#[test]
fn temperature_thresholds_fall_back_to_the_old_call_before_ada() {
    let text = json!({"devices": [{"preset": "A100-SXM4-80GB"}]}).to_string();
    let sim = install_sim(&text, false).expect("install");
    let nvml = Nvml::load_from(sim.lib()).expect("loads");
    let d = nvml.device_by_index(0).expect("device 0");
    // Ampere has no T.Limit fields; the threshold function answers.
    let slowdown = nvml.temperature_threshold_c(d, TemperatureThreshold::Slowdown);
    assert!(matches!(slowdown, Ok(c) if c > 50), "{slowdown:?}");
}

#[test]
fn mem_used_is_the_same_figure_whichever_memory_call_answered() {
    let run = |old_driver| {
        record(
            scenario("healthy").expect("bundled"),
            &Run {
                old_driver,
                duration_s: Some(2.0),
                ..Run::default()
            },
        )
        .expect("records")
    };
    let (new, old) = (run(false), run(true));
    let median = |r: &gpuwhy::report::Report| {
        let mut v: Vec<f32> = r.series[0].data.metrics["mem_used"].present().collect();
        v.sort_by(f32::total_cmp);
        v[v.len() / 2]
    };
    // v2 reports allocated memory and reserved apart, v1 their sum: mem_used is total − free
    // in both, and the reserved part is recorded where v2 told it.
    assert_eq!(median(&new), median(&old));
    assert_eq!(new.devices[0].memory_reserved_mib, Some(512.0));
    assert_eq!(old.devices[0].memory_reserved_mib, None);
}
