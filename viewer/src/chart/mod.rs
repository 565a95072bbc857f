//! Charts, drawn by functions generic over plotters' `DrawingBackend`, and their SVG
//! renderings.
//!
//! Every time chart shares one layout — the same label column on the left and margin on the
//! right — so charts stacked on a page line up on one time axis, and the page can turn a
//! pointer position into a time with [`LEFT`], [`RIGHT`] and the chart's width alone.

pub mod compare;
pub mod heatmap;
pub mod host;
mod overlay;
pub mod steps;
pub mod timeline;

use std::ops::Range;

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::drawing::DrawingAreaErrorKind;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub use overlay::Overlay;

use crate::format::{axis_number, time_label};
use crate::theme::Theme;
use crate::trace::Trace;

/// Width of the label column left of every plot, pixels.
pub const LEFT: u32 = 64;
/// Margin right of every plot, pixels.
pub const RIGHT: u32 = 16;
/// Height of one panel (title strip included), pixels.
pub const PANEL_H: u32 = 88;
/// Height of a panel's title strip, pixels.
pub const TITLE_H: u32 = 18;
/// Height of the time axis under the last panel, pixels.
pub const X_AXIS_H: u32 = 24;
/// Pixels per read, on average, from which a slow metric is drawn as dots.
pub const DOT_SPACING: usize = 4;
/// Smallest chart width drawn, pixels.
pub const MIN_WIDTH: u32 = LEFT + RIGHT + 40;

/// A chart that could not be drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartError(pub String);

impl std::fmt::Display for ChartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "chart could not be drawn: {}", self.0)
    }
}

impl std::error::Error for ChartError {}

impl<E: std::error::Error + Send + Sync> From<DrawingAreaErrorKind<E>> for ChartError {
    /// The backend's own error is not formatted: the page's backend writes into a `String`
    /// and does not fail, and formatting its error type (`std::io::Error`) would bring every
    /// I/O error's description into the page's WebAssembly.
    fn from(e: DrawingAreaErrorKind<E>) -> Self {
        ChartError(match e {
            DrawingAreaErrorKind::BackendError(_) => "the drawing backend failed".into(),
            DrawingAreaErrorKind::SharingError => "the drawing area is shared".into(),
            DrawingAreaErrorKind::LayoutError => "the chart layout does not fit".into(),
        })
    }
}

/// The horizontal frame every time chart on a page shares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frame {
    /// Chart width, pixels.
    pub width: u32,
    /// Visible start, seconds since the run started.
    pub t0: f64,
    /// Visible end, seconds.
    pub t1: f64,
}

impl Frame {
    /// A frame at least [`MIN_WIDTH`] wide over a non-empty range.
    pub fn new(width: u32, t0: f64, t1: f64) -> Self {
        let t1 = if t1 > t0 { t1 } else { t0 + 1.0 };
        Frame {
            width: width.max(MIN_WIDTH),
            t0,
            t1,
        }
    }

    /// Width of the plot area: one decimation column per pixel.
    pub fn plot_width(&self) -> u32 {
        self.width - LEFT - RIGHT
    }
}

/// How a panel's vertical axis is chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    /// 0–100 (further if a value exceeds 100).
    Percent,
    /// From 0 to a little above the highest value or reference.
    FromZero,
}

/// One series in a panel.
pub struct Line<'a> {
    /// Legend text.
    pub label: &'static str,
    /// The values.
    pub trace: Trace<'a>,
}

/// A horizontal reference line (a limit or maximum from the device facts).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reference {
    /// Legend text.
    pub label: &'static str,
    /// Where it is drawn.
    pub value: f64,
}

/// An instant marked on every panel of a timeline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Marker {
    /// Seconds since the start.
    pub t: f64,
    /// True for faults (XID, GPU lost), drawn in the fault colour.
    pub fault: bool,
}

