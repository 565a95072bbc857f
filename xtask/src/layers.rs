//! `cargo xtask layers [--bless]`: checks that `core`'s modules only point down its layers.
//!
//! Reads every `core/src/**/*.rs`, maps each file to its top-level module
//! (`core/src/trace/findings/host.rs` → `trace`), collects its `crate::<module>` references
//! (see [`crate::layers_scan`] for what is and is not seen) and prints the module graph.
//! An edge is a *violation* when it points to a higher layer of [`LAYERS`], or when it joins
//! two modules of one layer that reach each other without leaving it (a cycle inside the
//! layer; a cycle that leaves the layer goes up somewhere, and that edge is the one reported).
//!
//! It is a ratchet: `xtask/src/layers_known.txt` lists the violations that exist today, each
//! with a note of what it is. Those are printed as debt and tolerated. A violation not on the
//! list fails; so does a listed one that no longer exists, so the list only shrinks.
//! `--bless` rewrites the list from the code (keeping the notes of edges already listed).
//! It is for recording debt that already exists — after merging branches, say — never for
//! hiding an upward edge someone is adding on purpose: fix the dependency instead.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::layers_report::{bless_text, parse_known, render, KnownList};
use crate::layers_scan;

/// One layer of `core`: the modules in it may use modules of their own layer and of the
/// layers listed before it.
pub struct Layer {
    /// Short name printed in the report.
    pub name: &'static str,
    /// Top-level modules of `core/src`.
    pub modules: &'static [&'static str],
    /// What the layer is for.
    pub what: &'static str,
}

/// `core`'s layers, bottom to top (`docs/architecture.md` draws the same table).
pub const LAYERS: &[Layer] = &[
    Layer {
        name: "model",
        modules: &["error", "metric", "report"],
        what: "the report model: plain data and its serde form, the metric catalogue, the error type",
    },
    Layer {
        name: "basics",
        modules: &["stats", "text"],
        what: "one definition of each statistic (quantiles, Mann–Whitney), of reading a JSON number and of escaping HTML, for core, the CLI and the viewer",
    },
    Layer {
        name: "recording",
        modules: &["recording"],
        what: "the bounded, columnar Recording that every source fills; turning it into a report, writing it as the crash journal and replaying one, and reading report files (journals included)",
    },
    Layer {
        name: "platform",
        modules: &["os"],
        what: "operating-system calls behind safe functions",
    },
    Layer {
        name: "sources",
        modules: &[
            "nvml", "host", "collect", "jobgpus", "steps", "import", "trace",
        ],
        what: "NVML, /proc, the sampler, which GPUs are the job's, step logs, log importers and the trace reader produce data",
    },
    Layer {
        name: "signals",
        modules: &["signals"],
        what: "features derived from recordings, steps and traces",
    },
    Layer {
        name: "rules",
        modules: &["rules"],
        what: "one rule per file judges the signals",
    },
    Layer {
        name: "analysis",
        modules: &["analysis"],
        what: "runs the rules, orders the findings, writes the verdict",
    },
    Layer {
        name: "outputs",
        modules: &["merge", "compare", "export", "summary"],
        what: "join ranks, compare runs, export reports and summarise many, feeding signals or calling analysis",
    },
    Layer {
        name: "front",
        modules: &["session"],
        what: "the embedding API a training loop drives: starts the sampler, takes step markers, and at the end diagnoses (and compares) its report, as the CLI and the C ABI do",
    },
];

/// Where one reference was written.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Site {
    pub file: String,
    pub line: usize,
}

/// module → module it uses → where.
pub type Graph = BTreeMap<String, BTreeMap<String, Vec<Site>>>;

/// Why an edge breaks the layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Upward,
    CycleInLayer,
}

/// An edge that breaks the layers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub from: String,
    pub to: String,
    pub kind: Kind,
}

pub fn run(args: &[String]) -> Result<()> {
    let bless = match args {
        [] => false,
        [a] if a == "--bless" => true,
        _ => bail!("usage: cargo xtask layers [--bless]"),
    };
    let root = crate::root();
    let graph = scan(&root.join("core/src"))?;
    let known_path = root.join("xtask/src/layers_known.txt");
    let known_text = std::fs::read_to_string(&known_path).unwrap_or_default();
    let known = parse_known(&known_text)?;
    let check = check(&graph, LAYERS, &known)?;
    print!("{}", render(&graph, LAYERS, &check, &known));
    if bless {
        std::fs::write(&known_path, bless_text(&graph, &check, &known))
            .with_context(|| format!("cannot write {}", known_path.display()))?;
        eprintln!("xtask: wrote {}", known_path.display());
        return Ok(());
    }
    if !check.new.is_empty() || !check.gone.is_empty() {
        bail!(
            "layers: {} new violation(s), {} listed one(s) gone: move the dependency down (or, \
             for a gone one, remove it from xtask/src/layers_known.txt)",
            check.new.len(),
            check.gone.len()
        );
    }
    Ok(())
}

/// The module graph of the crate whose sources are under `src` (`lib.rs` at its top).
pub fn scan(src: &Path) -> Result<Graph> {
    let reexports = root_reexports(&src.join("lib.rs"))?;
    let mut files = Vec::new();
    rust_files(src, &mut files)?;
    files.sort();
    let mut graph = Graph::new();
    for file in files {
        let rel = file.strip_prefix(src).unwrap_or(&file);
        let Some(module) = top_module(rel) else {
            continue;
        };
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        let shown = format!("core/src/{}", rel.to_string_lossy());
        let uses = graph.entry(module.clone()).or_default();
        for r in layers_scan::references(&text) {
            let target = reexports.get(&r.name).cloned().unwrap_or(r.name);
            if target != module {
                uses.entry(target).or_default().push(Site {
                    file: shown.clone(),
                    line: r.line,
                });
            }
        }
    }
    Ok(graph)
}

