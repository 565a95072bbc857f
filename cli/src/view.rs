//! `gpuwhy view REPORT [--compare CANDIDATE] [-o FILE] [--open] [--with-analysis]`: one
//! self-contained HTML page — the viewer's JavaScript and WebAssembly inline and the report
//! embedded (with a second report to compare it with, when given) — that opens from
//! `file://` with no network, for attaching to a chat or a bug report.
//!
//! The page is the generated single file committed in `viewer/dist/` (built by `cargo
//! xtask viewer`, checked against its sources in CI), embedded in every binary however it
//! is built, so no WebAssembly toolchain is needed here (see docs/viewer.md). The file
//! `GPUWHY_VIEWER_PAGE` names replaces it at run time, with the analysis module read from
//! beside it (for testing a fresh build of the viewer).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{bail, Context, Result};
use gpuwhy::report::{write_atomic, Report};

/// The single-file page, with slots for the reports and the analysis module.
const EMBEDDED_PAGE: &str = include_str!("../../viewer/dist/gpuwhy-viewer.html");
/// The analysis module (core's importers, trace reader and rules on wasm32), gzipped and in
/// base64, for `--with-analysis`.
const EMBEDDED_ANALYSIS: &str = include_str!("../../viewer/dist/gpuwhy_analyze_bg.wasm.gz.b64");
const ANALYSIS_FILE: &str = "gpuwhy_analyze_bg.wasm.gz.b64";
const REPORT_SLOT: &str = "@@GPUWHY_REPORT@@";
const NAME_SLOT: &str = "@@GPUWHY_NAME@@";
const COMPARE_SLOT: &str = "@@GPUWHY_COMPARE@@";
const COMPARE_NAME_SLOT: &str = "@@GPUWHY_COMPARE_NAME@@";
const ANALYSIS_SLOT: &str = "@@GPUWHY_ANALYSIS@@";

/// Arguments of `gpuwhy view`.
#[derive(clap::Args)]
pub struct Args {
    /// The report (or the `.partial` journal of an interrupted recording); a directory
    /// gives the summary page of the reports in it (as `gpuwhy summary DIR --html`)
    report: PathBuf,
    /// A second report to show beside it: REPORT is the baseline, this the candidate (the
    /// page opens on their comparison: verdict diff, step histograms, per-GPU utilization)
    #[arg(long, value_name = "CANDIDATE")]
    compare: Option<PathBuf>,
    /// Where to write the page (default: the report's name with `.html`)
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Open the page in the default browser
    #[arg(long)]
    open: bool,
    /// Also put the analysis module into the page (about 463 kB more), so that it can read
    /// a dropped nvidia-smi dmon or CSV log or profiler trace, and re-run the rules
    #[arg(long)]
    with_analysis: bool,
}

/// The viewer page template and its analysis module: the files `GPUWHY_VIEWER_PAGE` names
/// (the module beside the page), or the ones embedded in this binary.
pub fn template() -> Result<(String, String)> {
    let Some(p) = std::env::var_os("GPUWHY_VIEWER_PAGE") else {
        return Ok((EMBEDDED_PAGE.into(), EMBEDDED_ANALYSIS.into()));
    };
    let p = PathBuf::from(p);
    let page = std::fs::read_to_string(&p).with_context(|| {
        format!(
            "cannot read the viewer page GPUWHY_VIEWER_PAGE={}",
            p.display()
        )
    })?;
    let module = p.with_file_name(ANALYSIS_FILE);
    // A page without the module beside it still makes pages, only not with analysis.
    let analysis = std::fs::read_to_string(&module).unwrap_or_default();
    Ok((page, analysis))
}

