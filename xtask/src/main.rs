//! `cargo xtask test | bench | scenarios`: everything CI and a developer run, in one place.
//!
//! `test` installs what the tests need (idempotently) and runs every test; `bench` prints
//! the benchmarks' ratios against baselines measured in the same run; `scenarios` prints the
//! table of bundled scenarios with their expected and actual top findings.

mod accuracy;
#[cfg(test)]
mod architecture_doc_tests;
mod bench;
mod bench_ffi;
mod bench_loop;
mod bench_merge;
mod bench_sampler;
mod bench_summary;
mod bench_trace;
mod bench_week;
mod fuzz;
mod hygiene;
mod install_ffi;
mod layers;
mod layers_report;
mod layers_scan;
mod scenarios;
mod test;
mod viewer;
mod wheel;
mod wheel_dev;

use std::path::PathBuf;
use std::process::{Command, ExitCode};

use anyhow::{bail, Context, Result};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("test") => test::run(&args[1..]),
        Some("bench") => bench::run(&args[1..]),
        Some("scenarios") => scenarios::run(&args[1..]).map(|_| ()),
        Some("accuracy") => accuracy::run(&args[1..]),
        Some("viewer") => viewer::run(&args[1..]),
        Some("install-ffi") => install_ffi::run(&args[1..]),
        Some("fuzz") => fuzz::run(&args[1..]),
        Some("layers") => layers::run(&args[1..]),
        Some("hygiene") => hygiene::run(&args[1..]),
        Some("wheel") => wheel::run(&args[1..]),
        _ => {
            eprintln!(
                "usage: cargo xtask <test|bench|scenarios|accuracy|viewer|install-ffi|fuzz|layers|hygiene|wheel>"
            );
            eprintln!("  test       install what the tests need, then run every test");
            eprintln!("  bench      print benchmark ratios against same-run baselines");
            eprintln!("  scenarios  record every bundled scenario and print expected vs actual top finding");
            eprintln!("  accuracy [--update] [CASE...]  diagnose the accuracy corpus (tests/corpus/); fails on a regression");
            eprintln!("  viewer     build the report viewer (WebAssembly + page) into target/viewer/ [test|bench]");
            eprintln!("  install-ffi --prefix DIR [--release]  install libgpuwhy, gpuwhy.h, pkg-config and CMake files");
            eprintln!("  fuzz --seconds N [TARGET]  run the fuzz targets (fuzz/) N seconds each; fails on any crash");
            eprintln!("  layers [--bless]  print core's module graph; fail on a layer violation not in xtask/src/layers_known.txt");
            eprintln!("  hygiene [--bless]  fail on a function over 80 lines not in xtask/src/hygiene_long.txt, or a test that sleeps");
            eprintln!("  wheel [test]  build the Python wheel into target/wheel/dist/ [and install and run it in a fresh venv]");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

/// Runs a command in the workspace root, echoing it, failing on a non-zero exit.
pub fn run_cmd(cmd: &mut Command) -> Result<()> {
    eprintln!("xtask: $ {}", describe(cmd));
    let st = cmd
        .current_dir(root())
        .status()
        .with_context(|| format!("cannot run {}", describe(cmd)))?;
    if !st.success() {
        bail!("{} failed ({st})", describe(cmd));
    }
    Ok(())
}

fn describe(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// `cargo` as invoked by the outer cargo.
pub fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}
