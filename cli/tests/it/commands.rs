//! Each command's behaviour and messages.

use crate::{gpuwhy, run, scenario_with, sim, text};

#[test]
fn demo_runs_a_scenario_end_to_end_and_writes_its_report() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("demo.json");
    let o = run(gpuwhy()
        .args(["demo", "thermal", "--duration", "6s", "-o"])
        .arg(&out));
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("Verdict:"), "{t}");
    assert!(
        t.contains("matched"),
        "the bundled scenario's expectation is met: {t}"
    );
    let r = gpuwhy::report::Report::load(&out).expect("report written");
    assert_eq!(r.verdict.id, "throttling");
    assert_eq!(r.run.source, "simulator");
}

#[test]
fn demo_list_names_every_scenario_with_its_expectation() {
    let o = run(gpuwhy().args(["demo", "--list"]));
    let t = text(&o);
    assert!(o.status.success());
    for (name, _) in nvml_sim_bundle::SCENARIOS {
        assert!(t.contains(name), "{name} listed: {t}");
    }
    assert!(t.contains("data_starvation") && t.contains("throttling"));
}

#[test]
fn unknown_scenario_is_one_clear_line_with_the_choices() {
    let o = run(gpuwhy().args(["demo", "no_such_thing"]));
    assert_eq!(o.status.code(), Some(2));
    let t = text(&o);
    assert!(
        t.contains("unknown scenario 'no_such_thing'") && t.contains("healthy"),
        "{t}"
    );
}

#[test]
fn record_passes_the_exit_status_through_and_writes_the_report() {
    let dir = tempfile::tempdir().expect("tempdir");
    let lib = sim(dir.path(), &scenario_with("healthy", &[]));
    let out = dir.path().join("run.json");
    let o = run(gpuwhy()
        .env("GPUWHY_NVML_PATH", &lib)
        .args(["record", "-q", "-o"])
        .arg(&out)
        .args(["--", "sh", "-c", "sleep 1; exit 3"]));
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let r = gpuwhy::report::Report::load(&out).expect("report written");
    assert_eq!(r.run.exit_code, Some(3));
    assert_eq!(r.run.command.as_deref().map(|c| c[0].as_str()), Some("sh"));
    assert_eq!(r.devices.len(), 1);
    assert!(r.series[0].data.t.len() >= 5, "sampled during the second");
    assert!(r.run.complete);
    assert!(
        !gpuwhy::report::journal::journal_path(&out).exists(),
        "the journal is removed once the report is written"
    );
}

#[test]
fn record_without_nvml_says_so_and_still_records_the_host() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run.json");
    let o = run(gpuwhy()
        .env("GPUWHY_NVML_PATH", "/nonexistent/libnvidia-ml.so.1")
        .args(["record", "--duration", "1s", "-o"])
        .arg(&out));
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("no GPU metrics will be recorded") && t.contains("GPUWHY_NVML_PATH"),
        "{t}"
    );
    // Said once, in one line: the place searched is in the report and behind --verbose.
    assert_eq!(t.matches("GPUWHY_NVML_PATH").count(), 1, "{t}");
    assert!(!t.contains("/nonexistent/"), "{t}");
    let r = gpuwhy::report::Report::load(&out).expect("report");
    let why = r
        .gpu_absent_reason
        .as_deref()
        .expect("the reason is in the report");
    assert!(why.contains("/nonexistent/libnvidia-ml.so.1"), "{why}");
    let o = run(gpuwhy()
        .env("GPUWHY_NVML_PATH", "/nonexistent/libnvidia-ml.so.1")
        .args(["record", "--verbose", "--duration", "1s", "-o"])
        .arg(&out));
    let t = text(&o);
    assert!(t.contains("places searched for NVML"), "{t}");
    assert!(t.contains("/nonexistent/libnvidia-ml.so.1"), "{t}");
    assert!(
        r.host.as_ref().is_some_and(|h| !h.data.t.is_empty()),
        "host samples are there"
    );
}

#[test]
fn record_says_there_are_no_gpu_metrics_when_a_slow_nvml_init_fails() {
    // The init fails after 800 ms: later than the 200 ms the recorder waits at start.
    let dir = tempfile::tempdir().expect("tempdir");
    let lib = sim(
        dir.path(),
        &scenario_with(
            "healthy",
            &[
                ("init_delay_ms", serde_json::json!(800)),
                ("init_error", serde_json::json!(9)),
            ],
        ),
    );
    let out = dir.path().join("run.json");
    let o = run(gpuwhy()
        .args(["record", "--duration", "2s", "--nvml"])
        .arg(&lib)
        .arg("-o")
        .arg(&out));
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert_eq!(
        t.matches("no GPU metrics will be recorded").count(),
        1,
        "{t}"
    );
    let r = gpuwhy::report::Report::load(&out).expect("report");
    assert!(r.gpu_absent_reason.is_some() && r.series.is_empty());
}

