//! Builds the simulated NVML (`nvml-sim`, a cdylib) with a nested cargo invocation and
//! hands its path to `lib.rs`, which embeds the bytes. A nested build is needed because
//! stable cargo cannot depend on another package's cdylib artifact.

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let sim_dir = manifest_dir.parent().expect("bundle lives in sim/bundle").to_path_buf();
    let workspace = sim_dir.parent().expect("sim lives in the workspace root").to_path_buf();
    for rel in ["src", "Cargo.toml", "build.rs", "scenarios"] {
        println!("cargo:rerun-if-changed={}", sim_dir.join(rel).display());
    }
    println!("cargo:rerun-if-changed={}", workspace.join("Cargo.lock").display());

    // A target directory of its own: the outer cargo holds the lock on the main one.
    let target_dir = workspace.join("target").join("sim-embed");
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.arg("build")
        .arg("--release")
        .arg("--package")
        .arg("nvml-sim")
        .arg("--lib")
        .arg("--manifest-path")
        .arg(workspace.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir);
    // The outer build's wrappers and flags are meant for the outer crates (clippy's driver,
    // coverage or sanitizer flags); the simulator is always a plain release build.
    for var in [
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTC_WRAPPER",
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "CARGO_PRIMARY_PACKAGE",
    ] {
        cmd.env_remove(var);
    }
    let status = cmd.status().expect("failed to run cargo for the simulated NVML");
    assert!(status.success(), "building the simulated NVML (nvml-sim) failed");
    let lib = target_dir.join("release").join("libnvml_sim.so");
    assert!(lib.exists(), "nested build did not produce {}", lib.display());
    println!("cargo:rustc-env=GPUWHY_SIM_LIB_PATH={}", lib.display());
}
