//! The summary's page: `index.html` (the page in `viewer/summary/summary.html`, with the
//! summary's JSON embedded) and each run's own report page in `runs/` beside it, written
//! as `gpuwhy view` writes one, linked relatively so the folder can be zipped, shared or
//! served as static files (docs/summary.md).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use gpuwhy::report::{write_atomic, Report};
use gpuwhy::summary::{RunRow, Summary};

use crate::view::{page_json, script_safe_json, template};

/// The summary page, with a slot for the summary's JSON.
const SUMMARY_PAGE: &str = include_str!("../../viewer/summary/summary.html");
const SUMMARY_SLOT: &str = "@@GPUWHY_SUMMARY@@";
/// The folder beside the index that holds the runs' pages.
pub const RUNS_DIR: &str = "runs";

/// Writes the runs' pages as they are read, then the index.
pub struct PageWriter {
    index: PathBuf,
    runs: PathBuf,
    viewer: String,
}

impl PageWriter {
    /// A writer of the page at `index` (its folder and `runs/` are made when missing).
    pub fn new(index: &Path) -> Result<PageWriter> {
        let dir = match index.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let runs = dir.join(RUNS_DIR);
        std::fs::create_dir_all(&runs)
            .with_context(|| format!("cannot make the folder {}", runs.display()))?;
        let (viewer, _) = template()?;
        Ok(PageWriter {
            index: index.to_path_buf(),
            runs,
            viewer,
        })
    }

    /// Writes the report page of `row`, read from `bytes` (the report file's text,
    /// decompressed), as input number `n`; returns its link from the index.
    pub fn write_run(&self, row: &RunRow, bytes: &[u8], n: usize) -> Result<String> {
        let name = page_name(&row.file, n);
        let display = Path::new(&row.file)
            .file_name()
            .map_or_else(|| row.file.clone(), |f| f.to_string_lossy().into_owned());
        // A report's own text goes in as it is; a journal, which has no report text yet,
        // as the report its replay and diagnosis make (what the summary's row shows).
        let json = if row.kind == "journal" {
            let mut report = Report::from_slice(bytes, Path::new(&row.file))?;
            gpuwhy::analysis::diagnose(&mut report);
            serde_json::to_string(&report)?
        } else {
            String::from_utf8_lossy(bytes).into_owned()
        };
        let html = page_json(&self.viewer, &json, &display, None, "")?;
        write_atomic(&self.runs.join(&name), html.as_bytes())
            .with_context(|| format!("cannot write the run's page {name}"))?;
        Ok(format!("{RUNS_DIR}/{name}"))
    }

    /// Writes the index page for `summary`; returns its path.
    pub fn write_index(&self, summary: &Summary) -> Result<PathBuf> {
        let html = index_page(SUMMARY_PAGE, summary)?;
        write_atomic(&self.index, html.as_bytes())?;
        Ok(self.index.clone())
    }
}

/// The index page: `template` with the summary's JSON in its slot (found before anything
/// is put in, and made safe inside its `<script type="application/json">` element).
pub fn index_page(template: &str, summary: &Summary) -> Result<String> {
    let Some((head, tail)) = template.split_once(SUMMARY_SLOT) else {
        bail!("the summary page has no slot for the summary");
    };
    let json = serde_json::to_string(summary).context("cannot serialise the summary")?;
    let mut out = String::with_capacity(template.len() + json.len() + json.len() / 64);
    out.push_str(head);
    out.push_str(&script_safe_json(&json));
    out.push_str(tail);
    Ok(out)
}

/// `00012-rank0003.html`: the input number (unique) and the report's name, kept to
/// letters, digits, `-`, `_` and `.`, so the link needs no escaping in any URL.
fn page_name(file: &str, n: usize) -> String {
    let base = Path::new(file)
        .file_name()
        .map_or_else(|| "report".into(), |f| f.to_string_lossy().into_owned());
    let stem = [".json.gz", ".json.partial", ".json", ".partial", ".gz"]
        .iter()
        .find_map(|s| base.strip_suffix(s))
        .unwrap_or(&base);
    let safe: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(80)
        .collect();
    format!("{n:05}-{safe}.html")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_names_are_unique_and_need_no_escaping() {
        assert_eq!(page_name("a/b/rank0003.json.gz", 12), "00012-rank0003.html");
        assert_eq!(page_name("x/r un#1?.json", 3), "00003-r_un_1_.html");
        assert_eq!(page_name("run.json.partial", 0), "00000-run.html");
    }

    #[test]
    fn the_embedded_page_has_its_slot_and_report_text_cannot_end_the_data_block() {
        assert_eq!(SUMMARY_PAGE.matches(SUMMARY_SLOT).count(), 1);
        let mut s = Summary::new(Vec::new(), Vec::new());
        s.unreadable.push(gpuwhy::summary::Unreadable {
            file: "</script><script>alert(1)</script>".into(),
            reason: SUMMARY_SLOT.into(),
        });
        let html = index_page(SUMMARY_PAGE, &s).expect("page");
        assert!(!html.contains("</script><script>alert"));
        assert!(html.contains("\\u003c/script\\u003e"));
    }
}
