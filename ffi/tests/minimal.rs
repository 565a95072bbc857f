//! The minimal C example, compiled with -Wall -Wextra -Werror and run against the
//! simulated GPU and without any GPU: its report has the steps it marked.

mod support;

use std::process::Command;

use support::*;

fn check(report: &serde_json::Value, gpus: usize) {
    let steps = &report["steps"];
    assert_eq!(steps["count"], 40, "steps: {steps}");
    for p in ["data", "forward", "backward", "optimizer"] {
        assert_eq!(
            steps["stats"][p]["count"], 40,
            "phase {p}: {}",
            steps["stats"]
        );
    }
    // The example sleeps 12 ms in its data phase: a sleep never ends early, so the phase is at
    // least that; the upper end only checks the unit (seconds), ten times over, since a loaded
    // machine may oversleep by any amount.
    let data_p50 = steps["stats"]["data"]["p50_s"].as_f64().unwrap_or(0.0);
    assert!((0.0115..0.12).contains(&data_p50), "data p50 {data_p50}");
    assert_eq!(report["run"]["label"], "minimal.c");
    assert_eq!(report["devices"].as_array().map(Vec::len), Some(gpus));
    if gpus == 0 {
        assert!(report["gpu_absent_reason"].is_string());
    }
}

#[test]
fn minimal_c_records_steps_with_a_simulated_gpu_and_without_one() {
    if !have("cc") {
        return;
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let exe = tmp.path().join("minimal");
    build_c(&[&ffi_dir().join("examples/minimal.c")], &exe, &[]);

    let sim = sim("healthy", &[]);
    let out_path = tmp.path().join("run.json");
    let out = run_ok(Command::new(&exe).arg(&out_path), Some(&sim));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("top finding: "), "{stdout}");
    check(&report(&out_path), 1);
    assert!(
        !out_path.with_extension("json.partial").exists(),
        "journal left behind"
    );

    let none_path = tmp.path().join("none.json");
    run_ok(Command::new(&exe).arg(&none_path), None);
    check(&report(&none_path), 0);
}
