//! The wheel `cargo xtask test` builds from the dev profile (unoptimised: markers ~4× slower)
//! must never be the one users install. It is built into `target/wheel/dist-dev/`, never
//! `dist/`, and its version gets the local label `+dev` (`gpuwhy-0.1.0+dev-…whl`): pip
//! installs it for the tests, and PyPI refuses to publish any version with a local label, so
//! it cannot be uploaded by mistake. The release wheel (`cargo xtask wheel`) is untouched.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

/// Rewrites a wheel's version to `<version>+dev`: the file name, the `.dist-info` folder,
/// `METADATA`'s `Version:` and `RECORD` (with the new hash of `METADATA`), as a wheel
/// built with that version would have them. Prints the new wheel's path.
const RELABEL: &str = r#"
import base64, hashlib, os, sys, zipfile
src = sys.argv[1]
name, version, rest = os.path.basename(src).split("-", 2)
new_version = version + "+dev"
dst = os.path.join(os.path.dirname(src), "-".join([name, new_version, rest]))
old_info, new_info = f"{name}-{version}.dist-info/", f"{name}-{new_version}.dist-info/"
def digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
    files = {}
    for info in zin.infolist():
        data = zin.read(info.filename)
        path = info.filename.replace(old_info, new_info, 1)
        if path == new_info + "METADATA":
            data = data.replace(f"\nVersion: {version}\n".encode(), f"\nVersion: {new_version}\n".encode(), 1)
        files[path] = (info, data)
    record = new_info + "RECORD"
    lines = []
    for path, (info, data) in files.items():
        if path != record:
            lines.append(f"{path},{digest(data)},{len(data)}")
    lines.append(f"{record},,")
    files[record] = (files[record][0], ("\n".join(lines) + "\n").encode())
    for path, (info, data) in files.items():
        zi = zipfile.ZipInfo(path, info.date_time)
        zi.external_attr = info.external_attr
        zi.compress_type = zipfile.ZIP_DEFLATED
        zout.writestr(zi, data)
os.remove(src)
print(dst)
"#;

/// Relabels the dev wheel `wheel` with [`RELABEL`] (run by `py`) and returns the new path.
pub fn relabel(py: &Path, wheel: &Path) -> Result<PathBuf> {
    let out = Command::new(py)
        .args(["-c", RELABEL])
        .arg(wheel)
        .output()
        .context("cannot run python to relabel the dev wheel")?;
    if !out.status.success() {
        bail!(
            "relabelling the dev wheel {} failed: {}",
            wheel.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if !path.to_string_lossy().contains("+dev-") {
        bail!("the dev wheel was not relabelled: {}", path.display());
    }
    Ok(path)
}
