//! The report's own comparison with its baseline (`comparison`, written by a session that
//! named one), shown under the verdict with what `gpuwhy diagnose` prints of it: the summary
//! line, how the findings moved, and whether each confirming experiment held.

use gpuwhy::compare::{BaselineComparison, Outcome};

use super::Html;

/// The section; empty for a report without a comparison.
pub fn baseline_html(c: Option<&BaselineComparison>) -> String {
    let Some(c) = c else {
        return String::new();
    };
    let mut h = Html::new();
    h.raw("<section class=\"baseline\" aria-labelledby=\"baseline-h\">");
    h.elem("h2 id=\"baseline-h\"", "Against the baseline");
    h.raw("<p class=\"baseline-name\">Baseline: ")
        .elem("code", &c.baseline)
        .raw("</p>");
    let Some(r) = &c.result else {
        let why = c.error.as_deref().unwrap_or("no comparison was made");
        h.elem(
            "p class=\"baseline-error\"",
            &format!("No comparison: {why}"),
        );
        h.raw("</section>");
        return h.finish();
    };
    if let Some(w) = &r.forced_despite {
        h.elem(
            "p class=\"baseline-warning\"",
            &format!("Compared although {w}."),
        );
    }
    h.elem("p class=\"baseline-summary\"", &r.summary);
    let list = |ids: &[String]| {
        if ids.is_empty() {
            "none".to_string()
        } else {
            ids.join(", ")
        }
    };
    let v = &r.verdict;
    h.raw("<ul class=\"baseline-findings\">");
    h.elem("li", &format!("Resolved: {}", list(&v.resolved)));
    h.elem("li", &format!("New: {}", list(&v.new)));
    for (id, a, b) in &v.persisting {
        h.elem(
            "li",
            &format!("Still there: {id}, confidence {a:.2} → {b:.2}"),
        );
    }
    for e in &r.experiments {
        let out = match e.outcome {
            Outcome::Held => "held",
            Outcome::NotHeld => "did not hold",
            Outcome::Unknown => "cannot tell",
        };
        h.elem(
            "li",
            &format!(
                "Experiment for {}: {} expected to go {}: {out}",
                e.finding, e.metric, e.expected
            ),
        );
    }
    h.raw("</ul></section>");
    h.finish()
}
