//! The step view: per-phase step times stacked over the run (on the shared time axis), and
//! the distribution of step times with its median and 95th percentile marked (drawn by
//! [`super::compare::draw_histograms`], which also overlays two runs). The guides'
//! procedure reads medians and tails, never means, so both are drawn.

use gpuwhy::report::StepsData;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{font, plot, text_width, to_svg, ChartError, Frame, LEFT, PANEL_H, X_AXIS_H};
use crate::format::{duration, time_label};
use crate::theme::Theme;
use crate::view::View;

/// Height of the stacked chart, pixels.
pub const STACK_H: u32 = 2 * PANEL_H + X_AXIS_H;
/// Height of the histogram, pixels.
pub const HIST_H: u32 = 2 * PANEL_H + X_AXIS_H;
/// Bars of the histogram.
pub const HIST_BINS: usize = 40;

/// Phases in the report's order, then any others that have durations.
pub fn phase_order(steps: &StepsData) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for p in &steps.phases {
        if steps.phase_durations.contains_key(p) {
            out.push(p);
        }
    }
    for k in steps.phase_durations.keys() {
        if !out.contains(&k.as_str()) {
            out.push(k);
        }
    }
    out
}

/// Median and 95th percentile of step time: from the report's statistics over all steps
/// when present, else from the kept steps.
pub fn step_quantiles(steps: &StepsData) -> Option<(f64, f64)> {
    if let Some(s) = steps.stats.get("step").filter(|s| s.count > 0) {
        return Some((s.p50_s, s.p95_s));
    }
    let mut d = crate::compare::stats::present(&steps.duration);
    if d.is_empty() {
        return None;
    }
    crate::sort::total(&mut d);
    let q = |p: f64| gpuwhy::stats::percentile_sorted(&d, p);
    Some((q(0.5), q(0.95)))
}

/// A title and coloured swatches with their labels, along the chart's top strip.
pub(crate) fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    items: &[(String, RGBColor)],
    theme: &Theme,
) -> Result<(), ChartError> {
    let top = Pos::new(HPos::Left, VPos::Top);
    area.draw(&Text::new(
        title.to_string(),
        (LEFT as i32, 2),
        font(12.0, theme.text).pos(top),
    ))?;
    let mut x = LEFT as i32 + text_width(title, 12.0) + 14;
    for (label, color) in items {
        area.draw(&Rectangle::new([(x, 4), (x + 10, 14)], color.filled()))?;
        area.draw(&Text::new(
            label.clone(),
            (x + 14, 3),
            font(11.0, theme.muted).pos(top),
        ))?;
        x += 14 + text_width(label, 11.0) + 12;
    }
    Ok(())
}

/// The step chart's columns: per column its time range, step count, summed step time and
/// summed time per phase.
struct Columns {
    /// One column per step (few steps) rather than per few pixels (many).
    each: bool,
    x: Vec<(f64, f64)>,
    count: Vec<u32>,
    total: Vec<f64>,
    per: Vec<Vec<f64>>,
}

/// The columns of the steps that start in the frame: one per step, as wide as the step
/// lasted, while there is room for that (a short run: 15 steps are 15 readable columns, not
/// hairlines); else the mean of the steps in each three-pixel column (100,000 steps).
fn columns(steps: &StepsData, phases: &[&str], frame: &Frame) -> Columns {
    let Frame { t0, t1, .. } = *frame;
    let bins = (frame.plot_width() / 3).max(1) as usize;
    let span = t1 - t0;
    let each = steps.t.iter().filter(|&&t| t >= t0 && t <= t1).count() <= bins;
    let mut c = Columns {
        each,
        x: vec![(0.0, 0.0); bins],
        count: vec![0; bins],
        total: vec![0.0; bins],
        per: vec![vec![0.0; bins]; phases.len()],
    };
    let mut next = 0;
    for (i, &t) in steps.t.iter().enumerate() {
        if !(t >= t0 && t <= t1) {
            continue;
        }
        let b = if each {
            next += 1;
            next - 1
        } else {
            (((t - t0) / span) * bins as f64)
                .floor()
                .clamp(0.0, bins as f64 - 1.0) as usize
        };
        let d = steps.duration.0.get(i).copied().unwrap_or(f32::NAN);
        let mut sum = 0.0;
        for (k, p) in phases.iter().enumerate() {
            let v = steps.phase_durations[*p]
                .0
                .get(i)
                .copied()
                .unwrap_or(f32::NAN);
            if v.is_finite() {
                c.per[k][b] += v as f64;
                sum += v as f64;
            }
        }
        let len = if d.is_finite() { d as f64 } else { sum };
        c.count[b] += 1;
        c.total[b] += len;
        let w = span / bins as f64;
        c.x[b] = if each {
            (t, t + len)
        } else {
            (t0 + b as f64 * w, t0 + (b + 1) as f64 * w)
        };
    }
    c
}

