//! `gpuwhy diagnose` on what users already have: dmon and CSV logs, profiler traces, and a
//! report combined with a trace of the same run.

use std::path::PathBuf;

use crate::{gpuwhy, run, text};

fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../core/tests/fixtures"
    ))
    .join(rel)
}

fn json(o: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).expect("JSON on stdout")
}

#[test]
fn a_dmon_log_is_detected_and_diagnosed_with_notes_on_stderr() {
    let o = run(gpuwhy()
        .arg("diagnose")
        .arg(fixture("import/dmon_current.log")));
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("source dmon") && t.contains("2 GPU(s)"), "{t}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("note: line 11") && err.contains("no time column"),
        "{err}"
    );
    assert!(t.contains("Only 3 samples"), "a short log says so: {t}");
}

#[test]
fn an_nvidia_smi_q_dump_is_a_snapshot_diagnosed_like_a_log() {
    let o = run(gpuwhy()
        .args(["diagnose", "--json"])
        .arg(fixture("import/smi_q_r470_two_gpus.txt")));
    assert!(o.status.success(), "{}", text(&o));
    let v = json(&o);
    assert_eq!(v["run"]["source"], "smi");
    let ids: Vec<&str> = v["findings"]
        .as_array()
        .map(|f| f.iter().filter_map(|x| x["id"].as_str()).collect())
        .unwrap_or_default();
    assert!(
        ids.contains(&"throttling"),
        "SW Power Cap under load: {ids:?}"
    );
    assert!(
        v["notes"].to_string().contains("one snapshot per GPU"),
        "{}",
        v["notes"]
    );
    let o = run(gpuwhy()
        .arg("diagnose")
        .arg(fixture("import/smi_q_r470_two_gpus.txt")));
    assert!(text(&o).contains("2 GPU(s)"), "{}", text(&o));
}

#[test]
fn a_csv_log_reads_through_the_same_rules_as_json() {
    let o = run(gpuwhy()
        .args(["diagnose", "--json"])
        .arg(fixture("import/query_units.csv")));
    assert!(o.status.success(), "{}", text(&o));
    let v = json(&o);
    assert_eq!(v["run"]["source"], "csv");
    assert_eq!(v["run"]["interval_s"], 0.5);
    assert!(v["notes"].as_array().is_some_and(|n| !n.is_empty()));
}

#[test]
fn a_headerless_unitless_csv_needs_fields_and_interval_is_honoured() {
    let f = fixture("import/query_noheader_nounits.csv");
    let o = run(gpuwhy().arg("diagnose").arg(&f));
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("--fields"), "{}", text(&o));
    let o = run(gpuwhy()
        .args(["diagnose", "--json", "--interval", "250ms", "--fields"])
        .arg("utilization.gpu,memory.used,power.draw")
        .arg(&f));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(json(&o)["run"]["interval_s"], 0.25);
}

#[test]
fn a_gzip_trace_alone_gives_the_trace_summary_and_host_sync() {
    let o = run(gpuwhy().arg("diagnose").arg(fixture("trace/small.json.gz")));
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("host_sync") && t.contains("Profiler trace: 1 rank(s)"),
        "{t}"
    );
    assert!(
        t.contains("idle 12.8%") && t.contains("last ProfilerStep kept"),
        "{t}"
    );
    assert!(
        !t.contains("reading"),
        "no progress line when stderr is not a terminal"
    );
    let o = run(gpuwhy()
        .args(["diagnose", "--json", "--hta-choices"])
        .arg(fixture("trace/small.json")));
    let v = json(&o);
    assert_eq!(v["trace"]["ranks"][0]["span_us"], 1953.0);
    assert_eq!(v["trace"]["choices"]["drop_last_step"], true);
    assert_eq!(v["trace"]["choices"]["round_timestamps"], true);
}

#[test]
fn a_trace_says_what_the_cpu_was_doing_across_the_gpu_gaps() {
    // small.json: 270 µs after stream syncs, 94 µs of Python between launches, 15 µs of
    // queued work, of 379 µs idle (docs/trace-format.md, "What the CPU was doing").
    let o = run(gpuwhy().arg("diagnose").arg(fixture("trace/small.json")));
    let t = text(&o);
    assert!(
        t.contains("GPU idle time by what the CPU was doing: syncs 71.2%, Python between launches 24.8%, GPU-side waits 4.0%"),
        "{t}"
    );
    let o = run(gpuwhy()
        .args(["diagnose", "--json"])
        .arg(fixture("trace/small.json")));
    let g = &json(&o)["trace"]["ranks"][0]["gap_causes"];
    assert_eq!(
        (g["sync_us"].as_f64(), g["launch_us"].as_f64()),
        (Some(270.0), Some(94.0))
    );
}

