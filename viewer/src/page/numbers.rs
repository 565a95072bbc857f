//! Text alternatives of the charts: the numbers each chart shows over the visible range, as
//! a short label for assistive technology and a table a person can open (the page asks for
//! the table when it is opened: the medians of a long run are not free).

use super::{row, Html};
use crate::chart::host;
use crate::chart::timeline;
use crate::chart::Frame;
use crate::format::{sig, time_label};
use crate::trace::Trace;
use crate::view::View;

fn range_text(frame: &Frame) -> String {
    let span = frame.t1 - frame.t0;
    format!(
        "{} to {}",
        time_label(frame.t0, span),
        time_label(frame.t1, span)
    )
}

// A slice, not an iterator: one copy of this in the page's module, not one per caller.
fn table(h: &mut Html, rows: &[(String, &'static str, &Trace)], frame: &Frame) {
    h.raw("<table><thead><tr><th scope=\"col\">series</th><th scope=\"col\">unit</th><th scope=\"col\" class=\"num\">min</th><th scope=\"col\" class=\"num\">median</th><th scope=\"col\" class=\"num\">max</th><th scope=\"col\" class=\"num\">samples</th></tr></thead><tbody>");
    for (label, unit, trace) in rows {
        let (label, unit) = (label.as_str(), *unit);
        match trace.stats(frame.t0, frame.t1) {
            Some(s) => row(
                h,
                &[
                    label,
                    unit,
                    &sig(s.min, 3),
                    &sig(s.median, 3),
                    &sig(s.max, 3),
                    &s.count.to_string(),
                ],
            ),
            None => row(h, &[label, unit, "—", "—", "—", "0"]),
        }
    }
    h.raw("</tbody></table>");
}

/// A one-line description of the GPU timeline at `pos` (for `aria-label`), plain text.
pub fn timeline_label(view: &View, pos: usize, frame: &Frame) -> String {
    let name = view.gpus.get(pos).map_or("GPU", |g| g.label.as_str());
    let mut out = format!("Timeline of {name}, {}", range_text(frame));
    if let Some(s) = view
        .series(pos)
        .and_then(|s| Trace::new(&s.data, "util_gpu", 1.0).stats(frame.t0, frame.t1))
    {
        out.push_str(&format!(
            ": GPU busy median {}%, min {}%, max {}%",
            sig(s.median, 3),
            sig(s.min, 3),
            sig(s.max, 3)
        ));
    }
    out
}

/// The numbers behind the GPU timeline at `pos` over the visible range: the range, a table
/// and the panels that could not be drawn.
pub fn timeline_html(view: &View, pos: usize, frame: &Frame) -> String {
    let mut h = Html::new();
    h.raw("<p class=\"range\">");
    h.text(&format!("From {}", range_text(frame)));
    h.raw("</p>");
    let panels = timeline::panels(view, pos);
    let mut rows = Vec::new();
    for (_, p) in &panels {
        for l in &p.lines {
            rows.push((format!("{}: {}", p.title, l.label), p.unit, &l.trace));
        }
    }
    table(&mut h, &rows, frame);
    let missing = timeline::missing(view, pos);
    if !missing.is_empty() {
        h.raw("<ul class=\"missing\">");
        for (title, why) in missing {
            h.elem("li", &format!("{title}: not available — {why}"));
        }
        h.raw("</ul>");
    }
    h.finish()
}

/// The numbers behind the host panels over the visible range.
pub fn host_html(view: &View, frame: &Frame) -> String {
    let mut h = Html::new();
    let Some(hd) = &view.report.host else {
        return h.finish();
    };
    h.raw("<p class=\"range\">");
    h.text(&format!("From {}", range_text(frame)));
    h.raw("</p>");
    let panels = host::panels(hd);
    let mut rows = Vec::new();
    for p in &panels {
        for l in &p.lines {
            rows.push((format!("{}: {}", p.title, l.label), p.unit, &l.trace));
        }
    }
    table(&mut h, &rows, frame);
    h.finish()
}

/// The numbers behind a heatmap: one row per GPU (or core when `cores`).
pub fn heatmap_html(view: &View, frame: &Frame, cores: bool) -> String {
    let mut h = Html::new();
    h.raw("<p class=\"range\">");
    h.text(&format!("From {}", range_text(frame)));
    h.raw("</p>");
    // Plain loops: each collecting chain is its own code in the module (a size goal).
    let mut traces: Vec<(String, Trace)> = Vec::new();
    if cores {
        if let Some(hd) = &view.report.host {
            for (n, m) in host::core_columns(hd) {
                traces.push((format!("cpu{n}"), Trace::new(&hd.data, m, 1.0)));
            }
        }
    } else {
        for g in &view.gpus {
            if let Some(s) = view.series(g.pos) {
                traces.push((g.label.clone(), Trace::new(&s.data, "util_gpu", 1.0)));
            }
        }
    }
    let mut rows = Vec::with_capacity(traces.len());
    for (l, t) in &traces {
        rows.push((l.clone(), "%", t));
    }
    table(&mut h, &rows, frame);
    h.finish()
}
