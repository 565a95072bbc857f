//! `cargo xtask install-ffi --prefix DIR [--release]`: builds libgpuwhy (the `gpuwhy-ffi`
//! crate) and installs what C and C++ programs build against:
//!
//! ```text
//! DIR/lib/libgpuwhy.so.X.Y.Z          the shared library (soname libgpuwhy.so.X, set by ffi/build.rs)
//! DIR/lib/libgpuwhy.so.X -> .so.X.Y.Z what programs linked against it load
//! DIR/lib/libgpuwhy.so   -> .so.X     what -lgpuwhy finds
//! DIR/lib/libgpuwhy.a                 the static library
//! DIR/include/gpuwhy.h
//! DIR/lib/pkgconfig/gpuwhy.pc, gpuwhy-static.pc
//! DIR/lib/cmake/gpuwhy/gpuwhy-config.cmake, gpuwhy-config-version.cmake
//! ```
//!
//! The pkg-config and CMake files are filled in from the templates in `ffi/pkg/`. The system
//! libraries the static library needs are asked of rustc (`--print native-static-libs`) at
//! each install, so they follow the toolchain. Linux only. Not a packager: no uninstall, no
//! DESTDIR; it is what the packaging test and a developer installing into a prefix run.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use anyhow::{bail, Context, Result};
use serde_json::Value;

use crate::{cargo, root};

const USAGE: &str = "usage: cargo xtask install-ffi --prefix DIR [--release]";

/// What the build produced.
struct Built {
    shared: PathBuf,
    archive: PathBuf,
    /// The linker flags of the system libraries the static library needs (`-lpthread`, …).
    static_libs: Vec<String>,
}

pub fn run(args: &[String]) -> Result<()> {
    let mut prefix = None;
    let mut release = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--release" => release = true,
            "--prefix" => prefix = Some(it.next().context(USAGE)?.clone()),
            s if s.starts_with("--prefix=") => prefix = Some(s["--prefix=".len()..].to_string()),
            other => bail!("unknown argument {other:?}; {USAGE}"),
        }
    }
    let Some(prefix) = prefix.filter(|p| !p.is_empty()) else {
        bail!("{USAGE}");
    };
    if !cfg!(target_os = "linux") {
        bail!("install-ffi installs the Linux library layout (sonames); this is not Linux");
    }
    let built = build(release)?;
    let version = version()?;
    std::fs::create_dir_all(&prefix).with_context(|| format!("cannot create {prefix}"))?;
    // The pkg-config files name the prefix, so it must not depend on the current directory.
    let prefix = std::fs::canonicalize(&prefix)?;
    install(&built, &version, &prefix)?;
    eprintln!(
        "xtask: installed libgpuwhy {version} into {}; build against it with \
         `pkg-config --cflags --libs gpuwhy` (PKG_CONFIG_PATH={}/lib/pkgconfig) or CMake's \
         `find_package(gpuwhy)` (CMAKE_PREFIX_PATH={})",
        prefix.display(),
        prefix.display(),
        prefix.display()
    );
    Ok(())
}

