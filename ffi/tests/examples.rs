//! The training examples, train.c (C11) and train.cpp (C++17 through the RAII wrapper of
//! gpuwhy.hpp), compiled with -Wall -Wextra -Werror and run against the simulated GPU: their
//! reports have each thread's steps whole and counted, the custom phase, the "eval" events,
//! the GPU-measured forward times on the right steps, the rank and label, and the JSON
//! they print is the file they wrote.
//!
//! The simulated GPU plays `data_starvation` at real speed for the two or so seconds a run
//! takes: too short for its GPU-side sawtooth to be judged reliably, so the tests check
//! that the GPU was sampled and that the examples' own data phase (a third of each step,
//! whatever the machine's load) is found, not which finding ranks first.

mod support;
mod train_report;

use std::path::Path;
use std::process::Command;

use support::*;
use train_report::Expect;

const STEPS: usize = 150;

/// Compiles a C++ source with the flags the wrapper promises to be free of, linked against
/// the shared libgpuwhy.
fn build_cpp(source: &Path, exe: &Path) {
    let lib = lib_dir().display().to_string();
    let args = [
        "-std=c++17".to_string(),
        "-Wall".into(),
        "-Wextra".into(),
        "-Werror".into(),
        "-g".into(),
        format!("-I{}", include_dir().display()),
        source.display().to_string(),
        "-o".into(),
        exe.display().to_string(),
        format!("-L{lib}"),
        format!("-Wl,-rpath,{lib}"),
        "-lgpuwhy".into(),
        "-pthread".into(),
    ];
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    compile("c++", &refs);
}

fn run_and_check(exe: &Path, dir: &Path, label: &str) {
    let sim = sim("data_starvation", &[]);
    let report_path = dir.join("run.json");
    let out = run_ok(
        Command::new(exe)
            .arg(&report_path)
            .args([STEPS.to_string(), "3".into(), "8".into()])
            // The config's rank wins over the environment's.
            .env("RANK", "5")
            .env("WORLD_SIZE", "6"),
        Some(&sim),
    );
    let report = train_report::check(
        &out,
        &report_path,
        &Expect {
            label,
            steps: STEPS,
            rank: Some((3, 8)),
            gpus: 1,
        },
    );
    // The samples as any reader gets them, whichever series form the file holds.
    let read = gpuwhy_core::report::Report::load(&report_path).expect("the report reads");
    let samples = read.series.first().map_or(0, |s| s.data.t.len());
    assert!(samples >= 5, "GPU samples: {samples}");
    let ids: Vec<&str> = report["findings"]
        .as_array()
        .map(|a| a.iter().filter_map(|f| f["id"].as_str()).collect())
        .unwrap_or_default();
    assert!(ids.contains(&"data_starvation"), "findings: {ids:?}");
}

#[test]
fn train_c_reports_both_threads_steps_phases_events_and_gpu_times() {
    if !have("cc") {
        return;
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let exe = tmp.path().join("train");
    build_c(&[&ffi_dir().join("examples/train.c")], &exe, &["-pthread"]);
    run_and_check(&exe, tmp.path(), "train.c");
}

#[test]
fn train_cpp_reports_the_same_through_the_raii_wrapper() {
    if !have("c++") {
        return;
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let exe = tmp.path().join("train");
    build_cpp(&ffi_dir().join("examples/train.cpp"), &exe);
    run_and_check(&exe, tmp.path(), "train.cpp");
}

#[test]
fn examples_without_a_gpu_still_report_their_steps() {
    if !have("cc") {
        return;
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let exe = tmp.path().join("train");
    build_c(&[&ffi_dir().join("examples/train.c")], &exe, &["-pthread"]);
    let report_path = tmp.path().join("run.json");
    let out = run_ok(
        Command::new(&exe)
            .arg(&report_path)
            .arg("40")
            .env_remove("RANK")
            .env_remove("WORLD_SIZE"),
        None,
    );
    train_report::check(
        &out,
        &report_path,
        &Expect {
            label: "train.c",
            steps: 40,
            rank: None,
            gpus: 0,
        },
    );
}
