//! The misuse suite in C (`tests/c/misuse*.c`): NULL for every pointer, double and racing
//! frees, made-up handles, every call after stop and before it, unknown phases, struct sizes
//! smaller and larger than the library's, threads marking a session that another thread
//! stops or frees, the panic boundary, and fork() while a session records.
//!
//! The C program checks every status itself; this file builds it three ways and runs it
//! plain, under AddressSanitizer + UndefinedBehaviorSanitizer and under valgrind, where any
//! memory error or leak fails the run. The library is not instrumented (it is Rust), but the
//! sanitizers and valgrind still see every allocation it makes. Parts that need a sampler
//! with a GPU behind it run against the simulated GPU; the others run without one (faster).
//! Then it reads the reports the program wrote, as a user's tools would.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use support::*;

/// The suite, in `tests/c`.
const SOURCES: [&str; 5] = [
    "misuse.c",
    "misuse_config.c",
    "misuse_session.c",
    "misuse_threads.c",
    "misuse_fork.c",
];

const SANITIZERS: [&str; 2] = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer"];
const SANITIZER_ENV: [(&str, &str); 2] = [
    ("ASAN_OPTIONS", "detect_leaks=1"),
    ("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1"),
];

/// Every error and every leak (definite, indirect or possible) fails the run. No
/// suppressions are needed. The forked child turns its own leak check off (see
/// misuse_fork.c: it holds a copy of the parent's threads' memory); its errors still count.
const VALGRIND: [&str; 5] = [
    "valgrind",
    "--error-exitcode=99",
    "--leak-check=full",
    "--errors-for-leak-kinds=definite,indirect,possible",
    "--show-leak-kinds=definite,indirect,possible",
];

/// What NVML a run finds.
#[derive(Clone, Copy, PartialEq)]
enum Gpu {
    /// None at all (GPUWHY_NVML_PATH names a missing file).
    Absent,
    /// The simulated NVML with one GPU.
    Sim,
    /// The simulated NVML listing no GPU.
    SimEmpty,
}

use Gpu::*;

impl Gpu {
    fn describe(self) -> &'static str {
        match self {
            Absent => "no NVML",
            Sim => "simulated GPU",
            SimEmpty => "NVML without a GPU",
        }
    }
}

/// One run of the program: a part, the NVML it finds, and a multiplier of its loop counts.
struct Part {
    name: &'static str,
    gpu: Gpu,
    scale: u32,
}

const fn part(name: &'static str, gpu: Gpu, scale: u32) -> Part {
    Part { name, gpu, scale }
}

fn build(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let c = ffi_dir().join("tests/c");
    let sources: Vec<PathBuf> = SOURCES.iter().map(|s| c.join(s)).collect();
    let sources: Vec<&Path> = sources.iter().map(PathBuf::as_path).collect();
    let exe = dir.join(name);
    build_c(&sources, &exe, extra);
    exe
}

/// Runs `parts` of `exe` (behind `wrapper`, e.g. valgrind) and checks what each wrote.
fn run_parts(label: &str, exe: &Path, wrapper: &[&str], env: &[(&str, &str)], parts: &[Part]) {
    let one = sim("healthy", &[]);
    let empty = sim("healthy", &[("devices", serde_json::json!([]))]);
    for p in parts {
        let out = tempfile::tempdir().expect("temp dir");
        let gpus = usize::from(p.gpu == Sim);
        let mut cmd = match wrapper.split_first() {
            Some((tool, args)) => {
                let mut c = Command::new(tool);
                c.args(args).arg(exe);
                c
            }
            None => Command::new(exe),
        };
        cmd.arg(p.name)
            .arg(out.path())
            .arg(gpus.to_string())
            .arg(p.scale.to_string())
            // The panic part panics on purpose; its backtraces only slow valgrind down.
            .env("RUST_BACKTRACE", "0")
            .envs(env.iter().copied());
        let t = Instant::now();
        let sim = match p.gpu {
            Absent => None,
            Sim => Some(&one),
            SimEmpty => Some(&empty),
        };
        let output = run_ok(&mut cmd, sim);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            stdout.contains(&format!("misuse {}: ok", p.name)),
            "{label} {}: no success line in\n{stdout}",
            p.name
        );
        eprintln!(
            "{label}: misuse {} ({}) took {:.1} s",
            p.name,
            p.gpu.describe(),
            t.elapsed().as_secs_f64()
        );
        check_reports(p.name, out.path(), gpus, p.scale);
    }
}

/// Steps of every marking thread: the section's count, or the sum over `steps.threads` when
/// several threads marked (the section is then the training loop's alone).
fn steps(report: &serde_json::Value) -> u64 {
    match report["steps"]["threads"].as_array() {
        Some(threads) if !threads.is_empty() => threads
            .iter()
            .map(|t| t["count"].as_u64().unwrap_or(0))
            .sum(),
        _ => report["steps"]["count"].as_u64().unwrap_or(0),
    }
}

fn devices(report: &serde_json::Value) -> usize {
    report["devices"].as_array().map_or(0, Vec::len)
}

