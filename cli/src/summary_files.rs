//! Which files `gpuwhy summary` reads: the files named, the report files under each
//! directory named, and the files a glob matches (for a shell that did not expand it).

use std::path::{Path, PathBuf};

use gpuwhy::summary::Unreadable;

/// Files in a directory taken for reports: what `gpuwhy record`, `merge` and a killed
/// recording leave. Pages (`.html`) and hidden files (a write in progress,
/// `.run.json.tmp.123`) are not.
fn is_report_name(name: &str) -> bool {
    !name.starts_with('.')
        && [".json", ".json.gz", ".partial"]
            .iter()
            .any(|s| name.ends_with(s))
}

/// The files to read, in the order given (a directory's and a glob's sorted by path), each
/// once; and what was named but is not there.
pub fn expand(inputs: &[PathBuf]) -> (Vec<PathBuf>, Vec<Unreadable>) {
    let mut files = Vec::new();
    let mut missing = Vec::new();
    for input in inputs {
        let text = input.to_string_lossy();
        if input.is_dir() {
            let mut found = Vec::new();
            walk(input, &mut found, &mut missing);
            found.sort();
            files.extend(found);
        } else if !input.exists() && text.contains(['*', '?']) {
            let found = glob(input);
            if found.is_empty() {
                missing.push(unreadable(input, "no file matches this pattern"));
            }
            files.extend(found);
        } else if input.exists() {
            files.push(input.clone());
        } else {
            missing.push(unreadable(input, "no such file or directory"));
        }
    }
    let mut seen = std::collections::HashSet::new();
    files.retain(|f| seen.insert(f.clone()));
    (files, missing)
}

fn unreadable(path: &Path, reason: &str) -> Unreadable {
    Unreadable {
        file: path.display().to_string(),
        reason: reason.into(),
    }
}

/// The report files under `dir`, subdirectories included (symbolic links to directories
/// are not followed, so a link cycle cannot loop).
fn walk(dir: &Path, out: &mut Vec<PathBuf>, missing: &mut Vec<Unreadable>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => return missing.push(unreadable(dir, &format!("cannot list the directory: {e}"))),
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let name = entry.file_name().to_string_lossy().into_owned();
        if kind.is_dir() && !name.starts_with('.') {
            walk(&path, out, missing);
        } else if !kind.is_dir() && is_report_name(&name) {
            out.push(path);
        }
    }
}

/// The files matching `pattern`, whose last part may hold `*` (any run of characters) and
/// `?` (one character); the directories before it are taken as written.
fn glob(pattern: &Path) -> Vec<PathBuf> {
    let dir = match pattern.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let Some(want) = pattern
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
    else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| !t.is_dir()))
        .filter(|e| matches(want.as_bytes(), e.file_name().to_string_lossy().as_bytes()))
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

/// Whether `name` matches the glob `pat` (`*`, `?`; a leading dot must be written).
fn matches(pat: &[u8], name: &[u8]) -> bool {
    if name.first() == Some(&b'.') && pat.first() != Some(&b'.') {
        return false;
    }
    // Iterative wildcard matching with one backtrack point per `*`.
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pat.get(p) {
            Some(b'*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(c) if *c == b'?' || *c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    p = sp + 1;
                    n = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    pat[p..].iter().all(|c| *c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_as_a_shell_would() {
        assert!(matches(b"*.json", b"run.json"));
        assert!(!matches(b"*.json", b"run.json.gz"));
        assert!(matches(b"rank??.json", b"rank07.json"));
        assert!(!matches(b"rank??.json", b"rank7.json"));
        assert!(matches(b"*a*b*", b"xxaxxbxx"));
        assert!(!matches(b"*.json", b".hidden.json"));
        assert!(is_report_name("r.json.partial") && !is_report_name("index.html"));
        assert!(!is_report_name(".r.json.tmp.12"));
    }
}
