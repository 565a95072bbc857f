//! Tables: devices and their capabilities, the recorder's own cost and NVML faults, host
//! facts, step phases and events.

use gpuwhy::report::{device_set, group_by_device, Report};

use super::{row, Html};
use crate::chart::steps::{phase_order, step_quantiles};
use crate::format::{bytes, duration, percent, sig, time_label};

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "—".into(), |v| v.to_string())
}

fn num(v: Option<f64>, unit: &str) -> String {
    v.map_or_else(|| "—".into(), |v| format!("{} {unit}", sig(v, 4)))
}

/// One row per GPU with its facts, and its capabilities (available or why not) below it.
pub fn devices_html(r: &Report) -> String {
    let mut h = Html::new();
    if r.devices.is_empty() {
        h.elem(
            "p class=\"empty\"",
            r.gpu_absent_reason
                .as_deref()
                .unwrap_or("This report has no GPUs."),
        );
        return h.finish();
    }
    h.raw("<div class=\"scroll\"><table class=\"devices\"><thead><tr>");
    for c in [
        "GPU",
        "name",
        "architecture",
        "compute",
        "memory",
        "power limit",
        "max SM clock",
        "PCIe max",
        "NVLinks",
        "GPM",
        "lost at",
    ] {
        h.elem("th scope=\"col\"", c);
    }
    h.raw("</tr></thead><tbody>");
    for d in &r.devices {
        let pcie = match (d.pcie_max_gen, d.pcie_max_width) {
            (Some(g), Some(w)) => format!("gen {g} ×{w}"),
            (Some(g), None) => format!("gen {g}"),
            _ => "—".into(),
        };
        row(
            &mut h,
            &[
                &d.index.to_string(),
                d.name.as_deref().unwrap_or("—"),
                d.architecture.as_deref().unwrap_or("—"),
                d.compute_capability.as_deref().unwrap_or("—"),
                &num(d.memory_total_mib, "MiB"),
                &num(d.power_limit_w, "W"),
                &num(d.max_sm_clock_mhz, "MHz"),
                &pcie,
                &opt(d.nvlink_links),
                if d.gpm { "yes" } else { "no" },
                &d.lost_at_s
                    .map_or_else(|| "—".into(), |t| format!("{} s", sig(t, 4))),
            ],
        );
    }
    h.raw("</tbody></table></div>");
    capabilities_html(&mut h, r);
    h.finish()
}

/// Each GPU's capabilities (available or why not), GPUs with the same table under one
/// heading ("GPUs 0–7: 30 of 34 metrics available"), as `gpuwhy diagnose` lists them.
fn capabilities_html(h: &mut Html, r: &Report) {
    // Each GPU's table rendered: tables equal as markup are the same list.
    let groups = group_by_device(r.devices.iter().map(|d| {
        let mut t = Html::new();
        for (m, c) in &d.capabilities {
            let why = c.reason.as_deref().unwrap_or("");
            row(&mut t, &[m, if c.available { "yes" } else { "no" }, why]);
        }
        (Some(d.index), t.finish())
    }));
    for (devices, table) in groups {
        let mut members = r.devices.iter().filter(|d| devices.contains(&d.index));
        let Some(first) = members.next() else {
            continue;
        };
        let caps = &first.capabilities;
        let avail = caps.values().filter(|c| c.available).count();
        h.raw("<details class=\"caps\"><summary>");
        h.text(&format!(
            "{}: {avail} of {} metrics available",
            device_set(&devices),
            caps.len()
        ));
        for d in std::iter::once(first).chain(members) {
            if let Some(u) = &d.uuid {
                h.raw(" <code>").text(u).raw("</code>");
            }
        }
        h.raw("</summary><table><thead><tr><th scope=\"col\">metric</th><th scope=\"col\">available</th><th scope=\"col\">why not</th></tr></thead><tbody>");
        h.raw(&table).raw("</tbody></table></details>");
    }
}

/// The recorder's own cost, then NVML faults and the library used.
pub fn overhead_html(r: &Report) -> String {
    let o = &r.overhead;
    let mut h = Html::new();
    h.raw("<div class=\"scroll\"><table class=\"overhead\"><tbody>");
    let us = |v: Option<f64>| v.map_or_else(|| "—".into(), |v| format!("{} µs", sig(v, 3)));
    row(&mut h, &["sampler ticks", &o.ticks.to_string()]);
    row(
        &mut h,
        &[
            "late / skipped ticks",
            &format!("{} / {}", o.late_ticks, o.skipped_ticks),
        ],
    );
    row(
        &mut h,
        &[
            "sampler CPU time",
            &o.sampler_cpu_s.map_or_else(|| "—".into(), duration),
        ],
    );
    row(&mut h, &["CPU per tick", &us(o.cpu_per_tick_us)]);
    row(
        &mut h,
        &["CPU per GPU per tick", &us(o.cpu_per_gpu_tick_us)],
    );
    row(&mut h, &["NVML calls", &o.nvml_calls.to_string()]);
    row(
        &mut h,
        &[
            "NVML call, mean / slowest",
            &format!(
                "{} / {} ({})",
                us(Some(o.nvml_call_mean_us)),
                us(Some(o.nvml_call_max_us)),
                o.nvml_call_max_function.as_deref().unwrap_or("—")
            ),
        ],
    );
    let share = if o.memory_bound_bytes > 0 {
        format!(
            " ({} of its bound, {})",
            percent(o.memory_bytes as f64 / o.memory_bound_bytes as f64),
            bytes(o.memory_bound_bytes as f64)
        )
    } else {
        String::new()
    };
    row(
        &mut h,
        &[
            "sample storage",
            &format!("{}{share}", bytes(o.memory_bytes as f64)),
        ],
    );
    row(&mut h, &["events dropped", &o.events_dropped.to_string()]);
    if let Some(n) = &r.nvml {
        row(&mut h, &["NVML library", &n.path]);
        row(
            &mut h,
            &["driver", n.driver_version.as_deref().unwrap_or("—")],
        );
    }
    h.raw("</tbody></table></div>");
    faults_html(&mut h, r);
    h.finish()
}

