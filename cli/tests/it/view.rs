//! The viewer page every binary carries: `gpuwhy demo` leaves one beside its report,
//! `gpuwhy view` writes one with or without the analysis module, and `--open` opens it or
//! says how to.

use std::path::Path;

use crate::{gpuwhy, run, text};

/// The `<script>` element with `id` in `html`, its content.
fn element<'a>(html: &'a str, id: &str) -> &'a str {
    let open = format!("id=\"{id}\"");
    let after = html.split_once(&open).expect("element").1;
    let body = after.split_once('>').expect("tag end").1;
    body.split_once("</script>").expect("element end").0
}

#[test]
fn demo_leaves_the_page_beside_its_report_with_the_embedded_viewer() {
    let dir = tempfile::tempdir().expect("tempdir");
    // No viewer page named: the one built into the binary.
    let o = run(gpuwhy()
        .env_remove("GPUWHY_VIEWER_PAGE")
        .current_dir(dir.path())
        .args(["demo", "healthy", "--duration", "3s", "--quiet"]));
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    let page = dir.path().join("gpuwhy-demo-healthy.html");
    let html = std::fs::read_to_string(&page).expect("the page beside the report");
    assert!(dir.path().join("gpuwhy-demo-healthy.json").exists());
    let abs = std::fs::canonicalize(&page).expect("page");
    assert!(
        t.contains(&format!("Open it in a browser: file://{}", abs.display())),
        "{t}"
    );
    // The viewer's module inline (gzip in base64), the report in its slot, and no
    // analysis module unless asked for.
    assert!(element(&html, "gpuwhy-wasm").starts_with("H4sI"));
    let report = element(&html, "gpuwhy-report");
    let v: serde_json::Value = serde_json::from_str(report).expect("the report, as JSON");
    assert_eq!(v["run"]["label"], "demo: healthy");
    assert_eq!(element(&html, "gpuwhy-analyze-wasm"), "");
    assert!(!html.contains("@@GPUWHY_"), "every slot filled or emptied");

    // --no-html: the report only.
    let o = run(gpuwhy().current_dir(dir.path()).args([
        "demo",
        "healthy",
        "--duration",
        "1s",
        "--quiet",
        "--no-html",
        "-o",
        "only.json",
    ]));
    assert!(o.status.success(), "{}", text(&o));
    assert!(dir.path().join("only.json").exists() && !dir.path().join("only.html").exists());
}

#[test]
fn view_with_analysis_carries_the_analysis_module() {
    let (dir, report) = healthy_report();
    let page = |extra: &[&str], out: &Path| {
        let o = run(gpuwhy()
            .arg("view")
            .arg(&report)
            .args(extra)
            .arg("-o")
            .arg(out));
        assert!(o.status.success(), "{}", text(&o));
        std::fs::read_to_string(out).expect("page")
    };
    let plain = page(&[], &dir.path().join("plain.html"));
    let full = page(&["--with-analysis"], &dir.path().join("full.html"));
    let module = element(&full, "gpuwhy-analyze-wasm");
    assert!(
        module.starts_with("H4sI") && module.len() > 100_000,
        "{}",
        module.len()
    );
    assert_eq!(full.len(), plain.len() + module.len());
}

#[test]
fn view_open_without_a_browser_says_how_to_open_the_page() {
    let (dir, report) = healthy_report();
    // An empty PATH: no xdg-open (nor open) to start.
    let empty = dir.path().join("bin");
    std::fs::create_dir(&empty).expect("dir");
    let o = run(gpuwhy()
        .env("PATH", &empty)
        .arg("view")
        .arg(&report)
        .arg("--open"));
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(t.contains("cannot open a browser here"), "{t}");
    assert!(t.contains("open the page yourself: file://"), "{t}");
    assert!(
        dir.path().join("run.html").exists(),
        "the page is written anyway"
    );
}

#[cfg(unix)]
#[test]
fn view_open_starts_the_system_opener_with_the_page() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, report) = healthy_report();
    // A stand-in opener that writes down what it was asked to open.
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).expect("dir");
    let opened = dir.path().join("opened.txt");
    let name = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let script = bin.join(name);
    std::fs::write(
        &script,
        format!("#!/bin/sh\necho \"$1\" > '{}'\n", opened.display()),
    )
    .expect("script");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let o = run(gpuwhy()
        .env("PATH", &bin)
        .arg("view")
        .arg(&report)
        .arg("--open"));
    assert!(o.status.success(), "{}", text(&o));
    let asked = std::fs::read_to_string(&opened).expect("the opener ran");
    assert_eq!(
        asked.trim(),
        dir.path().join("run.html").display().to_string()
    );
}

/// A 1 s report of the healthy scenario (`run.json`) in a new temporary directory.
fn healthy_report() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let report = dir.path().join("run.json");
    let o = run(gpuwhy()
        .args([
            "demo",
            "healthy",
            "--duration",
            "1s",
            "--quiet",
            "--no-html",
            "-o",
        ])
        .arg(&report));
    assert!(o.status.success(), "{}", text(&o));
    (dir, report)
}
