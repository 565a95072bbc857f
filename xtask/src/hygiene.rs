//! `cargo xtask hygiene`: two ratchets on how the code is written.
//!
//! - **Long functions.** No function outside tests and generated tables is longer than
//!   [`MAX_LINES`] lines, except those listed in `xtask/src/hygiene_long.txt` with their
//!   length when the list was made. A new long function, or a listed one that grew, fails;
//!   a listed one that shrank under the limit or is gone is reported so its line can be
//!   removed (`--bless` rewrites the list from the code; it is for recording what merged
//!   branches left, never for letting a function grow).
//! - **No sleeping tests.** A test waits for another thread through an injectable clock
//!   (`gpuwhy::collect::ManualClock`) or for another process through an observable
//!   condition, never with `thread::sleep`. Test code (files under a `tests` folder, files
//!   named `tests.rs`, and everything after a `#[cfg(test)]` line) may call it only in
//!   the files of [`SLEEP_ALLOWED`], each with its reason.
//!
//! Functions are found by a line scanner, not a parser: a line starting an `fn` item,
//! then braces counted (string and character literals and `//` comments left out) to the
//! closing one. Every crate of the workspace is scanned (its `src/` and `build.rs`, the
//! crates found by `cargo metadata`); inside a crate, folders named `target`, `tests` or
//! `fixtures`, files named `tests.rs`, and everything after a `#[cfg(test)]` line are not
//! scanned for length.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use std::process::Stdio;

use anyhow::{bail, Context, Result};
use serde_json::Value;

use crate::{cargo, root};

/// The longest function allowed outside the list, lines (its signature and closing brace
/// included).
pub const MAX_LINES: usize = 80;

/// Test files that may call `thread::sleep`, and why it is not a test waiting for another
/// thread.
const SLEEP_ALLOWED: [(&str, &str); 5] = [
    (
        "tests/src/lib.rs",
        "record_session: plays a scenario for its length; the simulated GPU runs on real time",
    ),
    (
        "core/src/collect/cost.rs",
        "the sleep is the call being timed (the slowest call is named), not a wait",
    ),
    (
        "cli/tests/it/main.rs",
        "wait_for: polls a file another process writes, with a guard against a hang",
    ),
    (
        "ffi/tests/support/mod.rs",
        "wait_for: polls a file another process writes, with a guard against a hang",
    ),
    (
        "tests/it/slow_init.rs",
        "paces a marking loop against a sampler that must fall behind real time",
    ),
];

/// The allow-list of long functions, relative to the repository root.
const LONG_LIST: &str = "xtask/src/hygiene_long.txt";

pub fn run(args: &[String]) -> Result<()> {
    let bless = args.iter().any(|a| a == "--bless");
    let crates = workspace_crates()?;
    let found = long_functions(&crates)?;
    let list_path = root().join(LONG_LIST);
    if bless {
        std::fs::write(&list_path, render(&found))?;
        println!(
            "hygiene: wrote {} long functions to {LONG_LIST}",
            found.len()
        );
    }
    let listed = parse(&std::fs::read_to_string(&list_path).unwrap_or_default());
    let mut errors = Vec::new();
    for (key, n) in &found {
        match listed.get(key) {
            None => errors.push(format!("{key}: {n} lines (> {MAX_LINES}); split it")),
            Some(max) if n > max => errors.push(format!(
                "{key}: {n} lines, grew from {max}; split it rather than grow it"
            )),
            Some(_) => {}
        }
    }
    for key in listed.keys().filter(|k| !found.contains_key(*k)) {
        println!("hygiene: {key} is no longer over {MAX_LINES} lines: remove it from {LONG_LIST}");
    }
    errors.extend(sleeping_tests(&crates)?);
    println!(
        "hygiene: {} functions over {MAX_LINES} lines ({} listed as debt); tests checked for sleeps",
        found.len(),
        listed.len()
    );
    if !errors.is_empty() {
        for e in &errors {
            eprintln!("hygiene: {e}");
        }
        bail!("{} hygiene violation(s)", errors.len());
    }
    Ok(())
}

