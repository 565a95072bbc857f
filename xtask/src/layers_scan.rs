//! Finds which top-level modules of a crate a Rust source file refers to through `crate::`
//! paths, for `cargo xtask layers`.
//!
//! A small tokenizer, not a parser: it drops comments (line, block, nested block, doc),
//! string, byte-string, raw-string and character literals, then looks for the identifier
//! `crate` followed by `::` and reads the next path segment, or each first segment of a
//! `crate::{a::X, b}` group. That is every `use crate::…` and every path written in code
//! (`crate::merge::diagnose_job(…)`, `$crate::…` in macros), plus a string literal that is
//! nothing but such a path (serde's `deserialize_with = "crate::report::f64_or_nan"`).
//!
//! Its limits, on purpose: references that are not spelled `crate::` are not seen —
//! `super::` paths that climb out of a top-level module (core has none: its `super::`
//! paths stay inside their module), paths through the crate's own name, and names
//! brought in by a glob import (`use crate::x::*` counts as one reference to `x`, not one
//! per name used). References inside `#[cfg(test)]` code count like any other: a test
//! that reaches up a layer is a dependency too. Intra-doc links in comments do not count.

/// One `crate::<name>` reference: the first path segment after `crate::` and its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// The segment after `crate::` (a module, or an item the crate root re-exports).
    pub name: String,
    /// 1-based line of the segment.
    pub line: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    PathSep,
    Open,
    Close,
    Comma,
    Other,
}

/// Every `crate::` reference in `src`, in order.
pub fn references(src: &str) -> Vec<Reference> {
    let toks = tokenize(src);
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let is_crate = matches!(&toks[i].0, Tok::Ident(s) if s == "crate");
        if is_crate && toks.get(i + 1).map(|t| &t.0) == Some(&Tok::PathSep) {
            match toks.get(i + 2) {
                Some((Tok::Ident(name), line)) => out.push(Reference {
                    name: name.clone(),
                    line: *line,
                }),
                Some((Tok::Open, _)) => group_heads(&toks[i + 3..], &mut out),
                _ => {}
            }
        }
        i += 1;
    }
    out
}

/// The first segment of each item of a `{…}` group whose opening brace is already consumed.
fn group_heads(toks: &[(Tok, usize)], out: &mut Vec<Reference>) {
    let mut depth = 0usize;
    let mut at_item_start = true;
    for (tok, line) in toks {
        match tok {
            Tok::Open => depth += 1,
            Tok::Close if depth == 0 => return,
            Tok::Close => depth -= 1,
            Tok::Comma if depth == 0 => {
                at_item_start = true;
                continue;
            }
            Tok::Ident(name) if depth == 0 && at_item_start && name != "self" => {
                out.push(Reference {
                    name: name.clone(),
                    line: *line,
                });
            }
            _ => {}
        }
        if depth == 0 {
            at_item_start = false;
        }
    }
}

/// Identifiers and the punctuation paths are made of, with their lines; literals and
/// comments are dropped.
fn tokenize(src: &str) -> Vec<(Tok, usize)> {
    let b = src.as_bytes();
    let mut toks = Vec::new();
    let mut line = 1usize;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start_line = line;
        let next = b.get(i + 1).copied();
        if c == b'\n' {
            line += 1;
            i += 1;
        } else if c == b'/' && next == Some(b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && next == Some(b'*') {
            i = skip_block_comment(b, i, &mut line);
        } else if let Some(end) = raw_string_end(b, i) {
            line += count_newlines(&b[i..end]);
            i = end;
        } else if c == b'"' || (c == b'b' && next == Some(b'"')) {
            let open = if c == b'b' { i + 1 } else { i };
            i = skip_quoted(b, open, b'"', &mut line);
            // Without its closing quote (the literal may be cut off at the end of the file).
            let end = i.min(b.len());
            let end = if end > open + 1 && b[end - 1] == b'"' {
                end - 1
            } else {
                end
            };
            if let (b'"', Some(content)) = (c, src.get(open + 1..end)) {
                string_path(content, start_line, &mut toks);
            }
        } else if c == b'\'' || (c == b'b' && next == Some(b'\'')) {
            let open = if c == b'b' { i + 1 } else { i };
            i = skip_char_or_lifetime(b, open, &mut line);
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            toks.push((Tok::Ident(src[s..i].to_string()), start_line));
        } else if c == b':' && next == Some(b':') {
            toks.push((Tok::PathSep, line));
            i += 2;
        } else {
            let tok = match c {
                b'{' => Tok::Open,
                b'}' => Tok::Close,
                b',' => Tok::Comma,
                _ => Tok::Other,
            };
            if !c.is_ascii_whitespace() {
                toks.push((tok, line));
            }
            i += 1;
        }
    }
    toks
}

