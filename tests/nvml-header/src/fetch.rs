//! Getting `nvml.h`: the `nvidia-nvml-dev` wheel from PyPI at the pinned version, downloaded
//! once with pip into `target/nvml-header/<version>/` and unpacked there. Later runs find the
//! header in the cache and use no network.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The line of `docs/nvml-loading.md` that pins the header; bumping the version is editing it.
const PIN_PREFIX: &str = "Header checked: `nvidia-nvml-dev==";

/// The pinned `nvidia-nvml-dev` version, read from `docs/nvml-loading.md`.
pub fn pinned_version() -> Result<String, String> {
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/nvml-loading.md");
    let text = std::fs::read_to_string(&doc).map_err(|e| format!("{}: {e}", doc.display()))?;
    text.lines()
        .find_map(|l| l.strip_prefix(PIN_PREFIX))
        .and_then(|rest| rest.split('`').next())
        .map(str::to_string)
        .ok_or_else(|| format!("{} has no line starting {PIN_PREFIX:?}", doc.display()))
}

/// The build's `target` directory: `CARGO_TARGET_DIR`, else the ancestor of this test
/// executable that holds the profile directory (`target/debug/deps/<test>`).
fn target_dir() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return Ok(PathBuf::from(dir));
    }
    let exe = std::env::current_exe().map_err(|e| format!("current executable: {e}"))?;
    exe.ancestors()
        .nth(3)
        .map(Path::to_path_buf)
        .ok_or_else(|| format!("no target directory above {}", exe.display()))
}

/// The directory holding `nvml.h` of the pinned version, fetching it on first use.
pub fn header_dir() -> Result<PathBuf, String> {
    let version = pinned_version()?;
    let dir = target_dir()?.join("nvml-header").join(&version);
    if dir.join("nvml.h").is_file() {
        return Ok(dir);
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    // Each fetch downloads into its own folder and renames the header into place, so two
    // test binaries (or two tests of one) fetching at once cannot see half a file.
    static FETCHES: AtomicUsize = AtomicUsize::new(0);
    let n = FETCHES.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!("tmp-{}-{n}", std::process::id()));
    let result = download(&version, &tmp).and_then(|wheel| {
        extract(&wheel, &tmp.join("nvml.h"))?;
        std::fs::rename(tmp.join("nvml.h"), dir.join("nvml.h"))
            .map_err(|e| format!("{}: {e}", dir.display()))
    });
    let _ = std::fs::remove_dir_all(&tmp);
    result.map(|()| dir)
}

/// `pip download` of the wheel into `into`; the header is the same on every platform, so
/// the x86-64 wheel is asked for wherever this runs.
fn download(version: &str, into: &Path) -> Result<PathBuf, String> {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let out = Command::new(&python)
        .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:"])
        .args(["--platform", "manylinux2014_x86_64", "--dest"])
        .arg(into)
        .arg(format!("nvidia-nvml-dev=={version}"))
        .output()
        .map_err(|e| format!("cannot run `{python} -m pip` to fetch nvml.h: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "pip could not download nvidia-nvml-dev=={version}: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    std::fs::read_dir(into)
        .map_err(|e| format!("{}: {e}", into.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or_else(|| format!("pip left no wheel in {}", into.display()))
}

/// Copies `nvml.h` out of the wheel (a zip file) with Python's zipfile module.
fn extract(wheel: &Path, to: &Path) -> Result<(), String> {
    let script = "import sys, zipfile\n\
        z = zipfile.ZipFile(sys.argv[1])\n\
        name = next(n for n in z.namelist() if n.endswith('/nvml.h'))\n\
        open(sys.argv[2], 'wb').write(z.read(name))\n";
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let out = Command::new(&python)
        .args(["-c", script])
        .arg(wheel)
        .arg(to)
        .output()
        .map_err(|e| format!("cannot run `{python}`: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "no nvml.h in {}: {}",
            wheel.display(),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}
