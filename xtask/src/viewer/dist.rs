//! The built single-file viewer, committed in `viewer/dist/` so that every `gpuwhy` binary
//! embeds it however it is built (`cargo build`, `cargo install --path cli`), with no
//! WebAssembly toolchain on the user's machine.
//!
//! Like the C header, the committed copy is generated: `cargo xtask viewer` writes it, and
//! `cargo xtask viewer test` (in `cargo xtask test`, so in CI) fails when it differs from a
//! fresh build. The build is repeatable (see `build.rs`), so a difference means the sources
//! changed and the copy was not rebuilt.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::{viewer_dir, WASM_TOOLCHAIN};

/// The committed files, as the build writes them into `target/viewer/`: the single-file
/// page with the viewer's module inline, and the analysis module (gzip, then base64) that
/// `gpuwhy view --with-analysis` puts into it.
pub const FILES: [&str; 2] = ["gpuwhy-viewer.html", "gpuwhy_analyze_bg.wasm.gz.b64"];

/// Where they are committed.
pub fn dir() -> PathBuf {
    viewer_dir().join("dist")
}

/// Writes `path` gzipped (level 9) to `path.gz`. flate2's pure-Rust backend, pinned in
/// Cargo.lock, writes the same bytes on every machine (the system's or Node's zlib could
/// differ between versions), and the gzip header carries no time or name.
pub fn gzip_file(path: &Path) -> Result<()> {
    let data = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut z = flate2::GzBuilder::new()
        .mtime(0)
        .write(Vec::new(), flate2::Compression::best());
    z.write_all(&data)?;
    let gz = z.finish()?;
    let mut out = path.as_os_str().to_owned();
    out.push(".gz");
    std::fs::write(&out, gz).with_context(|| format!("cannot write {}", Path::new(&out).display()))
}

/// Copies the fresh build's files over the committed ones, saying which changed.
pub fn update(out: &Path) -> Result<()> {
    std::fs::create_dir_all(dir())?;
    for name in FILES {
        let fresh =
            std::fs::read(out.join(name)).with_context(|| format!("the build wrote no {name}"))?;
        let to = dir().join(name);
        let same = std::fs::read(&to).is_ok_and(|old| old == fresh);
        if !same {
            std::fs::write(&to, &fresh)
                .with_context(|| format!("cannot write {}", to.display()))?;
        }
        let what = if same { "unchanged" } else { "updated" };
        eprintln!(
            "xtask: {} {what} ({:.1} kB)",
            to.display(),
            fresh.len() as f64 / 1000.0
        );
    }
    Ok(())
}

/// Fails when a committed file differs from the fresh build in `out`.
pub fn check(out: &Path) -> Result<()> {
    let mut stale = Vec::new();
    for name in FILES {
        let fresh =
            std::fs::read(out.join(name)).with_context(|| format!("the build wrote no {name}"))?;
        let committed = std::fs::read(dir().join(name)).unwrap_or_default();
        if committed != fresh {
            stale.push(format!(
                "{name} ({} bytes committed, {} built{})",
                committed.len(),
                fresh.len(),
                first_difference(&committed, &fresh)
            ));
        }
    }
    if !stale.is_empty() {
        bail!(
            "the committed viewer in {} is not what its sources build: {}.\n\
             Run `cargo xtask viewer` and commit viewer/dist/ (it is built with Rust \
             {WASM_TOOLCHAIN}, wasm-bindgen as in Cargo.lock and wasm-opt as in \
             viewer/package-lock.json, so every machine builds the same bytes).",
            dir().display(),
            stale.join("; ")
        );
    }
    eprintln!(
        "xtask: the committed viewer in {} matches the build",
        dir().display()
    );
    Ok(())
}

/// `, first difference at byte N`, or nothing when one is a prefix of the other.
fn first_difference(a: &[u8], b: &[u8]) -> String {
    a.iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .map_or_else(String::new, |i| format!(", first difference at byte {i}"))
}
