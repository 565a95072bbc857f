//! `gpuwhy export` and `record --prometheus-textfile`, validated by their consumers' tools.

use std::path::Path;

use crate::{gpuwhy, run, scenario_with, sim, text};

/// Runs promtool (Debian's `prometheus` package) on a textfile. `cargo xtask test` installs
/// it and sets GPUWHY_REQUIRE_TOOLS, so there the check always runs. Exit 1 is a parse error;
/// exit 3 is style lints only. dcgm-exporter's own label names (`UUID`, `modelName`,
/// `Hostname`) are camelCase, which promtool's style lint flags; gpuwhy keeps them so
/// existing dashboards work, so that lint — and only that one — is accepted.
fn promtool_check(file: &Path) {
    let out = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::fs::File::open(file).expect("open"))
        .output();
    match out {
        Ok(o) => {
            let lints = format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            match o.status.code() {
                Some(0) => {}
                Some(3) => {
                    for l in lints.lines().filter(|l| !l.trim().is_empty()) {
                        assert!(
                            l.ends_with(
                                "label names should be written in 'snake_case' not 'camelCase'"
                            ),
                            "unexpected promtool lint: {l}"
                        );
                    }
                }
                other => panic!("promtool rejected the file ({other:?}): {lints}"),
            }
        }
        Err(e) => {
            assert!(
                std::env::var_os("GPUWHY_REQUIRE_TOOLS").is_none(),
                "promtool is required here: {e}"
            );
            eprintln!("promtool not installed; skipping its check (cargo xtask test installs it)");
        }
    }
}

#[test]
fn exports_a_report_as_chrome_trace_and_prometheus_text() {
    let dir = tempfile::tempdir().expect("tempdir");
    let report = dir.path().join("r.json");
    assert!(run(gpuwhy()
        .args(["demo", "straggler_8gpu", "-q", "--duration", "4s", "-o"])
        .arg(&report))
    .status
    .success());
    let trace = dir.path().join("t.json");
    let prom = dir.path().join("m.prom");
    let o = run(gpuwhy()
        .args(["export", "--chrome-trace"])
        .arg(&trace)
        .arg("--prometheus")
        .arg(&prom)
        .arg(&report));
    assert!(o.status.success(), "{}", text(&o));
    let r = gpuwhy::report::Report::load(&report).expect("report");
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&trace).expect("trace")).expect("JSON");
    let ev = v["traceEvents"].as_array().expect("events");
    let gpu_tracks = ev
        .iter()
        .filter(|e| e["ph"] == "M" && e["pid"].as_u64().is_some_and(|p| p >= 1000))
        .count();
    assert_eq!(gpu_tracks, 8, "one counter process per GPU");
    // gpuwhy's own trace reader, the one that reads PyTorch profiler traces, reads it too.
    let bytes = std::fs::read(&trace).expect("trace");
    let summary = gpuwhy::trace::read_slice(&bytes, &gpuwhy::trace::ReadOptions::default())
        .expect("gpuwhy's trace reader reads the export");
    assert_eq!(summary.events, ev.len() as u64, "every event read back");
    let util_points = ev
        .iter()
        .filter(|e| e["ph"] == "C" && e["name"] == "util_gpu (%)")
        .count();
    let expected: usize = r
        .series
        .iter()
        .map(|s| s.data.metrics["util_gpu"].present().count())
        .sum();
    assert_eq!(
        util_points, expected,
        "every present utilization sample is a counter point"
    );
    let t0 = ev
        .iter()
        .filter_map(|e| e["ts"].as_f64())
        .fold(f64::INFINITY, f64::min);
    assert!(
        (t0 / 1e3 - r.run.start_unix_ms as f64).abs() < 1_000.0,
        "epoch microseconds, like Kineto"
    );
    let p = std::fs::read_to_string(&prom).expect("prom");
    assert_eq!(
        p.lines()
            .filter(|l| l.starts_with("DCGM_FI_DEV_GPU_UTIL{"))
            .count(),
        8,
        "{p}"
    );
    assert!(
        p.contains("gpuwhy_top_finding{id=\"rank_imbalance\""),
        "{p}"
    );
    promtool_check(&prom);
}

#[test]
fn record_keeps_a_prometheus_textfile_up_to_date() {
    let dir = tempfile::tempdir().expect("tempdir");
    let lib = sim(dir.path(), &scenario_with("thermal", &[]));
    let prom = dir.path().join("gpu.prom");
    let o = run(gpuwhy()
        .env("GPUWHY_NVML_PATH", &lib)
        .args(["record", "-q", "--duration", "3s", "-o"])
        .arg(dir.path().join("r.json"))
        .arg("--prometheus-textfile")
        .arg(&prom));
    assert!(o.status.success(), "{}", text(&o));
    let p = std::fs::read_to_string(&prom).expect("textfile written");
    assert!(p.contains("DCGM_FI_DEV_GPU_TEMP{gpu=\"0\""), "{p}");
    assert!(p.contains("gpuwhy_top_finding{id=\"throttling\""), "{p}");
    promtool_check(&prom);
}
