//! The browser facade: `detect` and `analyze` for `www/analyze.js`. Errors cross as plain
//! message text; the report crosses as UTF-8 JSON bytes (a `Uint8Array`), which the viewer
//! reads as it reads a dropped report.

use wasm_bindgen::prelude::*;

/// What [`analyze`] read: the report to draw, and what to say about where it came from.
#[wasm_bindgen]
pub struct Analysis {
    kind: &'static str,
    source: String,
    notes: Vec<String>,
    json: Vec<u8>,
}

#[wasm_bindgen]
impl Analysis {
    /// The diagnosed report as UTF-8 JSON bytes, moved out (a second call gets none): a
    /// report can be tens of MB, held once.
    #[wasm_bindgen(js_name = takeReport)]
    pub fn take_report(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.json)
    }

    /// What the file was: `report`, `journal`, `dmon`, `csv` or `trace`.
    #[wasm_bindgen(getter)]
    pub fn kind(&self) -> String {
        self.kind.to_string()
    }

    /// One sentence on what was read (also at the end of the verdict's summary).
    #[wasm_bindgen(getter)]
    pub fn source(&self) -> String {
        self.source.clone()
    }

    /// What was inferred or left out while reading, one sentence each.
    #[wasm_bindgen(getter)]
    pub fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }
}

/// The kind of file the bytes hold (`report`, `journal`, `trace`, `dmon`, `csv`), or an
/// empty string when gpuwhy reads no such file.
#[wasm_bindgen]
pub fn detect(bytes: &[u8]) -> String {
    crate::detect(bytes).map_or_else(String::new, |k| k.as_str().to_string())
}

/// Reads a dropped file and runs the rules on it ([`crate::analyze`]); throws the reason as
/// text (naming the line or byte offset where the reader knows it).
#[wasm_bindgen]
pub fn analyze(bytes: &[u8], name: &str) -> Result<Analysis, String> {
    let a = crate::analyze(bytes, name)?;
    let json = a.report_json()?.into_bytes();
    Ok(Analysis {
        kind: a.kind.as_str(),
        source: a.source,
        notes: a.notes,
        json,
    })
}