/// NVML's transient errors, counted per function and error.
// One caller: inlined, so that splitting a long function costs the module no code.
#[inline(always)]
fn faults_html(h: &mut Html, r: &Report) {
    if r.faults.is_empty() {
        return;
    }
    h.raw("<h3>NVML errors (transient, counted)</h3><div class=\"scroll\"><table class=\"faults\"><thead><tr><th scope=\"col\">function</th><th scope=\"col\">error</th><th scope=\"col\">GPU</th><th scope=\"col\" class=\"num\">count</th><th scope=\"col\">first – last</th></tr></thead><tbody>");
    for f in &r.faults {
        row(
            h,
            &[
                &f.function,
                &format!("{} ({})", f.name, f.code),
                &opt(f.device),
                &f.count.to_string(),
                &format!("{} s – {} s", sig(f.first_s, 4), sig(f.last_s, 4)),
            ],
        );
    }
    h.raw("</tbody></table></div>");
}

/// Host facts and what the host could not provide.
pub fn host_facts_html(r: &Report) -> String {
    let mut h = Html::new();
    let Some(host) = &r.host else {
        h.elem("p class=\"empty\"", "The host was not sampled.");
        return h.finish();
    };
    let f = &host.facts;
    h.raw("<dl class=\"host-facts\">");
    h.elem("dt", "Host").elem("dd", &f.hostname);
    h.elem("dt", "CPU").elem("dd", &f.cpu_model);
    h.elem("dt", "Cores").elem(
        "dd",
        &format!(
            "{} logical, {} physical",
            f.logical_cpus,
            opt(f.physical_cores)
        ),
    );
    h.elem("dt", "Memory")
        .elem("dd", &bytes(f.mem_total_bytes as f64));
    h.elem("dt", "Kernel").elem("dd", &f.kernel);
    h.raw("</dl>");
    if !host.unavailable.is_empty() {
        h.raw("<details class=\"caps\"><summary>");
        h.text(&format!(
            "{} host metrics not available",
            host.unavailable.len()
        ));
        h.raw("</summary><table><tbody>");
        for (k, why) in &host.unavailable {
            row(&mut h, &[k, why]);
        }
        h.raw("</tbody></table></details>");
    }
    h.finish()
}

/// The phase table: p50, p95 and share of step time per phase, and whole steps.
pub fn phases_html(r: &Report) -> String {
    let mut h = Html::new();
    let Some(s) = &r.steps else {
        return h.finish();
    };
    let step_sum = s.stats.get("step").map_or(0.0, |st| st.sum_s);
    h.raw("<div class=\"scroll\"><table class=\"phases\"><thead><tr><th scope=\"col\">phase</th><th scope=\"col\" class=\"num\">p50</th><th scope=\"col\" class=\"num\">p95</th><th scope=\"col\" class=\"num\">p99</th><th scope=\"col\" class=\"num\">share of step time</th><th scope=\"col\" class=\"num\">count</th></tr></thead><tbody>");
    let mut names: Vec<&str> = vec!["step"];
    names.extend(phase_order(s));
    for k in s.stats.keys() {
        if !names.contains(&k.as_str()) {
            names.push(k);
        }
    }
    for name in names {
        let Some(st) = s.stats.get(name) else {
            continue;
        };
        let share = if name == "step" {
            "100%".to_string()
        } else if step_sum > 0.0 {
            percent(st.sum_s / step_sum)
        } else {
            "—".into()
        };
        row(
            &mut h,
            &[
                if name == "step" { "whole step" } else { name },
                &duration(st.p50_s),
                &duration(st.p95_s),
                &duration(st.p99_s),
                &share,
                &st.count.to_string(),
            ],
        );
    }
    h.raw("</tbody></table></div>");
    let mut note = format!("{} steps completed", s.count);
    if let Some((p50, p95)) = step_quantiles(s) {
        note.push_str(&format!(
            "; step time p50 {}, p95 {}",
            duration(p50),
            duration(p95)
        ));
    }
    if s.count > s.exact_steps && s.exact_steps > 0 {
        note.push_str(&format!(
            "; the first {} are kept one by one, quantiles over all steps are within {} ",
            s.exact_steps,
            percent(s.quantile_error)
        ));
    }
    h.elem("p class=\"note\"", &note);
    h.finish()
}

/// Events in time order (at most `limit`; the rest counted).
pub fn events_html(r: &Report, limit: usize) -> String {
    let mut h = Html::new();
    if r.events.is_empty() {
        h.elem("p class=\"empty\"", "No events.");
        return h.finish();
    }
    let span = r.run.duration_s.max(1.0);
    h.raw("<div class=\"scroll\"><table class=\"events\"><thead><tr><th scope=\"col\">time</th><th scope=\"col\">GPU</th><th scope=\"col\">kind</th><th scope=\"col\">code</th><th scope=\"col\">detail</th></tr></thead><tbody>");
    for e in r.events.iter().take(limit) {
        row(
            &mut h,
            &[
                &time_label(e.t_s, span),
                &opt(e.device),
                &e.kind,
                &opt(e.code),
                &e.detail,
            ],
        );
    }
    h.raw("</tbody></table></div>");
    if r.events.len() > limit {
        h.elem(
            "p class=\"note\"",
            &format!("… and {} more events.", r.events.len() - limit),
        );
    }
    h.finish()
}
