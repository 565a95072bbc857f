//! `--gpus` on `record` and `diagnose`: the user names the job's GPUs; the others stay in the
//! report, apart.

use crate::{gpuwhy, run, scenario_with, sim, text};

fn job_gpus(path: &std::path::Path) -> serde_json::Value {
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("report")).expect("json");
    doc["run"]["job_gpus"].clone()
}

#[test]
fn record_and_diagnose_take_the_user_s_gpus() {
    let dir = tempfile::tempdir().expect("tempdir");
    let lib = sim(dir.path(), &scenario_with("job_one_of_two", &[]));
    let out = dir.path().join("r.json");
    let o = run(gpuwhy()
        .args([
            "record",
            "-q",
            "--duration",
            "1500ms",
            "--gpus",
            "1",
            "--nvml",
        ])
        .arg(&lib)
        .arg("-o")
        .arg(&out));
    assert!(o.status.success(), "{}", text(&o));
    let j = job_gpus(&out);
    assert_eq!(j["method"], "override", "{j}");
    assert_eq!(j["indices"], serde_json::json!([1]));
    assert_eq!(j["others"], serde_json::json!([0]));
    assert!(
        text(&o).contains("not this job's (shown, not judged): 0"),
        "{}",
        text(&o)
    );

    let o = run(gpuwhy().arg("diagnose").arg(&out).args(["--gpus", "0"]));
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("GPUs of this job: 0; not this job's (shown, not judged): 1"),
        "{}",
        text(&o)
    );

    let o = run(gpuwhy().arg("diagnose").arg(&out).args(["--gpus", "zero"]));
    assert!(!o.status.success());
    assert!(text(&o).contains("`zero`"), "{}", text(&o));
}
