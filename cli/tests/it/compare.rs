//! `gpuwhy compare` on pairs of simulator runs.

use std::path::{Path, PathBuf};

use crate::{gpuwhy, run, text};

fn demo(dir: &Path, scenario: &str, name: &str) -> PathBuf {
    let out = dir.join(name);
    let o = run(gpuwhy()
        .args(["demo", scenario, "-q", "--duration", "6s", "-o"])
        .arg(&out));
    assert!(o.status.success(), "{}", text(&o));
    out
}

#[test]
fn the_fix_resolves_the_finding_and_its_experiment_holds() {
    let dir = tempfile::tempdir().expect("tempdir");
    let before = demo(dir.path(), "data_starvation", "before.json");
    let after = demo(dir.path(), "healthy", "after.json");
    let o = run(gpuwhy()
        .args(["compare", "--json"])
        .arg(&before)
        .arg(&after));
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["verdict"]["baseline_top"][0], "data_starvation");
    assert!(v["verdict"]["resolved"]
        .as_array()
        .expect("list")
        .iter()
        .any(|x| x == "data_starvation"));
    let exp = v["experiments"]
        .as_array()
        .expect("list")
        .iter()
        .find(|e| e["finding"] == "data_starvation")
        .expect("checked");
    assert_eq!(exp["outcome"], "held", "{exp}");
    assert_eq!(v["gpus"][0]["util_test"]["significant"], true);
    let t = text(&run(gpuwhy().arg("compare").arg(&before).arg(&after)));
    assert!(
        t.contains("data_starvation") && t.contains("resolved"),
        "{t}"
    );
}

#[test]
fn two_identical_runs_show_no_significant_change() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = demo(dir.path(), "healthy", "a.json");
    let b = demo(dir.path(), "healthy", "b.json");
    let o = run(gpuwhy().args(["compare", "--json"]).arg(&a).arg(&b));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(
        v["gpus"][0]["util_test"]["significant"], false,
        "{}",
        v["gpus"][0]
    );
    assert!(v["verdict"]["resolved"]
        .as_array()
        .expect("list")
        .is_empty());
    assert!(v["verdict"]["new"].as_array().expect("list").is_empty());
}

#[test]
fn different_hardware_is_refused_unless_forced() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = demo(dir.path(), "healthy", "h100.json");
    let b = demo(dir.path(), "consumer_gpu", "3090.json");
    let o = run(gpuwhy().arg("compare").arg(&a).arg(&b));
    assert_eq!(o.status.code(), Some(2));
    let t = text(&o);
    assert!(t.contains("not comparable") && t.contains("--force"), "{t}");
    let o = run(gpuwhy().args(["compare", "--force"]).arg(&a).arg(&b));
    assert!(o.status.success());
    assert!(
        text(&o).contains("warning: compared although"),
        "{}",
        text(&o)
    );
}
