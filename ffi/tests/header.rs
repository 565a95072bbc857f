//! The committed `include/gpuwhy.h` is what cbindgen generates from the sources now.
//! `GPUWHY_BLESS=1 cargo test -p gpuwhy-ffi --test header` rewrites it.

use std::path::Path;

#[test]
fn committed_header_matches_a_fresh_generation() {
    let fresh_path = Path::new(env!("OUT_DIR")).join("gpuwhy.h");
    let fresh = std::fs::read_to_string(&fresh_path).expect("build.rs generates the header");
    let committed_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("include/gpuwhy.h");
    if std::env::var_os("GPUWHY_BLESS").is_some() {
        std::fs::write(&committed_path, &fresh).expect("write include/gpuwhy.h");
        return;
    }
    let committed = std::fs::read_to_string(&committed_path).unwrap_or_default();
    assert!(
        committed == fresh,
        "ffi/include/gpuwhy.h differs from what cbindgen generates from ffi/src ({}); review the change, then run `GPUWHY_BLESS=1 cargo test -p gpuwhy-ffi --test header` and commit the header",
        fresh_path.display()
    );
    // The header is what users compile: every export is declared in it.
    for f in [
        "gpuwhy_session_new",
        "gpuwhy_step_begin",
        "gpuwhy_session_free",
        "gpuwhy_status_message",
    ] {
        assert!(
            committed.contains(&format!("{f}(")),
            "{f} missing from the header"
        );
    }
}
