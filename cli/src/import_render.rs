//! The text of a profiler-trace summary, printed after the findings.

use std::fmt::Write;

use gpuwhy::trace::{RankSummary, TraceSummary};

fn ms(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.2} s", us / 1e6)
    } else {
        format!("{:.2} ms", us / 1e3)
    }
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// The GPU's idle time by what the CPU was doing, the parts over 0.
fn idle_causes(g: &gpuwhy::trace::GapCauses) -> String {
    let parts = [
        ("DataLoader", g.data_us),
        ("allocator calls", g.allocator_us),
        ("syncs", g.sync_us),
        ("optimizer or operators on the CPU", g.cpu_work_us),
        ("Python between launches", g.launch_us),
        ("unnamed host work", g.other_host_us),
        ("GPU-side waits", g.gpu_side_us),
        ("unmatched", g.unmatched_us),
    ];
    let shown: Vec<String> = parts
        .iter()
        .filter(|(_, us)| *us > 0.0)
        .map(|(what, us)| format!("{what} {}", pct(g.of_idle(*us))))
        .collect();
    let seen = if g.cpu_events {
        ""
    } else {
        " (no CPU operator events in the trace: the DataLoader and the optimizer cannot be seen)"
    };
    format!(
        "    GPU idle time by what the CPU was doing: {}{seen}",
        if shown.is_empty() {
            "none".to_string()
        } else {
            shown.join(", ")
        }
    )
}

/// The summary of `t` as indented text.
pub fn trace_text(t: &TraceSummary) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nProfiler trace: {} rank(s); {}.",
        t.ranks.len(),
        t.choices_text.join("; ")
    );
    for r in &t.ranks {
        rank_text(&mut out, r);
    }
    if let Some(s) = &t.skew {
        if let Some(r) = s.straggler {
            let _ = writeln!(
                out,
                "  across ranks: rank {r} reaches the step's last collective last in {} of {} steps; start skew p50 {:.0} µs ({} of a step)",
                pct(s.straggler_share),
                s.steps,
                s.comm_start_skew_p50_us,
                pct(s.skew_over_step)
            );
        }
    }
    out
}

/// One rank's GPU busy and idle time, the idle causes, kernels, launches and steps.
fn rank_text(out: &mut String, r: &RankSummary) {
    if r.streams.is_empty() {
        let _ = writeln!(
            out,
            "  rank {} ({}): no GPU operations in the trace ({} events)",
            r.rank, r.source, r.events
        );
        if r.step_stats.count > 0 {
            let _ = writeln!(
                out,
                "    {} steps: CPU p50 {}",
                r.step_stats.count,
                ms(r.step_stats.cpu_us.p50)
            );
        }
        return;
    }
    let i = &r.main_stream_idle;
    let total = i.total_us().max(f64::MIN_POSITIVE);
    let _ = writeln!(
        out,
        "  rank {} ({}): GPU busy {} of {} traced, idle {} (main stream idle: host wait {}, kernel wait {}, other {})",
        r.rank,
        r.source,
        pct(1.0 - r.idle_share),
        ms(r.span_us),
        pct(r.idle_share),
        pct(i.host_wait_us / total),
        pct(i.kernel_wait_us / total),
        pct(i.other_us / total)
    );
    let _ = writeln!(out, "{}", idle_causes(&r.gap_causes));
    let overlap = r
        .comm_overlap_share
        .map(|o| format!(" ({} under compute)", pct(o)))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "    compute {}, NCCL {}{overlap}, memcpy/memset {}",
        ms(r.compute_us),
        ms(r.comm_us),
        ms(r.memory_us)
    );
    let _ = writeln!(
        out,
        "    {} kernels (p50 {:.1} µs, {} under {} µs); launch call p50 {:.1} µs, launch delay p50 {:.1} µs; {} synchronizing calls",
        r.kernels.count,
        r.kernels.duration_us.p50,
        pct(r.kernels.short_share),
        gpuwhy::trace::SHORT_KERNEL_US,
        r.launch.runtime_us.p50,
        r.launch.delay_us.p50,
        r.syncs.total
    );
    let st = &r.step_stats;
    if st.count > 0 {
        let _ = writeln!(
            out,
            "    {} steps: CPU p50 {}, GPU busy / CPU p50 {:.2}, kernels per step p50 {:.0}, syncs per step p50 {:.0}",
            st.count,
            ms(st.cpu_us.p50),
            st.gpu_cpu_ratio.p50,
            st.kernels.p50,
            st.syncs.p50
        );
    }
    for k in r.top_kernels.iter().take(3) {
        let _ = writeln!(
            out,
            "    {} of kernel time: {} (×{}, mean {:.1} µs)",
            pct(k.share),
            k.name,
            k.count,
            k.mean_us
        );
    }
}
