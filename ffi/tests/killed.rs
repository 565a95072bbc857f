//! A process embedding libgpuwhy is killed with SIGKILL mid-run: the crash journal beside
//! its output path holds what was flushed (every 2 s, so at most one flush interval is
//! lost), and it reads as a report with the steps and samples up to the last flush.

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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
    let t0 = Instant::now();
    // Two flushes (at 2 s and 4 s) and then some.
    std::thread::sleep(Duration::from_millis(5_000));
    child.kill().expect("SIGKILL");
    let ran = t0.elapsed().as_secs_f64();
    let _ = child.wait();
    assert!(!out.exists(), "a killed process wrote no report");
    let journal = tmp.path().join("run.json.partial");
    let r = Report::load(&journal).expect("the journal reads as a report");
    assert!(!r.run.complete);
    assert_eq!(r.run.label.as_deref(), Some("killed.c"));
    let steps = r.steps.expect("steps were journaled");
    // 10 ms steps for ~5 s, of which everything up to the last flush (≥ 4 s in) is kept:
    // at most one flush interval (2 s) plus scheduling slack is lost.
    let marked = ran / 0.0105;
    assert!(
        steps.count as f64 >= marked * (ran - 2.5) / ran,
        "{} steps journaled of ~{marked:.0} marked in {ran:.1} s",
        steps.count
    );
    eprintln!(
        "journaled {} steps of ~{marked:.0} marked in {ran:.1} s",
        steps.count
    );
    let samples = r.series.first().map_or(0, |d| d.data.t.len());
    assert!(samples >= 25, "GPU samples journaled: {samples}");
}
