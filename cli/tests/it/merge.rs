//! `gpuwhy merge` on the reports of a simulated eight-rank job, and on inputs it must refuse.

use std::path::{Path, PathBuf};
use std::process::Child;

use serde_json::{json, Value};

use crate::{gpuwhy, run, text};

/// One rank's training loop on one H100: 420 ms steps, data 30 / forward 120 / backward 240 /
/// optimizer 30 ms, at twice real speed.
fn rank_scenario(rank: u32, forward_ms: f64) -> Value {
    json!({
        "name": format!("rank{rank}"),
        "description": "one rank of a data-parallel job",
        "speed": 2,
        "demo": {"duration_s": 8, "interval_ms": 100},
        "workload": {
            "jitter": 0.01,
            "noise": {"util_gpu": 1.5},
            "phases": [
                {"name": "data", "ms": 30, "levels": {"util_gpu": 20}},
                {"name": "forward", "ms": forward_ms, "levels": {"util_gpu": 97}},
                {"name": "backward", "ms": 240, "levels": {"util_gpu": 97}},
                {"name": "optimizer", "ms": 30, "levels": {"util_gpu": 97}}
            ]
        },
        "devices": [{
            "preset": "H100-SXM5-80GB",
            // Each rank drives its own physical GPU.
            "uuid": format!("GPU-0000000{rank}-1111-2222-3333-444444444444"),
            "metrics": {"power_w": {"follow": "util_gpu", "scale": [110, 640]}, "mem_used_mib": 60000}
        }]
    })
}

