//! Ranks and baselines from the command line: `gpuwhy record` reads RANK, WORLD_SIZE and
//! LOCAL_RANK and compares with `--baseline`; `gpuwhy diagnose` prints a job report's
//! per-rank table and a report's comparison with its baseline.

use std::path::Path;

use serde_json::{json, Value};

use crate::{gpuwhy, run, scenario_with, sim, text};

fn load(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("report written")).expect("JSON")
}

#[test]
fn record_takes_the_rank_from_the_launcher_and_compares_with_a_baseline() {
    let dir = tempfile::tempdir().expect("tempdir");
    let lib = sim(dir.path(), &scenario_with("healthy", &[]));
    let record = |out: &Path, extra: &[&str]| {
        let o = run(gpuwhy()
            .env("GPUWHY_NVML_PATH", &lib)
            .envs([("RANK", "6"), ("WORLD_SIZE", "8"), ("LOCAL_RANK", "2")])
            .args(["record", "-q", "--duration", "1s", "-o"])
            .arg(out)
            .args(extra));
        assert!(o.status.success(), "{}", text(&o));
        text(&o)
    };
    let base = dir.path().join("base.json");
    record(&base, &[]);
    let b = load(&base);
    assert_eq!(
        (
            &b["run"]["rank"],
            &b["run"]["world_size"],
            &b["run"]["local_rank"]
        ),
        (&json!(6), &json!(8), &json!(2))
    );
    assert!(b.get("comparison").is_none());

    let after = dir.path().join("after.json");
    let t = record(&after, &["--baseline", base.to_str().expect("utf-8 path")]);
    assert!(
        t.contains("against "),
        "the comparison's summary is printed: {t}"
    );
    let a = load(&after);
    let c = &a["comparison"];
    assert_eq!(c["error"], Value::Null, "{c}");
    assert_eq!(c["result"]["gpus"].as_array().map(Vec::len), Some(1), "{c}");
    assert_eq!(
        c["result"]["verdict"]["baseline_top"][0], b["verdict"]["id"],
        "the baseline's verdict, re-diagnosed"
    );
    let o = run(gpuwhy().args(["diagnose", "--json"]).arg(&after));
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(
        &v["comparison"], c,
        "diagnose --json passes the comparison on"
    );
    let d = text(&run(gpuwhy().arg("diagnose").arg(&after)));
    assert!(d.contains("Against the baseline"), "{d}");
    assert!(d.contains("resolved: "), "the verdict diff: {d}");

    // A baseline that is not there: a warning, and the report all the same.
    let lost = dir.path().join("lost.json");
    let t = record(&lost, &["--baseline", "/nonexistent/base.json"]);
    assert!(t.contains("no comparison with the baseline"), "{t}");
    let l = load(&lost);
    assert_eq!(l["devices"].as_array().map(Vec::len), Some(1));
    assert!(l["comparison"]["error"]
        .as_str()
        .is_some_and(|e| e.contains("/nonexistent/base.json")));
    let d = text(&run(gpuwhy().arg("diagnose").arg(&lost)));
    assert!(d.contains("no comparison: cannot read the baseline"), "{d}");
}

/// One rank's report with step statistics: 100 steps of data + forward, on `host`.
fn rank_report(rank: u32, local: Option<u32>, host: &str, data_s: f64) -> String {
    let stats = |p50: f64| json!({"count": 100, "sum_s": 100.0 * p50, "min_s": p50, "max_s": p50, "p50_s": p50, "p95_s": p50, "p99_s": p50});
    json!({
        "schema": "gpuwhy.report/1",
        "run": {"rank": rank, "world_size": 40, "local_rank": local, "start_unix_ms": 1_795_951_320_000i64,
                "duration_s": 60.0, "host": host, "complete": true},
        "steps": {"phases": ["data", "forward"], "count": 100,
                  "stats": {"step": stats(0.3 + data_s), "data": stats(data_s), "forward": stats(0.3)}}
    })
    .to_string()
}

#[test]
fn diagnose_prints_a_job_reports_ranks_by_rank_with_the_straggler_flagged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut files = Vec::new();
    for rank in 0..40u32 {
        // Rank 33's data phase is four times the others'.
        let data = if rank == 33 { 0.2 } else { 0.05 };
        let local = (rank != 1).then_some(rank % 8);
        let p = dir.path().join(format!("rank{rank}.json"));
        std::fs::write(
            &p,
            rank_report(rank, local, &format!("node-{}", rank / 8), data),
        )
        .expect("write");
        files.push(p);
    }
    let job = dir.path().join("job.json");
    let o = run(gpuwhy().arg("merge").arg("-o").arg(&job).args(&files));
    assert!(o.status.success(), "{}", text(&o));
    // merge's own per-rank table has the local rank (`-` where none was recorded).
    let m = text(&o);
    let row = |r: u32| {
        m.lines()
            .find(|l| l.trim_start().starts_with(&format!("{r} node-")))
            .unwrap_or_else(|| panic!("rank {r} in merge's table: {m}"))
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
    };
    assert_eq!(row(9), ["9", "node-1", "1"], "{m}");
    assert_eq!(row(1), ["1", "node-0", "-"], "{m}");
    let j = load(&job);
    assert_eq!(j["ranks"]["ranks"][9]["local_rank"], 1);
    assert_eq!(j["ranks"]["ranks"][1]["local_rank"], Value::Null);

    let d = text(&run(gpuwhy().arg("diagnose").arg(&job)));
    // 40 ranks: more than are listed in full, so the first ones and the straggler.
    assert!(d.contains("Ranks (9 of 40, by rank"), "{d}");
    let rows: Vec<Vec<&str>> = d
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.len() > 2 && w[1].starts_with("node-"))
        .collect();
    let ranks: Vec<&str> = rows.iter().map(|r| r[0]).collect();
    assert_eq!(ranks, ["0", "1", "2", "3", "4", "5", "6", "7", "33"], "{d}");
    assert_eq!(
        &rows[1][..4],
        ["1", "node-0", "-", "100"],
        "no LOCAL_RANK recorded: {d}"
    );
    let straggler = d
        .lines()
        .find(|l| l.trim_start().starts_with("33 "))
        .expect("rank 33 listed");
    assert!(
        straggler.contains("node-4")
            && straggler.contains("data 0.200 s ×4.00")
            && straggler.contains("yes (data)"),
        "{straggler}"
    );
    assert!(d.contains("… 31 more ranks not listed"), "{d}");
    // As the table says, --json has every row.
    let o = run(gpuwhy().args(["diagnose", "--json"]).arg(&job));
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["ranks"].as_array().map(Vec::len), Some(40));
    assert_eq!(v["stragglers"][0]["rank"], 33);
}