/// One panel of a time chart: a few series in one unit.
pub struct Panel<'a> {
    /// Title shown above the plot.
    pub title: &'static str,
    /// Unit of the values.
    pub unit: &'static str,
    /// The series, in legend order.
    pub lines: Vec<Line<'a>>,
    /// Reference lines.
    pub refs: Vec<Reference>,
    /// Vertical axis.
    pub scale: Scale,
}

impl Panel<'_> {
    /// True when no series has a value anywhere.
    pub fn is_empty(&self) -> bool {
        self.lines.iter().all(|l| l.trace.is_empty())
    }
}

/// Text style for chart labels.
pub(crate) fn font(size: f64, color: RGBColor) -> TextStyle<'static> {
    // The family by name, not by string: plotters lower-cases a string to look it up,
    // which brings Unicode case tables into the module.
    (FontFamily::SansSerif, size).into_font().color(&color)
}

/// Draws one panel into `area` (which is [`PANEL_H`] high, plus [`X_AXIS_H`] when
/// `x_axis`): title and legend, grid and markers; its decimated series and its reference
/// lines go to `overlay`, for the caller to draw over it.
pub fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel,
    frame: &Frame,
    theme: &Theme,
    x_axis: bool,
    markers: &[Marker],
    overlay: &mut Overlay,
) -> Result<(), ChartError> {
    let Frame { t0, t1, .. } = *frame;
    draw_title(area, panel, theme)?;

    // Decimated first: each pixel column keeps its lowest and highest value, so the
    // decimated points span the same range as the samples, found without another pass.
    let mut runs = Vec::with_capacity(panel.lines.len());
    for l in &panel.lines {
        runs.push(l.trace.decimate(t0, t1, frame.plot_width()));
    }
    let mut hi = f64::NEG_INFINITY;
    let mut lo: f64 = 0.0;
    for line in &runs {
        for run in line {
            for &(_, v) in run {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
    }
    for r in &panel.refs {
        hi = hi.max(r.value);
    }
    let (y0, y1) = match panel.scale {
        Scale::Percent => (lo.min(0.0), hi.max(100.0)),
        Scale::FromZero if hi.is_finite() && hi > lo => (lo, hi * 1.08),
        Scale::FromZero => (lo, lo + 1.0),
    };

    let span = t1 - t0;
    let x_axis_h = if x_axis { X_AXIS_H } else { 0 };
    let fmt_t = |t: &f64| time_label(*t, span);
    let fmt_y = |v: &f64| axis_number(*v);
    let mut chart = plot(area, t0..t1, y0..y1, x_axis_h, 4, &fmt_t, &fmt_y, theme)?;

    for r in &panel.refs {
        let (x0, y) = chart.backend_coord(&(t0, r.value));
        let (x1, _) = chart.backend_coord(&(t1, r.value));
        overlay.dashes.push((x0, x1, y, theme.reference));
    }
    chart.draw_series(markers.iter().filter(|m| m.t >= t0 && m.t <= t1).map(|m| {
        let c = if m.fault { theme.fault } else { theme.event };
        PathElement::new([(m.t, y0), (m.t, y1)], c.stroke_width(1))
    }))?;
    for (i, (line_runs, l)) in runs.into_iter().zip(&panel.lines).enumerate() {
        let color = theme.series[i % theme.series.len()];
        // A slow metric's reads, while there is room between them, are drawn as dots: a
        // line from one read to the next (a second apart) would look like data between.
        let n: usize = line_runs.iter().map(Vec::len).sum();
        let dots = l.trace.is_slow() && n * DOT_SPACING <= frame.plot_width() as usize;
        for run in line_runs {
            if dots {
                overlay
                    .dots
                    .push((run.iter().map(|p| chart.backend_coord(p)).collect(), color));
            } else if run.len() >= 2 {
                overlay.line(run.iter().map(|p| chart.backend_coord(p)), color);
            } else if let Some(&p) = run.first() {
                chart.draw_series(std::iter::once(Circle::new(p, 2, color.filled())))?;
            }
        }
    }
    Ok(())
}

/// The plot area of a chart under its title strip, in the layout every chart shares (the
/// [`LEFT`] label column, the [`RIGHT`] margin), over `x` by `y`, with its grid and axes
/// drawn: 8 labels along x (in an `x_axis_h` pixels high strip, 0 for none) and `y_labels`
/// up y (0: no labels and no horizontal grid, as the heatmap's rows), written by `fmt_x`
/// and `fmt_y`. The formatters are taken as `dyn` so that every chart shares one copy of
/// this code in the module.
#[allow(clippy::too_many_arguments)]
pub(crate) fn plot<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    x: Range<f64>,
    y: Range<f64>,
    x_axis_h: u32,
    y_labels: usize,
    fmt_x: &dyn Fn(&f64) -> String,
    fmt_y: &dyn Fn(&f64) -> String,
    theme: &Theme,
) -> Result<ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>, ChartError> {
    let mut chart = ChartBuilder::on(area)
        .margin_top(TITLE_H)
        .margin_right(RIGHT)
        .x_label_area_size(x_axis_h)
        .y_label_area_size(LEFT)
        .build_cartesian_2d(x, y)?;
    let mut mesh = chart.configure_mesh();
    mesh.x_labels(8)
        .y_labels(y_labels)
        .light_line_style(TRANSPARENT)
        .bold_line_style(theme.grid)
        .axis_style(theme.axis)
        .label_style(font(11.0, theme.muted))
        .x_label_formatter(fmt_x)
        .y_label_formatter(fmt_y);
    if y_labels == 0 {
        mesh.disable_y_mesh();
    }
    mesh.draw()?;
    Ok(chart)
}

/// Title, unit and legend along the top strip of a panel. Text widths are estimated (about
/// 0.6 em a character) rather than measured: measuring needs a DOM round trip per label.
fn draw_title<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel,
    theme: &Theme,
) -> Result<(), ChartError> {
    let top = Pos::new(HPos::Left, VPos::Top);
    let title = format!("{} ({})", panel.title, panel.unit);
    let mut x = LEFT as i32;
    area.draw(&Text::new(
        title.clone(),
        (x, 2),
        font(12.0, theme.text).pos(top),
    ))?;
    x += text_width(&title, 12.0) + 14;
    let legend = panel.lines.len() > 1 || !panel.refs.is_empty();
    if !legend {
        return Ok(());
    }
    for (i, l) in panel.lines.iter().enumerate() {
        let color = theme.series[i % theme.series.len()];
        area.draw(&PathElement::new(
            [(x, 9), (x + 14, 9)],
            color.stroke_width(2),
        ))?;
        area.draw(&Text::new(
            l.label,
            (x + 18, 3),
            font(11.0, theme.muted).pos(top),
        ))?;
        x += 18 + text_width(l.label, 11.0) + 12;
    }
    for r in &panel.refs {
        area.draw(&DashedPathElement::new(
            [(x, 9), (x + 14, 9)],
            4,
            3,
            theme.reference.stroke_width(1),
        ))?;
        let text = format!("{} {}", r.label, axis_number(r.value));
        area.draw(&Text::new(
            text.clone(),
            (x + 18, 3),
            font(11.0, theme.muted).pos(top),
        ))?;
        x += 18 + text_width(&text, 11.0) + 12;
    }
    Ok(())
}

/// Estimated width of `s` in a sans-serif font of `size` pixels.
pub(crate) fn text_width(s: &str, size: f64) -> i32 {
    (s.chars().count() as f64 * size * 0.58).ceil() as i32
}

/// Renders `draw` onto an SVG string `width` × `height` pixels, with the [`Overlay`] it
/// fills on top.
pub fn to_svg(
    width: u32,
    height: u32,
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>, &mut Overlay) -> Result<(), ChartError>,
) -> Result<String, ChartError> {
    let mut out = String::new();
    let mut overlay = Overlay::default();
    {
        let root = SVGBackend::with_string(&mut out, (width, height)).into_drawing_area();
        draw(&root, &mut overlay)?;
        root.present()?;
    }
    overlay.write_svg(&mut out);
    Ok(out)
}
