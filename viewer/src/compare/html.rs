//! The comparison as text: which runs, the verdict diff, the findings before and after, step
//! times and per-GPU medians, each with its change. Every string from a report is escaped.

use gpuwhy::compare::{Change, MannWhitney};

use super::{gpu_pairs, Diff};
use crate::chart::compare::{histograms_svg, utilization_svg};
use crate::chart::ChartError;
use crate::format::{duration, sig};
use crate::page::{row, Html};
use crate::theme::Theme;
use crate::view::View;

/// `+12.5%`, or `—` when the baseline is 0 or a value is missing.
pub fn relative(c: &Change) -> String {
    match c.relative {
        Some(r) if r.is_finite() => format!("{:+.1}%", r * 100.0),
        _ => "—".into(),
    }
}

fn test_text(t: Option<MannWhitney>) -> String {
    match t {
        Some(t) if t.significant => format!("significant (p = {:.1e})", t.p),
        Some(t) => format!("not significant (p = {:.2})", t.p),
        None => "too few samples for a test".into(),
    }
}

fn change_row(h: &mut Html, name: &str, c: &Change, fmt: impl Fn(f64) -> String) {
    row(
        h,
        &[name, &fmt(c.baseline), &fmt(c.candidate), &relative(c)],
    );
}

fn head(h: &mut Html, cols: &[&str]) {
    h.raw("<thead><tr>");
    for c in cols {
        h.elem("th scope=\"col\"", c);
    }
    h.raw("</tr></thead>");
}

fn findings(h: &mut Html, d: &Diff) {
    let v = &d.verdict;
    h.elem("h3", "Findings");
    if v.resolved.is_empty() && v.new.is_empty() && v.persisting.is_empty() {
        h.elem("p class=\"note\"", "Neither run has a finding.");
        return;
    }
    h.raw("<table class=\"compare-findings\">");
    head(h, &["Finding", "Baseline", "Candidate", "Now"]);
    h.raw("<tbody>");
    let conf = |id: &str, top: &(String, f64), c: f64| {
        let s = sig(c, 2);
        if top.0 == id {
            format!("{s} (top)")
        } else {
            s
        }
    };
    for (id, a, b) in &v.persisting {
        let (x, y) = (
            conf(id, &v.baseline_top, *a),
            conf(id, &v.candidate_top, *b),
        );
        row(h, &[id, &x, &y, "still there"]);
    }
    // Only the top findings' confidences are in the diff; others are named.
    let top_or_present = |id: &str, top: &(String, f64)| {
        if top.0 == id {
            format!("{} (top)", sig(top.1, 2))
        } else {
            "present".into()
        }
    };
    for id in &v.resolved {
        let a = top_or_present(id, &v.baseline_top);
        row(h, &[id, &a, "—", "resolved"]);
    }
    for id in &v.new {
        let b = top_or_present(id, &v.candidate_top);
        row(h, &[id, "—", &b, "new"]);
    }
    h.raw("</tbody></table>");
}

fn steps(h: &mut Html, d: &Diff) {
    h.elem("h3", "Step time");
    let Some(s) = &d.steps else {
        h.elem(
            "p class=\"note\"",
            "Not compared: one of the runs has no step timings.",
        );
        return;
    };
    h.raw("<table class=\"compare-steps\">");
    head(h, &["", "Baseline", "Candidate", "Change"]);
    h.raw("<tbody>");
    change_row(h, "p50", &s.p50_s, duration);
    change_row(h, "p95", &s.p95_s, duration);
    change_row(h, "p99", &s.p99_s, duration);
    change_row(h, "Throughput", &s.throughput, |v| {
        format!("{} steps/s", sig(v, 3))
    });
    for (name, c) in &s.phases {
        change_row(h, &format!("Phase {name} p50"), c, duration);
    }
    h.raw("</tbody></table>");
    h.elem(
        "p class=\"compare-test\"",
        &format!("Per-step durations, Mann–Whitney U: {}.", test_text(s.test)),
    );
}

