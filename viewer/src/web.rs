//! The browser facade: a thin `#[wasm_bindgen]` layer over [`View`] and the chart and page
//! functions. Strings cross as strings (HTML and SVG fragments, already escaped), the few
//! structured answers as JSON text (`JSON.parse` on the page; see `crate::json`).

use std::fmt::Display;

use wasm_bindgen::prelude::*;

use crate::chart::{heatmap, host, steps, timeline, Frame};
use crate::compare;
use crate::page::{numbers, overview, ranks, tables};
use crate::read::Source;
use crate::theme::Theme;
use crate::view::View;

fn js_err(e: impl Display) -> JsValue {
    JsValue::from_str(&e.to_string())
}

#[wasm_bindgen]
extern "C" {
    /// A report's bytes in the page's memory: a `Uint8Array`.
    pub type Bytes;
    #[wasm_bindgen(method, getter)]
    fn length(this: &Bytes) -> u32;
    #[wasm_bindgen(method)]
    fn subarray(this: &Bytes, begin: u32, end: u32) -> Bytes;
    /// `Uint8Array.prototype.set.call(dst, src)`: copies `src` into `dst`.
    #[wasm_bindgen(js_namespace = ["Uint8Array", "prototype", "set"], js_name = call)]
    fn copy_into(dst: &mut [u8], src: &Bytes);
}

/// The report where the page holds it: copied in a window at a time as the walk reads it.
struct PageBytes {
    bytes: Bytes,
    len: usize,
}

impl Source for PageBytes {
    fn len(&self) -> usize {
        self.len
    }

    fn copy(&self, at: usize, dst: &mut [u8]) {
        let part = self.bytes.subarray(at as u32, (at + dst.len()) as u32);
        copy_into(dst, &part);
    }
}

/// A loaded report, held in WebAssembly memory while the page shows it.
#[wasm_bindgen]
pub struct Viewer {
    view: View,
}

#[wasm_bindgen]
impl Viewer {
    /// Reads a report from its bytes (a `Uint8Array`, left where it is: only what is read
    /// is copied in); throws `{kind, title, message}` as JSON text when it cannot.
    pub fn open(bytes: Bytes, name: &str) -> Result<Viewer, JsValue> {
        let src = PageBytes {
            len: bytes.length() as usize,
            bytes,
        };
        View::load_from(&src, name)
            .map(|view| Viewer { view })
            .map_err(|e| JsValue::from_str(&e.to_json()))
    }

    /// Layout facts as JSON: GPUs, time range, which sections exist.
    pub fn info(&self) -> String {
        self.view.info().to_json()
    }

    fn frame(&self, t0: f64, t1: f64, width: u32) -> Frame {
        let (t0, t1) = self.view.clamp_range(t0, t1);
        Frame::new(width, t0, t1)
    }

    /// The run's facts.
    #[wasm_bindgen(js_name = runHtml)]
    pub fn run_html(&self) -> String {
        overview::run_html(&self.view.report)
    }

    /// The verdict box.
    #[wasm_bindgen(js_name = verdictHtml)]
    pub fn verdict_html(&self) -> String {
        overview::verdict_html(&self.view.report)
    }

    /// The finding cards.
    #[wasm_bindgen(js_name = findingsHtml)]
    pub fn findings_html(&self) -> String {
        overview::findings_html(&self.view.report)
    }

    /// A merged job report's per-rank table (the one `gpuwhy diagnose` prints), with its
    /// context line; empty for a report without ranks.
    #[wasm_bindgen(js_name = ranksHtml)]
    pub fn ranks_html(&self) -> String {
        ranks::ranks_html(&self.view.report)
    }

    /// The device table with capabilities.
    #[wasm_bindgen(js_name = devicesHtml)]
    pub fn devices_html(&self) -> String {
        tables::devices_html(&self.view.report)
    }

    /// The recorder's cost and NVML faults.
    #[wasm_bindgen(js_name = overheadHtml)]
    pub fn overhead_html(&self) -> String {
        tables::overhead_html(&self.view.report)
    }

    /// Host facts.
    #[wasm_bindgen(js_name = hostFactsHtml)]
    pub fn host_facts_html(&self) -> String {
        tables::host_facts_html(&self.view.report)
    }

    /// The phase table.
    #[wasm_bindgen(js_name = phasesHtml)]
    pub fn phases_html(&self) -> String {
        tables::phases_html(&self.view.report)
    }

    /// The events table.
    #[wasm_bindgen(js_name = eventsHtml)]
    pub fn events_html(&self, limit: usize) -> String {
        tables::events_html(&self.view.report, limit)
    }