/// `path::function` → lines, for every function over [`MAX_LINES`] in the `src/` folder or
/// build script of every crate of the workspace.
fn long_functions(crates: &[String]) -> Result<BTreeMap<String, usize>> {
    let mut out = BTreeMap::new();
    for krate in crates {
        let dir = root().join(krate);
        let mut files = rust_files(&dir.join("src"))?;
        files.extend(Some(dir.join("build.rs")).filter(|b| b.is_file()));
        for file in files {
            let rel = relative(&file);
            // Test code inside the crate: a `tests` or `fixtures` folder, or a `tests.rs`. The
            // crate's own folder name does not count (the `tests` crate's `src/` is scanned).
            let inside = rel.strip_prefix(krate.as_str()).unwrap_or(&rel);
            if inside.split('/').any(|c| c == "tests" || c == "fixtures")
                || inside.ends_with("tests.rs")
            {
                continue;
            }
            let src = std::fs::read_to_string(&file)?;
            for (name, n) in function_lengths(&src) {
                if n > MAX_LINES {
                    out.insert(format!("{rel}::{name}"), n);
                }
            }
        }
    }
    Ok(out)
}

/// The folder of every crate of the workspace, relative to the root, from `cargo metadata`:
/// the members of the root `Cargo.toml`, so a crate added there is scanned without being
/// listed here.
fn workspace_crates() -> Result<Vec<String>> {
    let out = cargo()
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .current_dir(root())
        .stderr(Stdio::inherit())
        .output()
        .context("cannot run cargo metadata")?;
    if !out.status.success() {
        bail!("cargo metadata failed ({})", out.status);
    }
    let meta: Value = serde_json::from_slice(&out.stdout).context("cargo metadata output")?;
    let mut crates: Vec<String> = meta["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["manifest_path"].as_str())
        .filter_map(|m| Path::new(m).parent().map(relative))
        .collect();
    crates.sort();
    if crates.is_empty() {
        bail!("cargo metadata listed no crates");
    }
    Ok(crates)
}

/// Each `thread::sleep` in test code outside [`SLEEP_ALLOWED`].
fn sleeping_tests(crates: &[String]) -> Result<Vec<String>> {
    let mut errors = Vec::new();
    // Every file of every crate's folder, once: a crate's folder may hold another crate
    // (`sim/workload` inside `sim`).
    let mut files = BTreeSet::new();
    for krate in crates {
        files.extend(rust_files(&root().join(krate))?);
    }
    for file in files {
        let rel = relative(&file);
        if SLEEP_ALLOWED.iter().any(|(p, _)| *p == rel) {
            continue;
        }
        let whole_file = rel.split('/').any(|c| c == "tests") || rel.ends_with("tests.rs");
        let src = std::fs::read_to_string(&file)?;
        let mut in_test = whole_file;
        for (i, line) in src.lines().enumerate() {
            in_test |= line.trim_start().starts_with("#[cfg(test)]");
            let code = strip(line);
            if in_test && code.contains("thread::sleep") {
                errors.push(format!(
                    "{rel}:{}: a test sleeps; advance a ManualClock or wait for an observable condition",
                    i + 1
                ));
            }
        }
    }
    Ok(errors)
}

/// `.rs` files under `dir`, skipping `target` folders, in a stable order.
fn rust_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let p = e?.path();
            if p.is_dir() {
                if p.file_name()
                    .is_some_and(|n| n != "target" && n != "node_modules")
                {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

fn relative(p: &Path) -> String {
    p.strip_prefix(root())
        .unwrap_or(p)
        .to_string_lossy()
        .replace('\\', "/")
}

/// A line without its string and character literals and `//` comment.
fn strip(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                while let Some(s) = chars.next() {
                    match s {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
            }
            '\'' => {
                // A character literal ('x', '\n', '{'), not a lifetime ('a).
                let rest: String = chars.clone().take(3).collect();
                let mut r = rest.chars();
                match (r.next(), r.next(), r.next()) {
                    (Some('\\'), Some(_), Some('\'')) => {
                        chars.nth(2);
                    }
                    (Some(_), Some('\''), _) => {
                        chars.nth(1);
                    }
                    _ => out.push(c),
                }
            }
            '/' if chars.peek() == Some(&'/') => break,
            _ => out.push(c),
        }
    }
    out
}

/// The name of the function an item line starts, if it starts one.
fn fn_name(line: &str) -> Option<&str> {
    let mut s = line.trim_start();
    if let Some(rest) = s.strip_prefix("pub") {
        s = match rest.strip_prefix('(') {
            Some(r) => r.split_once(')')?.1,
            None => rest,
        };
        if !s.starts_with(char::is_whitespace) {
            return None;
        }
        s = s.trim_start();
    }
    for prefix in ["const ", "async ", "unsafe ", "extern \"C\" "] {
        if let Some(rest) = s.strip_prefix(prefix) {
            s = rest.trim_start();
        }
    }
    let rest = s.strip_prefix("fn ")?;
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// (name, lines) of every function with a body before the first `#[cfg(test)]` line.
pub fn function_lengths(src: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = src.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        let Some(name) = fn_name(lines[i]) else {
            i += 1;
            continue;
        };
        let (mut depth, mut started, mut j) = (0i64, false, i);
        while j < lines.len() {
            let code = strip(lines[j]);
            let opens = code.matches('{').count() as i64;
            depth += opens - code.matches('}').count() as i64;
            started |= opens > 0;
            if (started && depth <= 0) || (!started && code.trim_end().ends_with(';')) {
                break;
            }
            j += 1;
        }
        if started {
            out.push((name.to_string(), j + 1 - i));
            i = j + 1;
        } else {
            i += 1;
        }
    }
    out
}

fn render(found: &BTreeMap<String, usize>) -> String {
    let mut s = format!(
        "# Functions over {MAX_LINES} lines, with their length when listed: debt that only shrinks.\n\
         # Written by `cargo xtask hygiene --bless`; see xtask/src/hygiene.rs.\n"
    );
    for (k, n) in found {
        s.push_str(&format!("{k} {n}\n"));
    }
    s
}

fn parse(text: &str) -> BTreeMap<String, usize> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (k, n) = l.rsplit_once(' ')?;
            Some((k.to_string(), n.trim().parse().ok()?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_function_is_measured_from_its_line_to_its_closing_brace() {
        let src = "pub(crate) fn a(x: &str) -> char {\n    let _ = \"}\";\n    '{'\n}\n\nfn decl();\nunsafe fn b<'a>(s: &'a str) {\n    // }\n}\n#[cfg(test)]\nfn c() {\n}\n";
        assert_eq!(
            function_lengths(src),
            vec![("a".to_string(), 4), ("b".to_string(), 3)]
        );
        assert_eq!(fn_name("    pub async fn go() {"), Some("go"));
        assert_eq!(fn_name("    // fn not_this() {"), None);
        assert_eq!(fn_name("pubfn x() {"), None);
    }

    #[test]
    fn every_crate_of_the_workspace_is_scanned() {
        let crates = workspace_crates().expect("cargo metadata runs");
        for krate in [
            "core",
            "nvml-sys",
            "sim/workload",
            "sim/bundle",
            "tests",
            "xtask",
        ] {
            assert!(
                crates.iter().any(|c| c == krate),
                "{krate} not in {crates:?}"
            );
        }
        assert!(!crates.iter().any(|c| c == "fuzz"), "fuzz is not a member");
    }

    #[test]
    fn the_list_reads_back_what_bless_writes() {
        let found: BTreeMap<String, usize> = [("core/src/a.rs::long".to_string(), 120)].into();
        assert_eq!(parse(&render(&found)), found);
    }
}
