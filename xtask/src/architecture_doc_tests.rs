//! `docs/architecture.md` stays true to the tree: every path it writes in backticks exists,
//! its Layers table is `LAYERS` (each module a module of core), and its one-line data flow
//! is the one `core/src/lib.rs` states. A file moved or a module renamed without the doc
//! fails here, not in a newcomer's first hour.

use crate::layers::LAYERS;
use crate::root;

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The backticked spans of `text`.
fn backticked(text: &str) -> impl Iterator<Item = &str> {
    text.split('`').skip(1).step_by(2)
}

/// The part of a backticked token that names a path in the tree, if it names one: a token
/// with a `/` or a `.rs` file (the doc writes core's files relative to `core/src/`, as in
/// `recording/build.rs`). Not paths in the tree: code and commands (a space or a quote), the
/// system's paths (`/proc`) and build outputs (`target/…`). A placeholder or a pattern
/// (`rules/<id>/`, `sim/scenarios/*.json`) names the folder before it.
fn tree_path(token: &str) -> Option<&str> {
    if token.contains(char::is_whitespace)
        || token.contains('"')
        || token.starts_with('/')
        || token.starts_with("target/")
    {
        return None;
    }
    let token = match token.find(['<', '*']) {
        Some(i) => &token[..token[..i].rfind('/').map_or(0, |j| j + 1)],
        None => token,
    };
    (token.contains('/') || token.ends_with(".rs")).then_some(token)
}

fn exists(path: &str) -> bool {
    let root = root();
    root.join(path).exists() || root.join("core/src").join(path).exists()
}

#[test]
fn every_path_in_backticks_exists() {
    let doc = read("docs/architecture.md");
    let paths: Vec<&str> = backticked(&doc).filter_map(tree_path).collect();
    let missing: Vec<&&str> = paths.iter().filter(|p| !exists(p)).collect();
    assert!(
        missing.is_empty(),
        "docs/architecture.md names paths that are not in the tree (from the root or core/src/): {missing:?}"
    );
    // The check reads the doc as it is written, not an empty selection of it.
    for named in [
        "core/src/rules/",
        "viewer/dist/",
        "tests/nvml-header/",
        "recording/build.rs",
    ] {
        assert!(paths.contains(&named), "{named} not read from the doc");
    }
}

#[test]
fn what_is_a_path_in_the_tree() {
    assert_eq!(tree_path("core/src/rules/"), Some("core/src/rules/"));
    assert_eq!(tree_path("metric.rs"), Some("metric.rs"));
    assert_eq!(tree_path("rules/<id>/"), Some("rules/"));
    assert_eq!(tree_path("sim/scenarios/*.json"), Some("sim/scenarios/"));
    assert_eq!(tree_path("<dir>/scenario.json"), None);
    assert_eq!(tree_path("/proc"), None);
    assert_eq!(tree_path("target/sim-embed"), None);
    assert_eq!(tree_path("cargo xtask layers"), None);
    assert_eq!(tree_path("trace::TraceSummary"), None);
    assert!(!exists("core/src/no_such_module/"));
}

#[test]
fn the_layers_table_is_the_one_the_check_uses() {
    let doc = read("docs/architecture.md");
    let section = doc
        .split("\n## Layers\n")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("docs/architecture.md has a Layers section");
    let rows: Vec<(String, Vec<String>)> = section
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let modules: Vec<String> = backticked(cells.get(2)?).map(String::from).collect();
            (!modules.is_empty()).then(|| (cells[1].to_string(), modules))
        })
        .collect();
    let layers: Vec<(String, Vec<String>)> = LAYERS
        .iter()
        .map(|l| {
            (
                l.name.to_string(),
                l.modules.iter().map(|m| m.to_string()).collect(),
            )
        })
        .collect();
    assert_eq!(
        rows, layers,
        "docs/architecture.md's Layers table differs from LAYERS"
    );
    for module in layers.iter().flat_map(|(_, m)| m) {
        let src = root().join("core/src");
        assert!(
            src.join(format!("{module}.rs")).is_file() || src.join(module).is_dir(),
            "{module} is not a module of core"
        );
    }
}

#[test]
fn the_one_line_flow_is_lib_rs_s() {
    let lib = read("core/src/lib.rs");
    let line = lib
        .lines()
        .find_map(|l| l.strip_prefix("//! sources →"))
        .expect("core/src/lib.rs states the flow on a line starting `sources →`");
    let plain: String = format!("sources →{line}").replace(['[', ']', '`'], "");
    let doc = read("docs/architecture.md");
    assert!(
        doc.lines().any(|l| l.trim() == plain),
        "docs/architecture.md does not state lib.rs's flow: {plain}"
    );
}
