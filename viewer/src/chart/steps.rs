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
    let mut out: Vec<&str> = steps
        .phases
        .iter()
        .map(String::as_str)
        .filter(|p| steps.phase_durations.contains_key(*p))
        .collect();
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
    let mut d: Vec<f32> = steps.duration.present().collect();
    if d.is_empty() {
        return None;
    }
    crate::sort::total(&mut d);
    let q = |p: f64| d[((d.len() - 1) as f64 * p).round() as usize] as f64;
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

/// Draws the per-phase stacked step times of the steps that start in the frame.
pub fn draw_stacked<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    steps: &StepsData,
    frame: &Frame,
    theme: &Theme,
) -> Result<(), ChartError> {
    let Frame { t0, t1, .. } = *frame;
    let phases = phase_order(steps);
    let bins = (frame.plot_width() / 3).max(1) as usize;
    let span = t1 - t0;
    // Per bin: step count, summed step time, summed time per phase.
    let mut count = vec![0u32; bins];
    let mut total = vec![0f64; bins];
    let mut per = vec![vec![0f64; bins]; phases.len()];
    for (i, &t) in steps.t.iter().enumerate() {
        if !(t >= t0 && t <= t1) {
            continue;
        }
        let b = (((t - t0) / span) * bins as f64)
            .floor()
            .clamp(0.0, bins as f64 - 1.0) as usize;
        let d = steps.duration.0.get(i).copied().unwrap_or(f32::NAN);
        let mut sum = 0.0;
        for (k, p) in phases.iter().enumerate() {
            let v = steps.phase_durations[*p]
                .0
                .get(i)
                .copied()
                .unwrap_or(f32::NAN);
            if v.is_finite() {
                per[k][b] += v as f64;
                sum += v as f64;
            }
        }
        count[b] += 1;
        total[b] += if d.is_finite() { d as f64 } else { sum };
    }
    let top = (0..bins)
        .filter(|&b| count[b] > 0)
        .map(|b| total[b] / count[b] as f64)
        .fold(0.0f64, f64::max);
    let mut items: Vec<(String, RGBColor)> = phases
        .iter()
        .enumerate()
        .map(|(k, p)| (p.to_string(), theme.series[k % theme.series.len()]))
        .collect();
    items.push(("not in a phase".into(), theme.grid));
    legend(area, "Step time by phase (mean per column)", &items, theme)?;
    let y1 = if top > 0.0 { top * 1.08 } else { 1.0 };
    let fmt_t = |t: &f64| time_label(*t, span);
    let fmt_y = |v: &f64| duration(*v);
    let mut chart = plot(area, t0..t1, 0.0..y1, X_AXIS_H, 4, &fmt_t, &fmt_y, theme)?;
    let w = span / bins as f64;
    for b in (0..bins).filter(|&b| count[b] > 0) {
        let n = count[b] as f64;
        let a = t0 + b as f64 * w;
        let mut y = 0.0;
        let mut rects = Vec::with_capacity(phases.len() + 1);
        for (k, _) in phases.iter().enumerate() {
            let h = per[k][b] / n;
            if h > 0.0 {
                rects.push(Rectangle::new(
                    [(a, y), (a + w, y + h)],
                    items[k].1.filled(),
                ));
                y += h;
            }
        }
        let rest = total[b] / n - y;
        if rest > 0.0 {
            rects.push(Rectangle::new(
                [(a, y), (a + w, y + rest)],
                theme.grid.filled(),
            ));
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
