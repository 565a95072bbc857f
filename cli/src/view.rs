//! `gpuwhy view REPORT [-o FILE] [--open]`: one self-contained HTML page — the viewer's
//! JavaScript and WebAssembly inline and the report embedded — that opens from `file://`
//! with no network, for attaching to a chat or a bug report.
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

/// Arguments of `gpuwhy view`.
#[derive(clap::Args)]
pub struct Args {
    /// The report (or the `.partial` journal of an interrupted recording)
    report: PathBuf,
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

/// The page for `report`, shown under `name`.
pub fn page(template: &str, report: &Report, name: &str) -> Result<String> {
    let json = serde_json::to_string(report).context("cannot serialise the report")?;
    let (head, rest) = template
        .split_once(NAME_SLOT)
        .context("the viewer page has no report-name slot; rebuild it with `cargo xtask viewer`")?;
    let (mid, tail) = rest
        .split_once(REPORT_SLOT)
        .context("the viewer page has no report slot; rebuild it with `cargo xtask viewer`")?;
    let mut out = String::with_capacity(template.len() + json.len() + 64);
    out.push_str(head);
    out.push_str(&attr_escape(name));
    out.push_str(mid);
    out.push_str(&script_safe_json(&json));
    out.push_str(tail);
    Ok(out)
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
    let template = template()?;
    let name = report_path.file_name().map_or_else(
        || "report.json".into(),
        |n| n.to_string_lossy().into_owned(),
    );
    let html = page(&template, report, &name)?;
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
    let output = write_page(&report, &a.report, a.output)?;
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
}
