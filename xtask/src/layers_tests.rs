use super::*;

/// Three layers for the synthetic crates: `model` < `mid` (two modules) < `top`.
const TEST_LAYERS: &[Layer] = &[
    Layer {
        name: "model",
        modules: &["error", "model"],
        what: "",
    },
    Layer {
        name: "mid",
        modules: &["a", "b"],
        what: "",
    },
    Layer {
        name: "top",
        modules: &["top"],
        what: "",
    },
];

/// Writes `files` (path under `src/`, contents) into a temp dir and scans it.
fn graph_of(files: &[(&str, &str)]) -> Graph {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path().join("src");
    for (path, text) in files {
        let p = src.join(path);
        std::fs::create_dir_all(p.parent().expect("has a parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }
    scan(&src).expect("scan")
}

const LIB: &str = "mod error;\npub use error::{Error, Result};\npub mod model;\npub mod a;\n";

fn edges(g: &Graph) -> Vec<(String, String, usize)> {
    g.iter()
        .flat_map(|(f, u)| u.iter().map(move |(t, s)| (f.clone(), t.clone(), s.len())))
        .collect()
}

#[test]
fn maps_files_to_top_modules_and_counts_references() {
    let g = graph_of(&[
        ("lib.rs", LIB),
        ("error.rs", "pub struct Error;"),
        ("model.rs", "use crate::Error;"),
        (
            "a/mod.rs",
            "use crate::model::X;\nfn f() { crate::model::y(); }",
        ),
        ("a/deep/inner.rs", "use crate::{b::Z, a::W, Result};"),
        ("b.rs", "// crate::top is only mentioned\n"),
    ]);
    let e = edges(&g);
    assert!(e.contains(&("model".into(), "error".into(), 1)));
    assert!(e.contains(&("a".into(), "model".into(), 2)));
    assert!(e.contains(&("a".into(), "b".into(), 1)));
    assert!(e.contains(&("a".into(), "error".into(), 1)));
    // A module's references to itself are not edges; comments are not references.
    assert_eq!(e.len(), 4);
    assert!(g["b"].is_empty());
    assert_eq!(g["a"]["b"][0].file, "core/src/a/deep/inner.rs");
}

#[test]
fn a_new_upward_edge_fails_and_a_known_one_is_debt() {
    let g = graph_of(&[
        ("lib.rs", LIB),
        ("model.rs", "use crate::a::X;"),
        ("a.rs", "fn f() { crate::top::run(); }"),
        ("top.rs", "use crate::a;"),
    ]);
    let known = parse_known("# header\nmodel -> a  # the model reads a\n").expect("parse");
    let c = check(&g, TEST_LAYERS, &known).expect("check");
    assert_eq!(c.violations.len(), 2);
    assert_eq!(
        c.new,
        [Violation {
            from: "a".into(),
            to: "top".into(),
            kind: Kind::Upward
        }]
    );
    assert!(c.gone.is_empty());
    let text = render(&g, TEST_LAYERS, &c, &known);
    assert!(text.contains("model -> a (upward, 1 reference(s), first at core/src/model.rs:1)"));
    assert!(text.contains("the model reads a"));
    assert!(text.contains("NEW   a -> top (upward"));
}

#[test]
fn a_listed_edge_that_is_gone_fails() {
    let g = graph_of(&[("lib.rs", LIB), ("a.rs", "use crate::model::X;")]);
    let known = parse_known("a -> top  # removed since\n").expect("parse");
    let c = check(&g, TEST_LAYERS, &known).expect("check");
    assert!(c.new.is_empty());
    assert_eq!(c.gone, [("a".to_string(), "top".to_string())]);
    assert!(render(&g, TEST_LAYERS, &c, &known).contains("GONE a -> top"));
}

#[test]
fn a_cycle_inside_one_layer_is_a_violation_and_is_printed() {
    let g = graph_of(&[
        ("lib.rs", LIB),
        ("a.rs", "use crate::b::X;"),
        ("b.rs", "use crate::a::Y;\nuse crate::model::Z;"),
    ]);
    let c = check(&g, TEST_LAYERS, &KnownList::new()).expect("check");
    let kinds: Vec<_> = c.new.iter().map(|v| (v.from.as_str(), v.kind)).collect();
    assert_eq!(
        kinds,
        [("a", Kind::CycleInLayer), ("b", Kind::CycleInLayer)]
    );
    assert_eq!(c.cycles, [vec!["a", "b", "a"]]);
}

#[test]
fn a_cycle_across_layers_flags_only_its_upward_edge() {
    // model -> top -> a -> error -> model: `error -> model` stays inside the bottom layer but
    // closes the cycle only through the upward edge, which is the one reported.
    let g = graph_of(&[
        ("lib.rs", LIB),
        ("model.rs", "use crate::top::X;"),
        ("top.rs", "use crate::a::X;"),
        ("a.rs", "use crate::Error;"),
        ("error.rs", "use crate::model::X;"),
    ]);
    let c = check(&g, TEST_LAYERS, &KnownList::new()).expect("check");
    let new: Vec<_> = c
        .new
        .iter()
        .map(|v| (v.from.as_str(), v.to.as_str()))
        .collect();
    assert_eq!(new, [("model", "top")]);
    assert_eq!(c.cycles, [vec!["a", "error", "model", "top", "a"]]);
}

#[test]
fn a_module_with_no_layer_is_an_error() {
    let g = graph_of(&[("lib.rs", LIB), ("fresh.rs", "use crate::model::X;")]);
    let err = check(&g, TEST_LAYERS, &KnownList::new())
        .err()
        .expect("fails");
    assert!(err.to_string().contains("fresh"));
}

#[test]
fn bless_keeps_notes_and_records_new_debt() {
    let g = graph_of(&[
        ("lib.rs", LIB),
        ("model.rs", "use crate::a::X;"),
        ("a.rs", "\nuse crate::top::X;"),
        ("top.rs", ""),
    ]);
    let known = parse_known("model -> a  # old note\nb -> top  # gone\n").expect("parse");
    let c = check(&g, TEST_LAYERS, &known).expect("check");
    let text = bless_text(&g, &c, &known);
    let again = parse_known(&text).expect("reparse");
    assert_eq!(again.len(), 2);
    assert_eq!(again[&("model".into(), "a".into())], "old note");
    assert_eq!(
        again[&("a".into(), "top".into())],
        "recorded by --bless, first at core/src/a.rs:2"
    );
    let c = check(&g, TEST_LAYERS, &again).expect("check");
    assert!(c.new.is_empty() && c.gone.is_empty());
}

#[test]
fn a_malformed_known_line_is_an_error() {
    assert!(parse_known("analysis merge\n").is_err());
}

#[test]
fn every_core_module_has_a_layer() {
    let g = scan(&crate::root().join("core/src")).expect("scan core");
    let c = check(&g, LAYERS, &KnownList::new());
    assert!(c.is_ok(), "{:?}", c.err());
}
