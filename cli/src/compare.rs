//! `gpuwhy compare BASELINE CANDIDATE [--json] [--force]`.

use std::fmt::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, Result};
use gpuwhy::analysis::diagnose;
use gpuwhy::compare::{compare, Change, Comparison, GpuChange, Outcome, StepChange};
use gpuwhy::report::Report;

/// Arguments of `gpuwhy compare`.
#[derive(clap::Args)]
pub struct Args {
    /// The baseline report
    baseline: PathBuf,
    /// The candidate report (the same job with one change)
    candidate: PathBuf,
    /// Print JSON
    #[arg(long)]
    json: bool,
    /// Compare even if the runs used different GPUs
    #[arg(long)]
    force: bool,
}

fn pct(c: &Change) -> String {
    c.relative
        .map_or_else(|| "n/a".into(), |r| format!("{:+.1}%", r * 100.0))
}

fn text(c: &Comparison) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "gpuwhy compare — {} → {}", c.labels.0, c.labels.1);
    if let Some(w) = &c.forced_despite {
        let _ = writeln!(o, "warning: compared although {w}");
    }
    let _ = writeln!(o, "\n{}", c.summary);
    if let Some(s) = &c.steps {
        steps_text(&mut o, s);
    }
    for g in &c.gpus {
        let _ = writeln!(o, "{}", gpu_line(g));
    }
    findings_text(&mut o, c);
    o
}

/// Step time, throughput, the significance test and each phase, before → after.
fn steps_text(o: &mut String, s: &StepChange) {
    let _ = writeln!(o, "\nStep time:");
    for (n, ch) in [("p50", &s.p50_s), ("p95", &s.p95_s), ("p99", &s.p99_s)] {
        let _ = writeln!(
            o,
            "  {n}: {:.4} s → {:.4} s ({})",
            ch.baseline,
            ch.candidate,
            pct(ch)
        );
    }
    let _ = writeln!(
        o,
        "  throughput: {:.2} → {:.2} steps/s ({})",
        s.throughput.baseline,
        s.throughput.candidate,
        pct(&s.throughput)
    );
    match s.test {
        Some(t) => {
            let _ = writeln!(
                o,
                "  Mann–Whitney U: z = {:.2}, p = {:.3e} → {}",
                t.z,
                t.p,
                if t.significant {
                    "significant"
                } else {
                    "not significant"
                }
            );
        }
        None => {
            let _ = writeln!(o, "  too few steps for a test");
        }
    }
    for (name, ch) in &s.phases {
        let _ = writeln!(
            o,
            "  phase {name} p50: {:.4} s → {:.4} s ({})",
            ch.baseline,
            ch.candidate,
            pct(ch)
        );
    }
}

/// One GPU's utilization, power and clock, before → after.
fn gpu_line(g: &GpuChange) -> String {
    let mut parts = Vec::new();
    if let Some(u) = &g.util_p50 {
        let sig = g.util_test.map_or("", |t| {
            if t.significant {
                ", significant"
            } else {
                ", not significant"
            }
        });
        parts.push(format!(
            "util p50 {:.0}% → {:.0}%{sig}",
            u.baseline, u.candidate
        ));
    }
    if let Some(p) = &g.power_p50 {
        parts.push(format!(
            "power p50 {:.0} W → {:.0} W",
            p.baseline, p.candidate
        ));
    }
    if let Some(s) = &g.sm_clock_p50 {
        parts.push(format!(
            "SM clock p50 under load {:.0} → {:.0} MHz",
            s.baseline, s.candidate
        ));
    }
    format!("GPU {}: {}", g.index, parts.join(", "))
}

/// Findings resolved, new and still there, and whether each experiment held.
fn findings_text(o: &mut String, c: &Comparison) {
    let v = &c.verdict;
    let _ = writeln!(
        o,
        "\nFindings: resolved [{}], new [{}]",
        v.resolved.join(", "),
        v.new.join(", ")
    );
    for (id, a, b) in &v.persisting {
        let _ = writeln!(o, "  still there: {id} {a:.2} → {b:.2}");
    }
    if !c.experiments.is_empty() {
        let _ = writeln!(o, "\nDid each finding's experiment hold?");
        for e in &c.experiments {
            let val = |x: Option<f64>| x.map_or_else(|| "-".into(), |v| format!("{v:.3}"));
            let out = match e.outcome {
                Outcome::Held => "held",
                Outcome::NotHeld => "did NOT hold",
                Outcome::Unknown => "cannot tell",
            };
            let _ = writeln!(
                o,
                "  {}: {} expected {}: {} → {}: {out}",
                e.finding,
                e.metric,
                e.expected,
                val(e.baseline),
                val(e.candidate)
            );
        }
    }
}

pub fn run(a: Args) -> Result<ExitCode> {
    let mut base = Report::load(&a.baseline)?;
    let mut cand = Report::load(&a.candidate)?;
    diagnose(&mut base);
    diagnose(&mut cand);
    let c = compare(&base, &cand, a.force).map_err(|e| anyhow!(e))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&c)?);
    } else {
        print!("{}", text(&c));
    }
    Ok(ExitCode::SUCCESS)
}
