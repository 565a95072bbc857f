//! Colours for light and dark pages. Charts are redrawn when the system theme changes, so
//! each colour is chosen to read well on its own background.

use plotters::style::RGBColor;

/// Shades of a heatmap: more than the eye tells apart in a cell a few pixels wide, few
/// enough that neighbouring cells of nearly equal value share one (and one SVG element).
pub const HEAT_STEPS: f64 = 32.0;

/// The colours a chart is drawn with.
#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    /// Axis labels and panel titles.
    pub text: RGBColor,
    /// Secondary text (legends, notes).
    pub muted: RGBColor,
    /// Axis lines.
    pub axis: RGBColor,
    /// Grid lines.
    pub grid: RGBColor,
    /// Reference lines (power limit, maximum clock, total memory).
    pub reference: RGBColor,
    /// Series colours, in the order lines are added to a panel.
    pub series: [RGBColor; 6],
    /// Heatmap colour of 0.
    pub heat_low: RGBColor,
    /// Heatmap colour of the maximum.
    pub heat_high: RGBColor,
    /// Event marker colours: faults (XID, GPU lost), then other events.
    pub fault: RGBColor,
    /// Marker colour of events that are not faults (eval, checkpoint, …).
    pub event: RGBColor,
}

impl Theme {
    /// Dark text on a light page.
    pub fn light() -> Self {
        Theme {
            text: RGBColor(0x1f, 0x23, 0x28),
            muted: RGBColor(0x59, 0x63, 0x6e),
            axis: RGBColor(0x8c, 0x95, 0x9f),
            grid: RGBColor(0xe4, 0xe7, 0xeb),
            reference: RGBColor(0x9a, 0x67, 0x00),
            series: [
                RGBColor(0x09, 0x69, 0xda),
                RGBColor(0xcf, 0x22, 0x2e),
                RGBColor(0x1a, 0x7f, 0x37),
                RGBColor(0x82, 0x50, 0xdf),
                RGBColor(0xbc, 0x4c, 0x00),
                RGBColor(0x1b, 0x7c, 0x83),
            ],
            heat_low: RGBColor(0xf6, 0xf8, 0xfa),
            heat_high: RGBColor(0x0a, 0x30, 0x69),
            fault: RGBColor(0xd1, 0x24, 0x2f),
            event: RGBColor(0x6e, 0x40, 0xc9),
        }
    }

    /// Light text on a dark page.
    pub fn dark() -> Self {
        Theme {
            text: RGBColor(0xe6, 0xed, 0xf3),
            muted: RGBColor(0x9d, 0xa7, 0xb3),
            axis: RGBColor(0x6e, 0x76, 0x81),
            grid: RGBColor(0x30, 0x36, 0x3d),
            reference: RGBColor(0xd2, 0x99, 0x22),
            series: [
                RGBColor(0x58, 0xa6, 0xff),
                RGBColor(0xff, 0x7b, 0x72),
                RGBColor(0x3f, 0xb9, 0x50),
                RGBColor(0xbc, 0x8c, 0xff),
                RGBColor(0xff, 0xa6, 0x57),
                RGBColor(0x39, 0xc5, 0xcf),
            ],
            heat_low: RGBColor(0x16, 0x1b, 0x22),
            heat_high: RGBColor(0x79, 0xc0, 0xff),
            fault: RGBColor(0xff, 0x7b, 0x72),
            event: RGBColor(0xd2, 0xa8, 0xff),
        }
    }

    /// The theme for a dark (`true`) or light page.
    pub fn for_dark(dark: bool) -> Self {
        if dark {
            Self::dark()
        } else {
            Self::light()
        }
    }

    /// Colour between `heat_low` (at 0) and `heat_high` (at 1), in [`HEAT_STEPS`] steps.
    pub fn heat(&self, x: f64) -> RGBColor {
        let x = if x.is_finite() {
            (x.clamp(0.0, 1.0) * HEAT_STEPS).round() / HEAT_STEPS
        } else {
            0.0
        };
        let mix = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * x).round() as u8;
        RGBColor(
            mix(self.heat_low.0, self.heat_high.0),
            mix(self.heat_low.1, self.heat_high.1),
            mix(self.heat_low.2, self.heat_high.2),
        )
    }

    /// `#rrggbb` of a colour, as it appears in the SVG.
    pub fn hex(c: RGBColor) -> String {
        format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
    }
}