/// A string that is a whole `crate::` path (serde's `with = "crate::report::f64_or_nan"`)
/// names an item as surely as code does: it becomes the tokens of that path's head.
fn string_path(content: &str, line: usize, toks: &mut Vec<(Tok, usize)>) {
    let Some(rest) = content.strip_prefix("crate::") else {
        return;
    };
    let is_path = rest
        .split("::")
        .all(|seg| !seg.is_empty() && seg.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_'));
    if let (true, Some(head)) = (is_path, rest.split("::").next()) {
        toks.push((Tok::Ident("crate".to_string()), line));
        toks.push((Tok::PathSep, line));
        toks.push((Tok::Ident(head.to_string()), line));
        // Ends the path so that what follows the string is not read as its continuation.
        toks.push((Tok::Other, line));
    }
}

fn count_newlines(b: &[u8]) -> usize {
    b.iter().filter(|&&c| c == b'\n').count()
}

/// Index just past a (possibly nested) block comment starting at `i`.
fn skip_block_comment(b: &[u8], mut i: usize, line: &mut usize) -> usize {
    let mut depth = 0usize;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            depth += 1;
            i += 2;
        } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            if b[i] == b'\n' {
                *line += 1;
            }
            i += 1;
        }
    }
    i
}

/// When a raw string (`r"…"`, `r#"…"#`, `br#"…"#`) starts at `i`, the index just past it.
fn raw_string_end(b: &[u8], i: usize) -> Option<usize> {
    // An identifier that merely ends in `r` (`bar"`) is not a raw string.
    if i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') {
        return None;
    }
    let mut j = i;
    if b.get(j) == Some(&b'b') {
        j += 1;
    }
    if b.get(j) != Some(&b'r') {
        return None;
    }
    j += 1;
    let hashes = b[j..].iter().take_while(|&&c| c == b'#').count();
    j += hashes;
    if b.get(j) != Some(&b'"') {
        return None;
    }
    j += 1;
    while j < b.len() {
        if b[j] == b'"'
            && b[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&c| c == b'#')
                .count()
                == hashes
        {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(b.len())
}

/// Index just past a quoted literal whose opening quote is at `open`.
fn skip_quoted(b: &[u8], open: usize, quote: u8, line: &mut usize) -> usize {
    let mut i = open + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'\n' => {
                *line += 1;
                i += 1;
            }
            c if c == quote => return i + 1,
            _ => i += 1,
        }
    }
    i
}

/// A `'` starts either a character literal (`'a'`, `'\n'`, `'{'`) or a lifetime / label
/// (`'a`, `'static`): a lifetime has no closing quote right after its first character.
fn skip_char_or_lifetime(b: &[u8], open: usize, line: &mut usize) -> usize {
    let is_char = match b.get(open + 1) {
        Some(b'\\') => true,
        Some(_) => {
            // The closing quote follows one (possibly multi-byte UTF-8) character.
            let ch_len = utf8_len(b[open + 1]);
            b.get(open + 1 + ch_len) == Some(&b'\'')
        }
        None => false,
    };
    if is_char {
        skip_quoted(b, open, b'\'', line)
    } else {
        open + 1
    }
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(src: &str) -> Vec<String> {
        references(src).into_iter().map(|r| r.name).collect()
    }

    #[test]
    fn finds_use_statements_and_paths_in_code() {
        let src = "use crate::report::Report;\nfn f() { crate::merge::diagnose_job(1); }\n";
        let refs = references(src);
        assert_eq!(names(src), ["report", "merge"]);
        assert_eq!(refs[1].line, 2);
    }

    #[test]
    fn reads_each_item_of_a_group_even_nested() {
        let src = "use crate::{report::{A, B}, signals::Signals, Error};\nuse crate::{self as c};";
        assert_eq!(names(src), ["report", "signals", "Error"]);
    }

    #[test]
    fn ignores_comments_strings_and_characters() {
        let src = r####"
// crate::analysis in a line comment
/// [`crate::nvml`] in a doc link
/* crate::a /* nested crate::b */ still crate::c */
const S: &str = "crate::trace \" crate::x";
const R: &str = r#"crate::rules "quoted" "#;
const B: &[u8] = b"crate::compare";
const C: char = '"';
fn f<'a>(x: &'a str) -> char { let _ = crate::steps::X; '{' }
use crate::signals;
"####;
        assert_eq!(names(src), ["steps", "signals"]);
    }

    #[test]
    fn a_string_that_is_a_crate_path_counts() {
        let src =
            "#[serde(with = \"crate::report::f64_or_nan\")]\nconst S: &str = \"crate::x is y\";";
        assert_eq!(names(src), ["report"]);
    }

    #[test]
    fn unterminated_literals_at_the_end_do_not_panic() {
        for src in ["\"crate:: a", "\"é", "\"\\", "'", "r#\"x", "/* x", "b'"] {
            assert!(references(src).is_empty(), "{src}");
        }
    }

    #[test]
    fn counts_lines_across_skipped_multiline_literals() {
        let src = "/*\n\n*/\nconst S: &str = \"a\nb\";\nuse crate::report;\n";
        assert_eq!(references(src)[0].line, 6);
    }

    #[test]
    fn pub_crate_visibility_is_not_a_reference() {
        assert_eq!(names("pub(in crate::x) fn g() {}"), ["x"]);
        assert_eq!(names("pub(crate) fn f() {}"), Vec::<String>::new());
    }

    #[test]
    fn macro_crate_paths_count() {
        assert_eq!(
            names("macro_rules! m { () => { $crate::metric::X } }"),
            ["metric"]
        );
    }
}
