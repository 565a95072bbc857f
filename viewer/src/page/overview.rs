//! What a person reads first: which run this is, the verdict, then one card per finding
//! with its evidence against thresholds, the fixes cheapest first, the confirming
//! experiment and what could not be seen.

use gpuwhy::report::{device_ranges, device_set, group_by_device, Cost, Finding, Report};

use super::Html;
use crate::format::{duration, percent, sig};

/// The run's identity line and facts.
pub fn run_html(r: &Report) -> String {
    let mut h = Html::new();
    let run = &r.run;
    h.raw("<dl class=\"run-facts\">");
    let mut fact = |k: &str, v: &str| {
        if !v.is_empty() {
            h.elem("dt", k).elem("dd", v);
        }
    };
    fact("Label", run.label.as_deref().unwrap_or(""));
    fact("Host", &run.host);
    fact("Started", &run.start);
    fact("Duration", &duration(run.duration_s));
    fact("Source", &run.source);
    fact("Interval", &duration(run.interval_s));
    if let Some(c) = &run.command {
        fact("Command", &c.join(" "));
    }
    if let Some(code) = run.exit_code {
        fact("Exit code", &code.to_string());
    }
    if let (Some(rank), Some(world)) = (run.rank, run.world_size) {
        fact("Rank", &format!("{rank} of {world}"));
    }
    if let Some(j) = &run.job_gpus {
        fact("Job's GPUs", &job_gpus(j));
    }
    let ended = run.ended_by.clone().unwrap_or_default();
    if !run.complete {
        fact("Incomplete", &format!("recording cut short: {ended}"));
    } else {
        fact("Ended by", &ended);
    }
    if let Some(why) = &r.gpu_absent_reason {
        fact("No GPU data", why);
    }
    fact("Written by", &format!("{} {}", r.tool.name, r.tool.version));
    h.raw("</dl>");
    // How the job's GPUs were told apart is a detail, not the header.
    if let Some(j) = &run.job_gpus {
        h.raw("<details><summary>Why these GPUs</summary>")
            .text(&j.reason)
            .raw("</details>");
    }
    h.finish()
}

/// "0, 1 · not the job's: 2" (why, in the details below the facts).
fn job_gpus(j: &gpuwhy::report::JobGpus) -> String {
    let list = |v: &[u32]| {
        let mut s = String::new();
        for (i, x) in v.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            s.push_str(&x.to_string());
        }
        s
    };
    let mut s = list(&j.indices);
    if !j.others.is_empty() {
        s += " · not the job's: ";
        s += &list(&j.others);
    }
    s
}

/// The verdict box: the top finding, its share of lost time and its confidence.
pub fn verdict_html(r: &Report) -> String {
    let v = &r.verdict;
    let sev = r
        .findings
        .iter()
        .find(|f| f.id == v.id)
        .map_or("none", |f| f.severity.as_str());
    let mut h = Html::new();
    h.raw(&format!(
        "<section class=\"verdict sev-{sev}\" aria-labelledby=\"verdict-h\"><h2 id=\"verdict-h\">Verdict</h2>"
    ));
    h.elem("p class=\"verdict-title\"", &v.title);
    h.elem("p class=\"verdict-summary\"", &v.summary);
    h.raw("<dl class=\"verdict-facts\">");
    if let Some(l) = v.lost_share {
        h.elem("dt", "Time lost")
            .elem("dd", &format!("~{} of the run", percent(l)));
    }
    h.elem("dt", "Confidence").elem("dd", &sig(v.confidence, 2));
    h.elem("dt", "Findings")
        .elem("dd", &r.findings.len().to_string());
    h.raw("</dl></section>");
    // A session that named a baseline: how this run compares, right under the verdict.
    h.raw(&super::baseline::baseline_html(r.comparison.as_ref()));
    h.finish()
}

/// One card per finding, most important first.
pub fn findings_html(r: &Report) -> String {
    let mut h = Html::new();
    h.raw("<section class=\"findings\" aria-labelledby=\"findings-h\">");
    h.elem(
        "h2 id=\"findings-h\"",
        &format!("Findings ({})", r.findings.len()),
    );
    if r.findings.is_empty() {
        h.elem(
            "p class=\"empty\"",
            "No rule fired: no bottleneck was found in this report.",
        );
    }
    for (i, f) in r.findings.iter().enumerate() {
        card(&mut h, i, f);
    }
    h.raw("</section>");
    h.finish()
}

fn cost_name(c: Cost) -> &'static str {
    match c {
        Cost::Low => "low",
        Cost::Medium => "medium",
        Cost::High => "high",
    }
}

