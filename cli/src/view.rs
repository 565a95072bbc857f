//! `gpuwhy view REPORT [--compare CANDIDATE] [-o FILE] [--open]`: one self-contained HTML
//! page — the viewer's JavaScript and WebAssembly inline and the report embedded (with a
//! second report to compare it with, when given) — that opens from `file://` with no
//! network, for attaching to a chat or a bug report.
//!
//! The page comes from `cargo xtask viewer` (see `docs/viewer.md`): embedded at compile time
//! when it was built before this binary, else read from the workspace's `target/viewer/`
//! (or the file `GPUWHY_VIEWER_PAGE` names) at run time.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{bail, Context, Result};
use gpuwhy::report::{write_atomic, Report};

mod bundle {
    include!(concat!(env!("OUT_DIR"), "/viewer_page.rs"));
}

/// Where `cargo xtask viewer` writes the page.
const VIEWER_DIR: &str = env!("GPUWHY_VIEWER_DIR");
const PAGE_FILE: &str = "gpuwhy-viewer.html";
const REPORT_SLOT: &str = "@@GPUWHY_REPORT@@";
const NAME_SLOT: &str = "@@GPUWHY_NAME@@";
const COMPARE_SLOT: &str = "@@GPUWHY_COMPARE@@";
const COMPARE_NAME_SLOT: &str = "@@GPUWHY_COMPARE_NAME@@";

/// Arguments of `gpuwhy view`.
#[derive(clap::Args)]
pub struct Args {
    /// The report (or the `.partial` journal of an interrupted recording)
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
}

/// The viewer page template: the file `GPUWHY_VIEWER_PAGE` names, the embedded one, or the
/// one in the workspace's `target/viewer/`.
fn template() -> Result<String> {
    if let Some(p) = std::env::var_os("GPUWHY_VIEWER_PAGE") {
        let p = PathBuf::from(p);
        return std::fs::read_to_string(&p).with_context(|| {
            format!(
                "cannot read the viewer page GPUWHY_VIEWER_PAGE={}",
                p.display()
            )
        });
    }
    if let Some(page) = bundle::EMBEDDED {
        return Ok(page.to_string());
    }
    let built = Path::new(VIEWER_DIR).join(PAGE_FILE);
    match std::fs::read_to_string(&built) {
        Ok(page) => Ok(page),
        Err(_) => bail!(
            "this gpuwhy was built without the report viewer, and {} does not exist.\n\
             Build the viewer with `cargo xtask viewer` in the gpuwhy checkout; it needs the \
             Rust target wasm32-unknown-unknown, wasm-bindgen-cli at the version in Cargo.lock \
             and Node.js with npm (it installs the first two and its npm packages itself). \
             Then run this command again, or set GPUWHY_VIEWER_PAGE to a built {PAGE_FILE}.",
            built.display()
        ),
    }
}

