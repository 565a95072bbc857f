//! Two runs on one chart: the step-time distributions of a baseline and a candidate
//! overlaid (as shares of each run's steps, so runs of different lengths compare), with each
//! run's p50 and p95 marked; and one GPU's utilization in both runs, each from its own start.
//!
//! The baseline is drawn in the first series colour, the candidate in the second,
//! everywhere. Report text stays out of these charts (the page labels them in HTML).

use gpuwhy::report::StepsData;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::steps::{legend, step_quantiles, HIST_BINS, HIST_H};
use super::{draw_panel, plot, to_svg, ChartError, Frame, Line, Overlay, Panel, Scale};
use super::{MIN_WIDTH, PANEL_H, X_AXIS_H};
use crate::format::{axis_number, duration};
use crate::theme::Theme;
use crate::trace::Trace;
use crate::view::View;

/// The two runs' names in legends, in colour order.
pub const RUNS: [&str; 2] = ["baseline", "candidate"];

/// Height of a utilization chart, pixels.
pub const UTIL_H: u32 = PANEL_H + X_AXIS_H;

/// Kept step durations, seconds.
fn durations(s: &StepsData) -> Vec<f64> {
    let mut v = Vec::new();
    for x in s.duration.present() {
        v.push(f64::from(x));
    }
    v
}

/// Share of each run's steps in each of [`HIST_BINS`] bins over `lo..hi`, in percent.
pub fn shares(d: &[f64], lo: f64, hi: f64) -> [f64; HIST_BINS] {
    let mut out = [0.0; HIST_BINS];
    let bw = (hi - lo) / HIST_BINS as f64;
    for v in d {
        let b = (((v - lo) / bw).floor().max(0.0) as usize).min(HIST_BINS - 1);
        out[b] += 1.0;
    }
    if !d.is_empty() {
        for x in &mut out {
            *x *= 100.0 / d.len() as f64;
        }
    }
    out
}

/// Draws step-time histograms on shared bins, as shares of each run's steps: each run as
/// an outline, its p50 as a solid and its p95 as a dashed vertical line. One run (the step
/// view): the outline in the axis colour, the marks in the legend's two colours. Two runs (a
/// comparison): each run and its marks in its own colour. One function for both, so that the
/// module carries it once.
pub fn draw_histograms<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    runs: &[&StepsData],
    theme: &Theme,
    overlay: &mut Overlay,
) -> Result<(), ChartError> {
    let one = runs.len() == 1;
    let mut d = Vec::with_capacity(runs.len());
    for r in runs {
        d.push(durations(r));
    }
    let (lo, hi) = extent(&d);
    let bw = (hi - lo) / HIST_BINS as f64;
    let mut top: f64 = 1.0;
    let mut share = Vec::with_capacity(runs.len());
    for v in &d {
        let s = shares(v, lo, hi);
        for v in &s {
            top = top.max(*v);
        }
        share.push(s);
    }
    let (items, q) = legend_items(runs, &d, theme);
    let title = if one {
        format!("Step time, {} steps", d[0].len())
    } else {
        "Step time (solid p50, dashed p95)".to_string()
    };
    legend(area, &title, &items, theme)?;
    let y1 = top * 1.1;
    let fmt_x = |v: &f64| duration(*v);
    let fmt_y = |v: &f64| format!("{}%", axis_number(*v));
    let mut chart = plot(area, lo..hi, 0.0..y1, X_AXIS_H, 4, &fmt_x, &fmt_y, theme)?;
    for (i, s) in share.iter().enumerate() {
        // The outline of the bars: up and across each bin, down to 0 at the end.
        let mut points = vec![(lo, 0.0)];
        for (b, v) in s.iter().enumerate() {
            let a = lo + b as f64 * bw;
            points.push((a, *v));
            points.push((a + bw, *v));
        }
        points.push((hi, 0.0));
        let color = if one {
            theme.axis
        } else {
            theme.series[i % theme.series.len()]
        };
        chart.draw_series(std::iter::once(PathElement::new(
            points,
            color.stroke_width(2),
        )))?;
        // p50 solid, p95 dashed: in the run's colour, or for one run in the legend's.
        let (p50, p95) = q[i];
        let marks = if one {
            [theme.series[0], theme.series[1]]
        } else {
            [color, color]
        };
        if p50.is_finite() && (lo..=hi).contains(&p50) {
            chart.draw_series(std::iter::once(PathElement::new(
                [(p50, 0.0), (p50, y1)],
                marks[0].stroke_width(1),
            )))?;
        }
        if p95.is_finite() && (lo..=hi).contains(&p95) {
            let (x, y0) = chart.backend_coord(&(p95, 0.0));
            let (_, y1) = chart.backend_coord(&(p95, y1));
            overlay.vdashes.push((x, y0, y1, marks[1]));
        }
    }
    Ok(())
}

