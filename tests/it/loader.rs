//! The NVML loader against real shared libraries: missing, not NVML, failing init, old driver.

use gpuwhy::collect::{Recorder, RecorderConfig};
use gpuwhy::nvml::Nvml;
use gpuwhy::Error;
use gpuwhy_tests::{install_sim, patched, record, scenario, Run};
use serde_json::Value;

#[test]
fn no_library_lists_what_was_tried_and_what_to_do() {
    let err = Nvml::load(Some(std::path::Path::new("/nonexistent/libnvidia-ml.so.1")))
        .expect_err("must fail");
    let msg = err.to_string();
    assert!(matches!(err, Error::NvmlNotFound { .. }), "{msg}");
    assert!(msg.contains("/nonexistent/libnvidia-ml.so.1"), "{msg}");
    assert!(msg.contains("GPUWHY_NVML_PATH"), "{msg}");
}

#[test]
fn a_library_that_is_not_nvml_is_named_as_such() {
    // Any real shared library without nvmlInit: the C math library.
    let libm = [
        "/lib/x86_64-linux-gnu/libm.so.6",
        "/usr/lib/x86_64-linux-gnu/libm.so.6",
        "/lib64/libm.so.6",
        "/usr/lib64/libm.so.6",
    ]
    .into_iter()
    .find(|p| std::path::Path::new(p).exists())
    .expect("libm.so.6 exists on Linux");
    let err = Nvml::load(Some(std::path::Path::new(libm))).expect_err("must fail");
    assert!(matches!(err, Error::NvmlNotNvml { .. }), "{err}");
}

#[test]
fn init_failure_reports_the_nvml_error_string() {
    let text = patched(
        scenario("healthy").expect("bundled"),
        &[("init_error", Value::from(9))],
    );
    let sim = install_sim(&text, false).expect("install");
    let err = Nvml::load(Some(sim.lib())).expect_err("init fails");
    match &err {
        Error::NvmlInit { code, message, .. } => {
            assert_eq!(*code, 9);
            assert!(
                message.to_lowercase().contains("driver"),
                "NVML's own string: {message}"
            );
        }
        other => panic!("expected NvmlInit, got {other}"),
    }
    // The recorder does not fail: it records without GPUs and says why.
    let rec = Recorder::start(RecorderConfig {
        nvml_path: Some(sim.lib().to_path_buf()),
        host: false,
        ..Default::default()
    })
    .expect("starts");
    let why = rec.gpu_absent_reason().expect("says why");
    assert!(why.contains("failed to initialise"), "{why}");
    let r = rec.stop();
    assert!(r.devices.is_empty());
}

#[test]
fn an_old_driver_without_newer_symbols_falls_back_and_still_records() {
    let r = record(
        scenario("healthy").expect("bundled"),
        &Run {
            old_driver: true,
            duration_s: Some(3.0),
            ..Run::default()
        },
    )
    .expect("records");
    let nvml = r.nvml.as_ref().expect("nvml info");
    assert_eq!(
        nvml.symbols.get("nvmlInit").cloned().flatten().as_deref(),
        Some("nvmlInit"),
        "{:?}",
        nvml.symbols
    );
    assert_eq!(
        nvml.symbols
            .get("nvmlDeviceGetMemoryInfo")
            .cloned()
            .flatten()
            .as_deref(),
        Some("nvmlDeviceGetMemoryInfo")
    );
    let d = &r.devices[0];
    assert!(d.capabilities["util_gpu"].available);
    assert!(
        d.capabilities["mem_used"].available,
        "memory falls back to the v1 struct"
    );
    assert!(
        d.capabilities["clock_reasons"].available,
        "reasons fall back to ThrottleReasons"
    );
    assert!(
        d.capabilities["temp"].available,
        "temperature falls back to the legacy call"
    );
    let gpm = &d.capabilities["gpm_sm_util"];
    assert!(
        !gpm.available && gpm.reason.is_some(),
        "GPM symbols are absent on the old driver: {gpm:?}"
    );
    assert!(r.series[0].data.metrics["mem_used"].present().count() > 5);
}
