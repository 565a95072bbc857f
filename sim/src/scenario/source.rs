//! Finding the scenario to play: `GPUWHY_SIM_SCENARIO`, then `scenario.json` beside the
//! loaded library, then the built-in default.

use std::ffi::{c_void, CStr, OsStr};
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Environment variable naming a scenario file; it wins over everything else.
pub const ENV_SCENARIO: &str = "GPUWHY_SIM_SCENARIO";
/// Environment variable overriding the scenario's `speed`.
pub const ENV_SPEED: &str = "GPUWHY_SIM_SPEED";
/// File name looked for in the library's own directory.
pub const BESIDE_NAME: &str = "scenario.json";

/// Where the scenario text came from, for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The file named by `GPUWHY_SIM_SCENARIO`.
    Env(PathBuf),
    /// `scenario.json` in the library's directory.
    BesideLibrary(PathBuf),
    /// The built-in healthy H100.
    Builtin,
    /// A scenario set by a unit test.
    #[cfg(test)]
    Test,
}

impl Origin {
    /// What the user can do about a bad file from here.
    pub fn remedy(&self) -> String {
        match self {
            Origin::Env(_) => {
                format!("fix the file (see docs/scenarios.md) or unset {ENV_SCENARIO}")
            }
            Origin::BesideLibrary(p) => {
                format!(
                    "fix the file (see docs/scenarios.md) or remove {}",
                    p.display()
                )
            }
            Origin::Builtin => "this is a bug in nvml-sim's built-in scenario".into(),
            #[cfg(test)]
            Origin::Test => "fix the test".into(),
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Env(p) => write!(f, "{} (from {ENV_SCENARIO})", p.display()),
            Origin::BesideLibrary(p) => write!(f, "{}", p.display()),
            Origin::Builtin => f.write_str("<built-in healthy H100>"),
            #[cfg(test)]
            Origin::Test => f.write_str("<test scenario>"),
        }
    }
}

/// Reads the scenario text from the first place that has one.
pub fn read() -> Result<(String, Origin), String> {
    #[cfg(test)]
    if let Some(text) = test_override::get() {
        return Ok((text, Origin::Test));
    }
    if let Some(path) = std::env::var_os(ENV_SCENARIO).filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        return std::fs::read_to_string(&path)
            .map(|t| (t, Origin::Env(path.clone())))
            .map_err(|e| {
                format!(
                "cannot read scenario {} (from {ENV_SCENARIO}): {e}; point {ENV_SCENARIO} at a \
                 scenario file or unset it",
                path.display()
            )
            });
    }
    if let Some(path) = library_dir()
        .map(|d| d.join(BESIDE_NAME))
        .filter(|p| p.is_file())
    {
        return std::fs::read_to_string(&path)
            .map(|t| (t, Origin::BesideLibrary(path.clone())))
            .map_err(|e| {
                format!(
                    "cannot read scenario {}: {e}; fix its permissions or remove it",
                    path.display()
                )
            });
    }
    Ok((super::BUILTIN.to_owned(), Origin::Builtin))
}

/// `GPUWHY_SIM_SPEED`, when set.
pub fn speed_override() -> Result<Option<f64>, String> {
    let Some(raw) = std::env::var_os(ENV_SPEED).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    let text = raw.to_string_lossy();
    match text.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(Some(v)),
        _ => Err(format!(
            "{ENV_SPEED}={text} is not a positive number; set it like {ENV_SPEED}=10 or unset it"
        )),
    }
}

/// The directory of the shared object this code was loaded from.
fn library_dir() -> Option<PathBuf> {
    let mut info = libc::Dl_info {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    };
    let anchor = library_dir as fn() -> Option<PathBuf> as *const c_void;
    // SAFETY: dladdr only inspects the address (one of our own functions) and writes the
    // four plain fields of `info`, which lives on this stack frame.
    let found = unsafe { libc::dladdr(anchor, &mut info) };
    if found == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr succeeded, so `dli_fname` points to the loader's NUL-terminated path of
    // the object containing this function, which stays mapped while this code runs.
    let name = unsafe { CStr::from_ptr(info.dli_fname) };
    Path::new(OsStr::from_bytes(name.to_bytes()))
        .parent()
        .map(Path::to_path_buf)
}

/// Lets unit tests play a scenario without touching the process environment.
#[cfg(test)]
pub mod test_override {
    use std::sync::Mutex;

    static TEXT: Mutex<Option<String>> = Mutex::new(None);

    /// Sets (or clears) the scenario the next `nvmlInit` plays.
    pub fn set(text: Option<&str>) {
        *TEXT.lock().unwrap_or_else(|e| e.into_inner()) = text.map(str::to_owned);
    }

    pub(super) fn get() -> Option<String> {
        TEXT.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_library_directory_is_found() {
        // In a unit test "the library" is the test executable.
        let dir = library_dir().expect("dladdr finds the test binary");
        assert!(dir.is_dir(), "{}", dir.display());
    }

    #[test]
    fn remedies_say_what_to_do() {
        assert!(Origin::Env("x".into()).remedy().contains(ENV_SCENARIO));
        assert!(Origin::BesideLibrary("/a/scenario.json".into())
            .remedy()
            .contains("remove /a/scenario.json"));
    }
}
