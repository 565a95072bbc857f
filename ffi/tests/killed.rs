//! A process embedding libgpuwhy is killed with SIGKILL mid-run: the crash journal beside
//! its output path holds what was flushed (every 2 s, so at most one flush interval is
//! lost), and it reads as a report with the steps and samples up to the last flush.

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use gpuwhy_core::report::Report;
use support::*;

#[test]
fn a_killed_embedding_process_leaves_a_readable_journal() {
    if !have("cc") {
        return;
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let exe = tmp.path().join("killed");
    build_c(&[&ffi_dir().join("tests/c/killed.c")], &exe, &[]);
    let sim = sim("healthy", &[]);
    let out = tmp.path().join("run.json");
    let mut child = Command::new(&exe)
        .arg(&out)
        .env("GPUWHY_NVML_PATH", &sim.lib)
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the C program");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("read");
    assert_eq!(line.trim(), "started");
    // Until a flush has put 100 steps and 25 GPU samples into the journal.
    let journal = tmp.path().join("run.json.partial");
    let counts = |p: &std::path::Path| {
        let r = Report::load(p).ok()?;
        let steps = r.steps.as_ref()?.count;
        let samples = r.series.first()?.data.t.len();
        (steps >= 100 && samples >= 25).then_some((steps, samples))
    };
    let seen = wait_for(Duration::from_secs(120), || counts(&journal));
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    let (seen_steps, seen_samples) = seen.expect("the journal fills before the time-out");
    assert!(!out.exists(), "a killed process wrote no report");
    let r = Report::load(&journal).expect("the journal reads as a report");
    assert!(!r.run.complete);
    assert_eq!(r.run.label.as_deref(), Some("killed.c"));
    let steps = r.steps.expect("steps were journaled");
    // The kill lost nothing that was flushed before it.
    assert!(
        steps.count >= seen_steps,
        "{} steps journaled, {seen_steps} were flushed before the kill",
        steps.count
    );
    let samples = r.series.first().map_or(0, |d| d.data.t.len());
    assert!(
        samples >= seen_samples,
        "GPU samples journaled: {samples}, {seen_samples} before the kill"
    );
}
