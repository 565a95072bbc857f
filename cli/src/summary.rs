//! `gpuwhy summary REPORTS… [--json] [--html FILE]`: many reports at once — each run's
//! verdict and the GPU-hours it lost, totals by cause, label, host and GPU model, and the
//! changes that were tried (docs/summary.md).
//!
//! Files, directories (searched for `.json`, `.json.gz` and `.partial` files) and globs
//! are read once each, on every core; a file that cannot be read is listed with the reason
//! and the rest go on. The rows and totals are core's (`gpuwhy::summary`); this file finds
//! the files and reads them, `summary_text` prints, `summary_page` writes the page.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use anyhow::{anyhow, bail, Result};
use gpuwhy::summary::{read_bytes, RunRow, Summary, Unreadable};

use crate::summary_files::expand;
use crate::summary_page::PageWriter;

/// Arguments of `gpuwhy summary`.
#[derive(clap::Args)]
pub struct Args {
    /// Reports: files (`.json`, `.json.gz`, `.partial` journals, merged job reports),
    /// directories (searched, subdirectories too) and globs (`runs/*.json`)
    #[arg(required = true)]
    reports: Vec<PathBuf>,
    /// Print the summary as JSON (schema `gpuwhy.summary/1`, docs/summary.md) instead of text
    #[arg(long)]
    json: bool,
    /// Also write one offline page of the runs to FILE, with each run's own report page in
    /// `runs/` beside it, linked relatively (zip the folder or serve it as static files)
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let (summary, page) = summarise(&a.reports, a.html.as_deref())?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        print!("{}", crate::summary_text::text(&summary));
    }
    if let Some(p) = page {
        eprintln!("Summary page written to {}", p.display());
        eprintln!("Open it in a browser: {}", crate::view::how_to_open(&p));
    }
    Ok(ExitCode::SUCCESS)
}

/// `gpuwhy view DIR`: the summary page of the reports under `dir` (as `gpuwhy summary DIR
/// --html DIR/index.html`, or `output`), with each run's page beside it.
pub fn view_dir(dir: &Path, output: Option<PathBuf>, open: bool) -> Result<ExitCode> {
    let index = output.unwrap_or_else(|| dir.join("index.html"));
    let (summary, page) = summarise(&[dir.to_path_buf()], Some(&index))?;
    let page = page.unwrap_or(index);
    println!(
        "Summary page of {} runs ({} not read) written to {}",
        summary.runs.len(),
        summary.unreadable.len(),
        page.display()
    );
    if open {
        crate::view::open_in_browser(&page)?;
    } else {
        println!("Open it in a browser: {}", crate::view::how_to_open(&page));
    }
    Ok(ExitCode::SUCCESS)
}

/// Reads every report `inputs` name and, with `html`, writes the page there with the runs'
/// pages beside it; returns the summary and where the page went. Fails only when no report
/// at all could be read.
pub fn summarise(inputs: &[PathBuf], html: Option<&Path>) -> Result<(Summary, Option<PathBuf>)> {
    let (files, mut unreadable) = expand(inputs);
    let writer = html.map(PageWriter::new).transpose()?;
    let (runs, bad) = read_all(&files, writer.as_ref());
    unreadable.extend(bad);
    if runs.is_empty() {
        let why = unreadable
            .iter()
            .map(|u| format!("\n  {}: {}", u.file, u.reason))
            .collect::<String>();
        bail!(
            "no report could be read from the {} file(s) given{why}",
            files.len()
        );
    }
    let rows = runs
        .into_iter()
        .map(|(mut row, page)| {
            row.page = page;
            row
        })
        .collect();
    let summary = Summary::new(rows, unreadable);
    let page = writer.map(|w| w.write_index(&summary)).transpose()?;
    Ok((summary, page))
}

/// One file read: its row and, when pages are written, its page.
fn read_one(
    path: &Path,
    index: usize,
    pages: Option<&PageWriter>,
) -> Result<(RunRow, Option<String>)> {
    let file = path.display().to_string();
    let bytes = read_bytes(path).map_err(|e| anyhow!("{e}"))?;
    let row = RunRow::from_slice(&bytes, &file).map_err(|e| anyhow!("{e}"))?;
    let page = match pages {
        Some(w) => Some(w.write_run(&row, &bytes, index)?),
        None => None,
    };
    Ok((row, page))
}

type Slot = Option<std::result::Result<(RunRow, Option<String>), String>>;

/// Reads every file on every core, each once; the rows in input order, and the files
/// that could not be read with why.
fn read_all(
    files: &[PathBuf],
    pages: Option<&PageWriter>,
) -> (Vec<(RunRow, Option<String>)>, Vec<Unreadable>) {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(files.len().max(1));
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Slot>> = Mutex::new((0..files.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(f) = files.get(i) else { break };
                let got = read_one(f, i, pages).map_err(|e| format!("{e:#}"));
                // A poisoned lock means another worker panicked; its panic is reported
                // when the scope ends, so this one just stops.
                let Ok(mut slots) = slots.lock() else { break };
                slots[i] = Some(got);
            });
        }
    });
    let slots = slots.into_inner().unwrap_or_else(|p| p.into_inner());
    let mut rows = Vec::new();
    let mut bad = Vec::new();
    for (f, slot) in files.iter().zip(slots) {
        match slot {
            Some(Ok(r)) => rows.push(r),
            Some(Err(reason)) => bad.push(Unreadable {
                file: f.display().to_string(),
                reason: strip_path(&reason, f),
            }),
            None => bad.push(Unreadable {
                file: f.display().to_string(),
                reason: "not read: a worker reading the reports stopped".into(),
            }),
        }
    }
    (rows, bad)
}

/// The reader's message without the file's name in front, which the listing shows already.
fn strip_path(reason: &str, path: &Path) -> String {
    let name = path.display().to_string();
    reason
        .strip_prefix(&name)
        .map(|r| r.trim_start_matches(':').trim_start())
        .unwrap_or(reason)
        .to_string()
}
