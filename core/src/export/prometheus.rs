//! Prometheus text exposition of a report's latest values, in dcgm-exporter's style.

use std::fmt::Write;

use crate::metric::GpuMetric;
use crate::report::{DeviceInfo, Report};

/// (gpuwhy metric, Prometheus name, help, scale to the exported unit). Names follow
/// dcgm-exporter's `DCGM_FI_*` field names so existing dashboards pick them up.
const METRICS: [(GpuMetric, &str, &str, f64); 12] = [
    (
        GpuMetric::UtilGpu,
        "DCGM_FI_DEV_GPU_UTIL",
        "GPU utilization (in %).",
        1.0,
    ),
    (
        GpuMetric::UtilMem,
        "DCGM_FI_DEV_MEM_COPY_UTIL",
        "Memory utilization (in %).",
        1.0,
    ),
    (
        GpuMetric::MemUsed,
        "DCGM_FI_DEV_FB_USED",
        "Framebuffer memory used (in MiB).",
        1.0,
    ),
    (
        GpuMetric::Power,
        "DCGM_FI_DEV_POWER_USAGE",
        "Power draw (in W).",
        1.0,
    ),
    (
        GpuMetric::Temp,
        "DCGM_FI_DEV_GPU_TEMP",
        "GPU temperature (in C).",
        1.0,
    ),
    (
        GpuMetric::SmClock,
        "DCGM_FI_DEV_SM_CLOCK",
        "SM clock frequency (in MHz).",
        1.0,
    ),
    (
        GpuMetric::MemClock,
        "DCGM_FI_DEV_MEM_CLOCK",
        "Memory clock frequency (in MHz).",
        1.0,
    ),
    (
        GpuMetric::ClockReasons,
        "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
        "Current clock throttle reasons (bitmask).",
        1.0,
    ),
    (
        GpuMetric::PcieRx,
        "DCGM_FI_PROF_PCIE_RX_BYTES",
        "PCIe receive rate (in B/s).",
        1e6,
    ),
    (
        GpuMetric::PcieTx,
        "DCGM_FI_PROF_PCIE_TX_BYTES",
        "PCIe transmit rate (in B/s).",
        1e6,
    ),
    (
        GpuMetric::GpmSmUtil,
        "DCGM_FI_PROF_SM_ACTIVE",
        "Ratio of cycles an SM has at least one warp assigned.",
        0.01,
    ),
    (
        GpuMetric::GpmTensor,
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
        "Ratio of cycles the tensor pipe is active.",
        0.01,
    ),
];

/// Escapes a label value (backslash, double quote, newline), as the exposition format asks.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn labels(d: &DeviceInfo, host: &str) -> String {
    format!(
        "gpu=\"{}\",UUID=\"{}\",modelName=\"{}\",Hostname=\"{}\"",
        d.index,
        label(d.uuid.as_deref().unwrap_or("")),
        label(d.name.as_deref().unwrap_or("")),
        label(host)
    )
}

/// The latest present value of each exported metric per GPU, each GPU's last health
/// counters (`prometheus_health`), and the current verdict, as Prometheus text exposition
/// (format 0.0.4).
pub fn prometheus_text(r: &Report) -> String {
    let mut out = String::new();
    let host = if r.run.host.is_empty() {
        "unknown"
    } else {
        r.run.host.as_str()
    };
    for (m, name, help, scale) in METRICS {
        let mut lines = Vec::new();
        for d in &r.devices {
            let Some(s) = r.series.iter().find(|s| s.device == d.index) else {
                continue;
            };
            let Some(v) = s
                .data
                .metrics
                .get(m.name())
                .and_then(|c| c.0.iter().rev().find(|v| !v.is_nan()))
            else {
                continue;
            };
            lines.push(format!(
                "{name}{{{}}} {}",
                labels(d, host),
                f64::from(*v) * scale
            ));
        }
        if !lines.is_empty() {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
            for l in lines {
                let _ = writeln!(out, "{l}");
            }
        }
    }
    out.push_str(&super::prometheus_health::health_text(&r.devices, |d| {
        labels(d, host)
    }));
    let _ = writeln!(out, "# HELP gpuwhy_top_finding The current top finding of gpuwhy's diagnosis (value: its confidence; id none when no bottleneck was found).");
    let _ = writeln!(out, "# TYPE gpuwhy_top_finding gauge");
    let _ = writeln!(
        out,
        "gpuwhy_top_finding{{id=\"{}\",title=\"{}\",Hostname=\"{}\"}} {}",
        label(&r.verdict.id),
        label(&r.verdict.title),
        label(host),
        if r.verdict.confidence.is_finite() {
            r.verdict.confidence
        } else {
            0.0
        }
    );
    let _ = writeln!(
        out,
        "# HELP gpuwhy_finding_confidence Confidence of each finding of gpuwhy's diagnosis."
    );
    let _ = writeln!(out, "# TYPE gpuwhy_finding_confidence gauge");
    for f in &r.findings {
        let _ = writeln!(
            out,
            "gpuwhy_finding_confidence{{id=\"{}\",severity=\"{}\",Hostname=\"{}\"}} {}",
            label(&f.id),
            f.severity.as_str(),
            label(host),
            f.confidence
        );
    }
    out
}
