//! Heatmaps: one row per stream (a GPU, a CPU core), one cell per few pixels of time, the
//! cell's colour the mean value there. Several GPUs out of step, or one core pegged, show
//! at a glance.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{font, plot, to_svg, ChartError, Frame, LEFT, TITLE_H, X_AXIS_H};
use crate::format::time_label;
use crate::theme::Theme;
use crate::trace::Trace;
use crate::view::View;

/// Pixels of time per cell.
pub const CELL_W: u32 = 3;

/// One row of a heatmap.
pub struct Row<'a> {
    /// Label left of the row (escaped by the SVG backend).
    pub label: String,
    /// The values.
    pub trace: Trace<'a>,
}

/// Height of one row for `rows` rows: large for a few GPUs, thin for a hundred cores.
pub fn row_height(rows: usize) -> u32 {
    (240 / rows.max(1) as u32).clamp(3, 22)
}

/// Height of a heatmap of `rows` rows, pixels.
pub fn height(rows: usize) -> u32 {
    TITLE_H + rows.max(1) as u32 * row_height(rows) + X_AXIS_H
}

/// Draws `rows` into `area` (of [`height`]): values from 0 (`heat_low`) to `max`
/// (`heat_high`); cells without samples stay empty.
pub fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    rows: &[Row],
    max: f64,
    frame: &Frame,
    theme: &Theme,
) -> Result<(), ChartError> {
    let Frame { t0, t1, .. } = *frame;
    let n = rows.len().max(1);
    area.draw(&Text::new(
        title.to_string(),
        (LEFT as i32, 2),
        font(12.0, theme.text).pos(Pos::new(HPos::Left, VPos::Top)),
    ))?;
    let span = t1 - t0;
    let fmt_t = |t: &f64| time_label(*t, span);
    // Rows, not a y axis: no y labels or grid.
    let mut chart = plot(
        area,
        t0..t1,
        0.0..n as f64,
        X_AXIS_H,
        0,
        &fmt_t,
        &fmt_t,
        theme,
    )?;
    // No more cells than samples, so a short run is not drawn as stripes with gaps.
    let most = (frame.plot_width() / CELL_W) as usize;
    let samples = rows
        .iter()
        .map(|r| r.trace.count(t0, t1, most))
        .max()
        .unwrap_or(0);
    let cells = most.min(samples).max(1);
    let cell_t = span / cells as f64;
    let label_every = (14 / row_height(n)).max(1) as usize;
    for (i, row) in rows.iter().enumerate() {
        // Row 0 on top.
        let y = (n - 1 - i) as f64;
        // Neighbouring cells of one colour are one rectangle: the same picture in far
        // fewer elements (a steady GPU is one rectangle, not hundreds).
        let mut runs: Vec<(usize, usize, RGBColor)> = Vec::new();
        for (c, m) in row.trace.slice_means(t0, t1, cells).into_iter().enumerate() {
            let Some(v) = m else { continue };
            let color = theme.heat(v / max);
            match runs.last_mut() {
                Some((_, end, last)) if *end == c && *last == color => *end = c + 1,
                _ => runs.push((c, c + 1, color)),
            }
        }
        chart.draw_series(runs.into_iter().map(|(a, b, color)| {
            Rectangle::new(
                [
                    (t0 + a as f64 * cell_t, y),
                    (t0 + b as f64 * cell_t, y + 1.0),
                ],
                color.filled(),
            )
        }))?;
        if i % label_every == 0 {
            chart.draw_series(std::iter::once(Text::new(
                row.label.clone(),
                (t0, y + 0.5),
                font(11.0, theme.muted).pos(Pos::new(HPos::Right, VPos::Center)),
            )))?;
        }
    }
    Ok(())
}

/// GPU × time heatmap of `util_gpu` over every GPU of the report, as SVG.
pub fn gpu_svg(view: &View, frame: &Frame, theme: &Theme) -> Result<String, ChartError> {
    let mut rows: Vec<Row> = Vec::new();
    for g in &view.gpus {
        if let Some(s) = view.series(g.pos) {
            rows.push(Row {
                label: format!("GPU {} ", g.index),
                trace: Trace::new(&s.data, "util_gpu", 1.0),
            });
        }
    }
    to_svg(frame.width, height(rows.len()), |a, _| {
        draw(a, "GPU busy (%) per GPU", &rows, 100.0, frame, theme)
    })
}
