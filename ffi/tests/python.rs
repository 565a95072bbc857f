//! The Python binding (ffi/python/gpuwhy/) run by `python3` on the scripts in
//! ffi/tests/py/: a training-loop stand-in on the simulated GPU, its errors and the no-GPU
//! path, and fork() inside a session. Each script asserts on its own side too and
//! exits non-zero on any failure.

mod support;

use std::path::Path;
use std::process::{Command, Output};

use support::*;

/// Runs `python3 ffi/tests/py/<script> <args>` against the test build of libgpuwhy, with the
/// simulated GPU or none.
fn python(script: &str, args: &[&Path], sim: Option<&Sim>, extra: &[&str]) -> Output {
    let mut cmd = Command::new("python3");
    cmd.arg(ffi_dir().join("tests/py").join(script))
        .args(args)
        .args(extra)
        .env("GPUWHY_LIB", lib_dir().join("libgpuwhy.so"))
        .env("PYTHONPATH", ffi_dir().join("python"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("RANK")
        .env_remove("WORLD_SIZE");
    run_ok(&mut cmd, sim)
}

/// The evidence of `finding` whose metric starts with `metric` (and, if given, on `device`).
fn evidence<'a>(
    finding: &'a serde_json::Value,
    metric: &str,
    device: Option<u64>,
) -> &'a serde_json::Value {
    finding["evidence"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| {
            e["metric"].as_str().is_some_and(|m| m.starts_with(metric))
                && device.is_none_or(|d| e["device"] == d)
        })
        .unwrap_or_else(|| panic!("no evidence {metric:?} in {finding}"))
}

#[test]
fn a_python_training_loop_with_a_slow_loader_is_diagnosed_as_data_starvation() {
    if !have("python3") {
        return;
    }
    // data_starvation.json: 1 s steps, 45 % of them waiting for data; at speed 4 a simulated
    // step lasts 250 ms, and the script's loader and phases take the same times.
    let sim = sim("data_starvation", &[("speed", 4.0.into())]);
    let tmp = tempfile::tempdir().expect("temp dir");
    let out = tmp.path().join("run.json");
    let t0 = std::time::Instant::now();
    let o = python("train_loop.py", &[&out], Some(&sim), &["4", "16"]);
    eprintln!("train_loop.py took {:.1} s", t0.elapsed().as_secs_f64());
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("top finding: data_starvation"), "{stdout}");

    let r = report(&out);
    let steps = &r["steps"];
    assert_eq!(steps["count"], 16, "steps: {steps}");
    for p in ["data", "forward", "backward", "optimizer"] {
        assert_eq!(
            steps["stats"][p]["count"], 16,
            "phase {p}: {}",
            steps["stats"]
        );
    }
    // The loader sleeps 112.5 ms per batch: all of it is the data phase, and nothing else is
    // (at least the sleep; the upper end only checks the unit, ten times over, as a loaded
    // machine may oversleep by any amount).
    let data_p50 = steps["stats"]["data"]["p50_s"].as_f64().unwrap_or(0.0);
    assert!((0.1125..1.125).contains(&data_p50), "data p50 {data_p50}");
    assert_eq!(steps["ignored_markers"], 0, "{steps}");
    assert_eq!(r["run"]["label"], "python train_loop");
    assert_eq!(r["devices"].as_array().map(Vec::len), Some(1));
    assert!(
        r["events"]
            .as_array()
            .is_some_and(|e| e.iter().any(|e| e["kind"] == "eval")),
        "events: {}",
        r["events"]
    );

    let top = &r["findings"][0];
    assert_eq!(top["id"], "data_starvation", "findings: {}", r["findings"]);
    let share = evidence(top, "data phase share of step time p50", None)["value"]
        .as_f64()
        .unwrap_or(0.0);
    assert!((0.40..0.52).contains(&share), "data share {share}");
    // The simulated GPU's own samples agree: it idles while the loop waits for data.
    let idle = evidence(top, "share of samples with util_gpu <", Some(0));
    assert_eq!(idle["agrees"], true, "{idle}");
    assert!(
        !out.with_extension("json.partial").exists(),
        "journal left behind"
    );
}

#[test]
fn python_errors_raise_gpuwhy_error_and_no_gpu_still_records_steps() {
    if !have("python3") {
        return;
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let o = python("errors.py", &[tmp.path()], None, &[]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("ok"));
    let r = report(&tmp.path().join("nogpu.json"));
    assert_eq!(r["steps"]["count"], 3);
    assert!(
        r["gpu_absent_reason"].is_string(),
        "{}",
        r["gpu_absent_reason"]
    );
    // The body's exception did not stop the report from being written.
    assert_eq!(report(&tmp.path().join("raised.json"))["steps"]["count"], 2);
    // A failed write kept the report, and the retry wrote it.
    assert_eq!(report(&tmp.path().join("retry.json"))["steps"]["count"], 1);
}

#[test]
fn a_python_loop_that_names_itself_is_diagnosed_apart_from_a_helper_thread() {
    if !have("python3") {
        return;
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let out = tmp.path().join("threads.json");
    let o = python("threads.py", &[&out], None, &[]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("ok"));
    let r = report(&out);
    assert_eq!(r["steps"]["count"], 5, "{}", r["steps"]);
    assert_eq!(r["steps"]["threads"].as_array().map(Vec::len), Some(2));
}

#[test]
fn python_in_a_container_finds_its_gpu_through_the_host_s_proc() {
    if !have("python3") {
        return;
    }
    // container_pid_namespace.json lists the job's process on GPU 0 by its host pid,
    // 4000123; GPU 1 is idle and nobody's.
    let sim = sim("container_pid_namespace", &[]);
    let tmp = tempfile::tempdir().expect("temp dir");
    let o = python("container.py", &[tmp.path()], Some(&sim), &["4000123"]);
    let found: serde_json::Value =
        serde_json::from_slice(&o.stdout).expect("container.py prints JSON");
    let mapped = &found["mapped"];
    assert_eq!(mapped["method"], "processes", "{mapped}");
    assert_eq!(mapped["indices"], serde_json::json!([0]), "{mapped}");
    assert_eq!(mapped["others"], serde_json::json!([1]), "{mapped}");
    // Without the host's /proc the pid is nobody this /proc knows: not found by process.
    assert_ne!(
        found["unmapped"]["method"], "processes",
        "{}",
        found["unmapped"]
    );
}

#[test]
fn python_children_forked_inside_a_session_exit_cleanly_and_leave_it_intact() {
    if !have("python3") {
        return;
    }
    let sim = sim("healthy", &[]);
    let tmp = tempfile::tempdir().expect("temp dir");
    let o = python("fork.py", &[tmp.path()], Some(&sim), &[]);
    eprintln!("{}", String::from_utf8_lossy(&o.stdout));
    let r = report(&tmp.path().join("parent.json"));
    assert_eq!(r["steps"]["count"], 10, "{}", r["steps"]);
    assert_eq!(r["run"]["label"], "fork parent");
}

#[test]
fn gpuwhy_torch_attaches_gpu_phase_times_without_synchronising() {
    if !have("python3") {
        return;
    }
    // torch_standin.py installs a stand-in of the torch API gpuwhy.torch uses (CUDA events on
    // a simulated GPU timeline, the profiler) and checks the report: GPU phase p50s as
    // measured, no synchronising call, the DataLoader's settings, the profiler trace read.
    let o = python("torch_standin.py", &[], None, &[]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("torch stand-in: ok"), "{stdout}");
}