/// `core/src/analysis.rs` → `analysis`, `trace/findings/host.rs` → `trace`; the crate root
/// (`lib.rs`) has no module.
fn top_module(rel: &Path) -> Option<String> {
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib").then(|| name.to_string())
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?;
    for entry in entries {
        let path = entry?.path();
        if path.is_dir() {
            rust_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// Names the crate root re-exports from its modules (`pub use error::{Error, Result};` makes
/// `crate::Error` a use of `error`).
fn root_reexports(lib: &Path) -> Result<BTreeMap<String, String>> {
    let text =
        std::fs::read_to_string(lib).with_context(|| format!("cannot read {}", lib.display()))?;
    let mut map = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.trim().strip_prefix("pub use ") else {
            continue;
        };
        let rest = rest.trim_end_matches(';');
        let Some((module, items)) = rest.split_once("::") else {
            continue;
        };
        let items = items.trim_start_matches('{').trim_end_matches('}');
        for item in items.split(',') {
            let name = item.split(" as ").last().unwrap_or(item).trim();
            let name = name.rsplit("::").next().unwrap_or(name);
            if !name.is_empty() {
                map.insert(name.to_string(), module.trim().to_string());
            }
        }
    }
    Ok(map)
}

/// What [`check`] found.
pub struct Check {
    /// Every violation in the code.
    pub violations: Vec<Violation>,
    /// Violations not on the known list.
    pub new: Vec<Violation>,
    /// Known entries the code no longer has.
    pub gone: Vec<(String, String)>,
    /// One shortest cycle through each module that is on a cycle, deduplicated.
    pub cycles: Vec<Vec<String>>,
}

/// Index of each module's layer.
fn layer_of(layers: &[Layer]) -> BTreeMap<&'static str, usize> {
    let mut map = BTreeMap::new();
    for (i, l) in layers.iter().enumerate() {
        for m in l.modules {
            map.insert(*m, i);
        }
    }
    map
}

/// Compares the graph with the layers and the known list.
pub fn check(graph: &Graph, layers: &[Layer], known: &KnownList) -> Result<Check> {
    let layer = layer_of(layers);
    let mut unplaced: BTreeSet<&str> = BTreeSet::new();
    for (from, uses) in graph {
        unplaced.extend(std::iter::once(from.as_str()).chain(uses.keys().map(String::as_str)));
    }
    unplaced.retain(|m| !layer.contains_key(m));
    if !unplaced.is_empty() {
        bail!(
            "module(s) with no layer: {}; add each to LAYERS in xtask/src/layers.rs",
            unplaced.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    let mut violations = Vec::new();
    for (from, uses) in graph {
        for to in uses.keys() {
            let (lf, lt) = (layer[from.as_str()], layer[to.as_str()]);
            let kind = if lt > lf {
                Some(Kind::Upward)
            } else if lt == lf && reaches_within_layer(graph, &layer, to, from) {
                Some(Kind::CycleInLayer)
            } else {
                None
            };
            if let Some(kind) = kind {
                violations.push(Violation {
                    from: from.clone(),
                    to: to.clone(),
                    kind,
                });
            }
        }
    }
    let is_known = |v: &Violation| known.contains_key(&(v.from.clone(), v.to.clone()));
    let new = violations
        .iter()
        .filter(|v| !is_known(v))
        .cloned()
        .collect();
    let gone = known
        .keys()
        .filter(|(f, t)| !violations.iter().any(|v| &v.from == f && &v.to == t))
        .cloned()
        .collect();
    Ok(Check {
        violations,
        new,
        gone,
        cycles: cycles(graph),
    })
}

/// The shortest path of modules from `from` to `to` (both included), if any, through
/// modules for which `allowed` holds.
fn path(
    graph: &Graph,
    from: &str,
    to: &str,
    allowed: &dyn Fn(&str) -> bool,
) -> Option<Vec<String>> {
    let mut prev: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = VecDeque::from([from]);
    while let Some(m) = queue.pop_front() {
        for next in graph.get(m).into_iter().flat_map(|u| u.keys()) {
            if next == to {
                let mut p = vec![to.to_string(), m.to_string()];
                let mut at = m;
                while at != from {
                    at = prev[at];
                    p.push(at.to_string());
                }
                p.reverse();
                return Some(p);
            }
            if next != from && allowed(next) && !prev.contains_key(next.as_str()) {
                prev.insert(next, m);
                queue.push_back(next);
            }
        }
    }
    None
}

/// Whether `from` reaches `to` without leaving `from`'s layer (a cycle that leaves the layer
/// goes up somewhere, and that upward edge is what is reported).
fn reaches_within_layer(
    graph: &Graph,
    layer: &BTreeMap<&str, usize>,
    from: &str,
    to: &str,
) -> bool {
    let home = layer.get(from).copied();
    path(graph, from, to, &|m| layer.get(m).copied() == home).is_some()
}

/// For each module on a cycle, the shortest cycle through it (`a → b → a` written
/// `[a, b, a]`), each cycle once, starting from its smallest module.
fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    let mut seen = BTreeSet::new();
    for m in graph.keys() {
        let Some(mut c) = path(graph, m, m, &|_| true) else {
            continue;
        };
        c.pop();
        let min = (0..c.len()).min_by_key(|&i| &c[i]).unwrap_or(0);
        c.rotate_left(min);
        c.push(c[0].clone());
        seen.insert(c);
    }
    seen.into_iter().collect()
}

#[cfg(test)]
#[path = "layers_tests.rs"]
mod tests;
