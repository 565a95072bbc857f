//! A C program that names a baseline report in `gpuwhy_config.baseline_path` gets the
//! comparison in its report; one whose baseline cannot be read still gets its report, with
//! the reason. Rank, world size and local rank come from the launcher's variables.

mod support;

use std::process::Command;

use support::*;

#[test]
fn a_c_session_with_a_baseline_reports_the_comparison() {
    if !have("cc") {
        return;
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let exe = tmp.path().join("baseline");
    build_c(&[&ffi_dir().join("tests/c/baseline.c")], &exe, &[]);
    let path = |n: &str| tmp.path().join(n);

    // The baseline: a 20 ms data phase, no baseline of its own.
    let out = run_ok(
        Command::new(&exe).arg(path("base.json")).args(["-", "20"]),
        None,
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("comparison in memory: no"));
    let base = report(&path("base.json"));
    assert!(base.get("comparison").is_none(), "no baseline, no section");
    assert_eq!(base["run"]["local_rank"], serde_json::Value::Null);

    // The fix: a 2 ms data phase, compared with the baseline; rank 3 of 4, local rank 1.
    let out = run_ok(
        Command::new(&exe)
            .arg(path("fixed.json"))
            .arg(path("base.json"))
            .arg("2")
            .envs([("RANK", "3"), ("WORLD_SIZE", "4"), ("LOCAL_RANK", "1")]),
        None,
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("comparison in memory: yes"));
    let fixed = report(&path("fixed.json"));
    let run = &fixed["run"];
    assert_eq!(
        (&run["rank"], &run["world_size"], &run["local_rank"]),
        (&3.into(), &4.into(), &1.into())
    );
    let c = &fixed["comparison"];
    assert_eq!(c["baseline"], path("base.json").display().to_string());
    assert_eq!(c["error"], serde_json::Value::Null, "{c}");
    let steps = &c["result"]["steps"];
    let rel = steps["p50_s"]["relative"]
        .as_f64()
        .expect("a relative change");
    assert!(rel < -0.5, "step p50 {rel:+.2} (23 ms → 5 ms expected)");
    assert_eq!(steps["test"]["significant"], true, "{steps}");
    let data = steps["phases"]
        .as_array()
        .and_then(|p| p.iter().find(|x| x[0] == "data"))
        .expect("the data phase compared");
    assert!(
        data[1]["relative"].as_f64().is_some_and(|r| r < -0.5),
        "{data}"
    );
    assert!(c["result"]["summary"]
        .as_str()
        .is_some_and(|s| s.contains("significant")));

    // A baseline that is not there: the report is written all the same, with the reason.
    run_ok(
        Command::new(&exe)
            .arg(path("lost.json"))
            .arg(path("no-such.json"))
            .arg("2"),
        None,
    );
    let lost = report(&path("lost.json"));
    assert_eq!(lost["steps"]["count"], 30);
    assert_eq!(lost["comparison"]["result"], serde_json::Value::Null);
    let err = lost["comparison"]["error"].as_str().expect("an error");
    assert!(
        err.contains("cannot read the baseline") && err.contains("no-such.json"),
        "{err}"
    );
}
