//! One GPU's timeline: stacked panels (utilization, power against its limit, SM clock
//! against its maximum, memory against the total, PCIe, temperature against slowdown) on
//! the shared time axis, with events marked on every panel.

use gpuwhy::report::DeviceInfo;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::Scale;
use super::{draw_panel, to_svg, ChartError, Frame, Line, Marker, Overlay, Panel, Reference};
use super::{PANEL_H, X_AXIS_H};
use crate::theme::Theme;
use crate::trace::Trace;
use crate::view::View;

/// Reads a reference value (a limit, a maximum) from a device's facts.
pub type Fact = fn(&DeviceInfo) -> Option<f64>;

/// A panel of the timeline: which columns it shows and against what.
pub struct PanelDef {
    /// Title.
    pub title: &'static str,
    /// Unit.
    pub unit: &'static str,
    /// Report column names and their legend labels.
    pub metrics: &'static [(&'static str, &'static str)],
    /// Vertical axis.
    pub scale: Scale,
    /// The device fact drawn as a reference line, and its label.
    pub reference: Option<(&'static str, Fact)>,
}

/// The timeline's panels, top to bottom.
pub const PANELS: &[PanelDef] = &[
    PanelDef {
        title: "Utilization",
        unit: "%",
        metrics: &[
            ("util_gpu", "GPU busy"),
            ("gpm_sm_util", "SM active"),
            ("gpm_sm_occupancy", "SM occupancy"),
            ("gpm_tensor", "tensor active"),
        ],
        scale: Scale::Percent,
        reference: None,
    },
    PanelDef {
        title: "Power",
        unit: "W",
        metrics: &[("power", "power")],
        scale: Scale::FromZero,
        reference: Some(("limit", |d| d.power_limit_w)),
    },
    PanelDef {
        title: "SM clock",
        unit: "MHz",
        metrics: &[("sm_clock", "SM clock")],
        scale: Scale::FromZero,
        reference: Some(("max", |d| d.max_sm_clock_mhz)),
    },
    PanelDef {
        title: "Memory used",
        unit: "MiB",
        metrics: &[("mem_used", "used")],
        scale: Scale::FromZero,
        reference: Some(("total", |d| d.memory_total_mib)),
    },
    PanelDef {
        title: "PCIe",
        unit: "MB/s",
        metrics: &[("pcie_rx", "rx to GPU"), ("pcie_tx", "tx from GPU")],
        scale: Scale::FromZero,
        reference: None,
    },
    PanelDef {
        title: "Temperature",
        unit: "°C",
        metrics: &[("temp", "temperature")],
        scale: Scale::FromZero,
        reference: Some(("slowdown", |d| d.temp_slowdown_c)),
    },
];

/// The panels of the GPU at `pos` that have data, each with its definition's position in
/// [`PANELS`]; series without any value are left out of their panel.
pub fn panels(view: &View, pos: usize) -> Vec<(usize, Panel<'_>)> {
    let Some(series) = view.series(pos) else {
        return Vec::new();
    };
    let device = view.device(pos);
    // Loops, not iterator chains: each chain is its own generic code in the page's module.
    let mut out = Vec::new();
    for (i, def) in PANELS.iter().enumerate() {
        let mut lines = Vec::new();
        for &(m, label) in def.metrics {
            let trace = Trace::new(&series.data, m, 1.0);
            if !trace.is_empty() {
                lines.push(Line { label, trace });
            }
        }
        if lines.is_empty() {
            continue;
        }
        let mut refs = Vec::new();
        if let Some((label, get)) = def.reference {
            if let Some(v) = device.and_then(get) {
                if v.is_finite() && v > 0.0 {
                    refs.push(Reference { label, value: v });
                }
            }
        }
        out.push((
            i,
            Panel {
                title: def.title,
                unit: def.unit,
                lines,
                refs,
                scale: def.scale,
            },
        ));
    }
    out
}

/// Panels of the GPU at `pos` with no data, and why (the capability's reason when the
/// report gives one).
pub fn missing(view: &View, pos: usize) -> Vec<(&'static str, String)> {
    let have = panels(view, pos);
    let device = view.device(pos);
    let mut out = Vec::new();
    for (i, def) in PANELS.iter().enumerate() {
        if have.iter().any(|(j, _)| *j == i) {
            continue;
        }
        let why = device
            .and_then(|d| d.capabilities.get(def.metrics[0].0))
            .and_then(|c| c.reason.clone())
            .unwrap_or_else(|| "no samples in this report".into());
        out.push((def.title, why));
    }
    out
}

/// Events and the loss of the GPU at `pos`, as markers.
pub fn markers(view: &View, pos: usize) -> Vec<Marker> {
    let mut m = Vec::new();
    for e in view.events_for(pos) {
        m.push(Marker {
            t: e.t_s,
            fault: e.kind == "xid" || e.kind == "gpu_lost",
        });
    }
    if let Some(t) = view.device(pos).and_then(|d| d.lost_at_s) {
        m.push(Marker { t, fault: true });
    }
    m
}

/// Height of a timeline with `panels` panels, pixels.
pub fn height(panels: usize) -> u32 {
    panels.max(1) as u32 * PANEL_H + X_AXIS_H
}

/// Draws the timeline of the GPU at `pos` into `area`, which should be [`height`] high.
pub fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    view: &View,
    pos: usize,
    frame: &Frame,
    theme: &Theme,
) -> Result<(), ChartError> {
    let mut overlay = Overlay::default();
    draw_panels(
        area,
        &panels(view, pos),
        &markers(view, pos),
        frame,
        theme,
        &mut overlay,
    )?;
    overlay.draw_on(area)
}

