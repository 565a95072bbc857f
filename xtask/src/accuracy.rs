//! `cargo xtask accuracy [--update] [CASE...]`: every case of the accuracy corpus
//! (`tests/corpus/`, docs/accuracy.md) diagnosed, in one table — case, source, expected,
//! got, lost share, confidence, idle share, match — then one summary line. Fails when a
//! case of the committed baseline no longer matches, and, once the `unexplained_idle` rule
//! exists, when gpuwhy is silent on GPUs idle ≥ 20% of the time.
//!
//! `--update` rewrites the baseline with the cases that match now. It is for accepting
//! improvements after a rule change has been reviewed; it must never be run to make a
//! regression disappear. Naming cases runs only those (and refuses `--update`).

use anyhow::{bail, Result};
use gpuwhy_tests::corpus::{self, Baseline, Case, Got, Judgement, Origin};

/// Simulated cases recorded at once: each mostly sleeps on the simulated clock, but too
/// many sampler threads at once on a small CI machine would delay their samples. Three on
/// two cores: at six, the cases whose evidence is the timing between GPUs (a pipeline's
/// stages idling in turn, a 10 % straggler) missed about one full run in three, and a case
/// takes about 3 s of wall time, so the ~50 simulated cases still record in about a minute.
const SIM_AT_ONCE: usize = 3;

/// Runs the corpus and prints the table; errors when a case regressed.
pub fn run(args: &[String]) -> Result<()> {
    let update = args.iter().any(|a| a == "--update");
    let names: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    if let Some(bad) = args
        .iter()
        .find(|a| a.starts_with("--") && a.as_str() != "--update")
    {
        bail!("unknown option {bad}; usage: cargo xtask accuracy [--update] [CASE...]");
    }
    if update && !names.is_empty() {
        bail!("--update rewrites the whole baseline: run it without case names");
    }
    let mut cases = corpus::load().map_err(anyhow::Error::msg)?;
    if !names.is_empty() {
        if let Some(n) = names.iter().find(|n| !cases.iter().any(|c| c.name == ***n)) {
            bail!("no corpus case is named {n}");
        }
        cases.retain(|c| names.iter().any(|n| **n == c.name));
    }
    let results = diagnose_all(&cases)?;
    print_table(&cases, &results, !names.is_empty());
    let judged: Vec<(String, Judgement)> = results
        .iter()
        .map(|(c, _, j)| (c.name.clone(), j.clone()))
        .collect();
    let path = corpus::baseline_path();
    let baseline = Baseline::load(&path).map_err(anyhow::Error::msg)?;
    let silent_fail = corpus::silent_fails();
    let s = corpus::summarize(&judged, &baseline, silent_fail);
    print_summary(&s, silent_fail);
    if update {
        let matched = judged
            .iter()
            .filter(|(_, j)| j.matched)
            .map(|(n, _)| n.clone())
            .collect();
        std::fs::write(&path, Baseline { matched }.to_json())?;
        println!("accuracy: baseline rewritten ({})", path.display());
    }
    if !s.failed.is_empty() {
        bail!(
            "{} corpus case(s) failed: {}",
            s.failed.len(),
            s.failed.join(", ")
        );
    }
    Ok(())
}

type Result3<'a> = (&'a Case, Got, Judgement);

/// Real cases all at once (reading is CPU work, a few files each), then simulated ones
/// [`SIM_AT_ONCE`] at a time.
fn diagnose_all(cases: &[Case]) -> Result<Vec<Result3<'_>>> {
    let mut out = Vec::with_capacity(cases.len());
    let (sims, reals): (Vec<&Case>, Vec<&Case>) = cases
        .iter()
        .partition(|c| matches!(c.origin, Origin::Sim { .. }));
    let mut batches = vec![reals];
    batches.extend(sims.chunks(SIM_AT_ONCE).map(<[&Case]>::to_vec));
    for chunk in &batches {
        let handles: Vec<_> = chunk
            .iter()
            .map(|c| {
                let c = (*c).clone();
                std::thread::spawn(move || corpus::run(&c))
            })
            .collect();
        for (&c, h) in chunk.iter().zip(handles) {
            let got = h
                .join()
                .map_err(|_| anyhow::anyhow!("the thread recording {} panicked", c.name))?;
            let j = corpus::judge(c, &got);
            out.push((c, got, j));
        }
    }
    Ok(out)
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{:.0}%", x * 100.0))
}

fn print_table(cases: &[Case], results: &[Result3<'_>], detail: bool) {
    let col = |f: &dyn Fn(&Case) -> usize, title: &str| {
        cases.iter().map(f).max().unwrap_or(0).max(title.len())
    };
    let width = col(&|c| c.name.len(), "case");
    let src = col(&|c| c.source_label().len(), "source");
    let exp = col(&|c| c.expect.top.len(), "expected");
    println!(
        "{:<width$} {:<src$} {:<exp$} {:<18} {:>5} {:>5} {:>5}  match",
        "case", "source", "expected", "got", "lost", "conf", "idle"
    );
    for (c, got, j) in results {
        let shown = if got.error.is_some() {
            "error"
        } else {
            got.verdict.as_str()
        };
        let m = if j.matched {
            "yes".to_string()
        } else {
            format!("NO ({})", j.why)
        };
        println!(
            "{:<width$} {:<src$} {:<exp$} {:<18} {:>5} {:>5} {:>5}  {m}",
            c.name,
            c.source_label(),
            c.expect.top,
            shown,
            pct(got.lost_share),
            if got.error.is_some() {
                "-".into()
            } else {
                format!("{:.2}", got.confidence)
            },
            pct(got.idle_share),
        );
        if detail {
            println!("    findings: [{}]", got.findings.join(", "));
            if let Origin::Real { cause, format, .. } = &c.origin {
                println!("    format: {format}; cause given: {cause}");
            }
        }
    }
}

fn print_summary(s: &corpus::Summary, silent_fail: bool) {
    if !s.regressions.is_empty() {
        println!(
            "regressed (matched in the baseline): {}",
            s.regressions.join(", ")
        );
    }
    if !s.silent.is_empty() {
        println!(
            "silent on idle GPUs ({}): {}",
            if silent_fail {
                "failures"
            } else {
                "misses until unexplained_idle exists"
            },
            s.silent.join(", ")
        );
    }
    if !s.improved.is_empty() {
        println!(
            "newly matching (accept with cargo xtask accuracy --update): {}",
            s.improved.join(", ")
        );
    }
    println!(
        "accuracy: {} passed, {} failed; {} known misses{}{}",
        s.passed(),
        s.failed.len(),
        s.misses.len(),
        if s.misses.is_empty() { "" } else { ": " },
        s.misses.join(", ")
    );
}