/// Draws the per-phase stacked step times of the steps that start in the frame (see
/// [`columns`]).
pub fn draw_stacked<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    steps: &StepsData,
    frame: &Frame,
    theme: &Theme,
) -> Result<(), ChartError> {
    let Frame { t0, t1, .. } = *frame;
    let span = t1 - t0;
    let phases = phase_order(steps);
    let c = columns(steps, &phases, frame);
    let used = || (0..c.count.len()).filter(|&b| c.count[b] > 0);
    let top = used()
        .map(|b| c.total[b] / c.count[b] as f64)
        .fold(0.0f64, f64::max);
    let mut items: Vec<(String, RGBColor)> = Vec::new();
    for (k, p) in phases.iter().enumerate() {
        items.push((p.to_string(), theme.series[k % theme.series.len()]));
    }
    items.push(("not in a phase".into(), theme.grid));
    let title = if c.each {
        "Step time by phase (a column per step)"
    } else {
        "Step time by phase (mean per column)"
    };
    legend(area, title, &items, theme)?;
    let y1 = if top > 0.0 { top * 1.08 } else { 1.0 };
    let fmt_t = |t: &f64| time_label(*t, span);
    let fmt_y = |v: &f64| duration(*v);
    let mut chart = plot(area, t0..t1, 0.0..y1, X_AXIS_H, 4, &fmt_t, &fmt_y, theme)?;
    let px = span / frame.plot_width().max(1) as f64;
    for b in used() {
        let n = c.count[b] as f64;
        // A step's column is at least two pixels wide, and one pixel short of the next
        // step where it is wide enough to spare it, so that steps can be told apart.
        let (a, mut e) = c.x[b];
        if c.each {
            e = if e - a > 4.0 * px {
                e - px
            } else {
                e.max(a + 2.0 * px)
            };
        }
        let e = e.min(t1);
        let mut y = 0.0;
        let mut rects = Vec::with_capacity(phases.len() + 1);
        for (k, item) in items.iter().enumerate().take(phases.len()) {
            let h = c.per[k][b] / n;
            if h > 0.0 {
                rects.push(Rectangle::new([(a, y), (e, y + h)], item.1.filled()));
                y += h;
            }
        }
        let rest = c.total[b] / n - y;
        if rest > 0.0 {
            rects.push(Rectangle::new([(a, y), (e, y + rest)], theme.grid.filled()));
        }
        chart.draw_series(rects)?;
    }
    Ok(())
}

/// The stacked per-phase chart as SVG, `None` without kept steps.
pub fn stacked_svg(
    view: &View,
    frame: &Frame,
    theme: &Theme,
) -> Result<Option<String>, ChartError> {
    match &view.report.steps {
        Some(s) if !s.t.is_empty() => to_svg(frame.width, STACK_H, |a, _| {
            draw_stacked(a, s, frame, theme)
        })
        .map(Some),
        _ => Ok(None),
    }
}

/// The step-time histogram (shares of steps, p50 and p95 marked) as SVG, `None` without
/// kept steps.
pub fn histogram_svg(view: &View, width: u32, theme: &Theme) -> Result<Option<String>, ChartError> {
    match &view.report.steps {
        Some(s) if s.duration.present().next().is_some() => {
            super::compare::histograms_of(&[s], width, theme).map(Some)
        }
        _ => Ok(None),
    }
}
