//! `cargo xtask wheel`: the `gpuwhy` Python wheel (the `gpuwhy` command, `libgpuwhy.so` and
//! the Python package `ffi/python/gpuwhy/`), built by maturin in a virtual environment under
//! `target/`; `cargo xtask wheel test` also installs it offline into a fresh virtual
//! environment and runs it there (docs/python.md).
//!
//! maturin's `bin` binding packs the cli crate's binary into the wheel's scripts, so pip puts
//! `gpuwhy` on the environment's PATH; `libgpuwhy.so` is built from the ffi crate first and
//! copied into the package, where the binding's loader looks for it. The wheel's platform tag
//! (manylinux_2_N) is maturin's reading of the newest glibc symbol the binaries use.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::{cargo, root, run_cmd};

/// maturin, pinned so that the wheel's layout and tag rules do not move under CI.
const MATURIN: &str = "maturin==1.16.0";
/// mypy, pinned, checks the type hints the wheel ships (`py.typed`).
const MYPY: &str = "mypy==2.4.1";

/// `cargo xtask wheel [test]`.
pub fn run(args: &[String]) -> Result<()> {
    match args.first().map(String::as_str) {
        None => build(true).map(|w| println!("{}", w.display())),
        Some("test") => test(),
        Some(other) => bail!("unknown `wheel` argument {other:?}; use `wheel` or `wheel test`"),
    }
}

/// `target/wheel/`: the build venv, the wheel and the test venvs.
fn dir() -> PathBuf {
    root().join("target").join("wheel")
}

/// A virtual environment at `venv` (made with the machine's python3 when missing); returns
/// its python.
fn venv(venv: &Path) -> Result<PathBuf> {
    let py = venv.join("bin").join("python");
    if !py.exists() {
        run_cmd(Command::new("python3").args(["-m", "venv"]).arg(venv))?;
    }
    Ok(py)
}

/// Builds the wheel into `target/wheel/dist/` (emptied first) and returns its path: from the
/// release profile, or the dev one (what `cargo xtask test` has built already: the wheel it
/// tests is the same package, with unoptimised binaries), which goes to `dist-dev/` with
/// the version `<version>+dev`, which PyPI refuses ([`crate::wheel_dev`]).
pub fn build(release: bool) -> Result<PathBuf> {
    let (profile, dir_name) = if release {
        ("release", "release")
    } else {
        ("dev", "debug")
    };
    let py = venv(&dir().join("build-venv"))?;
    let maturin = dir().join("build-venv").join("bin").join("maturin");
    if !maturin.exists() {
        run_cmd(Command::new(&py).args(["-m", "pip", "install", "--quiet", MATURIN]))?;
    }
    // libgpuwhy.so from the ffi crate, into the package (ignored by git).
    // A user's wheel carries no debug info (the release profile keeps line tables for
    // benchmarks and backtraces): 12 MB smaller. Both builds below see the same setting.
    let strip = |cmd: &mut Command| {
        if release {
            cmd.env("CARGO_PROFILE_RELEASE_STRIP", "debuginfo");
        }
    };
    let mut ffi = cargo();
    strip(&mut ffi);
    run_cmd(ffi.args(["build", "--profile", profile, "-p", "gpuwhy-ffi", "--lib"]))?;
    let lib = root().join("target").join(dir_name).join("libgpuwhy.so");
    let pkg = root().join("ffi").join("python").join("gpuwhy");
    std::fs::copy(&lib, pkg.join("libgpuwhy.so"))
        .with_context(|| format!("cannot copy {} into {}", lib.display(), pkg.display()))?;
    // A dev wheel never lands where the release one does (see `wheel_dev`).
    let dist = dir().join(if release { "dist" } else { "dist-dev" });
    if dist.exists() {
        std::fs::remove_dir_all(&dist)?;
    }
    // maturin reads pyproject.toml from its current directory (run_cmd would run it in the
    // workspace root).
    let mut cmd = Command::new(&maturin);
    strip(&mut cmd);
    cmd.args(["build", "--profile", profile, "--out"])
        .arg(&dist)
        .current_dir(root().join("ffi").join("python"));
    eprintln!(
        "xtask: $ (cd ffi/python && maturin build --profile {profile} --out {})",
        dist.display()
    );
    if !cmd.status().context("cannot run maturin")?.success() {
        bail!("maturin failed; see its output above");
    }
    let wheel = wheel_in(&dist)?;
    if release {
        Ok(wheel)
    } else {
        crate::wheel_dev::relabel(&py, &wheel)
    }
}

/// The one `.whl` in `dist`.
fn wheel_in(dist: &Path) -> Result<PathBuf> {
    let wheels: Vec<PathBuf> = std::fs::read_dir(dist)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "whl"))
        .collect();
    match wheels.as_slice() {
        [one] => Ok(one.clone()),
        _ => bail!(
            "expected one wheel in {}, found {}",
            dist.display(),
            wheels.len()
        ),
    }
}

