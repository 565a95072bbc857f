//! The text form of a diagnosis, for terminals and logs.

mod comparison;
mod ranks;

use std::fmt::Write;

use gpuwhy::report::{device_set, group_by_device, DeviceInfo, Finding, Report};

fn fmt_num(v: f64) -> String {
    if v.abs() >= 100.0 || v == v.trunc() {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

fn finding(out: &mut String, n: usize, f: &Finding) {
    let lost = f
        .lost_share
        .map(|l| format!(", ~{:.0}% lost", l * 100.0))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "\n{n}. {} — {}  [{}, confidence {:.2}{lost}]",
        f.id,
        f.title,
        f.severity.as_str(),
        f.confidence
    );
    // A consequence is listed under its cause, as what it causes.
    if let Some(c) = &f.caused_by {
        let _ = writeln!(
            out,
            "   ↳ caused by {c} (above): what it costs is counted there"
        );
    }
    let _ = writeln!(out, "   {}", f.summary);
    if let Some(b) = &f.lost_share_basis {
        let _ = writeln!(out, "   Time lost: {b}");
    }
    if !f.evidence.is_empty() {
        let _ = writeln!(out, "   Evidence:");
        // The same measurement on several GPUs is one line naming them all.
        let lines = group_by_device(f.evidence.iter().map(|e| {
            let mark = if e.agrees { "✓" } else { "·" };
            let line = format!(
                "{mark} {}: {} {} {} {}",
                e.metric,
                fmt_num(e.value),
                e.comparison,
                fmt_num(e.threshold),
                e.unit
            );
            (e.device, line)
        }));
        for (devs, line) in lines {
            let dev = if devs.is_empty() {
                String::new()
            } else {
                format!(" ({})", device_set(&devs))
            };
            let _ = writeln!(out, "     {line}{dev}");
        }
    }
    if !f.actions.is_empty() {
        let _ = writeln!(out, "   Try, cheapest first:");
        for (i, a) in f.actions.iter().enumerate() {
            let cost = match a.cost {
                gpuwhy::report::Cost::Low => "low",
                gpuwhy::report::Cost::Medium => "medium",
                gpuwhy::report::Cost::High => "high",
            };
            let _ = writeln!(out, "     {}. [{cost} cost] {}", i + 1, a.text);
        }
    }
    let _ = writeln!(
        out,
        "   Confirm: {} → expect: {}",
        f.experiment.change, f.experiment.expect
    );
    for u in &f.unseen {
        let _ = writeln!(out, "   Not seen: {u}");
    }
}

/// A device's description and its unavailable metrics (one clause per reason), without
/// its index.
fn device_lines(d: &DeviceInfo) -> (String, Option<String>) {
    let mut by_reason: std::collections::BTreeMap<&str, Vec<&str>> =
        std::collections::BTreeMap::new();
    for (k, c) in d.capabilities.iter().filter(|(_, c)| !c.available) {
        by_reason
            .entry(c.reason.as_deref().unwrap_or("unavailable"))
            .or_default()
            .push(k);
    }
    let off: Vec<String> = by_reason
        .into_iter()
        .map(|(why, ms)| format!("{} ({why})", ms.join(", ")))
        .collect();
    let lost = d
        .lost_at_s
        .map(|t| format!(", LOST at {t:.1} s"))
        .unwrap_or_default();
    // A log or dump may name neither the model nor its architecture: say so once in words
    // rather than printing placeholders ("GPUs 0, 1 ? (?)").
    let model = match (d.name.as_deref(), d.architecture.as_deref()) {
        (Some(n), Some(a)) => format!("{n} ({a})"),
        (Some(n), None) => n.to_string(),
        (None, Some(a)) => format!("model not recorded ({a})"),
        (None, None) => "(model not recorded)".to_string(),
    };
    let what = format!("{model}{lost}");
    (what, (!off.is_empty()).then(|| off.join("; ")))
}

/// The whole diagnosis of `r` as text.
pub fn text(r: &Report) -> String {
    let mut out = String::new();
    header(&mut out, r);
    let conf = if r.verdict.id == "none" {
        String::new()
    } else {
        format!(" [confidence {:.2}]", r.verdict.confidence)
    };
    let _ = writeln!(out, "\nVerdict: {}{conf}", r.verdict.summary);
    for (i, f) in r.findings.iter().enumerate() {
        finding(&mut out, i + 1, f);
    }
    if let Some(c) = &r.comparison {
        out.push_str(&comparison::text(c));
    }
    if let Some(ranks) = &r.ranks {
        out.push_str(&ranks::table(ranks));
    }
    steps(&mut out, r);
    machine(&mut out, r);
    out
}

/// The run in one line, why it ended early, and why there are no GPU metrics.
fn header(out: &mut String, r: &Report) {
    let label = r.run.label.clone().unwrap_or_else(|| "run".into());
    let partial = if r.run.complete { "" } else { ", PARTIAL" };
    let _ = writeln!(
        out,
        "gpuwhy — {label}: {} GPU(s), {:.1} s, source {}{partial}",
        r.devices.len(),
        r.run.duration_s,
        if r.run.source.is_empty() {
            "unknown"
        } else {
            &r.run.source
        }
    );
    if let Some(why) = &r.run.ended_by {
        if !r.run.complete {
            let _ = writeln!(out, "note: {why}");
        }
    }
    // One line, and only where the verdict does not already say it; the places searched
    // for NVML stay in the report.
    if let Some(why) = r.gpu_absent_reason.as_deref().map(gpuwhy::headline) {
        if !r.verdict.summary.contains(why) {
            let _ = writeln!(out, "no GPU metrics: {why}");
        }
    }
}

/// Step time quantiles and each phase's share.
fn steps(out: &mut String, r: &Report) {
    if let Some(st) = r.steps.as_ref().filter(|st| st.count > 0) {
        if let Some(step) = st.stats.get("step") {
            let _ = writeln!(
                out,
                "\nSteps: {} recorded, step time p50 {:.3} s, p95 {:.3} s, p99 {:.3} s",
                st.count, step.p50_s, step.p95_s, step.p99_s
            );
            let total = step.sum_s.max(f64::EPSILON);
            let phases: Vec<String> = st
                .phases
                .iter()
                .filter_map(|p| {
                    st.stats.get(p).filter(|s| s.count > 0).map(|s| {
                        format!("{p} {:.0}% (p50 {:.3} s)", 100.0 * s.sum_s / total, s.p50_s)
                    })
                })
                .collect();
            if !phases.is_empty() {
                let _ = writeln!(out, "  share of step time: {}", phases.join(", "));
            }
        }
    }
}

/// Devices, NVML errors and the recorder's own cost.
fn machine(out: &mut String, r: &Report) {
    if !r.devices.is_empty() {
        let _ = writeln!(out, "\nDevices:");
        // GPUs whose lines would be identical but for their index share one entry.
        for (devs, (what, off)) in
            group_by_device(r.devices.iter().map(|d| (Some(d.index), device_lines(d))))
        {
            let _ = writeln!(out, "  {} {what}", device_set(&devs));
            if let Some(off) = off {
                let _ = writeln!(out, "    not available: {off}");
            }
        }
    }
    // Health counters, per GPU, only where something is non-zero or pending.
    let health: Vec<(u32, Vec<String>)> = r
        .devices
        .iter()
        .filter_map(|d| Some((d.index, d.health.as_ref()?.notable())))
        .filter(|(_, n)| !n.is_empty())
        .collect();
    if !health.is_empty() {
        let _ = writeln!(out, "\nHealth:");
        for (i, n) in health {
            let _ = writeln!(out, "  GPU {i}: {}", n.join("; "));
        }
    }
    if !r.faults.is_empty() {
        let _ = writeln!(out, "\nNVML errors during the run:");
        for f in &r.faults {
            let dev = f.device.map(|d| format!("GPU {d} ")).unwrap_or_default();
            let _ = writeln!(
                out,
                "  {dev}{}: {} ×{} ({:.1}–{:.1} s)",
                f.function, f.name, f.count, f.first_s, f.last_s
            );
        }
    }
    let o = &r.overhead;
    if o.ticks > 0 {
        let us = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |x| format!("{x:.0}"));
        let _ = writeln!(
            out,
            "\nRecorder cost: {} ticks, {} µs CPU per tick ({} µs per GPU), {} NVML calls averaging {:.1} µs",
            o.ticks,
            us(o.cpu_per_tick_us),
            us(o.cpu_per_gpu_tick_us),
            o.nvml_calls,
            o.nvml_call_mean_us
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuwhy::report::{Capability, Evidence};

    fn gpu(index: u32) -> DeviceInfo {
        let mut d = DeviceInfo {
            index,
            name: Some("H100".into()),
            architecture: Some("Hopper".into()),
            ..Default::default()
        };
        let off = Capability::unavailable("NOT_SUPPORTED");
        d.capabilities.insert("pcie_rx".into(), off);
        d
    }

    #[test]
    fn gpus_of_a_log_without_model_names_are_not_printed_as_question_marks() {
        let rec = gpuwhy::recording::Recording::new(Default::default());
        let mut r = Report::from_recording(&rec);
        for i in 0..2 {
            r.devices.push(DeviceInfo {
                index: i,
                ..Default::default()
            });
        }
        let mut named = gpu(2);
        named.architecture = None;
        named.capabilities.clear();
        r.devices.push(named);
        let t = text(&r);
        assert!(t.contains("GPUs 0, 1 (model not recorded)\n"), "{t}");
        assert!(t.contains("GPU 2 H100\n"), "{t}");
        assert!(!t.contains('?'), "{t}");
    }

    #[test]
    fn identical_gpu_lines_are_printed_once_for_all_of_them() {
        let rec = gpuwhy::recording::Recording::new(Default::default());
        let mut r = Report::from_recording(&rec);
        r.devices = (0..8).map(gpu).collect();
        r.devices[6].name = Some("A100".into());
        let ev = |d: u32, v: f64| Evidence {
            metric: "power ratio".into(),
            value: v,
            threshold: 0.9,
            comparison: "<".into(),
            unit: "ratio".into(),
            device: Some(d),
            time_range: None,
            agrees: true,
            weight: None,
        };
        let mut f = Finding {
            id: "throttling".into(),
            title: "t".into(),
            severity: gpuwhy::report::Severity::High,
            confidence: 0.9,
            summary: "s".into(),
            lost_share: None,
            lost_share_basis: None,
            devices: vec![1, 2, 3],
            evidence: vec![ev(1, 0.3), ev(2, 0.3), ev(3, 0.3), ev(4, 0.5)],
            actions: Vec::new(),
            experiment: Default::default(),
            unseen: Vec::new(),
            source: None,
            caused_by: None,
        };
        f.evidence.push(ev(5, 0.3));
        r.findings.push(f);
        let t = text(&r);
        assert_eq!(
            t.matches("not available: pcie_rx (NOT_SUPPORTED)").count(),
            2,
            "{t}"
        );
        assert!(t.contains("GPUs 0–5, 7 H100 (Hopper)"), "{t}");
        assert!(t.contains("GPU 6 A100 (Hopper)"), "{t}");
        assert!(
            t.contains("power ratio: 0.30 < 0.90 ratio (GPUs 1–3, 5)"),
            "{t}"
        );
        assert!(t.contains("power ratio: 0.50 < 0.90 ratio (GPU 4)"), "{t}");
    }
}