/// Builds gpuwhy-ffi as users get it (no `testing` feature), asking rustc in the same build
/// for the static library's system libraries. Cargo replays that note when the build is
/// already fresh, so asking costs nothing more than the build.
fn build(release: bool) -> Result<Built> {
    let mut cmd = cargo();
    cmd.args([
        "rustc",
        "-p",
        "gpuwhy-ffi",
        "--lib",
        "--message-format=json",
    ]);
    if release {
        cmd.arg("--release");
    }
    cmd.args(["--", "--print", "native-static-libs"])
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    eprintln!(
        "xtask: $ cargo rustc -p gpuwhy-ffi --lib{} -- --print native-static-libs",
        if release { " --release" } else { "" }
    );
    let out = cmd.output().context("cannot run cargo rustc")?;
    let (mut shared, mut archive, mut static_libs) = (None, None, None);
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let ours = msg["manifest_path"]
            .as_str()
            .is_some_and(|p| Path::new(p) == root().join("ffi/Cargo.toml"));
        match msg["reason"].as_str() {
            Some("compiler-message") => {
                let m = &msg["message"];
                let text = m["message"].as_str().unwrap_or_default();
                if let Some(libs) = text.strip_prefix("native-static-libs:") {
                    if ours {
                        static_libs = Some(
                            libs.split_whitespace()
                                .map(String::from)
                                .collect::<Vec<_>>(),
                        );
                    }
                } else if m["level"] != "note" {
                    eprint!("{}", m["rendered"].as_str().unwrap_or(text));
                }
            }
            Some("compiler-artifact") if ours => {
                for f in msg["filenames"].as_array().into_iter().flatten() {
                    let path = PathBuf::from(f.as_str().unwrap_or_default());
                    match path.file_name().and_then(|n| n.to_str()) {
                        Some("libgpuwhy.so") => shared = Some(path),
                        Some("libgpuwhy.a") => archive = Some(path),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    if !out.status.success() {
        bail!("building gpuwhy-ffi failed ({})", out.status);
    }
    Ok(Built {
        shared: shared.context("cargo built no libgpuwhy.so")?,
        archive: archive.context("cargo built no libgpuwhy.a")?,
        static_libs: static_libs.context("rustc printed no native-static-libs for libgpuwhy.a")?,
    })
}

/// The version of gpuwhy-ffi, from cargo metadata.
fn version() -> Result<String> {
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
    meta["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == "gpuwhy-ffi")
        .and_then(|p| p["version"].as_str())
        .map(String::from)
        .context("no gpuwhy-ffi package in cargo metadata")
}

fn install(built: &Built, version: &str, prefix: &Path) -> Result<()> {
    let major = version.split('.').next().unwrap_or("0");
    let soname = format!("libgpuwhy.so.{major}");
    let shared_file = format!("libgpuwhy.so.{version}");
    let lib = prefix.join("lib");
    let pkgconfig = lib.join("pkgconfig");
    let cmake = lib.join("cmake").join("gpuwhy");
    let include = prefix.join("include");
    for d in [&lib, &pkgconfig, &cmake, &include] {
        std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
    }

    copy(&built.shared, &lib.join(&shared_file), 0o755)?;
    symlink(&shared_file, &lib.join(&soname))?;
    symlink(&soname, &lib.join("libgpuwhy.so"))?;
    copy(&built.archive, &lib.join("libgpuwhy.a"), 0o644)?;
    copy(
        &root().join("ffi/include/gpuwhy.h"),
        &include.join("gpuwhy.h"),
        0o644,
    )?;

    let static_libs = built.static_libs.join(" ");
    // CMake takes library names (`pthread`) and passes anything else through as a flag.
    let static_libs_cmake: Vec<&str> = built
        .static_libs
        .iter()
        .map(|l| l.strip_prefix("-l").unwrap_or(l))
        .collect();
    let prefix_s = prefix
        .to_str()
        .context("the prefix is not UTF-8, which pkg-config files cannot name")?;
    let pointer_size = std::mem::size_of::<usize>();
    let pointer_bits = (pointer_size * 8).to_string();
    let pointer_size = pointer_size.to_string();
    let vars: &[(&str, &str)] = &[
        ("PREFIX", prefix_s),
        ("VERSION", version),
        ("VERSION_MAJOR", major),
        ("SONAME", &soname),
        ("SHARED_FILE", &shared_file),
        ("STATIC_LIBS", &static_libs),
        ("STATIC_LIBS_CMAKE", &static_libs_cmake.join(";")),
        ("POINTER_SIZE", &pointer_size),
        ("POINTER_BITS", &pointer_bits),
    ];
    for (template, dest) in [
        ("gpuwhy.pc.in", pkgconfig.join("gpuwhy.pc")),
        ("gpuwhy-static.pc.in", pkgconfig.join("gpuwhy-static.pc")),
        ("gpuwhy-config.cmake.in", cmake.join("gpuwhy-config.cmake")),
        (
            "gpuwhy-config-version.cmake.in",
            cmake.join("gpuwhy-config-version.cmake"),
        ),
    ] {
        let path = root().join("ffi/pkg").join(template);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        write(
            &dest,
            &fill(&text, vars).with_context(|| path.display().to_string())?,
        )?;
    }
    Ok(())
}

/// Replaces each `@NAME@` of `vars` in a template; a placeholder left over is an error (a
/// typo in the template would otherwise be installed).
fn fill(template: &str, vars: &[(&str, &str)]) -> Result<String> {
    let mut text = template.to_string();
    for (k, v) in vars {
        text = text.replace(&format!("@{k}@"), v);
    }
    let mut rest = text.as_str();
    while let Some(i) = rest.find('@') {
        rest = &rest[i + 1..];
        let len = rest
            .find(|c: char| !(c.is_ascii_uppercase() || c == '_'))
            .unwrap_or(rest.len());
        if len > 0 && rest[len..].starts_with('@') {
            bail!("unknown placeholder @{}@", &rest[..len]);
        }
    }
    Ok(text)
}

/// Copies through a temporary file and a rename, as install(1) does: a program that has the
/// old library mapped keeps its copy instead of seeing the file change under it.
fn copy(from: &Path, to: &Path, mode: u32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tmp_path(to);
    std::fs::copy(from, &tmp)
        .with_context(|| format!("cannot copy {} to {}", from.display(), tmp.display()))?;
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(mode))?;
    std::fs::rename(&tmp, to).with_context(|| format!("cannot install {}", to.display()))?;
    eprintln!("xtask: installed {}", to.display());
    Ok(())
}

fn write(to: &Path, text: &str) -> Result<()> {
    let tmp = tmp_path(to);
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, to).with_context(|| format!("cannot install {}", to.display()))?;
    eprintln!("xtask: installed {}", to.display());
    Ok(())
}

/// Makes `link` a symbolic link to `target` (relative), replacing what was there.
fn symlink(target: &str, link: &Path) -> Result<()> {
    let tmp = tmp_path(link);
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(target, &tmp)
        .with_context(|| format!("cannot create {}", tmp.display()))?;
    std::fs::rename(&tmp, link).with_context(|| format!("cannot install {}", link.display()))?;
    eprintln!("xtask: installed {} -> {target}", link.display());
    Ok(())
}

/// `.NAME.xtask-tmp` beside `path`.
fn tmp_path(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    path.with_file_name(format!(".{name}.xtask-tmp"))
}
