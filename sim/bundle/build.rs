//! Builds the simulated NVML (`nvml-sim`, a cdylib) twice with nested cargo invocations —
//! the current symbol set and the `old-driver` one — and hands their paths to `lib.rs`,
//! which embeds the bytes. A nested build is needed because stable cargo cannot depend on
//! another package's cdylib artifact. It also writes the list of bundled scenarios.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest_dir =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let sim_dir = manifest_dir
        .parent()
        .expect("bundle lives in sim/bundle")
        .to_path_buf();
    let workspace = sim_dir
        .parent()
        .expect("sim lives in the workspace root")
        .to_path_buf();
    for rel in [
        "src",
        "Cargo.toml",
        "build.rs",
        "scenarios",
        "workload/src",
        "workload/Cargo.toml",
    ] {
        println!("cargo:rerun-if-changed={}", sim_dir.join(rel).display());
    }
    println!(
        "cargo:rerun-if-changed={}",
        workspace.join("Cargo.lock").display()
    );
    // The simulator's C layouts and constants live in the shared binding crate.
    for rel in ["nvml-sys/src", "nvml-sys/Cargo.toml"] {
        println!("cargo:rerun-if-changed={}", workspace.join(rel).display());
    }

    // Target directories of their own: the outer cargo holds the lock on the main one.
    // Each variant gets its own, so neither build overwrites the other's artifact.
    let target = workspace.join("target");
    let current = build_sim(&workspace, &target.join("sim-embed"), None);
    let old = build_sim(
        &workspace,
        &target.join("sim-embed-old"),
        Some("old-driver"),
    );
    println!("cargo:rustc-env=GPUWHY_SIM_LIB_PATH={}", current.display());
    println!(
        "cargo:rustc-env=GPUWHY_SIM_LIB_OLD_DRIVER_PATH={}",
        old.display()
    );

    write_scenario_list(&sim_dir.join("scenarios"), &out_dir.join("scenarios.rs"));
}

/// Runs `cargo build --release -p nvml-sim --lib` into `target_dir` and returns the `.so`.
fn build_sim(workspace: &Path, target_dir: &Path, feature: Option<&str>) -> PathBuf {
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
        .arg(target_dir);
    if let Some(feature) = feature {
        cmd.arg("--features").arg(feature);
    }
    // The bytes are embedded in every binary that uses the bundle: drop line tables and the
    // static symbol table (the exported dynamic symbols stay), which is most of the size.
    cmd.env("CARGO_PROFILE_RELEASE_DEBUG", "false")
        .env("CARGO_PROFILE_RELEASE_STRIP", "symbols");
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
    let status = cmd
        .status()
        .expect("failed to run cargo for the simulated NVML");
    let variant = feature.unwrap_or("default features");
    assert!(
        status.success(),
        "building the simulated NVML (nvml-sim, {variant}) failed"
    );
    let lib = target_dir.join("release").join("libnvml_sim.so");
    assert!(
        lib.exists(),
        "nested build did not produce {}",
        lib.display()
    );
    lib
}

/// Writes a Rust array expression `&[("name", include_str!("/abs/name.json")), …]` of every
/// `*.json` in `dir`, sorted by name.
fn write_scenario_list(dir: &Path, out: &Path) {
    let mut entries: Vec<(String, PathBuf)> = fs::read_dir(dir)
        .expect("sim/scenarios is readable")
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .map(|path| {
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .expect("scenario file names are UTF-8")
                .to_owned();
            (stem, path)
        })
        .collect();
    entries.sort();
    let mut code = String::from("&[\n");
    for (stem, path) in &entries {
        println!("cargo:rerun-if-changed={}", path.display());
        let path = path.to_str().expect("scenario paths are UTF-8");
        code.push_str(&format!("    ({stem:?}, include_str!({path:?})),\n"));
    }
    code.push_str("]\n");
    fs::write(out, code).expect("OUT_DIR is writable");
}
