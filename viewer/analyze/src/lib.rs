//! The viewer's analysis module: a dropped `nvidia-smi dmon` log, `--query-gpu` CSV log,
//! PyTorch profiler trace (`.json`, `.json.gz`) or crash journal read into a report and
//! diagnosed in the browser, and the rules re-run on a report — with core's own importers,
//! trace reader, signals and rules, the same way `gpuwhy diagnose FILE` does.
//!
//! It is a separate WebAssembly module from the viewer's because core's rules and signals
//! would make the viewer's module half as big again, and most pages never need them: the
//! page loads this one (`www/analyze.js`) only when a file is not a report or the user asks
//! for the rules to be re-run.
//!
//! Not for: drawing (the viewer draws the report this returns), or several files at once
//! (a report with its trace, several ranks: `gpuwhy diagnose` does those).

mod analyze;
#[cfg(target_arch = "wasm32")]
mod web;

pub use analyze::{analyze, detect, Analysis};
