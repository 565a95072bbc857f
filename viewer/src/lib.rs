//! The gpuwhy report viewer: a report drawn as a page a person can act on.
//!
//! What comes first is what matters: the verdict, then one card per finding (evidence
//! against thresholds, fixes cheapest first, the confirming experiment, what could not be
//! seen), then the charts that back them up: per-GPU timelines on one shared time axis, a
//! GPU × time heatmap, the step breakdown, the host, the devices and the recorder's cost.
//!
//! Charts are drawn with plotters by functions generic over its `DrawingBackend`; this crate
//! renders them to SVG strings, natively in tests and in the browser through the thin
//! `#[wasm_bindgen]` facade in `web` (built only for `wasm32`). HTML fragments are built
//! here too, with every string that comes from a report escaped: a report is data and can
//! never run script in the page.
//!
//! Not for: interaction. Brushing, hover read-outs, file loading and theming live in the
//! page's JavaScript (`viewer/www/`), which asks this crate for fresh fragments.

pub mod chart;
pub mod compare;
pub mod format;
pub mod json;
pub mod page;
pub mod read;
pub mod sort;
pub mod theme;
pub mod trace;
pub mod view;
#[cfg(target_arch = "wasm32")]
mod web;

pub use theme::Theme;
pub use trace::{Sample, Stats, Trace};
pub use view::{Gpu, LoadError, View};