/// What the parts wrote, read back as JSON.
fn check_reports(part: &str, dir: &Path, gpus: usize, scale: u32) {
    match part {
        "api" => {
            let life = report(&dir.join("life.json"));
            assert_eq!(steps(&life), 3, "{}", life["steps"]);
            // A step end without a step, a negative and a NaN GPU duration.
            assert_eq!(life["steps"]["ignored_markers"], 3, "{}", life["steps"]);
            assert_eq!(life["run"]["label"], "life");
            assert_eq!(devices(&life), gpus);
            assert_eq!(life["gpu_absent_reason"].is_string(), gpus == 0);
            let kinds: Vec<&str> = life["events"]
                .as_array()
                .map(|e| e.iter().filter_map(|e| e["kind"].as_str()).collect())
                .unwrap_or_default();
            assert!(kinds.contains(&"eval"), "events: {kinds:?}");
            let copy = std::fs::read(dir.join("copy.json")).expect("copy.json");
            assert_eq!(
                copy,
                std::fs::read(dir.join("life.json")).expect("life.json")
            );
            assert!(!dir.join("early.json").exists(), "written before stop");
            // Written by hand after the configured output could not be.
            assert_eq!(steps(&report(&dir.join("rescued.json"))), 1);
        }
        "threads" => {
            for name in ["freed.json", "hammer.json"] {
                let r = report(&dir.join(name));
                assert!(steps(&r) > 0, "{name}: {}", r["steps"]);
                assert_eq!(devices(&r), gpus, "{name}");
                assert!(r["steps"]["gpu_stats"]["forward"].is_object(), "{name}");
            }
        }
        "fork" => {
            let parent = report(&dir.join("fork.json"));
            assert!(steps(&parent) >= 30, "{}", parent["steps"]);
            assert_eq!(devices(&parent), gpus);
            assert!(parent["steps"]["stats"]["fetch"].is_object());
            // One fork at scale 1, two above.
            for round in 0..if scale > 1 { 2 } else { 1 } {
                let child = report(&dir.join(format!("child-{round}.json")));
                assert_eq!(steps(&child), 3, "child {round}");
                assert_eq!(
                    devices(&child),
                    0,
                    "the child's session has GPUWHY_FLAG_NO_GPU"
                );
                let refused = dir.join(format!("child-wrote-{round}.json"));
                assert!(!refused.exists(), "the child wrote the parent's report");
            }
        }
        _ => {}
    }
}

#[test]
fn misuse_suite_plain() {
    if !have("cc") {
        return;
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let exe = build(tmp.path(), "misuse", &[]);
    run_parts(
        "plain",
        &exe,
        &[],
        &[],
        &[
            part("api", Absent, 1),
            part("api", Sim, 1),
            part("api", SimEmpty, 1),
            part("panic", Absent, 1),
            part("threads", Sim, 20),
            part("threads", Absent, 5),
            part("fork", Sim, 2),
        ],
    );
}

/// Whether cc can build and run a program with the sanitizers (their runtimes are a
/// separate package on some systems).
fn sanitizers_work(dir: &Path) -> bool {
    let src = dir.join("probe.c");
    let exe = dir.join("probe");
    std::fs::write(
        &src,
        "#include <stdlib.h>\nint main(void) { free(malloc(1)); return 0; }\n",
    )
    .expect("write probe.c");
    let built = Command::new("cc")
        .args(SANITIZERS)
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .status()
        .is_ok_and(|s| s.success());
    let ok = built && Command::new(&exe).status().is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var_os("GPUWHY_REQUIRE_TOOLS").is_none(),
            "cc cannot build with {SANITIZERS:?} (GPUWHY_REQUIRE_TOOLS is set): install libasan and libubsan"
        );
        eprintln!("skipped: cc cannot build with {SANITIZERS:?}");
    }
    ok
}

#[test]
fn misuse_suite_under_asan_and_ubsan() {
    if !have("cc") {
        return;
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    if !sanitizers_work(tmp.path()) {
        return;
    }
    let exe = build(tmp.path(), "misuse-asan", &SANITIZERS);
    run_parts(
        "asan+ubsan",
        &exe,
        &[],
        &SANITIZER_ENV,
        &[
            part("api", Absent, 1),
            part("api", Sim, 1),
            part("panic", Absent, 1),
            part("threads", Sim, 5),
            part("fork", Sim, 2),
        ],
    );
}

#[test]
fn misuse_suite_under_valgrind() {
    if !have("cc") || !have("valgrind") {
        return;
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let exe = build(tmp.path(), "misuse-valgrind", &[]);
    // Valgrind runs a debug build of the library some 30 times slower: the smallest loop
    // counts and one fork; the simulated GPU's paths are in the threads and fork parts (the
    // api part's run against it is left to the sanitizers).
    run_parts(
        "valgrind",
        &exe,
        &VALGRIND,
        &[],
        &[
            part("api", Absent, 1),
            part("panic", Absent, 1),
            part("threads", Sim, 1),
            part("fork", Sim, 1),
        ],
    );
}
