//! `gpuwhy merge RANK_REPORTS… [-o job.json] [--json] [--ranks-by-order] [--force]`: one
//! job report from the reports of a distributed job's ranks.
//!
//! The reports are read on every core, each cut down to a digest before the next is read
//! (only the columns the digest needs are parsed), so memory holds digests, not reports.

use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use anyhow::{anyhow, Context, Result};
use gpuwhy::merge::{merge, rank_list, MergeOptions, RankDigest};
use gpuwhy::report::{RanksData, Report};

/// Ranks listed one per line in the text output; larger jobs get the node table only.
const MAX_RANK_ROWS: usize = 64;

/// Arguments of `gpuwhy merge`.
#[derive(clap::Args)]
pub struct Args {
    /// One report per rank (a directory stands for the `.json` files in it)
    #[arg(required = true)]
    reports: Vec<PathBuf>,
    /// Where to write the job report
    #[arg(short, long, default_value = "gpuwhy-job.json")]
    output: PathBuf,
    /// Print the verdict, findings, stragglers and imbalance as JSON instead of text
    #[arg(long)]
    json: bool,
    /// Number the reports 0, 1, … in the order given (for reports recorded without RANK)
    #[arg(long)]
    ranks_by_order: bool,
    /// Merge even when the ranks did not record at the same time (nodes' clocks disagree)
    #[arg(long)]
    force: bool,
    /// Run the rules on every rank's samples again instead of taking the findings each
    /// report was written with (newer rules on older reports; several times slower)
    #[arg(long)]
    rediagnose: bool,
}

/// The files to read: the arguments, with each directory replaced by its `.json` files
/// (in name order, without the output itself).
fn files(args: &[PathBuf], output: &Path) -> Result<Vec<PathBuf>> {
    // The output of an earlier merge may sit in the directory, named either way.
    let written = output.canonicalize().ok();
    let is_output =
        |p: &Path| p == output || (written.is_some() && p.canonicalize().ok() == written);
    let mut out = Vec::new();
    for a in args {
        if a.is_dir() {
            let mut inside: Vec<PathBuf> = std::fs::read_dir(a)
                .with_context(|| format!("cannot list {}", a.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "json") && !is_output(p))
                .collect();
            inside.sort();
            out.extend(inside);
        } else {
            out.push(a.clone());
        }
    }
    Ok(out)
}

/// Reads and digests one rank's report; the error is one line naming the file.
fn digest(path: &Path, rediagnose: bool) -> Result<RankDigest> {
    let bytes =
        std::fs::read(path).map_err(|e| anyhow!("cannot read report {}: {e}", path.display()))?;
    RankDigest::from_slice(&bytes, &path.display().to_string(), rediagnose).map_err(|e| {
        anyhow!("{e} (leave this file out of the merge, or give that rank's `.partial` journal in its place)")
    })
}

/// Digests every file on every core, in input order; stops at the first bad file.
fn digest_all(files: &[PathBuf], rediagnose: bool) -> Result<Vec<RankDigest>> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(files.len().max(1));
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let slots: Mutex<Vec<Option<Result<RankDigest>>>> =
        Mutex::new((0..files.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                while !failed.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(f) = files.get(i) else { break };
                    let d = digest(f, rediagnose);
                    if d.is_err() {
                        failed.store(true, Ordering::Relaxed);
                    }
                    // A poisoned lock means another worker panicked; its panic is reported
                    // when the scope ends, so this one just stops.
                    let Ok(mut slots) = slots.lock() else { break };
                    slots[i] = Some(d);
                }
            });
        }
    });
    let slots = slots
        .into_inner()
        .map_err(|_| anyhow!("a worker reading the reports panicked"))?;
    // The first bad file in input order, whichever worker met it.
    slots.into_iter().flatten().collect()
}

fn phase_cols(r: &RanksData) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for x in &r.ranks {
        for p in x.steps.iter().flat_map(|s| s.phases.keys()) {
            if !names.contains(p) {
                names.push(p.clone());
            }
        }
    }
    names
}

fn text(report: &Report, out_path: &Path) -> String {
    let mut o = String::new();
    let Some(r) = &report.ranks else {
        return o;
    };
    let _ = writeln!(
        o,
        "gpuwhy merge — {} ranks on {} nodes (world size {}), from {}; starts within {:.1} s, all recording together for {:.1} s",
        r.ranks.len(),
        r.nodes.len(),
        r.world_size.map_or_else(|| "?".into(), |w| w.to_string()),
        report.run.start,
        r.start_spread_s,
        r.overlap_s
    );
    if !r.missing.is_empty() {
        let _ = writeln!(o, "missing: {}", rank_list(&r.missing));
    }
    let _ = writeln!(o, "\nVerdict: {}", report.verdict.summary);
    spread_text(&mut o, r);
    nodes_text(&mut o, r);
    if r.ranks.len() <= MAX_RANK_ROWS {
        ranks_table(&mut o, r);
    }
    if report.findings.len() > 1 {
        let _ = writeln!(o, "\nAll findings:");
        for f in &report.findings {
            let _ = writeln!(o, "  {} [{:.2}]: {}", f.id, f.confidence, f.summary);
        }
    }
    let _ = writeln!(
        o,
        "\nJob report written to {} (details: gpuwhy diagnose {})",
        out_path.display(),
        out_path.display()
    );
    o
}

