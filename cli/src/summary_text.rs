//! `gpuwhy summary` as text: one line per run, the files that could not be read, the
//! totals, and the changes tried. Text from reports (labels, hosts, file names) reaches a
//! terminal: control characters in it are shown as `?`, so a report cannot move the
//! cursor or set the terminal's title.

use std::fmt::Write;

use gpuwhy::summary::{Fix, FixVia, Group, RunRow, Summary};

/// Characters a label or host is cut to in the run table.
const COLUMN: usize = 24;

/// `s` with control characters (escape sequences included) replaced by `?`.
pub fn terminal_safe(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// `s` made terminal-safe and cut to `n` characters (with `…`).
fn cell(s: &str, n: usize) -> String {
    let s = terminal_safe(s);
    if s.chars().count() <= n {
        return s;
    }
    let mut out: String = s.chars().take(n - 1).collect();
    out.push('…');
    out
}

fn share(s: Option<f64>) -> String {
    s.map_or_else(|| "—".into(), |s| format!("{:.0}%", s * 100.0))
}

/// `1h 05m`, `12m 30s`, `45s`.
fn duration(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, s % 3600 / 60),
    }
}

/// `2026-11-29 11:22` from the run's start.
fn start(r: &RunRow) -> String {
    let text = if r.start.is_empty() {
        gpuwhy::report::rfc3339_utc(r.start_unix_ms)
    } else {
        r.start.clone()
    };
    cell(
        &text
            .replacen('T', " ", 1)
            .chars()
            .take(16)
            .collect::<String>(),
        16,
    )
}

/// The whole text.
pub fn text(s: &Summary) -> String {
    let mut o = String::new();
    let t = &s.totals;
    let pct = if t.gpu_hours > 0.0 {
        t.gpu_hours_lost / t.gpu_hours * 100.0
    } else {
        0.0
    };
    let _ = writeln!(
        o,
        "gpuwhy summary — {} runs ({} counted), {} unreadable; {:.1} GPU-hours, {:.1} lost ({pct:.0}%)\n",
        t.runs,
        t.counted,
        s.unreadable.len(),
        t.gpu_hours,
        t.gpu_hours_lost
    );
    runs(&mut o, s);
    if !s.unreadable.is_empty() {
        let _ = writeln!(o, "\nNot read ({}):", s.unreadable.len());
        for u in &s.unreadable {
            let _ = writeln!(
                o,
                "  {}: {}",
                terminal_safe(&u.file),
                terminal_safe(&u.reason)
            );
        }
    }
    for (title, groups) in [
        ("GPU-hours lost by cause", &t.by_cause),
        ("by label", &t.by_label),
        ("by host", &t.by_host),
        ("by GPU model", &t.by_model),
    ] {
        total(&mut o, title, groups);
    }
    fixes(&mut o, &s.fixes);
    o
}

fn runs(o: &mut String, s: &Summary) {
    let _ = writeln!(
        o,
        "{:<16}  {:<COLUMN$}  {:<16}  {:>8}  {:>4}  {:<22}  {:>5}  {:>5}  {:>10}  file",
        "start", "label", "host", "duration", "GPUs", "verdict", "lost", "conf", "GPU-h lost"
    );
    for r in &s.runs {
        let mut verdict = cell(&r.verdict, 22);
        if !r.complete {
            verdict = cell(&format!("{verdict} (cut)"), 22);
        }
        let _ = write!(
            o,
            "{:<16}  {:<COLUMN$}  {:<16}  {:>8}  {:>4}  {:<22}  {:>5}  {:>5.2}  {:>10.2}  {}",
            start(r),
            cell(r.label.as_deref().unwrap_or("—"), COLUMN),
            cell(&r.host, 16),
            duration(r.duration_s),
            r.gpus,
            verdict,
            share(r.lost_share),
            r.confidence,
            r.gpu_hours_lost,
            terminal_safe(&r.file)
        );
        if let Some(job) = &r.in_job {
            let _ = write!(o, "  (a rank of {}: not counted again)", terminal_safe(job));
        }
        o.push('\n');
    }
}

fn total(o: &mut String, title: &str, groups: &[Group]) {
    let _ = writeln!(o, "\n{title}:");
    for g in groups {
        let _ = writeln!(
            o,
            "  {:<32}  {:>9.2} of {:>9.2} GPU-h  ({} runs)",
            cell(&g.key, 32),
            g.gpu_hours_lost,
            g.gpu_hours,
            g.runs
        );
    }
}

fn fixes(o: &mut String, fixes: &[Fix]) {
    if fixes.is_empty() {
        return;
    }
    let _ = writeln!(o, "\nChanges tried ({}):", fixes.len());
    for f in fixes {
        let via = match f.via {
            FixVia::Baseline => "baseline",
            FixVia::Label => "same label",
        };
        let before = f.before.as_deref().unwrap_or(&f.before_path);
        let was = match &f.before_verdict {
            Some(v) => format!("{} {}", terminal_safe(v), share(f.before_lost_share)),
            None => "(baseline not among these reports)".into(),
        };
        let _ = writeln!(
            o,
            "  {} → {} [{via}]: {was} → {} {}: {}",
            terminal_safe(before),
            terminal_safe(&f.after),
            terminal_safe(&f.after_verdict),
            share(f.after_lost_share),
            f.outcome
        );
        let mut line = terminal_safe(&f.summary);
        if f.experiments_held + f.experiments_not_held > 0 {
            let _ = write!(
                line,
                "; experiments: {} held, {} did not",
                f.experiments_held, f.experiments_not_held
            );
        }
        let _ = writeln!(o, "      {line}");
    }
}
