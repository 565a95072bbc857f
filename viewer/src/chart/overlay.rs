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
    /// Dashed vertical lines (a distribution's p95 mark): `(x, y0, y1, colour)`.
    pub vdashes: Vec<(i32, i32, i32, RGBColor)>,
    /// Dots, a few pixels across: a slow metric's reads.
    pub dots: Vec<(Vec<(i32, i32)>, RGBColor)>,
}

impl Overlay {
    /// Adds a polyline, without the points that change nothing on screen: the middle one of
    /// three on one pixel row, or of three in one pixel column where it lies between the
    /// other two. A flat stretch (a clock at its maximum, memory that does not move) is then
    /// two points, not two per pixel column, which the browser no longer has to parse and
    /// lay out.
    pub fn line(&mut self, points: impl IntoIterator<Item = (i32, i32)>, color: RGBColor) {
        let mut out: Vec<(i32, i32)> = Vec::new();
        for p in points {
            if let [.., a, b] = out[..] {
                let row = a.1 == b.1 && b.1 == p.1;
                let column = a.0 == b.0 && b.0 == p.0 && (a.1 <= b.1) == (b.1 <= p.1);
                if row || column {
                    out.pop();
                }
            }
            out.push(p);
        }
        self.lines.push((out, color));
    }

    /// Draws everything with plotters (for backends other than [`to_svg`](super::to_svg)'s).
    pub fn draw_on<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), ChartError> {
        for (points, c) in &self.lines {
            root.draw(&PathElement::new(points.clone(), c.stroke_width(1)))?;
        }
        for (points, c) in &self.dots {
            for &p in points {
                root.draw(&Circle::new(p, 2, c.filled()))?;
            }
        }
        let across = self
            .dashes
            .iter()
            .map(|&(x0, x1, y, c)| ((x0, y), (x1, y), c));
        let down = self
            .vdashes
            .iter()
            .map(|&(x, y0, y1, c)| ((x, y0), (x, y1), c));
        for (a, b, c) in across.chain(down) {
            root.draw(&DashedPathElement::new(
                [a, b],
                DASH.0,
                DASH.1,
                c.stroke_width(1),
            ))?;
        }
        Ok(())
    }

    /// Writes everything into an SVG document, just before its closing tag.
    pub fn write_svg(&self, svg: &mut String) {
        let end = crate::format::rfind_bytes(svg, "</svg>").unwrap_or(svg.len());
        let tail = svg.split_off(end);
        let mut out = Vec::with_capacity(self.lines.iter().map(|(p, _)| p.len() * 9).sum());
        for (points, c) in &self.lines {
            out.extend_from_slice(b"<polyline fill=\"none\" stroke=\"");
            out.extend_from_slice(Theme::hex(*c).as_bytes());
            out.extend_from_slice(b"\" stroke-width=\"1\" points=\"");
            for &(x, y) in points {
                // "x,y " in one piece: this runs for every point of every line.
                let mut buf = [0u8; 24];
                let mut k = put_int(&mut buf, 0, x);
                buf[k] = b',';
                k = put_int(&mut buf, k + 1, y);
                buf[k] = b' ';
                out.extend_from_slice(&buf[..=k]);
            }
            out.extend_from_slice(b"\"/>\n");
        }
        // Each dot a zero-length stroke with round caps: one element for all of a series.
        for (points, c) in &self.dots {
            out.extend_from_slice(
                b"<path fill=\"none\" stroke-linecap=\"round\" stroke-width=\"4\" stroke=\"",
            );
            out.extend_from_slice(Theme::hex(*c).as_bytes());
            out.extend_from_slice(b"\" d=\"");
            for &(x, y) in points {
                // "M" and "h0" around two numbers of at most 11 characters and a space.
                let mut buf = [0u8; 32];
                buf[0] = b'M';
                let mut k = put_int(&mut buf, 1, x);
                buf[k] = b' ';
                k = put_int(&mut buf, k + 1, y);
                buf[k..k + 2].copy_from_slice(b"h0");
                out.extend_from_slice(&buf[..k + 2]);
            }
            out.extend_from_slice(b"\"/>\n");
        }
        let across = self.dashes.iter().map(|&(x0, x1, y, c)| (x0, y, x1, y, c));
        let down = self.vdashes.iter().map(|&(x, y0, y1, c)| (x, y0, x, y1, c));
        for (x0, y0, x1, y1, c) in across.chain(down) {
            let attrs: [(&[u8], i32); 4] = [
                (b"<line x1=\"", x0),
                (b"\" y1=\"", y0),
                (b"\" x2=\"", x1),
                (b"\" y2=\"", y1),
            ];
            for (attr, v) in attrs {
                let mut b = [0u8; 24];
                let k = put_int(&mut b, 0, v);
                out.extend_from_slice(attr);
                out.extend_from_slice(&b[..k]);
            }
            out.extend_from_slice(b"\" stroke=\"");
            out.extend_from_slice(Theme::hex(c).as_bytes());
            out.extend_from_slice(b"\" stroke-width=\"1\" stroke-dasharray=\"5 4\"/>\n");
        }
        // Only ASCII was written.
        svg.push_str(std::str::from_utf8(&out).unwrap_or_default());
        svg.push_str(&tail);
    }
}

/// Writes `v` in decimal into `buf` at `at`; the index after it.
#[inline(always)]
fn put_int<const N: usize>(buf: &mut [u8; N], at: usize, v: i32) -> usize {
    let mut k = at;
    if v < 0 {
        buf[k] = b'-';
        k += 1;
    }
    let mut n = v.unsigned_abs();
    let mut digits = [0u8; 10];
    let mut d = digits.len();
    loop {
        d -= 1;
        digits[d] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &c in &digits[d..] {
        buf[k] = c;
        k += 1;
    }
    k
}
