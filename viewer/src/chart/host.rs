//! The host on the same time axis: CPU (all cores, per core, the recorded command), disk,
//! memory and pressure stalls — where a data-starved GPU's missing input usually went.

use gpuwhy::report::HostData;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::heatmap::{self, Row};
use super::{draw_panel, to_svg, ChartError, Frame, Line, Overlay, Panel, Reference, Scale};
use super::{PANEL_H, X_AXIS_H};
use crate::theme::Theme;
use crate::trace::Trace;
use crate::view::View;

/// The host panels that have data.
pub fn panels(host: &HostData) -> Vec<Panel<'_>> {
    let d = &host.data;
    let line = |m: &str, label: &'static str, scale: f32| Line {
        label,
        trace: Trace::new(d, m, scale),
    };
    let cores = host.facts.logical_cpus as f64;
    let mem_total = host.facts.mem_total_bytes as f64 * 1e-9;
    let mut out = vec![
        Panel {
            title: "CPU, all cores",
            unit: "%",
            lines: vec![
                line("cpu_total", "busy", 1.0),
                line("cpu_iowait", "iowait", 1.0),
            ],
            refs: vec![],
            scale: Scale::Percent,
        },
        Panel {
            title: "Recorded command CPU",
            unit: "% of one core",
            lines: vec![line("proc_cpu", "command and children", 1.0)],
            refs: reference(cores > 0.0, "all cores", cores * 100.0),
            scale: Scale::FromZero,
        },
        Panel {
            title: "Disk",
            unit: "MB/s",
            lines: vec![
                line("disk_read", "read", 1e-6),
                line("disk_write", "write", 1e-6),
            ],
            refs: vec![],
            scale: Scale::FromZero,
        },
        Panel {
            title: "Memory available",
            unit: "GB",
            lines: vec![line("mem_available", "available", 1e-9)],
            refs: reference(mem_total > 0.0, "total", mem_total),
            scale: Scale::FromZero,
        },
        Panel {
            title: "Pressure stalls",
            unit: "%",
            lines: vec![
                line("psi_cpu_some", "CPU some", 1.0),
                line("psi_io_some", "I/O some", 1.0),
                line("psi_mem_some", "memory some", 1.0),
            ],
            refs: vec![],
            scale: Scale::Percent,
        },
    ];
    for p in &mut out {
        p.lines.retain(|l| !l.trace.is_empty());
    }
    out.retain(|p| !p.lines.is_empty());
    out
}

/// A reference line `label` at `value` when `shown`, else none.
fn reference(shown: bool, label: &'static str, value: f64) -> Vec<Reference> {
    let mut v = Vec::new();
    if shown {
        v.push(Reference { label, value });
    }
    v
}

/// Per-core columns (`cpu0`, `cpu1`, …) in core order.
pub fn core_columns(host: &HostData) -> Vec<(u32, &str)> {
    let mut cores: Vec<(u32, &str)> = Vec::new();
    for k in host.data.metrics.keys() {
        if let Some(n) = k.strip_prefix("cpu").and_then(|n| n.parse().ok()) {
            cores.push((n, k.as_str()));
        }
    }
    // By core number (the map's order is by name: cpu0, cpu1, cpu10, …).
    crate::sort::short_by_key(&mut cores, |c| c.0);
    cores
}

/// Draws the host panels into `area` (of height `panels × PANEL_H + X_AXIS_H`).
pub fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    host: &HostData,
    frame: &Frame,
    theme: &Theme,
) -> Result<(), ChartError> {
    let mut overlay = Overlay::default();
    draw_with(area, host, frame, theme, &mut overlay)?;
    overlay.draw_on(area)
}

fn draw_with<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    host: &HostData,
    frame: &Frame,
    theme: &Theme,
    overlay: &mut Overlay,
) -> Result<(), ChartError> {
    let panels = panels(host);
    let n = panels.len();
    let mut rest = area.clone();
    for (k, p) in panels.iter().enumerate() {
        let last = k + 1 == n;
        let (top, bottom) = rest.split_vertically(PANEL_H + if last { X_AXIS_H } else { 0 });
        draw_panel(&top, p, frame, theme, last, &[], overlay)?;
        rest = bottom;
    }
    Ok(())
}

/// The host panels as SVG, `None` without host samples.
pub fn svg(view: &View, frame: &Frame, theme: &Theme) -> Result<Option<String>, ChartError> {
    let Some(host) = &view.report.host else {
        return Ok(None);
    };
    let n = panels(host).len();
    if n == 0 {
        return Ok(None);
    }
    let h = n as u32 * PANEL_H + X_AXIS_H;
    to_svg(frame.width, h, |a, d| draw_with(a, host, frame, theme, d)).map(Some)
}

/// Core × time heatmap of CPU busy share as SVG, `None` without per-core samples.
pub fn cores_svg(view: &View, frame: &Frame, theme: &Theme) -> Result<Option<String>, ChartError> {
    let Some(host) = &view.report.host else {
        return Ok(None);
    };
    let mut rows: Vec<Row> = Vec::new();
    for (n, m) in core_columns(host) {
        rows.push(Row {
            label: format!("cpu{n} "),
            trace: Trace::new(&host.data, m, 1.0),
        });
    }
    if rows.is_empty() {
        return Ok(None);
    }
    let h = heatmap::height(rows.len());
    to_svg(frame.width, h, |a, _| {
        heatmap::draw(a, "CPU busy (%) per core", &rows, 100.0, frame, theme)
    })
    .map(Some)
}
