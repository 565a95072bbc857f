//! A C process whose helper thread also marks steps: the report's steps are the training
//! loop's (the thread that marks a data phase, or the one named with
//! `gpuwhy_session_set_main_thread`), and the helper is listed apart with its own numbers.

mod support;

use std::process::Command;

use support::*;

fn run(exe: &std::path::Path, dir: &std::path::Path, mode: &str) -> serde_json::Value {
    let out = dir.join(format!("{mode}.json"));
    run_ok(Command::new(exe).arg(&out).arg(mode), None);
    report(&out)
}

fn thread(steps: &serde_json::Value, main: bool) -> serde_json::Value {
    let threads = steps["threads"].as_array().cloned().unwrap_or_default();
    threads
        .into_iter()
        .find(|t| t["main"] == main)
        .unwrap_or_else(|| panic!("no thread with main={main}: {steps}"))
}

#[test]
fn a_helper_threads_micro_steps_stay_apart_from_the_training_loop() {
    if !have("cc") {
        return;
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let exe = tmp.path().join("threads");
    build_c(&[&ffi_dir().join("tests/c/threads.c")], &exe, &[]);

    let r = run(&exe, tmp.path(), "default");
    let steps = &r["steps"];
    assert_eq!(steps["count"], 30, "the loop's steps only: {steps}");
    assert_eq!(steps["stats"]["data"]["count"], 30);
    let helper = thread(steps, false);
    assert_eq!(helper["count"], 300, "{helper}");
    assert!(helper["stats"]["data"].is_null(), "{helper}");
    let main = thread(steps, true);
    assert_eq!(main["chosen_by"], "data_phase");
    let ids: Vec<&str> = r["findings"]
        .as_array()
        .map(|f| f.iter().filter_map(|x| x["id"].as_str()).collect())
        .unwrap_or_default();
    // 10 ms of every 17 ms step waits for data; the helper's stall every tenth step is not
    // the loop's.
    assert!(ids.contains(&"data_starvation"), "findings: {ids:?}");
    assert!(!ids.contains(&"periodic_stall"), "findings: {ids:?}");

    let r = run(&exe, tmp.path(), "name_helper");
    let steps = &r["steps"];
    assert_eq!(steps["count"], 300, "the named thread's steps: {steps}");
    assert_eq!(thread(steps, true)["chosen_by"], "named");
    assert_eq!(thread(steps, false)["count"], 30);
}
