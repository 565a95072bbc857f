//! What a chart draws in bulk: its data lines and its dashed reference lines (a power
//! limit, a maximum clock, the memory total).
//!
//! These are most of a chart's SVG. plotters writes each point through `format!` and escapes
//! the result character by character, and draws a dashed line as one element per dash: a
//! reference line across a wide chart is well over a hundred elements, a day of eight GPUs
//! thousands, which the browser must parse, style and lay out. So a chart collects them
//! here, in backend pixels, and [`to_svg`](super::to_svg) writes each as one element (a
//! `<polyline>`, a `<line>` with a dash pattern) straight into the document; on any other
//! backend [`Overlay::draw_on`] draws them with plotters.

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

use super::ChartError;
use crate::theme::Theme;

/// Dash and gap lengths, pixels.
const DASH: (u32, u32) = (5, 4);

/// Lines in backend pixels, drawn after (over) everything else on the chart.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Overlay {
    /// Polylines, one pixel wide: points and colour.
    pub lines: Vec<(Vec<(i32, i32)>, RGBColor)>,
    /// Dashed horizontal lines: `(x0, x1, y, colour)`.
    pub dashes: Vec<(i32, i32, i32, RGBColor)>,
}

impl Overlay {
    /// Draws everything with plotters (for backends other than [`to_svg`](super::to_svg)'s).
    pub fn draw_on<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), ChartError> {
        for (points, c) in &self.lines {
            root.draw(&PathElement::new(points.clone(), c.stroke_width(1)))?;
        }
        for &(x0, x1, y, c) in &self.dashes {
            root.draw(&DashedPathElement::new(
                [(x0, y), (x1, y)],
                DASH.0,
                DASH.1,
                c.stroke_width(1),
            ))?;
        }
        Ok(())
    }

    /// Writes everything into an SVG document, just before its closing tag.
    pub fn write_svg(&self, svg: &mut String) {
        let end = svg.rfind("</svg>").unwrap_or(svg.len());
        let tail = svg.split_off(end);
        for (points, c) in &self.lines {
            svg.push_str("<polyline fill=\"none\" stroke=\"");
            svg.push_str(&Theme::hex(*c));
            svg.push_str("\" stroke-width=\"1\" points=\"");
            for &(x, y) in points {
                push_int(svg, x);
                svg.push(',');
                push_int(svg, y);
                svg.push(' ');
            }
            svg.push_str("\"/>\n");
        }
        for &(x0, x1, y, c) in &self.dashes {
            svg.push_str("<line x1=\"");
            push_int(svg, x0);
            svg.push_str("\" y1=\"");
            push_int(svg, y);
            svg.push_str("\" x2=\"");
            push_int(svg, x1);
            svg.push_str("\" y2=\"");
            push_int(svg, y);
            svg.push_str("\" stroke=\"");
            svg.push_str(&Theme::hex(c));
            svg.push_str("\" stroke-width=\"1\" stroke-dasharray=\"5 4\"/>\n");
        }
        svg.push_str(&tail);
    }
}

/// Appends `v` in decimal (what `write!` does, without its machinery: this runs for every
/// point of every line).
fn push_int(out: &mut String, v: i32) {
    if v < 0 {
        out.push('-');
    }
    let mut n = v.unsigned_abs();
    let mut digits = [0u8; 10];
    let mut k = digits.len();
    loop {
        k -= 1;
        digits[k] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &digits[k..] {
        out.push(d as char);
    }
}