/// The range the histograms span: all runs' step times, widened around a single value.
// One caller: inlined, so that splitting a long function costs the module no code.
#[inline(always)]
fn extent(d: &[Vec<f64>]) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in d {
        for x in v {
            lo = lo.min(*x);
            hi = hi.max(*x);
        }
    }
    if lo.is_finite() && hi > lo {
        (lo, hi)
    } else if lo.is_finite() {
        (lo * 0.9, lo * 1.1 + 1e-6)
    } else {
        (0.0, 1.0)
    }
}

/// One legend entry: its text and colour.
type LegendItem = (String, RGBColor);

/// The legend's entries and each run's step-time p50 and p95.
// One caller: inlined, so that splitting a long function costs the module no code.
#[inline(always)]
fn legend_items(
    runs: &[&StepsData],
    d: &[Vec<f64>],
    theme: &Theme,
) -> (Vec<LegendItem>, Vec<(f64, f64)>) {
    let one = runs.len() == 1;
    let mut q = Vec::with_capacity(runs.len());
    let mut items = Vec::with_capacity(2);
    for (i, r) in runs.iter().enumerate() {
        let (p50, p95) = step_quantiles(r).unwrap_or((f64::NAN, f64::NAN));
        q.push((p50, p95));
        if one {
            items.push((format!("p50 {}", duration(p50)), theme.series[0]));
            items.push((format!("p95 {}", duration(p95)), theme.series[1]));
        } else {
            let text = format!(
                "{} ({} steps): p50 {}, p95 {}",
                RUNS[i % 2],
                d[i].len(),
                duration(p50),
                duration(p95)
            );
            items.push((text, theme.series[i % theme.series.len()]));
        }
    }
    (items, q)
}

/// Step-time histograms of `runs` as SVG, `width` pixels wide.
pub fn histograms_of(runs: &[&StepsData], width: u32, theme: &Theme) -> Result<String, ChartError> {
    to_svg(width.max(MIN_WIDTH), HIST_H, |area, overlay| {
        draw_histograms(area, runs, theme, overlay)
    })
}

/// Kept step timings, when there are any.
fn kept(v: &View) -> Option<&StepsData> {
    v.report
        .steps
        .as_ref()
        .filter(|s| s.duration.present().next().is_some())
}

/// Both runs' step-time histograms as SVG, `None` unless both have kept steps.
pub fn histograms_svg(
    a: &View,
    b: &View,
    width: u32,
    theme: &Theme,
) -> Result<Option<String>, ChartError> {
    let (Some(x), Some(y)) = (kept(a), kept(b)) else {
        return Ok(None);
    };
    histograms_of(&[x, y], width, theme).map(Some)
}

/// The utilization of the GPU at `pos` in both runs, each against seconds since its own
/// start, on one axis as long as the longer run; `None` when either run lacks that GPU.
pub fn utilization_svg(
    a: &View,
    b: &View,
    pos: usize,
    width: u32,
    theme: &Theme,
) -> Result<Option<String>, ChartError> {
    let (Some(x), Some(y)) = (a.series(pos), b.series(pos)) else {
        return Ok(None);
    };
    let panel = Panel {
        title: "Utilization, baseline and candidate",
        unit: "%",
        lines: vec![
            Line {
                label: RUNS[0],
                trace: Trace::new(&x.data, "util_gpu", 1.0),
            },
            Line {
                label: RUNS[1],
                trace: Trace::new(&y.data, "util_gpu", 1.0),
            },
        ],
        refs: Vec::new(),
        scale: Scale::Percent,
    };
    let frame = Frame::new(width, 0.0, a.t_range.1.max(b.t_range.1));
    to_svg(frame.width, UTIL_H, |area, overlay| {
        draw_panel(area, &panel, &frame, theme, true, &[], overlay)
    })
    .map(Some)
}