/// JSON made safe inside `<script type="application/json">`: `<`, `>` and `&` only occur
/// inside JSON strings, where their `\u` escapes mean the same, so no `</script>` or
/// `<!--` in a report can end the element early.
pub fn script_safe_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + json.len() / 64);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// The page for `report`, shown under `name`, with `compare` (a report and its name) to
/// compare it with, if any, and `analysis` (the analysis module's gzip in base64, or empty
/// for none) in the analysis slot. Slots are found in the template before anything is put in, so nothing
/// in a report can be taken for a slot.
pub fn page(
    template: &str,
    report: &Report,
    name: &str,
    compare: Option<(&Report, &str)>,
    analysis: &str,
) -> Result<String> {
    let json = serde_json::to_string(report).context("cannot serialise the report")?;
    let second = match compare {
        Some((r, n)) => Some((
            serde_json::to_string(r).context("cannot serialise the report")?,
            n,
        )),
        None => None,
    };
    page_json(
        template,
        &json,
        name,
        second.as_ref().map(|(j, n)| (j.as_str(), *n)),
        analysis,
    )
}

/// As [`page`], with the reports given as their JSON text (a report file's own text, as
/// `gpuwhy summary` embeds it without reading the report into memory again).
pub fn page_json(
    template: &str,
    json: &str,
    name: &str,
    compare: Option<(&str, &str)>,
    analysis: &str,
) -> Result<String> {
    let rebuild = "rebuild it with `cargo xtask viewer`";
    let (head, rest) = template
        .split_once(NAME_SLOT)
        .with_context(|| format!("the viewer page has no report-name slot; {rebuild}"))?;
    let (mid, tail) = rest
        .split_once(REPORT_SLOT)
        .with_context(|| format!("the viewer page has no report slot; {rebuild}"))?;
    // A page built before comparisons has no compare slots: fine unless one is asked for.
    let slots = tail
        .split_once(COMPARE_NAME_SLOT)
        .and_then(|(a, r)| r.split_once(COMPARE_SLOT).map(|(b, c)| (a, b, c)));
    if compare.is_some() && slots.is_none() {
        bail!("the viewer page cannot show a comparison; {rebuild}");
    }
    let second = compare;
    let extra = second.as_ref().map_or(0, |(j, _)| j.len()) + analysis.len();
    let mut out = String::with_capacity(template.len() + json.len() + extra + 128);
    out.push_str(head);
    out.push_str(&gpuwhy::text::html::escape(name));
    out.push_str(mid);
    out.push_str(&script_safe_json(json));
    match slots {
        Some((a, b, c)) => {
            out.push_str(a);
            if let Some((j, n)) = &second {
                out.push_str(&gpuwhy::text::html::escape(n));
                out.push_str(b);
                out.push_str(&script_safe_json(j));
            } else {
                out.push_str(b);
            }
            fill_analysis(&mut out, c, analysis)?;
        }
        None => fill_analysis(&mut out, tail, analysis)?,
    }
    Ok(out)
}