/// The stragglers, and the GPUs out of step with the others.
fn spread_text(o: &mut String, r: &RanksData) {
    if !r.stragglers.is_empty() {
        let _ = writeln!(o, "\nStragglers:");
        for s in r.stragglers.iter().take(MAX_RANK_ROWS) {
            let _ = writeln!(
                o,
                "  rank {} ({}): {} p50 {:.3} s, {:.1}× the other ranks' median {:.3} s (+{:.3} s per step)",
                s.rank, s.host, s.phase, s.p50_s, s.ratio, s.others_p50_s, s.excess_s
            );
        }
    }
    if let Some(im) = &r.imbalance {
        let _ = writeln!(
            o,
            "\nGPU utilization: {} GPUs, median util_gpu p50 {:.0}%, spread {:.0} points",
            im.gpus, im.util_p50_median, im.util_p50_spread
        );
        for g in im.outliers.iter().take(10) {
            let rank = g.rank.map(|x| format!(" (rank {x})")).unwrap_or_default();
            let _ = writeln!(
                o,
                "  out of step: GPU {} of {}{rank}: {:.0}% ({:+.0} points)",
                g.index, g.host, g.util_p50, g.distance
            );
        }
    }
}

/// One line per node.
fn nodes_text(o: &mut String, r: &RanksData) {
    let _ = writeln!(o, "\nNodes:");
    for n in r.nodes.iter().take(MAX_RANK_ROWS) {
        let num = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or_else(|| "-".into(), f);
        let _ = writeln!(
            o,
            "  {:<16} {:<14} {:>2} GPUs  util p50 {:>4}  step p50 {}",
            n.host,
            rank_list(&n.ranks),
            n.gpus,
            num(n.util_p50, &|u| format!("{u:.0}%")),
            num(n.step_p50_s, &|s| format!("{s:.3} s"))
        );
    }
}

/// One line per rank: step and phase p50s, utilization and the top finding.
fn ranks_table(o: &mut String, r: &RanksData) {
    let phases = phase_cols(r);
    let mut head = format!(
        "\n  {:>4} {:<16} {:>5} {:>9}",
        "rank", "host", "local", "step p50"
    );
    for p in &phases {
        let _ = write!(head, " {:>10}", format!("{p} p50"));
    }
    let _ = writeln!(o, "{head} {:>8}  top finding", "util p50");
    for x in &r.ranks {
        let t = |v: Option<f64>| v.map_or_else(|| "-".into(), |s| format!("{s:.3} s"));
        let local = x.local_rank.map_or_else(|| "-".into(), |l| l.to_string());
        let mut line = format!(
            "  {:>4} {:<16} {:>5} {:>9}",
            x.rank,
            x.host,
            local,
            t(x.steps.as_ref().map(|s| s.step.p50_s))
        );
        for p in &phases {
            let v = x
                .steps
                .as_ref()
                .and_then(|s| s.phases.get(p))
                .map(|t| t.p50_s);
            let _ = write!(line, " {:>10}", t(v));
        }
        let util = x
            .util_p50
            .map_or_else(|| "-".into(), |u| format!("{u:.0}%"));
        let top = x.findings.first().map_or("none", |f| f.id.as_str());
        let _ = writeln!(o, "{line} {util:>8}  {top}");
    }
}

pub fn run(a: Args) -> Result<ExitCode> {
    let files = files(&a.reports, &a.output)?;
    let digests = digest_all(&files, a.rediagnose)?;
    let opts = MergeOptions {
        ranks_by_order: a.ranks_by_order,
        force: a.force,
    };
    let report = merge(digests, &opts).map_err(|e| anyhow!("{e}"))?;
    report.save(&a.output)?;
    if a.json {
        let r = report.ranks.as_ref();
        let out = serde_json::json!({
            "verdict": report.verdict,
            "findings": report.findings,
            "stragglers": r.map(|r| &r.stragglers),
            "imbalance": r.and_then(|r| r.imbalance.as_ref()),
            "nodes": r.map(|r| &r.nodes),
            "missing": r.map(|r| &r.missing),
            "output": a.output,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print!("{}", text(&report, &a.output));
    }
    Ok(ExitCode::SUCCESS)
}
