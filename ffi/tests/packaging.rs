//! An installed copy is usable the two ways C++ projects consume libraries: each test runs
//! `cargo xtask install-ffi --prefix <temp dir>` (what users run), checks the layout, then
//! builds examples/train.cpp against that copy alone, with `pkg-config --cflags --libs` or
//! with CMake's `find_package(gpuwhy)`, against the shared library and the static one, runs
//! each program and checks its report.
//!
//! The install builds with the release profile when these tests are built without it (and
//! the other way round): the other C ABI tests link the `testing` build of libgpuwhy in
//! their own profile directory, and a build without that feature must not replace it while
//! they run.

mod support;
mod train_report;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::*;
use train_report::Expect;

const STEPS: usize = 40;

/// The workspace root, where `cargo xtask` is defined.
fn workspace() -> PathBuf {
    ffi_dir().parent().expect("ffi/ is in the workspace").into()
}

/// Runs `cargo xtask install-ffi` into `prefix` and checks what it installed.
fn install(prefix: &Path) {
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args(["xtask", "install-ffi", "--prefix"])
        .arg(prefix)
        .current_dir(workspace());
    if cfg!(debug_assertions) {
        cmd.arg("--release");
    }
    let out = cmd.output().expect("run cargo xtask install-ffi");
    assert!(
        out.status.success(),
        "cargo xtask install-ffi failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let lib = prefix.join("lib");
    let link = |name: &str| {
        std::fs::read_link(lib.join(name))
            .unwrap_or_else(|e| panic!("lib/{name} is not a symlink: {e}"))
    };
    let version = env!("CARGO_PKG_VERSION");
    let major = version.split('.').next().unwrap_or_default();
    let real = format!("libgpuwhy.so.{version}");
    let soname = format!("libgpuwhy.so.{major}");
    assert!(lib.join(&real).is_file(), "lib/{real}");
    assert_eq!(link(&soname), Path::new(&real));
    assert_eq!(link("libgpuwhy.so"), Path::new(&soname));
    assert!(lib.join("libgpuwhy.a").is_file());
    assert_eq!(
        std::fs::read(prefix.join("include/gpuwhy.h")).ok(),
        std::fs::read(include_dir().join("gpuwhy.h")).ok(),
        "the installed header is the committed one"
    );
    for f in [
        "pkgconfig/gpuwhy.pc",
        "pkgconfig/gpuwhy-static.pc",
        "cmake/gpuwhy/gpuwhy-config.cmake",
        "cmake/gpuwhy/gpuwhy-config-version.cmake",
    ] {
        let text = std::fs::read_to_string(lib.join(f)).unwrap_or_else(|e| panic!("lib/{f}: {e}"));
        assert!(
            !text.contains("@PREFIX@") && !text.contains("@VERSION@"),
            "{f}"
        );
    }
    if have("readelf") {
        let dynamic = readelf_dynamic(&lib.join(&real));
        assert!(
            dynamic.contains(&format!("[{soname}]")),
            "the installed library's soname is {soname}:\n{dynamic}"
        );
    }
    if have("nm") {
        let out = Command::new("nm")
            .args(["-D", "--defined-only"])
            .arg(lib.join(&real))
            .output()
            .expect("nm");
        let syms = String::from_utf8_lossy(&out.stdout);
        assert!(syms.contains("gpuwhy_session_new"), "exports:\n{syms}");
        assert!(
            !syms.contains("gpuwhy_test_panic"),
            "the installed library has the test-only export"
        );
    }
}

fn readelf_dynamic(file: &Path) -> String {
    let out = Command::new("readelf")
        .arg("-d")
        .arg(file)
        .output()
        .expect("readelf");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs a built train.cpp without a GPU and checks its report. `shared` says whether it must
/// load the installed libgpuwhy.so.N (checked with readelf) or contain the library.
fn run_train_cpp(exe: &Path, dir: &Path, shared: bool) {
    if have("readelf") {
        let dynamic = readelf_dynamic(exe);
        let needs = dynamic.contains("[libgpuwhy.so.");
        assert_eq!(needs, shared, "{}:\n{dynamic}", exe.display());
    }
    let report_path = dir.join(format!("{}.json", if shared { "shared" } else { "static" }));
    let out = run_ok(
        Command::new(exe)
            .arg(&report_path)
            .args([STEPS.to_string(), "2".into(), "4".into()])
            .env_remove("LD_LIBRARY_PATH"),
        None,
    );
    train_report::check(
        &out,
        &report_path,
        &Expect {
            label: "train.cpp",
            steps: STEPS,
            rank: Some((2, 4)),
            gpus: 0,
        },
    );
}

/// `pkg-config ARGS` against the installed copy only.
fn pkg_config(prefix: &Path, args: &[&str]) -> Vec<String> {
    let out = Command::new("pkg-config")
        .args(args)
        .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"))
        .output()
        .expect("run pkg-config");
    assert!(
        out.status.success(),
        "pkg-config {} failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(String::from)
        .collect()
}

#[test]
fn pkg_config_builds_the_cpp_example_against_the_shared_and_static_library() {
    if !have("pkg-config") || !have("c++") {
        return;
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let prefix = tmp.path().join("prefix");
    install(&prefix);
    assert_eq!(
        pkg_config(&prefix, &["--modversion", "gpuwhy"]),
        [env!("CARGO_PKG_VERSION")]
    );
    let libdir = pkg_config(&prefix, &["--variable=libdir", "gpuwhy"]).join("");
    assert_eq!(Path::new(&libdir), prefix.join("lib"));
    // What the static library needs from the system is declared for `--static`.
    let private = pkg_config(&prefix, &["--static", "--libs", "gpuwhy"]);
    assert!(private.iter().any(|f| f == "-lpthread"), "{private:?}");

    let source = ffi_dir().join("examples/train.cpp");
    for (package, shared) in [("gpuwhy", true), ("gpuwhy-static", false)] {
        let exe = tmp.path().join(format!("train-{package}"));
        let mut args: Vec<String> = vec![
            "-std=c++17".into(),
            "-Wall".into(),
            "-Wextra".into(),
            "-Werror".into(),
            source.display().to_string(),
            "-o".into(),
            exe.display().to_string(),
        ];
        args.extend(pkg_config(&prefix, &["--cflags", "--libs", package]));
        args.push(format!("-Wl,-rpath,{libdir}"));
        args.push("-pthread".into());
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        compile("c++", &refs);
        run_train_cpp(&exe, tmp.path(), shared);
    }
}

/// Configures and builds ffi/examples/CMakeLists.txt against the installed copy.
fn cmake_build(prefix: &Path, build: &Path, static_lib: bool) {
    let mut configure = Command::new("cmake");
    configure
        .arg("-S")
        .arg(ffi_dir().join("examples"))
        .arg("-B")
        .arg(build)
        .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display()))
        .arg(format!(
            "-DGPUWHY_EXAMPLES_STATIC={}",
            if static_lib { "ON" } else { "OFF" }
        ));
    run_ok(&mut configure, None);
    let cache = std::fs::read_to_string(build.join("CMakeCache.txt")).expect("CMakeCache.txt");
    let found = format!(
        "gpuwhy_DIR:PATH={}",
        prefix.join("lib/cmake/gpuwhy").display()
    );
    assert!(cache.contains(&found), "CMake did not find {found}");
    run_ok(Command::new("cmake").arg("--build").arg(build), None);
}

#[test]
fn cmake_find_package_builds_the_cpp_example_against_the_shared_and_static_library() {
    if !have("cmake") || !have("c++") {
        return;
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let prefix = tmp.path().join("prefix");
    install(&prefix);
    for static_lib in [false, true] {
        let build = tmp
            .path()
            .join(if static_lib { "static" } else { "shared" });
        cmake_build(&prefix, &build, static_lib);
        run_train_cpp(&build.join("train_cpp"), tmp.path(), !static_lib);
    }
    // The static build needs nothing from the installed shared library.
    for f in std::fs::read_dir(prefix.join("lib"))
        .expect("lib/")
        .flatten()
    {
        if f.file_name().to_string_lossy().starts_with("libgpuwhy.so") {
            std::fs::remove_file(f.path()).expect("remove the shared library");
        }
    }
    run_train_cpp(&tmp.path().join("static/train_cpp"), tmp.path(), false);
}

#[test]
fn cmake_version_file_accepts_the_same_major_version_and_no_newer() {
    if !have("cmake") {
        return;
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let prefix = tmp.path().join("prefix");
    install(&prefix);
    let version = env!("CARGO_PKG_VERSION");
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    let project = tmp.path().join("project");
    std::fs::create_dir_all(&project).expect("project dir");
    let asks = [
        (String::new(), true),
        (format!("{major}.{minor}"), true),
        (format!("{version} EXACT"), true),
        (format!("{major}.{}", minor + 1), false),
        (format!("{}.0", major + 1), false),
    ];
    let mut lists =
        String::from("cmake_minimum_required(VERSION 3.14)\nproject(v LANGUAGES NONE)\n");
    for (i, (ask, _)) in asks.iter().enumerate() {
        lists.push_str(&format!(
            "unset(gpuwhy_DIR CACHE)\nfind_package(gpuwhy {ask} QUIET)\n\
             if(gpuwhy_FOUND)\n  message(STATUS \"ask {i}: 1\")\nelse()\n  message(STATUS \"ask {i}: 0\")\nendif()\n"
        ));
    }
    std::fs::write(project.join("CMakeLists.txt"), lists).expect("CMakeLists.txt");
    let out = run_ok(
        Command::new("cmake")
            .arg("-S")
            .arg(&project)
            .arg("-B")
            .arg(tmp.path().join("build"))
            .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display())),
        None,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    for (i, (ask, ok)) in asks.iter().enumerate() {
        let line = format!("ask {i}: {}", if *ok { "1" } else { "0" });
        assert!(
            stdout.contains(&line),
            "find_package(gpuwhy {ask}) of {version}: want {line}\n{stdout}"
        );
    }
}
