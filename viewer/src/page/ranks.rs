//! The per-rank table of a merged job report: the rows `gpuwhy diagnose` prints, taken from
//! core's [`rank_table`] (which ranks are listed, each one's numbers), laid out as HTML with
//! the stragglers marked. Numbers are rounded as the CLI rounds them.
//!
//! Text is put together with `push_str` rather than `format!`: each `format!` is code in the
//! page's WebAssembly, which has a size budget.

use gpuwhy::merge::{rank_list, rank_table};
use gpuwhy::report::{RanksData, Report};

use super::Html;

const HEAD: &str = "<thead><tr><th scope=\"col\">rank</th><th scope=\"col\">host</th>\
<th scope=\"col\">local rank</th><th scope=\"col\">steps</th><th scope=\"col\">step p50</th>\
<th scope=\"col\">slowest phase p50 (× the other ranks' median)</th>\
<th scope=\"col\">util p50</th><th scope=\"col\">straggler</th></tr></thead>";

/// `v` with `decimals` decimals and `unit` after it.
fn fixed(v: f64, decimals: usize, unit: &str) -> String {
    format!("{v:.decimals$}{unit}")
}

/// `3 ranks`, `1 node`.
fn count(n: usize, one: &str) -> String {
    let mut s = n.to_string();
    s.push(' ');
    s.push_str(one);
    if n != 1 {
        s.push('s');
    }
    s
}

/// The context line above the table: ranks and nodes, the world size, the missing ranks,
/// the stragglers and the ranks whose recording was cut short.
fn context(r: &RanksData) -> String {
    // Distinct hosts, by looking (a job has far fewer nodes than ranks; no sort).
    let mut hosts: Vec<&str> = Vec::new();
    for x in &r.ranks {
        if !hosts.contains(&x.host.as_str()) {
            hosts.push(&x.host);
        }
    }
    let mut line = count(r.ranks.len(), "rank");
    line.push_str(" on ");
    line.push_str(&count(hosts.len(), "node"));
    if let Some(w) = r.world_size {
        line.push_str("; world size ");
        line.push_str(&w.to_string());
    }
    if !r.missing.is_empty() {
        line.push_str("; missing: ");
        line.push_str(&rank_list(&r.missing));
    }
    line.push_str("; ");
    match r.stragglers.len() {
        0 => line.push_str("no stragglers"),
        n => line.push_str(&count(n, "straggler")),
    }
    // In the report's order: by rank, as `gpuwhy merge` writes them.
    let mut short: Vec<u32> = Vec::new();
    for x in r.ranks.iter().filter(|x| !x.complete) {
        short.push(x.rank);
    }
    if !short.is_empty() {
        line.push_str("; recording cut short on ");
        line.push_str(&rank_list(&short));
    }
    line.push('.');
    line
}

/// The Ranks section's body; empty for a report without ranks.
pub fn ranks_html(report: &Report) -> String {
    let mut h = Html::new();
    let Some(r) = report.ranks.as_ref() else {
        return h.finish();
    };
    let t = rank_table(r);
    if t.total == 0 {
        return h.finish();
    }
    h.elem("p class=\"note\"", &context(r));
    h.raw("<div class=\"scroll\"><table class=\"ranks\"><caption>");
    h.text(&t.rows.len().to_string())
        .raw(" of ")
        .text(&count(t.total, "rank"))
        .raw(", by rank.</caption>")
        .raw(HEAD)
        .raw("<tbody>");
    let dash = || "—".to_string();
    for x in &t.rows {
        h.raw(if x.straggler.is_some() {
            "<tr class=\"straggler\"><th scope=\"row\">"
        } else {
            "<tr><th scope=\"row\">"
        });
        h.text(&x.rank.to_string()).raw("</th>");
        h.elem("td", x.host);
        let nums = [
            x.local_rank.map_or_else(dash, |l| l.to_string()),
            x.steps.map_or_else(dash, |c| c.to_string()),
            x.step_p50_s.map_or_else(dash, |s| fixed(s, 3, " s")),
        ];
        for n in &nums {
            h.elem("td class=\"num\"", n);
        }
        let slow = x.slowest.map_or_else(dash, |p| {
            let mut s = p.name.to_string();
            s.push(' ');
            s.push_str(&fixed(p.p50_s, 3, " s ×"));
            s.push_str(&fixed(p.ratio, 2, ""));
            s
        });
        h.elem("td", &slow);
        let util = x.util_p50.map_or_else(dash, |u| fixed(u, 0, "%"));
        h.elem("td class=\"num\"", &util);
        h.raw("<td>");
        if let Some(phase) = x.straggler {
            h.raw("yes (").text(phase).raw(")");
        }
        h.raw("</td></tr>");
    }
    h.raw("</tbody></table></div>");
    if t.omitted > 0 {
        let mut more = t.omitted.to_string();
        more.push_str(" more ranks not listed");
        if !t.hidden_stragglers.is_empty() {
            more.push_str(", ");
            more.push_str(&t.hidden_stragglers.len().to_string());
            more.push_str(" of them stragglers (");
            more.push_str(&rank_list(&t.hidden_stragglers));
            more.push(')');
        }
        more.push_str("; `gpuwhy diagnose --json` lists every rank.");
        h.elem("p class=\"note omitted\"", &more);
    }
    h.finish()
}