/// Builds the wheel, installs it with nothing else into a fresh virtual environment (no
/// index: offline) and checks what a user does first: `gpuwhy demo`, `python -m gpuwhy`,
/// `import gpuwhy`, a training loop through the installed package, `gpuwhy.torch` against
/// its stand-in torch.
pub fn test() -> Result<()> {
    let wheel = build(false)?;
    type_check()?;
    let env = dir().join("test-venv");
    if env.exists() {
        std::fs::remove_dir_all(&env)?;
    }
    let py = venv(&env)?;
    run_cmd(
        Command::new(&py)
            .args(["-m", "pip", "install", "--quiet", "--no-index", "--no-deps"])
            .arg(&wheel),
    )?;
    let work = Work {
        dir: tempfile::tempdir()?,
        bin: env.join("bin"),
    };
    check_commands(&work, &py)?;
    check_loops(&work, &py)?;
    eprintln!("xtask: the wheel {} installs and runs", wheel.display());
    Ok(())
}

/// A scratch directory whose `PATH` starts with the test environment's `bin`.
struct Work {
    dir: tempfile::TempDir,
    bin: PathBuf,
}

impl Work {
    /// Runs `cmd` in the scratch directory and returns its stdout; a failure is an error
    /// with both outputs.
    fn run(&self, cmd: &mut Command) -> Result<String> {
        let o = cmd
            .current_dir(self.dir.path())
            .env("PATH", path_with(&self.bin))
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env_remove("GPUWHY_LIB")
            .env_remove("PYTHONPATH")
            .output()
            .with_context(|| format!("cannot run {cmd:?}"))?;
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        if !o.status.success() {
            bail!(
                "{cmd:?} failed ({}):\n{out}\n{}",
                o.status,
                String::from_utf8_lossy(&o.stderr)
            );
        }
        Ok(out)
    }
}

/// The installed `gpuwhy` command's demo, `python -m gpuwhy --version`, and the library
/// found inside the package.
fn check_commands(work: &Work, py: &Path) -> Result<()> {
    let demo = work.run(Command::new(work.bin.join("gpuwhy")).args(["demo", "--quiet"]))?;
    expect(&demo, "data_starvation", "gpuwhy demo")?;
    if !work
        .dir
        .path()
        .join("gpuwhy-demo-data_starvation.json")
        .exists()
    {
        bail!("gpuwhy demo from the wheel wrote no report");
    }
    let version = work.run(Command::new(py).args(["-m", "gpuwhy", "--version"]))?;
    expect(
        &version,
        env!("CARGO_PKG_VERSION"),
        "python -m gpuwhy --version",
    )?;
    let lib = work.run(Command::new(py).args([
        "-c",
        "import gpuwhy, os; gpuwhy.load(); print(gpuwhy.version(), gpuwhy.load()._gpuwhy_path)",
    ]))?;
    expect(
        &lib,
        "site-packages",
        "import gpuwhy (the library inside the package)",
    )
}

/// A loop through the installed package on the simulated GPU the command installs, and
/// `gpuwhy.torch` against its stand-in.
fn check_loops(work: &Work, py: &Path) -> Result<()> {
    let sim = work.dir.path().join("sim");
    work.run(
        Command::new(work.bin.join("gpuwhy"))
            .args(["demo", "data_starvation", "--install-sim"])
            .arg(&sim),
    )?;
    let script = root().join("ffi").join("tests").join("py");
    let out = work.run(
        Command::new(py)
            .arg(script.join("train_loop.py"))
            .args(["run.json", "4", "16"])
            .env("GPUWHY_NVML_PATH", sim.join("libnvidia-ml.so.1")),
    )?;
    expect(
        &out,
        "top finding: data_starvation",
        "train_loop.py on the installed wheel",
    )?;
    let torch = work.run(
        Command::new(py)
            .arg(script.join("torch_standin.py"))
            .arg("--merge")
            .env("GPUWHY_NVML_PATH", sim.join("libnvidia-ml.so.1")),
    )?;
    expect(
        &torch,
        "torch stand-in: ok",
        "gpuwhy.torch against its stand-in",
    )
}

/// mypy over the package's hints (the module's stub and the annotated submodules); the
/// optional frameworks (torch, transformers, Lightning) are not installed, so their imports
/// are taken as untyped.
fn type_check() -> Result<()> {
    let bin = dir().join("build-venv").join("bin");
    if !bin.join("mypy").exists() {
        run_cmd(Command::new(bin.join("python")).args(["-m", "pip", "install", "--quiet", MYPY]))?;
    }
    let mut cmd = Command::new(bin.join("mypy"));
    cmd.args(["--ignore-missing-imports", "--no-incremental", "gpuwhy/"])
        .current_dir(root().join("ffi").join("python"));
    eprintln!("xtask: $ (cd ffi/python && mypy --ignore-missing-imports gpuwhy/)");
    if !cmd.status().context("cannot run mypy")?.success() {
        bail!("mypy found errors in the Python package's type hints (above)");
    }
    Ok(())
}

fn expect(out: &str, needle: &str, what: &str) -> Result<()> {
    if out.contains(needle) {
        Ok(())
    } else {
        bail!("{what}: expected {needle:?} in its output:\n{out}")
    }
}

/// `PATH` with `dir` first.
fn path_with(dir: &Path) -> std::ffi::OsString {
    let mut parts = vec![dir.to_path_buf()];
    if let Some(p) = std::env::var_os("PATH") {
        parts.extend(std::env::split_paths(&p));
    }
    std::env::join_paths(parts).unwrap_or_default()
}