fn gpus(h: &mut Html, d: &Diff) {
    if d.gpus.is_empty() {
        return;
    }
    h.elem("h3", "GPUs");
    h.raw("<table class=\"compare-gpus\">");
    head(
        h,
        &["GPU", "Utilization p50", "Change", "Test", "Power p50"],
    );
    h.raw("<tbody>");
    for g in &d.gpus {
        let pct = |v: f64| format!("{}%", sig(v, 3));
        let watts = |v: f64| format!("{} W", sig(v, 3));
        let (u, uc) = g.util_p50.as_ref().map_or(("—".into(), "—".into()), |c| {
            (
                format!("{} → {}", pct(c.baseline), pct(c.candidate)),
                relative(c),
            )
        });
        let p = g.power_p50.as_ref().map_or("—".into(), |c| {
            format!(
                "{} → {} ({})",
                watts(c.baseline),
                watts(c.candidate),
                relative(c)
            )
        });
        row(
            h,
            &[
                &format!("GPU {}", g.index),
                &u,
                &uc,
                &test_text(g.util_test),
                &p,
            ],
        );
    }
    h.raw("</tbody></table>");
}

/// The comparison section's text: the runs (`names` are the file names the page opened),
/// the verdict diff, findings, step times and per-GPU medians.
pub fn section_html(d: &Diff, names: (&str, &str)) -> String {
    let mut h = Html::new();
    h.raw("<dl class=\"compare-runs\">");
    h.elem("dt", "Baseline")
        .elem("dd", &format!("{} ({})", d.labels.0, names.0));
    h.elem("dt", "Candidate")
        .elem("dd", &format!("{} ({})", d.labels.1, names.1));
    h.raw("</dl>");
    if let Some(why) = &d.incomparable {
        h.elem(
            "p class=\"compare-warning\" role=\"note\"",
            &format!(
                "These runs are not strictly comparable: {why}. `gpuwhy compare` refuses them \
                 unless forced; read the differences below with that in mind."
            ),
        );
    }
    h.elem("p class=\"compare-summary\"", &d.summary);
    findings(&mut h, d);
    steps(&mut h, d);
    gpus(&mut h, d);
    h.elem(
        "p class=\"note\"",
        "Whether each finding's confirming experiment held, and SM clocks under load, are \
         not computed in the page: run `gpuwhy compare BASELINE CANDIDATE`.",
    );
    h.finish()
}

/// A chart as a figure: its caption and text alternative (escaped), and its SVG.
fn figure(h: &mut Html, class: &str, caption: &str, label: &str, svg: &str) {
    h.raw("<figure class=\"compare-chart ")
        .raw(class)
        .raw("\"><figcaption>")
        .text(caption)
        .raw("</figcaption><div class=\"plot static\" role=\"img\" aria-label=\"")
        .text(label)
        .raw("\">")
        .raw(svg)
        .raw("</div></figure>");
}

/// The whole comparison of `a` (baseline) with `b` (candidate) for the page: the text
/// ([`section_html`]; `names` are the file names), both runs' step-time histograms, and one
/// chart per GPU of its utilization in both runs, `width` pixels wide.
pub fn section(
    a: &View,
    b: &View,
    names: (&str, &str),
    width: u32,
    theme: &Theme,
) -> Result<String, ChartError> {
    let mut h = Html::new();
    h.raw(&section_html(&Diff::of(a, b), names));
    if let Some(svg) = histograms_svg(a, b, width, theme)? {
        figure(
            &mut h,
            "compare-hist",
            "Step time: baseline and candidate",
            "Step-time histograms of both runs, as shares of each run's steps, with p50 and \
             p95 marked; the Step time table above has the numbers",
            &svg,
        );
    }
    for (pos, label) in gpu_pairs(a, b) {
        if let Some(svg) = utilization_svg(a, b, pos, width, theme)? {
            let alt = format!(
                "Utilization of {label} in both runs, each from its own start; the GPUs \
                 table above has the medians"
            );
            figure(&mut h, "compare-util", &label, &alt, &svg);
        }
    }
    Ok(h.finish())
}
