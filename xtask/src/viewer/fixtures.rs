//! The viewer's test and benchmark inputs: the browser tests' reports (a demo, a hostile
//! one, invalid and foreign files, two runs to compare) and a synthetic long report.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use gpuwhy::report::{Column, PhaseStats, Report, StepsData, SCHEMA};
use serde_json::Value;

use super::out_dir;
use crate::{cargo, root, run_cmd};

/// The `gpuwhy` binary built by the test command's `cargo build`.
pub(super) fn gpuwhy_bin() -> Result<PathBuf> {
    run_cmd(cargo().args(["build", "-q", "-p", "gpuwhy-cli"]))?;
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), PathBuf::from);
    Ok(target.join("debug").join("gpuwhy"))
}

/// Writes the browser tests' reports into `dir`: a demo report of several GPUs with
/// steps, one whose every text is an attack (its `ranks` too), an invalid file, a future
/// schema, JSON that is not a report, single-file pages of the first two made by
/// `gpuwhy view`, and a merged job report (`job.json`).
pub(super) fn fixtures(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let bin = gpuwhy_bin()?;
    let demo = dir.join("demo-raw.json");
    run_cmd(
        Command::new(&bin)
            .args(["demo", "straggler_8gpu", "--quiet", "--duration", "8", "-o"])
            .arg(&demo),
    )?;
    let mut report = Report::load(&demo)?;
    if report.steps.is_none() {
        report.steps = Some(synthetic_steps(report.run.duration_s.max(1.0)));
    }
    // A session's comparison with its baseline, borrowed from the comparison fixtures (a
    // starved run and its fix), so that the page shows its section under the verdict.
    compare_fixtures(&bin, dir)?;
    let result: Value = serde_json::from_slice(&std::fs::read(dir.join("compare.json"))?)?;
    report.comparison = Some(serde_json::from_value(serde_json::json!({
        "baseline": "starved.json",
        "result": result,
        "error": null,
    }))?);
    let demo_json = dir.join("demo.json");
    report.save(&demo_json)?;
    report.save(&dir.join("demo.json.gz"))?;

    let mut v: Value = serde_json::from_str(&report.to_json())?;
    // A job report's per-rank section, so that its hosts and phase names are attacks too.
    v["ranks"] = job_fixture(&bin, dir)?["ranks"].take();
    // The comparison's step and GPU changes are not shown, and their `phases` (a list of
    // pairs) would have their field names poisoned like a rank's map of phases.
    v["comparison"]["result"]["steps"] = Value::Null;
    v["comparison"]["result"]["gpus"] = Value::Array(Vec::new());
    poison(&mut v, None);
    std::fs::write(dir.join("hostile.json"), serde_json::to_string(&v)?)?;
    std::fs::write(
        dir.join("invalid.json"),
        "{\"schema\": \"gpuwhy.report/1\", \"run\": ",
    )?;
    std::fs::write(
        dir.join("future.json"),
        r#"{"schema":"gpuwhy.report/2.0","verdict":{"id":"x","title":"t","confidence":1,"summary":"s"}}"#,
    )?;
    std::fs::write(dir.join("not-report.json"), r#"{"hello":"world"}"#)?;
    for name in ["demo", "hostile"] {
        run_cmd(
            Command::new(&bin)
                .arg("view")
                .arg(dir.join(format!("{name}.json")))
                .arg("-o")
                .arg(dir.join(format!("{name}.html")))
                .env("GPUWHY_VIEWER_PAGE", out_dir().join("gpuwhy-viewer.html")),
        )?;
    }
    Ok(())
}

/// A merged job report (`job.json`) of seven ranks of a world of eight on two nodes: rank 6
/// sent no report, rank 3's data phase is four times the others', rank 1 recorded no local
/// rank. Made by `gpuwhy merge` from small rank reports with step statistics.
fn job_fixture(bin: &Path, dir: &Path) -> Result<Value> {
    let ranks_dir = dir.join("job-ranks");
    std::fs::create_dir_all(&ranks_dir)?;
    let stats = |p50: f64| {
        serde_json::json!({"count": 100, "sum_s": 100.0 * p50, "min_s": p50, "max_s": p50,
                           "p50_s": p50, "p95_s": p50, "p99_s": p50})
    };
    let mut files = Vec::new();
    for rank in (0..8u32).filter(|r| *r != 6) {
        let data = if rank == 3 { 0.2 } else { 0.05 };
        let local = (rank != 1).then_some(rank % 4);
        let report = serde_json::json!({
            "schema": SCHEMA,
            "run": {"rank": rank, "world_size": 8, "local_rank": local,
                    "start_unix_ms": 1_795_951_320_000i64, "duration_s": 60.0,
                    "host": format!("node-{}", rank / 4), "complete": true},
            "steps": {"phases": ["data", "forward"], "count": 100,
                      "stats": {"step": stats(0.3 + data), "data": stats(data),
                                "forward": stats(0.3)}}
        });
        let p = ranks_dir.join(format!("rank{rank}.json"));
        std::fs::write(&p, report.to_string())?;
        files.push(p);
    }
    let job = dir.join("job.json");
    run_cmd(
        Command::new(bin)
            .arg("merge")
            .arg("-o")
            .arg(&job)
            .args(&files),
    )?;
    Ok(serde_json::from_str(&std::fs::read_to_string(&job)?)?)
}

/// Two runs to compare: a data-starved demo run (`starved.json`) and the same job
/// with its data phase cut from 450 to 30 ms (`fixed.json`); what `gpuwhy compare` says of
/// them (`compare.json`), and the single file `gpuwhy view --compare` makes (`compare.html`).
fn compare_fixtures(bin: &Path, dir: &Path) -> Result<()> {
    let starved = root().join("sim/scenarios/data_starvation.json");
    let mut fixed: Value = serde_json::from_str(&std::fs::read_to_string(&starved)?)?;
    fixed["name"] = "data_starvation_fixed".into();
    fixed["workload"]["phases"][0]["ms"] = 30.into();
    fixed["expect"] = serde_json::json!({"top_finding": "none", "also": [], "absent": []});
    let fixed_scenario = dir.join("fixed-scenario.json");
    std::fs::write(&fixed_scenario, fixed.to_string())?;
    for (name, scenario) in [("starved", &starved), ("fixed", &fixed_scenario)] {
        run_cmd(
            Command::new(bin)
                .arg("demo")
                .arg(scenario)
                .args(["--quiet", "--duration", "8", "-o"])
                .arg(dir.join(format!("{name}.json"))),
        )?;
    }
    let out = Command::new(bin)
        .args(["compare", "--json"])
        .arg(dir.join("starved.json"))
        .arg(dir.join("fixed.json"))
        .output()
        .context("cannot run gpuwhy compare")?;
    if !out.status.success() {
        bail!(
            "gpuwhy compare failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::fs::write(dir.join("compare.json"), &out.stdout)?;
    run_cmd(
        Command::new(bin)
            .arg("view")
            .arg(dir.join("starved.json"))
            .arg("--compare")
            .arg(dir.join("fixed.json"))
            .arg("-o")
            .arg(dir.join("compare.html"))
            .env("GPUWHY_VIEWER_PAGE", out_dir().join("gpuwhy-viewer.html")),
    )
}

/// The text every string of the hostile report carries: markup that would run script if
/// it were ever parsed as HTML, and a script-element breakout.
pub const PAYLOAD: &str =
    "<img src=x onerror=\"window.__gpuwhyPwned=1\"></script><script>window.__gpuwhyPwned=2</script>";

/// Replaces every string (and map key) of a report with [`PAYLOAD`], except the ones that
/// must stay valid for it to be read at all: the schema and the enum values (an
/// experiment's `outcome` among them).
fn poison(v: &mut Value, key: Option<&str>) {
    match v {
        Value::String(s)
            if !matches!(
                key,
                Some("schema" | "severity" | "cost" | "outcome" | "method")
            ) =>
        {
            *s = format!("{PAYLOAD} {s}");
        }
        Value::Array(a) => a.iter_mut().for_each(|x| poison(x, key)),
        Value::Object(m) => {
            let entries = std::mem::take(m);
            for (k, mut x) in entries {
                poison(&mut x, Some(&k));
                // Keys of free-form maps (capabilities, host units, a rank's phases) become
                // payloads too.
                let k = if matches!(
                    key,
                    Some("capabilities" | "units" | "unavailable" | "symbols" | "phases")
                ) {
                    format!("{PAYLOAD}{k}")
                } else {
                    k
                };
                m.insert(k, x);
            }
        }
        _ => {}
    }
}

/// Step timings with four phases and a slow step every tenth, for reports without markers.
pub fn synthetic_steps(duration_s: f64) -> StepsData {
    let phases = ["data", "forward", "backward", "optimizer"];
    let mut t = Vec::new();
    let mut dur = Vec::new();
    let mut per: BTreeMap<String, Vec<f32>> = BTreeMap::new();
    let mut now = 0.0;
    let mut i = 0u32;
    while now < duration_s {
        let slow = i % 10 == 9;
        let parts = [if slow { 0.30 } else { 0.04 }, 0.05, 0.09, 0.02];
        let d: f32 = parts.iter().sum::<f32>() * (1.0 + 0.05 * ((i % 7) as f32 / 7.0));
        t.push(now);
        dur.push(d);
        for (p, v) in phases.iter().zip(parts) {
            per.entry(p.to_string()).or_default().push(v);
        }
        now += d as f64;
        i += 1;
    }
    let stats_of = |v: &[f32]| {
        let mut s = v.to_vec();
        s.sort_by(f32::total_cmp);
        let q = |p: f64| s[((s.len() - 1) as f64 * p).round() as usize] as f64;
        PhaseStats {
            count: s.len() as u64,
            sum_s: s.iter().map(|x| *x as f64).sum(),
            min_s: q(0.0),
            max_s: q(1.0),
            p50_s: q(0.5),
            p95_s: q(0.95),
            p99_s: q(0.99),
        }
    };
    let mut stats = BTreeMap::new();
    stats.insert("step".to_string(), stats_of(&dur));
    for (p, v) in &per {
        stats.insert(p.clone(), stats_of(v));
    }
    StepsData {
        phases: phases.iter().map(|p| p.to_string()).collect(),
        count: t.len() as u64,
        exact_steps: t.len() as u64,
        t,
        duration: Column(dur),
        phase_durations: per.into_iter().map(|(k, v)| (k, Column(v))).collect(),
        stats,
        ..StepsData::default()
    }
}
