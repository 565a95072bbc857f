//! Generates the C header from the exports with cbindgen (into `OUT_DIR`; the committed
//! `include/gpuwhy.h` is compared with it by `tests/header.rs`) and gives the shared library
//! its soname.

use std::path::PathBuf;

fn main() {
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo"));
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    match cbindgen::generate_with_config(&dir, config) {
        Ok(bindings) => {
            bindings.write_to_file(out.join("gpuwhy.h"));
        }
        // A syntax error is reported by rustc itself, with a better message.
        Err(e) => println!("cargo:warning=cbindgen could not generate the header: {e}"),
    }
    // Programs linked against libgpuwhy.so.0 keep working with any 0.x of the same ABI.
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libgpuwhy.so.0");
    }
}