#[test]
fn hta_choices_round_fractional_timestamps_to_hta_s_idle_share() {
    let o = run(gpuwhy()
        .args(["diagnose", "--json", "--hta-choices"])
        .arg(fixture("trace/fractional.json")));
    let r = &json(&o)["trace"]["ranks"][0];
    // HTA 0.5.0 on the same file: idle 143 µs of a 739 µs span.
    assert_eq!(
        (r["span_us"].as_f64(), r["busy_us"].as_f64()),
        (Some(739.0), Some(596.0))
    );
}

#[test]
fn a_real_cpu_only_torch_trace_says_it_has_no_gpu_operations() {
    let o = run(gpuwhy()
        .arg("diagnose")
        .arg(fixture("trace/torch_cpu.json.gz")));
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("no GPU operations in the trace"), "{t}");
    assert!(t.contains("4 steps: CPU p50"), "{t}");
    assert!(!t.contains("): GPU busy"), "nothing to be busy with: {t}");
}

#[test]
fn traces_of_two_ranks_name_the_straggler() {
    let o = run(gpuwhy()
        .args(["diagnose", "--json"])
        .arg(fixture("trace/comm_rank0.json"))
        .arg(fixture("trace/comm_rank1.json")));
    assert!(o.status.success(), "{}", text(&o));
    let v = json(&o);
    assert_eq!(v["trace"]["skew"]["straggler"], 1);
    let ids: Vec<&str> = v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["id"].as_str())
        .collect();
    assert!(
        ids.contains(&"rank_imbalance") && ids.contains(&"comm_sync"),
        "{ids:?}"
    );
}

#[test]
fn a_report_and_a_trace_of_the_same_run_diagnose_together() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run.json");
    let bytes = std::fs::read(fixture("import/dmon_old.log")).expect("fixture");
    let imported = gpuwhy::import::import(
        gpuwhy::import::Kind::Dmon,
        &bytes,
        &gpuwhy::import::ImportOptions::default(),
    )
    .expect("imports");
    gpuwhy::report::Report::from_recording(&imported.recording)
        .save(&out)
        .expect("saved");
    let o = run(gpuwhy()
        .args(["diagnose", "--json"])
        .arg(&out)
        .arg("--trace")
        .arg(fixture("trace/launch_bound.json")));
    assert!(o.status.success(), "{}", text(&o));
    let v = json(&o);
    assert_eq!(v["verdict"]["id"], "launch_bound", "{v:#}");
    let conf = v["verdict"]["confidence"].as_f64().expect("confidence");
    assert!(
        conf >= 0.8,
        "a short log does not lower a trace-backed finding: {conf}"
    );
    assert_eq!(v["run"]["source"], "dmon");
    assert!(v["trace"]["ranks"][0]["kernels"]["count"].as_u64() == Some(720));
}

#[test]
fn bad_inputs_are_one_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.log");
    // One damaged row is read past, and a note names it.
    std::fs::write(&bad, "# gpu sm mem\n 0 10 5\n 0 ten 5\n 0 11 5\n").expect("write");
    let o = run(gpuwhy().arg("diagnose").arg(&bad));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("line 3") && t.contains("column `sm`"), "{t}");
    // Mostly damaged rows: one clear error naming the first.
    std::fs::write(&bad, "# gpu sm mem\n 0 10 5\n 0 ten 5\n 0 eleven\n").expect("write");
    let o = run(gpuwhy().arg("diagnose").arg(&bad));
    assert_eq!(o.status.code(), Some(2));
    let t = text(&o);
    assert!(t.contains("line 3") && t.contains("column `sm`"), "{t}");
    let junk = dir.path().join("junk.txt");
    std::fs::write(&junk, "hello world\n").expect("write");
    let o = run(gpuwhy().arg("diagnose").arg(&junk));
    assert_eq!(o.status.code(), Some(2));
    let t = text(&o);
    assert!(t.contains("not a file gpuwhy reads"), "{t}");
    // The readable kinds come from core's list, `nvidia-smi -q` dumps included.
    assert!(t.contains(&::gpuwhy::import::readable_kinds()), "{t}");
    assert!(t.contains("`nvidia-smi -q` dump"), "{t}");
    let o = run(gpuwhy()
        .arg("diagnose")
        .arg(fixture("import/dmon_su.log"))
        .arg(fixture("import/dmon_old.log")));
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("one at a time"), "{}", text(&o));
    let cut = dir.path().join("cut.json");
    let full = std::fs::read(fixture("trace/small.json")).expect("fixture");
    std::fs::write(&cut, &full[..full.len() / 2]).expect("write");
    let o = run(gpuwhy().arg("diagnose").arg(&cut));
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("cut short"), "{}", text(&o));
}