    /// The timeline of the GPU at `pos` as SVG.
    pub fn timeline(
        &self,
        pos: usize,
        t0: f64,
        t1: f64,
        width: u32,
        dark: bool,
    ) -> Result<String, JsValue> {
        let f = self.frame(t0, t1, width);
        timeline::svg(&self.view, pos, &f, &Theme::for_dark(dark)).map_err(js_err)
    }

    /// One line describing the timeline at `pos` (plain text, for `aria-label`).
    #[wasm_bindgen(js_name = timelineLabel)]
    pub fn timeline_label(&self, pos: usize, t0: f64, t1: f64) -> String {
        numbers::timeline_label(&self.view, pos, &self.frame(t0, t1, 0))
    }

    /// The numbers behind the timeline at `pos`.
    #[wasm_bindgen(js_name = timelineNumbers)]
    pub fn timeline_numbers(&self, pos: usize, t0: f64, t1: f64) -> String {
        numbers::timeline_html(&self.view, pos, &self.frame(t0, t1, 0))
    }

    /// Values under the pointer at time `t` on the timeline at `pos`, as a JSON array of
    /// `{series, value}`.
    pub fn readout(&self, pos: usize, t: f64) -> String {
        crate::json::array(
            timeline::readout(&self.view, pos, t)
                .iter()
                .map(|r| r.to_json()),
        )
    }

    /// The GPU × time heatmap as SVG.
    pub fn heatmap(&self, t0: f64, t1: f64, width: u32, dark: bool) -> Result<String, JsValue> {
        let f = self.frame(t0, t1, width);
        heatmap::gpu_svg(&self.view, &f, &Theme::for_dark(dark)).map_err(js_err)
    }

    /// The numbers behind a heatmap (GPUs, or CPU cores when `cores`).
    #[wasm_bindgen(js_name = heatmapNumbers)]
    pub fn heatmap_numbers(&self, t0: f64, t1: f64, cores: bool) -> String {
        numbers::heatmap_html(&self.view, &self.frame(t0, t1, 0), cores)
    }

    /// The host panels as SVG (`undefined` without host samples).
    pub fn host(
        &self,
        t0: f64,
        t1: f64,
        width: u32,
        dark: bool,
    ) -> Result<Option<String>, JsValue> {
        let f = self.frame(t0, t1, width);
        host::svg(&self.view, &f, &Theme::for_dark(dark)).map_err(js_err)
    }

    /// The numbers behind the host panels.
    #[wasm_bindgen(js_name = hostNumbers)]
    pub fn host_numbers(&self, t0: f64, t1: f64) -> String {
        numbers::host_html(&self.view, &self.frame(t0, t1, 0))
    }

    /// The per-core heatmap as SVG (`undefined` without per-core samples).
    pub fn cores(
        &self,
        t0: f64,
        t1: f64,
        width: u32,
        dark: bool,
    ) -> Result<Option<String>, JsValue> {
        let f = self.frame(t0, t1, width);
        host::cores_svg(&self.view, &f, &Theme::for_dark(dark)).map_err(js_err)
    }

    /// Per-phase stacked step times as SVG (`undefined` without steps).
    #[wasm_bindgen(js_name = stepsStacked)]
    pub fn steps_stacked(
        &self,
        t0: f64,
        t1: f64,
        width: u32,
        dark: bool,
    ) -> Result<Option<String>, JsValue> {
        let f = self.frame(t0, t1, width);
        steps::stacked_svg(&self.view, &f, &Theme::for_dark(dark)).map_err(js_err)
    }

    /// The step-time histogram as SVG (`undefined` without steps).
    #[wasm_bindgen(js_name = stepsHistogram)]
    pub fn steps_histogram(&self, width: u32, dark: bool) -> Result<Option<String>, JsValue> {
        steps::histogram_svg(&self.view, width, &Theme::for_dark(dark)).map_err(js_err)
    }
}

/// Two reports side by side: `self` is the baseline, `other` the candidate.
#[wasm_bindgen]
impl Viewer {
    /// The comparison section (verdict diff, findings, step times, per-GPU medians, the
    /// overlaid step histograms, each GPU's utilization in both runs); `name` and
    /// `other_name` are the two file names.
    #[wasm_bindgen(js_name = compareHtml)]
    pub fn compare_html(
        &self,
        other: &Viewer,
        name: &str,
        other_name: &str,
        width: u32,
        dark: bool,
    ) -> Result<String, JsValue> {
        let theme = Theme::for_dark(dark);
        compare::html::section(&self.view, &other.view, (name, other_name), width, &theme)
            .map_err(js_err)
    }
}