#[test]
fn devices_lists_the_calls_that_failed_while_a_gpu_was_opened() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fault = serde_json::json!([{"kind": "error", "device": 0, "function": "nvmlDeviceGetName",
        "code": 999, "from_s": 0.0, "until_s": 1000.0}]);
    let lib = sim(dir.path(), &scenario_with("healthy", &[("faults", fault)]));
    let o = run(gpuwhy().arg("devices").arg("--nvml").arg(&lib));
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("failed while opening the GPU: nvmlDeviceGetName returned UNKNOWN"),
        "{t}"
    );
    let o = run(gpuwhy().args(["devices", "--json", "--nvml"]).arg(&lib));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["open_errors"][0]["function"], "nvmlDeviceGetName");
    assert_eq!(v["open_errors"][0]["device"], 0);
    assert_eq!(v["open_errors"][0]["code"], 999);
    assert!(v["devices"][0]["name"].is_null());
}

#[test]
fn devices_lists_capabilities_and_fails_clearly_without_nvml() {
    let dir = tempfile::tempdir().expect("tempdir");
    let lib = sim(dir.path(), &scenario_with("consumer_gpu", &[]));
    let o = run(gpuwhy().arg("devices").arg("--nvml").arg(&lib));
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("GPU 0:") && t.contains("3090"), "{t}");
    assert!(
        t.contains("not available: pcie_rx") && t.contains("NOT_SUPPORTED"),
        "{t}"
    );
    let o = run(gpuwhy()
        .arg("devices")
        .env("GPUWHY_NVML_PATH", "/nonexistent/libnvidia-ml.so.1"));
    assert_eq!(o.status.code(), Some(2));
    let t = text(&o);
    assert!(
        t.contains("no NVIDIA driver found") && t.contains("/nonexistent/libnvidia-ml.so.1"),
        "{t}"
    );
    // The places searched, one a line, only with -v.
    assert!(!t.contains("places searched"), "{t}");
    let o = run(gpuwhy()
        .args(["devices", "-v"])
        .env("GPUWHY_NVML_PATH", "/nonexistent/libnvidia-ml.so.1"));
    let t = text(&o);
    assert!(
        t.contains("places searched for NVML:\ngpuwhy:   /nonexistent/libnvidia-ml.so.1"),
        "{t}"
    );
}

#[test]
fn diagnose_gives_text_and_json_and_clear_errors_for_bad_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("demo.json");
    assert!(run(gpuwhy()
        .args(["demo", "pcie_degraded", "-q", "--duration", "4s", "-o"])
        .arg(&out))
    .status
    .success());
    let o = run(gpuwhy().arg("diagnose").arg(&out));
    assert!(o.status.success());
    assert!(text(&o).contains("pcie_degraded"), "{}", text(&o));
    let o = run(gpuwhy().args(["diagnose", "--json"]).arg(&out));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    assert_eq!(v["verdict"]["id"], "pcie_degraded");
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"schema\": \"gpuwhy.report/1\", \"devices\": [").expect("write");
    let o = run(gpuwhy().arg("diagnose").arg(&bad));
    assert_eq!(o.status.code(), Some(2));
    let t = text(&o);
    assert!(t.contains("cut short") && t.lines().count() <= 3, "{t}");
}

#[test]
fn record_and_demo_write_the_html_page_beside_the_report_with_html() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A stand-in for the built viewer page: the two slots are all the CLI fills.
    let page = dir.path().join("viewer.html");
    std::fs::write(
        &page,
        "<html>@@GPUWHY_NAME@@<script>@@GPUWHY_REPORT@@</script>",
    )
    .expect("w");
    let out = dir.path().join("run.json");
    let o = run(gpuwhy()
        .env("GPUWHY_NVML_PATH", "/nonexistent/libnvidia-ml.so.1")
        .env("GPUWHY_VIEWER_PAGE", &page)
        .args(["record", "--html", "--duration", "1s", "-o"])
        .arg(&out));
    assert!(o.status.success(), "{}", text(&o));
    let html = std::fs::read_to_string(dir.path().join("run.html")).expect("run.html written");
    assert!(html.starts_with("<html>run.json<script>{"), "{html:.80}");
    assert!(
        html.contains("\"gpu_absent_reason\""),
        "the report is embedded"
    );

    let demo = dir.path().join("demo.json");
    let o = run(gpuwhy()
        .env("GPUWHY_VIEWER_PAGE", &page)
        .args([
            "demo",
            "healthy",
            "--duration",
            "3s",
            "--quiet",
            "--html",
            "-o",
        ])
        .arg(&demo));
    assert!(o.status.success(), "{}", text(&o));
    assert!(std::fs::read_to_string(dir.path().join("demo.html"))
        .expect("demo.html written")
        .contains("\"simulator\""));

    // Without a viewer page the report is still written, and the error says so.
    let out2 = dir.path().join("second.json");
    let o = run(gpuwhy()
        .env("GPUWHY_NVML_PATH", "/nonexistent/libnvidia-ml.so.1")
        .env("GPUWHY_VIEWER_PAGE", dir.path().join("missing.html"))
        .args(["record", "--html", "--duration", "1s", "-o"])
        .arg(&out2));
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(t.contains("the report itself is written"), "{t}");
    assert!(out2.exists());
}