fn card(h: &mut Html, i: usize, f: &Finding) {
    let sev = f.severity.as_str();
    h.raw(&format!(
        "<article class=\"finding sev-{sev}\" aria-labelledby=\"finding-{i}-h\"><header>"
    ));
    h.raw(&format!("<h3 id=\"finding-{i}-h\">"));
    h.raw(&format!("<span class=\"sev\">{sev}</span> "));
    h.text(&f.title);
    h.raw(" <code class=\"rule-id\">")
        .text(&f.id)
        .raw("</code></h3>");
    h.raw("<p class=\"meta\">");
    h.text(&format!("confidence {}", sig(f.confidence, 2)));
    if let Some(l) = f.lost_share {
        h.text(&format!(" · ~{} of the run lost", percent(l)));
    }
    // The chain: a consequence is listed under its cause.
    if let Some(c) = &f.caused_by {
        h.text(" · caused by ").text(c);
    }
    if !f.devices.is_empty() {
        // "GPUs 0–7", as the evidence rows and `gpuwhy diagnose` name several GPUs.
        h.text(&format!(" · {}", device_set(&f.devices)));
    }
    h.raw("</p></header>");
    h.elem("p class=\"summary\"", &f.summary);

    evidence_html(h, f);
    actions_html(h, f);
    let x = &f.experiment;
    if !(x.change.is_empty() && x.expect.is_empty()) {
        h.raw("<h4>Confirm with one experiment</h4><dl class=\"experiment\">");
        h.elem("dt", "Change").elem("dd", &x.change);
        h.elem("dt", "Expect").elem("dd", &x.expect);
        if !x.metric.is_empty() {
            h.elem("dt", "Compare").elem("dd", &x.metric);
        }
        h.raw("</dl>");
    }

    if !f.unseen.is_empty() {
        h.raw("<h4>Could not be seen</h4><ul class=\"unseen\">");
        for u in &f.unseen {
            h.elem("li", u);
        }
        h.raw("</ul>");
    }
    h.raw("</article>");
}

/// The evidence table: one row per measurement, the same measurement on several GPUs
/// (identical once rendered) one row naming them all ("0–7"), as `gpuwhy diagnose` prints
/// it.
// One caller: inlined, so that splitting a long function costs the module no code.
#[inline(always)]
fn evidence_html(h: &mut Html, f: &Finding) {
    if f.evidence.is_empty() {
        return;
    }
    h.raw("<h4>Evidence</h4><div class=\"scroll\"><table class=\"evidence\"><thead><tr>");
    h.raw("<th scope=\"col\"><span class=\"sr\">agrees</span></th><th scope=\"col\">measured</th><th scope=\"col\" class=\"num\">value</th><th scope=\"col\"></th><th scope=\"col\" class=\"num\">threshold</th><th scope=\"col\">unit</th><th scope=\"col\">GPU</th></tr></thead><tbody>");
    // Each row rendered but for its GPU cell: rows equal as markup are the same line.
    let rows = group_by_device(f.evidence.iter().map(|e| {
        let mut r = Html::new();
        let (mark, label, class) = if e.agrees {
            ("✓", "agrees", "agrees")
        } else {
            ("·", "does not agree", "disagrees")
        };
        r.raw(&format!(
            "<tr class=\"{class}\"><td><span aria-hidden=\"true\">{mark}</span><span class=\"sr\">{label}</span></td>"
        ));
        r.elem("td", &e.metric);
        r.elem("td class=\"num\"", &sig(e.value, 3));
        r.elem("td class=\"cmp\"", e.comparison.as_str());
        r.elem("td class=\"num\"", &sig(e.threshold, 3));
        r.elem("td", &e.unit);
        (e.device, r.finish())
    }));
    for (devices, row) in rows {
        h.raw(&row)
            .elem("td", &device_ranges(&devices))
            .raw("</tr>");
    }
    h.raw("</tbody></table></div>");
}

/// The fixes, cheapest first.
// One caller: inlined, so that splitting a long function costs the module no code.
#[inline(always)]
fn actions_html(h: &mut Html, f: &Finding) {
    if f.actions.is_empty() {
        return;
    }
    // Cheapest first, in the rules' order within one cost. Three passes over a short
    // list: a stable sort would link several kilobytes of its own into the module.
    let by_cost = [Cost::Low, Cost::Medium, Cost::High]
        .into_iter()
        .flat_map(|c| f.actions.iter().filter(move |a| a.cost == c));
    h.raw("<h4>Try, cheapest first</h4><ol class=\"actions\">");
    for a in by_cost {
        let c = cost_name(a.cost);
        h.raw(&format!(
            "<li><span class=\"cost cost-{c}\">{c} cost</span> "
        ));
        h.text(&a.text).raw("</li>");
    }
    h.raw("</ol>");
}
