//! A recording killed with SIGKILL leaves a readable partial report.

use std::time::Duration;

use crate::{gpuwhy, run, scenario_with, sim, text, wait_for};

#[test]
fn sigkill_during_record_leaves_a_readable_journal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let lib = sim(dir.path(), &scenario_with("data_starvation", &[]));
    let out = dir.path().join("run.json");
    let mut child = gpuwhy()
        .env("GPUWHY_NVML_PATH", &lib)
        .args(["record", "-q", "-o"])
        .arg(&out)
        // Longer than any wait below, so the recording is killed, not finished.
        .args(["--", "sleep", "60"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    // Until a flush has put 25 samples (2.5 s at 100 ms) into the journal.
    let partial = gpuwhy::report::journal::journal_path(&out);
    let samples = |p: &std::path::Path| {
        let r = gpuwhy::report::Report::load(p).ok()?;
        Some(r.series.first()?.data.t.len())
    };
    let seen = wait_for(Duration::from_secs(120), || {
        samples(&partial).filter(|n| *n >= 25)
    });
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    assert!(
        !out.exists(),
        "no report: the recorder was killed before writing it"
    );
    let seen = seen.expect("the journal holds 25 samples before the time-out");
    let o = run(gpuwhy().arg("diagnose").arg(&partial));
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("PARTIAL"), "{t}");
    let r = gpuwhy::report::Report::load(&partial).expect("readable");
    let n = r.series[0].data.t.len();
    // The kill lost nothing that was flushed before it.
    assert!(
        n >= seen,
        "kept {n} samples, {seen} were flushed before the kill"
    );
    // The orphaned `sleep 60` exits by itself later.
}