fn draw_panels<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panels: &[(usize, Panel)],
    marks: &[Marker],
    frame: &Frame,
    theme: &Theme,
    overlay: &mut Overlay,
) -> Result<(), ChartError> {
    let n = panels.len();
    let mut rest = area.clone();
    for (k, (_, p)) in panels.iter().enumerate() {
        let last = k + 1 == n;
        let h = PANEL_H + if last { X_AXIS_H } else { 0 };
        let (top, bottom) = rest.split_vertically(h);
        draw_panel(&top, p, frame, theme, last, marks, overlay)?;
        rest = bottom;
    }
    Ok(())
}

/// The timeline of the GPU at `pos` as SVG.
pub fn svg(view: &View, pos: usize, frame: &Frame, theme: &Theme) -> Result<String, ChartError> {
    let panels = panels(view, pos);
    let marks = markers(view, pos);
    to_svg(frame.width, height(panels.len()), |a, d| {
        draw_panels(a, &panels, &marks, frame, theme, d)
    })
}

/// One value under the pointer, formatted for the read-out.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    /// `Power: power`.
    pub series: String,
    /// `312 W`, or `58 % (0–99)` for a bucket of a long run; `—` when there is none near.
    pub value: String,
}

impl Reading {
    /// `{series, value}` as JSON, for the page.
    pub fn to_json(&self) -> String {
        crate::json::Obj::new()
            .str("series", &self.series)
            .str("value", &self.value)
            .end()
    }
}

/// The value of every series of the GPU at `pos` nearest to `t`.
pub fn readout(view: &View, pos: usize, t: f64) -> Vec<Reading> {
    use crate::format::sig;
    let mut out = Vec::new();
    for (_, p) in panels(view, pos) {
        for l in &p.lines {
            let value = match l.trace.at(t) {
                Some(s) if s.lo == s.hi => format!("{} {}", sig(s.mean as f64, 3), p.unit),
                Some(s) => format!(
                    "{} {} ({}–{})",
                    sig(s.mean as f64, 3),
                    p.unit,
                    sig(s.lo as f64, 3),
                    sig(s.hi as f64, 3)
                ),
                None => "—".into(),
            };
            out.push(Reading {
                series: format!("{}: {}", p.title, l.label),
                value,
            });
        }
    }
    out
}