/// Appends `rest` of the template with the analysis slot filled with `analysis` (emptied
/// when there is none). The module is base64, so it cannot end its element.
fn fill_analysis(out: &mut String, rest: &str, analysis: &str) -> Result<()> {
    match rest.split_once(ANALYSIS_SLOT) {
        Some((a, b)) => {
            out.push_str(a);
            out.push_str(analysis.trim());
            out.push_str(b);
        }
        None if analysis.is_empty() => out.push_str(rest),
        None => bail!("the viewer page has no slot for the analysis module; rebuild it with `cargo xtask viewer`"),
    }
    Ok(())
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || "report.json".into(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// The system's command that opens a file in the default browser.
fn opener() -> (&'static str, &'static [&'static str]) {
    if cfg!(target_os = "macos") {
        ("open", &[])
    } else if cfg!(windows) {
        ("cmd", &["/C", "start", ""])
    } else {
        ("xdg-open", &[])
    }
}

/// Opens `path` in the system's browser, or says how to open it when there is none to
/// start (no `xdg-open` on a server, or it failed).
pub fn open_in_browser(path: &Path) -> Result<()> {
    let (program, args) = opener();
    let shown = how_to_open(path);
    let status = Command::new(program)
        .args(args)
        .arg(path)
        .status()
        .with_context(|| {
            format!("cannot open a browser here (no `{program}`); open the page yourself: {shown}")
        })?;
    if !status.success() {
        bail!("`{program}` could not open a browser ({status}); open the page yourself: {shown}");
    }
    Ok(())
}

/// How to open the page at `path`: its `file://` address, which any browser takes.
pub fn how_to_open(path: &Path) -> String {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut url = String::from("file://");
    for c in abs.to_string_lossy().chars() {
        match c {
            ' ' => url.push_str("%20"),
            '#' => url.push_str("%23"),
            '?' => url.push_str("%3F"),
            '%' => url.push_str("%25"),
            c => url.push(c),
        }
    }
    url
}

/// Writes the self-contained page for `report`, read from (or written to) `report_path`,
/// to `output` (default: the report's name with `.html`) and returns where it went.
pub fn write_page(report: &Report, report_path: &Path, output: Option<PathBuf>) -> Result<PathBuf> {
    write_compare_page(report, report_path, None, output, false)
}

/// As [`write_page`], with a second report (and its path) to compare `report` with, and
/// the analysis module when `with_analysis`.
pub fn write_compare_page(
    report: &Report,
    report_path: &Path,
    compare: Option<(&Report, &Path)>,
    output: Option<PathBuf>,
    with_analysis: bool,
) -> Result<PathBuf> {
    let (template, module) = template()?;
    if with_analysis && module.trim().is_empty() {
        bail!("this viewer page has no analysis module beside it ({ANALYSIS_FILE}); rebuild it with `cargo xtask viewer`");
    }
    let analysis = if with_analysis { module.as_str() } else { "" };
    let name = file_name(report_path);
    let other = compare.map(|(r, p)| (r, file_name(p)));
    let html = page(
        &template,
        report,
        &name,
        other.as_ref().map(|(r, n)| (*r, n.as_str())),
        analysis,
    )?;
    let output = output.unwrap_or_else(|| {
        let stem = name.strip_suffix(".partial").unwrap_or(&name);
        let stem = stem.strip_suffix(".json").unwrap_or(stem);
        report_path.with_file_name(format!("{stem}.html"))
    });
    write_atomic(&output, html.as_bytes())?;
    Ok(output)
}

/// The page beside a report just written (`gpuwhy demo`, `--html` of `gpuwhy record`),
/// and how to open it. The report is already safe on disk, so a failure says so.
pub fn write_beside(report: &Report, report_path: &Path) -> Result<()> {
    let page = write_page(report, report_path, None).with_context(|| {
        format!(
            "cannot write the HTML page (the report itself is written: {}; `gpuwhy view` makes the page later)",
            report_path.display()
        )
    })?;
    println!("Viewer page written to {}", page.display());
    println!("Open it in a browser: {}", how_to_open(&page));
    Ok(())
}

pub fn run(a: Args) -> Result<ExitCode> {
    if a.report.is_dir() {
        if a.compare.is_some() || a.with_analysis {
            bail!("--compare and --with-analysis take a report, not a directory; `gpuwhy view {}` writes the summary page of the reports in it", a.report.display());
        }
        return crate::summary::view_dir(&a.report, a.output, a.open);
    }
    let report = Report::load(&a.report)?;
    let candidate = match &a.compare {
        Some(p) => Some((Report::load(p)?, p.as_path())),
        None => None,
    };
    let compare = candidate.as_ref().map(|(r, p)| (r, *p));
    let output = write_compare_page(&report, &a.report, compare, a.output, a.with_analysis)?;
    println!("Viewer page written to {}", output.display());
    if a.open {
        open_in_browser(&output)?;
    } else {
        println!("Open it in a browser: {}", how_to_open(&output));
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_text_cannot_close_the_script() {
        let s = script_safe_json(r#"{"a":"</script><script>x()</script><!--"}"#);
        assert!(!s.contains('<') && !s.contains('>'));
        let back: serde_json::Value = serde_json::from_str(&s).expect("still JSON");
        assert_eq!(back["a"], "</script><script>x()</script><!--");
    }

    const TEMPLATE: &str = "<a data-name=\"@@GPUWHY_NAME@@\">@@GPUWHY_REPORT@@</a>\
        <b data-name=\"@@GPUWHY_COMPARE_NAME@@\">@@GPUWHY_COMPARE@@</b><c>";

    fn report(label: &str) -> Report {
        let mut r: Report =
            serde_json::from_str(r#"{"schema":"gpuwhy.report/1"}"#).expect("a minimal report");
        r.run.label = Some(label.into());
        r
    }

    #[test]
    fn a_second_report_fills_the_compare_slots_and_text_cannot_fake_a_slot() {
        let a = report("@@GPUWHY_COMPARE@@ </script>");
        let b = report("candidate");
        let html = page(TEMPLATE, &a, "a.json", Some((&b, "b\"<.json")), "").expect("page");
        assert!(!html.contains("@@GPUWHY_COMPARE_NAME@@"));
        // The first report's text holds the slot's name; the second report still lands in
        // the compare element, and its name is escaped in the attribute.
        let (_, second) = html
            .split_once("<b data-name=\"b&quot;&lt;.json\">")
            .expect("named");
        assert!(
            second.starts_with('{') && second.contains("\"candidate\""),
            "{html}"
        );
        assert!(html.ends_with("</b><c>"));
        assert!(!html.contains("</script>"));
        // Without a second report the slots are emptied, not left for the page to read.
        let one = page(TEMPLATE, &a, "a.json", None, "").expect("page");
        assert!(one.contains("<b data-name=\"\"></b><c>"), "{one}");
        // An old page without compare slots still takes one report, and says to rebuild
        // when asked to compare.
        let old = "<a data-name=\"@@GPUWHY_NAME@@\">@@GPUWHY_REPORT@@</a>";
        assert!(page(old, &a, "a.json", None, "").is_ok());
        let err = page(old, &a, "a.json", Some((&b, "b.json")), "").expect_err("refused");
        assert!(err.to_string().contains("cargo xtask viewer"), "{err}");
    }

    #[test]
    fn the_analysis_module_goes_into_its_slot_only_when_asked_for() {
        let t = format!("{TEMPLATE}<d>{ANALYSIS_SLOT}</d>");
        let a = report(ANALYSIS_SLOT);
        let with = page(&t, &a, "a.json", None, "H4sI\n").expect("page");
        assert!(with.ends_with("<c><d>H4sI</d>"), "{with}");
        let without = page(&t, &a, "a.json", None, "").expect("page");
        assert!(without.ends_with("<c><d></d>"), "{without}");
        // The report's text holding the slot's name stays the report's text.
        assert!(without.contains(ANALYSIS_SLOT) && !without.ends_with(ANALYSIS_SLOT));
        let err = page(TEMPLATE, &a, "a.json", None, "H4sI").expect_err("no slot");
        assert!(err.to_string().contains("cargo xtask viewer"), "{err}");
    }

    #[test]
    fn the_embedded_page_has_every_slot_and_its_module() {
        let mut rest = EMBEDDED_PAGE;
        for slot in [
            NAME_SLOT,
            REPORT_SLOT,
            COMPARE_NAME_SLOT,
            COMPARE_SLOT,
            ANALYSIS_SLOT,
        ] {
            let (_, after) = rest.split_once(slot).expect("slot in order");
            rest = after;
        }
        // The viewer's module is inline (gzip in base64: "H4sI"), and the analysis module
        // is there to be put in.
        assert!(EMBEDDED_PAGE.contains("id=\"gpuwhy-wasm\">H4sI"));
        assert!(EMBEDDED_ANALYSIS.starts_with("H4sI") && EMBEDDED_ANALYSIS.len() > 100_000);
    }

    #[test]
    fn how_to_open_gives_a_file_address() {
        let url = how_to_open(Path::new("/tmp/a b#1.html"));
        assert_eq!(url, "file:///tmp/a%20b%231.html");
    }
}
