//! Embeds the report viewer's single-file page into `gpuwhy` when it has been built.
//!
//! The page is built by `cargo xtask viewer` (WebAssembly, wasm-bindgen, wasm-opt) into
//! `target/viewer/` of the workspace. That needs tools a fresh clone does not have, so the
//! normal build never requires it: without the page `gpuwhy view` says what is missing and
//! how to build it. The directory is watched, so building the viewer later makes the next
//! `cargo build` embed it.

use std::error::Error;
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn Error>> {
    let manifest =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").ok_or("no CARGO_MANIFEST_DIR")?);
    let root = manifest.parent().ok_or("cli/ has no parent")?;
    let dir = root.join("target").join("viewer");
    let page = dir.join("gpuwhy-viewer.html");
    // Watching a directory that does not exist would re-run this script on every build;
    // creating it (empty) is harmless, and a read-only checkout simply never embeds.
    let _ = std::fs::create_dir_all(&dir);
    println!("cargo:rerun-if-changed={}", dir.display());
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-env=GPUWHY_VIEWER_DIR={}", dir.display());
    let code = if page.is_file() {
        format!("Some(include_str!({:?}))", page.display().to_string())
    } else {
        "None".to_string()
    };
    let out = PathBuf::from(std::env::var_os("OUT_DIR").ok_or("no OUT_DIR")?);
    std::fs::write(
        out.join("viewer_page.rs"),
        format!("/// The viewer's single-file page, when it was built before this binary.\npub const EMBEDDED: Option<&str> = {code};\n"),
    )?;
    Ok(())
}