/// JSON made safe inside `<script type="application/json">`: `<`, `>` and `&` only occur
/// inside JSON strings, where their `\u` escapes mean the same, so no `</script>` or
/// `<!--` in a report can end the element early.
fn script_safe_json(json: &str) -> String {
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

fn attr_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The page for `report`, shown under `name`, with `compare` (a report and its name) to
/// compare it with, if any. Slots are found in the template before anything is put in, so nothing
/// in a report can be taken for a slot.
pub fn page(
    template: &str,
    report: &Report,
    name: &str,
    compare: Option<(&Report, &str)>,
) -> Result<String> {
    let rebuild = "rebuild it with `cargo xtask viewer`";
    let json = serde_json::to_string(report).context("cannot serialise the report")?;
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
    let second = match compare {
        Some((r, n)) => {
            if slots.is_none() {
                bail!("the viewer page cannot show a comparison; {rebuild}");
            }
            let json = serde_json::to_string(r).context("cannot serialise the report")?;
            Some((json, n))
        }
        None => None,
    };
    let extra = second.as_ref().map_or(0, |(j, _)| j.len());
    let mut out = String::with_capacity(template.len() + json.len() + extra + 128);
    out.push_str(head);
    out.push_str(&attr_escape(name));
    out.push_str(mid);
    out.push_str(&script_safe_json(&json));
    match slots {
        Some((a, b, c)) => {
            out.push_str(a);
            if let Some((j, n)) = &second {
                out.push_str(&attr_escape(n));
                out.push_str(b);
                out.push_str(&script_safe_json(j));
            } else {
                out.push_str(b);
            }
            out.push_str(c);
        }
        None => out.push_str(tail),
    }
    Ok(out)
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || "report.json".into(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn open_in_browser(path: &Path) -> Result<()> {
    let mut cmd = if cfg!(target_os = "macos") {
        Command::new("open")
    } else if cfg!(windows) {
        let mut c = Command::new("cmd");
        c.args(["/C", "start", ""]);
        c
    } else {
        Command::new("xdg-open")
    };
    cmd.arg(path)
        .spawn()
        .with_context(|| format!("cannot start a browser; open {} yourself", path.display()))?;
    Ok(())
}

/// Writes the self-contained page for `report`, read from (or written to) `report_path`,
/// to `output` (default: the report's name with `.html`) and returns where it went.
pub fn write_page(report: &Report, report_path: &Path, output: Option<PathBuf>) -> Result<PathBuf> {
    write_compare_page(report, report_path, None, output)
}

/// As [`write_page`], with a second report (and its path) to compare `report` with.
pub fn write_compare_page(
    report: &Report,
    report_path: &Path,
    compare: Option<(&Report, &Path)>,
    output: Option<PathBuf>,
) -> Result<PathBuf> {
    let template = template()?;
    let name = file_name(report_path);
    let other = compare.map(|(r, p)| (r, file_name(p)));
    let html = page(
        &template,
        report,
        &name,
        other.as_ref().map(|(r, n)| (*r, n.as_str())),
    )?;
    let output = output.unwrap_or_else(|| {
        let stem = name.strip_suffix(".partial").unwrap_or(&name);
        let stem = stem.strip_suffix(".json").unwrap_or(stem);
        report_path.with_file_name(format!("{stem}.html"))
    });
    write_atomic(&output, html.as_bytes())?;
    Ok(output)
}

/// `--html` of `gpuwhy record` and `gpuwhy demo`: the page beside the report just written.
/// The report is already safe on disk, so a failure says so.
pub fn write_beside(report: &Report, report_path: &Path) -> Result<()> {
    let page = write_page(report, report_path, None).with_context(|| {
        format!(
            "cannot write the HTML page (the report itself is written: {}; `gpuwhy view` makes the page later)",
            report_path.display()
        )
    })?;
    println!("Viewer page written to {}", page.display());
    Ok(())
}

pub fn run(a: Args) -> Result<ExitCode> {
    let report = Report::load(&a.report)?;
    let candidate = match &a.compare {
        Some(p) => Some((Report::load(p)?, p.as_path())),
        None => None,
    };
    let compare = candidate.as_ref().map(|(r, p)| (r, *p));
    let output = write_compare_page(&report, &a.report, compare, a.output)?;
    println!("Viewer page written to {}", output.display());
    if a.open {
        open_in_browser(&output)?;
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
        let html = page(TEMPLATE, &a, "a.json", Some((&b, "b\"<.json"))).expect("page");
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
        let one = page(TEMPLATE, &a, "a.json", None).expect("page");
        assert!(one.contains("<b data-name=\"\"></b><c>"), "{one}");
        // An old page without compare slots still takes one report, and says to rebuild
        // when asked to compare.
        let old = "<a data-name=\"@@GPUWHY_NAME@@\">@@GPUWHY_REPORT@@</a>";
        assert!(page(old, &a, "a.json", None).is_ok());
        let err = page(old, &a, "a.json", Some((&b, "b.json"))).expect_err("refused");
        assert!(err.to_string().contains("cargo xtask viewer"), "{err}");
    }
}
