//! A recording killed with SIGKILL leaves a readable partial report.

use std::time::Duration;

use crate::{gpuwhy, run, scenario_with, sim, text};

#[test]
fn sigkill_during_record_leaves_a_readable_journal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let lib = sim(dir.path(), &scenario_with("data_starvation", &[]));
    let out = dir.path().join("run.json");
    let mut child = gpuwhy()
        .env("GPUWHY_NVML_PATH", &lib)
        .args(["record", "-q", "-o"])
        .arg(&out)
        .args(["--", "sleep", "8"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    // Two flush intervals (2 s each) and a bit.
    std::thread::sleep(Duration::from_millis(5_000));
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    assert!(
        !out.exists(),
        "no report: the recorder was killed before writing it"
    );
    let partial = gpuwhy::report::journal::journal_path(&out);
    assert!(partial.exists(), "the journal is there");
    let o = run(gpuwhy().arg("diagnose").arg(&partial));
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("PARTIAL"), "{t}");
    let r = gpuwhy::report::Report::load(&partial).expect("readable");
    let n = r.series[0].data.t.len();
    // At 100 ms, 5 s is ~50 samples; a flush every 2 s loses at most ~20.
    assert!(n >= 25, "kept {n} samples");
    // The orphaned `sleep 8` exits by itself a few seconds later.
}