/// Records the eight ranks at the same time (so their wall clocks overlap, as a job's do):
/// rank 5 gets 2.5× the forward work of the others. `gpuwhy demo` does not read `RANK`, so
/// each report's rank, world size and node are filled in afterwards as `gpuwhy record` (or
/// the library) writes them from the environment: ranks 0–3 on node-a, 4–7 on node-b.
fn record_job(dir: &Path) -> Vec<PathBuf> {
    let mut children: Vec<(PathBuf, Child)> = Vec::new();
    for rank in 0..8u32 {
        let scenario = dir.join(format!("rank{rank}.scenario.json"));
        let forward = if rank == 5 { 300.0 } else { 120.0 };
        std::fs::write(&scenario, rank_scenario(rank, forward).to_string()).expect("write");
        let out = dir.join(format!("rank{rank}.json"));
        let child = gpuwhy()
            .arg("demo")
            .arg(&scenario)
            .args(["-q", "-o"])
            .arg(&out)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("gpuwhy demo starts");
        children.push((out, child));
    }
    let mut outs = Vec::new();
    for (rank, (out, child)) in children.into_iter().enumerate() {
        let o = child.wait_with_output().expect("wait");
        assert!(
            o.status.success(),
            "rank {rank} demo: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let mut v: Value =
            serde_json::from_slice(&std::fs::read(&out).expect("read")).expect("JSON");
        v["run"]["rank"] = json!(rank);
        v["run"]["world_size"] = json!(8);
        v["run"]["host"] = json!(if rank < 4 { "node-a" } else { "node-b" });
        std::fs::write(&out, v.to_string()).expect("write");
        outs.push(out);
    }
    outs
}

#[test]
fn eight_ranks_with_one_straggler_name_the_rank_and_the_phase() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ranks = record_job(dir.path());
    let job = dir.path().join("job.json");
    let o = run(gpuwhy()
        .args(["merge", "--json", "-o"])
        .arg(&job)
        .args(&ranks));
    assert!(o.status.success(), "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let stragglers = v["stragglers"].as_array().expect("list");
    assert_eq!(stragglers.len(), 1, "only rank 5 is slow: {stragglers:?}");
    let s = &stragglers[0];
    assert_eq!(
        (s["rank"].as_u64(), s["phase"].as_str()),
        (Some(5), Some("forward")),
        "{s}"
    );
    assert_eq!(s["host"], "node-b");
    let ratio = s["ratio"].as_f64().expect("ratio");
    assert!(
        (2.0..3.0).contains(&ratio),
        "forward 300 ms against 120 ms: {ratio}"
    );
    assert_eq!(v["verdict"]["id"], "rank_imbalance", "{}", v["verdict"]);
    let summary = v["verdict"]["summary"].as_str().expect("text");
    assert!(
        summary.contains("rank 5 (node-b): forward phase p50"),
        "{summary}"
    );
    assert_eq!(v["missing"], json!([]));
    let nodes = v["nodes"].as_array().expect("list");
    assert_eq!(nodes.len(), 2);
    assert_eq!(nodes[1]["ranks"], json!([4, 5, 6, 7]));
    assert_eq!(nodes[1]["gpus"], 4, "one GPU per rank, told apart by UUID");

    // The job report is a report: lined up by wall clock, and read again by diagnose, which
    // re-derives the same verdict from the per-rank rows.
    let doc: Value = serde_json::from_slice(&std::fs::read(&job).expect("read")).expect("JSON");
    assert_eq!(doc["schema"], "gpuwhy.report/1");
    assert_eq!(doc["run"]["source"], "merged");
    let rows = doc["ranks"]["ranks"].as_array().expect("rows");
    assert_eq!(rows.len(), 8);
    for r in rows {
        let offset = r["offset_s"].as_f64().expect("offset");
        assert!((0.0..5.0).contains(&offset), "started together: {r}");
    }
    assert!(doc["ranks"]["overlap_s"].as_f64().expect("overlap") > 4.0);
    let d = run(gpuwhy().args(["diagnose", "--json"]).arg(&job));
    assert!(d.status.success(), "{}", text(&d));
    let back: Value = serde_json::from_slice(&d.stdout).expect("JSON");
    assert_eq!(back["verdict"], v["verdict"]);

    // Reading only the columns a digest needs gives what reading whole reports and running
    // the rules again gives.
    let full = dir.path().join("job-full.json");
    let o = run(gpuwhy()
        .args(["merge", "--rediagnose", "-o"])
        .arg(&full)
        .args(&ranks));
    assert!(o.status.success(), "{}", text(&o));
    let full: Value = serde_json::from_slice(&std::fs::read(&full).expect("read")).expect("JSON");
    assert_eq!(full["ranks"], doc["ranks"]);
    assert_eq!(full["verdict"], doc["verdict"]);

    // The text form names the straggler too.
    let t = text(&run(gpuwhy()
        .args(["merge", "-o"])
        .arg(dir.path().join("job2.json"))
        .args(&ranks)));
    assert!(t.contains("rank 5 (node-b): forward p50"), "{t}");

    // And `gpuwhy view` embeds it in the page like any report.
    let page = dir.path().join("page.html");
    std::fs::write(
        &page,
        "<html>@@GPUWHY_NAME@@<script>@@GPUWHY_REPORT@@</script>",
    )
    .expect("w");
    let html = dir.path().join("job.html");
    let o = run(gpuwhy()
        .env("GPUWHY_VIEWER_PAGE", &page)
        .arg("view")
        .arg(&job)
        .arg("-o")
        .arg(&html));
    assert!(o.status.success(), "{}", text(&o));
    assert!(std::fs::read_to_string(&html)
        .expect("page")
        .contains("rank_imbalance"));
}

/// A minimal report of one rank.
fn report(rank: Option<u32>, world: u32, start_ms: i64) -> String {
    json!({
        "schema": "gpuwhy.report/1",
        "run": {"rank": rank, "world_size": world, "start_unix_ms": start_ms, "duration_s": 60.0, "host": "n"}
    })
    .to_string()
}

/// Runs `gpuwhy merge` on files with the given contents; returns (success, stderr).
fn merge(dir: &Path, files: &[(&str, String)], extra: &[&str]) -> (bool, String) {
    let paths: Vec<PathBuf> = files
        .iter()
        .map(|(name, body)| {
            let p = dir.join(name);
            std::fs::write(&p, body).expect("write");
            p
        })
        .collect();
    let o = run(gpuwhy()
        .arg("merge")
        .args(extra)
        .arg("-o")
        .arg(dir.join("out.json"))
        .args(&paths));
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// What goes wrong, the files (name, contents), and what the error must say.
type Case<'a> = (&'a str, Vec<(&'a str, String)>, &'a [&'a str]);

#[test]
fn bad_inputs_get_one_line_naming_the_file_and_what_to_do() {
    let dir = tempfile::tempdir().expect("tempdir");
    let t0 = 1_795_951_320_000;
    let good = report(Some(0), 2, t0);
    let truncated = report(Some(1), 2, t0)[..40].to_string();
    let cases: [Case; 6] = [
        (
            "cut short",
            vec![("r0.json", good.clone()), ("r1.json", truncated)],
            &["r1.json", "leave this file out"],
        ),
        (
            "not a report",
            vec![
                ("r0.json", good.clone()),
                ("notes.json", "{\"a\": 1}".into()),
            ],
            &["notes.json", "not a gpuwhy report"],
        ),
        (
            "duplicate rank",
            vec![("a.json", good.clone()), ("b.json", good.clone())],
            &["b.json", "is rank 0, and so is", "a.json", "own report"],
        ),
        (
            "mixed jobs",
            vec![
                ("r0.json", good.clone()),
                ("r1.json", report(Some(1), 4, t0)),
            ],
            &["r1.json", "WORLD_SIZE=4", "different jobs"],
        ),
        (
            "another run",
            vec![
                ("r0.json", good.clone()),
                ("r1.json", report(Some(1), 2, t0 + 3_600_000)),
            ],
            &["r1.json", "different runs", "--force"],
        ),
        (
            "no rank",
            vec![("r0.json", good.clone()), ("x.json", report(None, 2, t0))],
            &["x.json", "no rank", "--ranks-by-order"],
        ),
    ];
    for (what, files, expect) in cases {
        let (ok, err) = merge(dir.path(), &files, &[]);
        assert!(!ok, "{what}: merged anyway");
        assert_eq!(err.trim().lines().count(), 1, "{what}: one line: {err}");
        for e in expect {
            assert!(err.contains(e), "{what}: no '{e}' in: {err}");
        }
    }
    // Reports without ranks merge when numbered by order.
    let files = [
        ("x.json", report(None, 2, t0)),
        ("y.json", report(None, 2, t0)),
    ];
    let (ok, err) = merge(dir.path(), &files, &["--ranks-by-order"]);
    assert!(ok, "{err}");

    // A directory stands for its reports; the job report written there before is not one.
    let ranks = dir.path().join("ranks");
    std::fs::create_dir(&ranks).expect("mkdir");
    for r in 0..2 {
        std::fs::write(ranks.join(format!("r{r}.json")), report(Some(r), 2, t0)).expect("w");
    }
    for _ in 0..2 {
        let o = run(gpuwhy()
            .arg("merge")
            .arg(&ranks)
            .arg("-o")
            .arg(ranks.join(".").join("job.json")));
        assert!(o.status.success(), "{}", text(&o));
        assert!(text(&o).contains("2 ranks"), "{}", text(&o));
    }
}
