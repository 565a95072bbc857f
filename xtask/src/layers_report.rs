//! The text side of `cargo xtask layers`: the known-violations list it reads and `--bless`
//! writes, and the report it prints.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use anyhow::{bail, Result};

use crate::layers::{Check, Graph, Kind, Layer, Violation};

/// The known list: (from, to) → note.
pub type KnownList = BTreeMap<(String, String), String>;

/// Reads `from -> to  # note` lines; blank lines and lines starting with `#` are skipped.
pub fn parse_known(text: &str) -> Result<KnownList> {
    let mut known = KnownList::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (edge, note) = line.split_once('#').unwrap_or((line, ""));
        let Some((from, to)) = edge.split_once("->") else {
            bail!("layers_known.txt:{}: expected `from -> to  # note`", n + 1);
        };
        let key = (from.trim().to_string(), to.trim().to_string());
        known.insert(key, note.trim().to_string());
    }
    Ok(known)
}

/// The known list rewritten from `check`'s violations, keeping existing notes.
pub fn bless_text(graph: &Graph, check: &Check, known: &KnownList) -> String {
    let mut out = String::from(KNOWN_HEADER);
    for v in &check.violations {
        let key = (v.from.clone(), v.to.clone());
        let note = known.get(&key).cloned().unwrap_or_else(|| {
            let site = &graph[&v.from][&v.to][0];
            format!("recorded by --bless, first at {}:{}", site.file, site.line)
        });
        let _ = writeln!(out, "{} -> {}  # {note}", v.from, v.to);
    }
    out
}

const KNOWN_HEADER: &str = "\
# Known layer violations in core (see xtask/src/layers.rs and docs/architecture.md).
# `cargo xtask layers` tolerates these and prints them as debt; any other fails, and so does
# an entry here that the code no longer has. Remove an entry when you remove the edge.
# `cargo xtask layers --bless` rewrites this file: only to record debt that already exists.
";

/// The report printed on every run.
pub fn render(graph: &Graph, layers: &[Layer], check: &Check, known: &KnownList) -> String {
    let mut out = String::from("layers of core, bottom to top:\n");
    for (i, l) in layers.iter().enumerate() {
        let _ = writeln!(
            out,
            "  {i} {:<10} {:<52} {}",
            l.name,
            l.modules.join(", "),
            l.what
        );
    }
    out.push_str("module graph (module -> modules it uses, number of references):\n");
    for (from, uses) in graph {
        let list: Vec<String> = uses
            .iter()
            .map(|(t, s)| format!("{t} {}", s.len()))
            .collect();
        let _ = writeln!(out, "  {from} -> {}", list.join(", "));
    }
    let _ = writeln!(out, "cycles ({}):", check.cycles.len());
    for c in &check.cycles {
        let _ = writeln!(out, "  {}", c.join(" -> "));
    }
    let debt: Vec<&Violation> = check
        .violations
        .iter()
        .filter(|v| !check.new.contains(v))
        .collect();
    let _ = writeln!(
        out,
        "known layer violations still to remove ({}):",
        debt.len()
    );
    for v in debt {
        out.push_str(&violation_line(graph, v));
        if let Some(note) = known
            .get(&(v.from.clone(), v.to.clone()))
            .filter(|n| !n.is_empty())
        {
            let _ = writeln!(out, "      {note}");
        }
    }
    for v in &check.new {
        out.push_str("NEW ");
        out.push_str(&violation_line(graph, v));
    }
    for (f, t) in &check.gone {
        let _ = writeln!(
            out,
            "GONE {f} -> {t}: no longer in the code; remove it from xtask/src/layers_known.txt"
        );
    }
    out
}

fn violation_line(graph: &Graph, v: &Violation) -> String {
    let sites = &graph[&v.from][&v.to];
    let what = match v.kind {
        Kind::Upward => "upward",
        Kind::CycleInLayer => "cycle within a layer",
    };
    let first = &sites[0];
    format!(
        "  {} -> {} ({what}, {} reference(s), first at {}:{})\n",
        v.from,
        v.to,
        sites.len(),
        first.file,
        first.line
    )
}
