//! A report's own comparison with its baseline (`comparison`, written by a session that
//! named one), as `gpuwhy diagnose` prints it: the summary and the verdict diff.

use std::fmt::Write;

use gpuwhy::compare::{BaselineComparison, Outcome};

/// The section's text; the comparison is shown as it was written (the baseline is not read
/// again).
pub fn text(c: &BaselineComparison) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "\nAgainst the baseline {}:", c.baseline);
    let Some(r) = &c.result else {
        let why = c.error.as_deref().unwrap_or("no comparison was made");
        let _ = writeln!(o, "  no comparison: {why}");
        return o;
    };
    if let Some(w) = &r.forced_despite {
        let _ = writeln!(o, "  warning: compared although {w}");
    }
    let _ = writeln!(o, "  {}", r.summary);
    // The summary has the step time and how the top finding moved.
    let v = &r.verdict;
    let list = |ids: &[String]| {
        if ids.is_empty() {
            "none".to_string()
        } else {
            ids.join(", ")
        }
    };
    let _ = writeln!(
        o,
        "  resolved: {}; new: {}",
        list(&v.resolved),
        list(&v.new)
    );
    for (id, a, b) in &v.persisting {
        let _ = writeln!(o, "  still there: {id} {a:.2} → {b:.2}");
    }
    for e in &r.experiments {
        let out = match e.outcome {
            Outcome::Held => "held",
            Outcome::NotHeld => "did NOT hold",
            Outcome::Unknown => "cannot tell",
        };
        let _ = writeln!(
            o,
            "  experiment for {}: {} expected {}: {out}",
            e.finding, e.metric, e.expected
        );
    }
    o
}
