//! [`Nvml`]: finding, loading, initialising and shutting down the NVML library.

use std::ffi::{c_void, CStr};
use std::mem::ManuallyDrop;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use libloading::Library;

use super::device::Device;
use super::error::{code_name, NvmlError};
use super::search::{self, Candidate, Plan, ENV_NVML_PATH};
use super::symbols::Symbols;
use super::sys::{codes, nvmlDevice_t};
use crate::{Error, Result};

/// Gives every [`Nvml`] a distinct id, so a [`Device`] from one instance is refused by another.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A loaded and initialised NVML library with every entry point gpuwhy uses resolved.
///
/// Create one per process and share it (`&Nvml` or `Arc<Nvml>`): loading resolves ~50
/// symbols and `nvmlInit` can take seconds on a machine without persistence mode.
/// Dropping it calls `nvmlShutdown` (when exported) and unloads the library.
pub struct Nvml {
    /// The resolved entry points. Declared before `lib` so nothing outlives the library.
    pub(super) syms: Symbols,
    /// Identity checked against [`Device`]s.
    pub(super) id: u64,
    path: PathBuf,
    init_symbol: &'static str,
    /// Closed (dlclose) in `drop`, behind the loader gate.
    _lib: ManuallyDrop<Library>,
}

// Thread safety: every field is Send + Sync on its own (function pointers, atomics, the `Library`),
// so the compiler derives both traits. That is only sound because NVML itself is thread-safe: the
// header's preamble says "NVML is thread-safe so it is safe to make simultaneous NVML calls from
// multiple threads" (docs/nvml-facts.md, "Conventions"). Objects that NVML does not make
// thread-safe (event sets, GPM samples) are separate types that are not `Sync`.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Nvml>();
};

impl std::fmt::Debug for Nvml {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nvml")
            .field("path", &self.path)
            .field("init_symbol", &self.init_symbol)
            .finish()
    }
}

impl Nvml {
    /// Finds, loads and initialises NVML.
    ///
    /// Search order: `explicit`, else the file named by `GPUWHY_NVML_PATH`, else
    /// `libnvidia-ml.so.1` through the system loader, then the driver's usual directories
    /// (docs/nvml-facts.md, "Library locations"). A named file (explicit or from the environment)
    /// is the only one tried: if it fails, nothing else is loaded behind the user's back. CUDA
    /// toolkit stubs are never loaded.
    ///
    /// # Errors
    ///
    /// [`Error::NvmlNotFound`] listing every place tried and why it failed; [`Error::NvmlNotNvml`]
    /// when a named file exports neither `nvmlInit_v2` nor `nvmlInit`; [`Error::NvmlInit`] when
    /// initialisation fails (driver not loaded, no permission, ...).
    pub fn load(explicit: Option<&Path>) -> Result<Nvml> {
        Self::load_plan(search::plan(explicit, std::env::var_os(ENV_NVML_PATH)))
    }

    /// Loads and initialises the library at `path` and nothing else, ignoring
    /// `GPUWHY_NVML_PATH` (tests load the simulator this way).
    ///
    /// # Errors
    ///
    /// As for [`Nvml::load`].
    pub fn load_from(path: &Path) -> Result<Nvml> {
        Self::load_plan(search::plan(Some(path), None))
    }

    fn load_plan(plan: Plan) -> Result<Nvml> {
        // The loader's part (dlopen, dlsym, dladdr, dlclose of refused candidates) behind
        // the loader gate; the init, which may take seconds, outside it.
        let (lib, syms, path) = crate::os::with_loader(|| Self::open_plan(&plan))?;
        Self::init(lib, syms, path)
    }

    /// Opens the first acceptable candidate of `plan` and resolves its symbols.
    fn open_plan(plan: &Plan) -> Result<(Library, Symbols, PathBuf)> {
        let mut tried = Vec::new();
        for candidate in &plan.candidates {
            let stop_note = |why: String| match plan.chosen_by {
                Some(by) => format!("{why} (named by {by}, so no other place was searched)"),
                None => why,
            };
            let lib = match open(candidate) {
                Ok(lib) => lib,
                Err(why) => {
                    tried.push((candidate.display(), stop_note(why)));
                    continue;
                }
            };
            // SAFETY: `syms` is stored next to `lib` in the `Nvml` built below (or dropped
            // with it on every error path), so no pointer outlives the library.
            let syms = unsafe { Symbols::resolve(&lib) };
            let Some(init) = syms.init.get() else {
                let path = match candidate {
                    Candidate::Path(p) => p.clone(),
                    Candidate::Name(n) => PathBuf::from(n),
                };
                if plan.chosen_by.is_some() {
                    return Err(Error::NvmlNotNvml { path });
                }
                tried.push((
                    candidate.display(),
                    "not an NVML library (exports neither nvmlInit_v2 nor nvmlInit)".into(),
                ));
                continue;
            };
            let path = match candidate {
                Candidate::Path(p) => p.clone(),
                Candidate::Name(n) => {
                    loaded_from(init as *const c_void).unwrap_or_else(|| PathBuf::from(n))
                }
            };
            // The loader may have found a stub through LD_LIBRARY_PATH; refuse it as well.
            if let Some(why) = search::refusal(&path) {
                tried.push((
                    format!("{} -> {}", candidate.display(), path.display()),
                    stop_note(why),
                ));
                continue;
            }
            return Ok((lib, syms, path));
        }
        Err(Error::NvmlNotFound { tried })
    }

    fn init(lib: Library, syms: Symbols, path: PathBuf) -> Result<Nvml> {
        let res = syms.init.call(|symbol, init| {
            // SAFETY: `init` is `nvmlInit_v2`/`nvmlInit`, `nvmlReturn_t (void)`, from `lib`,
            // which is loaded.
            let rc = unsafe { init() };
            check(symbol, rc)
        });
        if let Err(e) = res {
            let message = error_text(&syms, e.code);
            crate::os::with_loader(|| drop(lib));
            return Err(Error::NvmlInit {
                path,
                code: e.code,
                message,
            });
        }
        let init_symbol = syms.init.resolved().unwrap_or("nvmlInit");
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        Ok(Nvml {
            syms,
            id,
            path,
            init_symbol,
            _lib: ManuallyDrop::new(lib),
        })
    }

    /// The library file in use (resolved through the loader when it was found by name).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The symbol that initialised NVML: `nvmlInit_v2`, or `nvmlInit` on very old drivers.
    pub fn init_symbol(&self) -> &'static str {
        self.init_symbol
    }

    /// For every binding gpuwhy uses, its plain NVML name and the symbol calls go to
    /// (`None` when the library exports no candidate). A binding switches to an older
    /// symbol after the newer one reports DEPRECATED or FUNCTION_NOT_FOUND, so this can
    /// change after calls.
    pub fn resolved_symbols(&self) -> Vec<(&'static str, Option<&'static str>)> {
        self.syms.resolved()
    }

    /// NVML's own text for `code` (via `nvmlErrorString`), or the code's name when the
    /// library has no text for it.
    pub fn error_string(&self, code: u32) -> String {
        error_text(&self.syms, code)
    }

    /// `e` as the crate's error, with NVML's own message, for failures that stop an
    /// operation as a whole.
    pub fn error(&self, e: NvmlError) -> Error {
        let message = if e.missing_symbol {
            "function not exported by this NVML library".to_string()
        } else {
            self.error_string(e.code)
        };
        Error::Nvml {
            function: e.function,
            code: e.code,
            message,
        }
    }

    /// The raw handle of `d`, refusing devices obtained from another [`Nvml`] (their
    /// handles may belong to a library that has since been unloaded).
    pub(super) fn raw(&self, d: Device) -> std::result::Result<nvmlDevice_t, NvmlError> {
        if d.owner == self.id {
            Ok(d.handle)
        } else {
            Err(NvmlError::new(
                "gpuwhy (Device from another Nvml instance)",
                codes::INVALID_ARGUMENT,
            ))
        }
    }
}

impl Drop for Nvml {
    fn drop(&mut self) {
        if let Some(shutdown) = self.syms.shutdown.get() {
            // SAFETY: `nvmlShutdown` is `nvmlReturn_t (void)`; the library is still loaded
            // (fields drop after this). It balances the one successful init; its result is
            // irrelevant at this point.
            let _ = unsafe { shutdown() };
        }
        // SAFETY: `_lib` is dropped here only, once, and nothing uses it afterwards (the
        // symbols that point into it are plain pointers, never called after this).
        crate::os::with_loader(|| unsafe { ManuallyDrop::drop(&mut self._lib) });
    }
}

/// `Ok` for `NVML_SUCCESS`, the error otherwise.
pub(super) fn check(function: &'static str, rc: u32) -> std::result::Result<(), NvmlError> {
    if rc == codes::SUCCESS {
        Ok(())
    } else {
        Err(NvmlError::new(function, rc))
    }
}

fn error_text(syms: &Symbols, code: u32) -> String {
    let Some(f) = syms.error_string.get() else {
        return code_name(code).to_string();
    };
    // SAFETY: `nvmlErrorString` is `const char* (nvmlReturn_t)` and accepts any code.
    let p = unsafe { f(code) };
    if p.is_null() {
        return code_name(code).to_string();
    }
    // SAFETY: non-NULL results point to a static NUL-terminated string owned by NVML.
    let text = unsafe { CStr::from_ptr(p) };
    text.to_string_lossy().into_owned()
}

/// Opens one candidate, or says why not.
fn open(candidate: &Candidate) -> std::result::Result<Library, String> {
    let target: &std::ffi::OsStr = match candidate {
        Candidate::Name(n) => n.as_ref(),
        Candidate::Path(p) => {
            if let Some(why) = search::refusal(p) {
                return Err(why);
            }
            p.as_os_str()
        }
    };
    open_os(target).map_err(|e| {
        // dlerror repeats the file name, which the caller already lists next to the reason.
        let msg = e.to_string();
        let prefix = format!("{}: ", target.to_string_lossy());
        msg.strip_prefix(&prefix).map(str::to_string).unwrap_or(msg)
    })
}

#[cfg(unix)]
fn open_os(target: &std::ffi::OsStr) -> std::result::Result<Library, libloading::Error> {
    use libloading::os::unix::Library as UnixLibrary;
    // RTLD_NOW makes a library with unresolvable dependencies fail here rather than crash
    // on a later call; RTLD_LOCAL keeps its symbols out of the global namespace.
    let flags = libc::RTLD_NOW | libc::RTLD_LOCAL;
    // SAFETY: loading runs the library's initialisers. The candidates are the NVIDIA
    // driver's library (by its SONAME or a path the user or the platform convention names
    // for it) or a simulator built for tests; none has initialisers with preconditions on us.
    let lib = unsafe { UnixLibrary::open(Some(target), flags) }?;
    Ok(lib.into())
}

#[cfg(not(unix))]
fn open_os(target: &std::ffi::OsStr) -> std::result::Result<Library, libloading::Error> {
    // SAFETY: as for the unix version: the driver's own `nvml.dll` at a conventional path.
    unsafe { Library::new(target) }
}

/// The file a symbol at `addr` was loaded from, as the dynamic loader reports it.
#[cfg(unix)]
fn loaded_from(addr: *const c_void) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let mut info = std::mem::MaybeUninit::<libc::Dl_info>::uninit();
    // SAFETY: `dladdr` only reads `addr` as a number and writes `info` on success.
    let ok = unsafe { libc::dladdr(addr, info.as_mut_ptr()) };
    if ok == 0 {
        return None;
    }
    // SAFETY: `dladdr` returned non-zero, so it filled in `info`.
    let info = unsafe { info.assume_init() };
    if info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: `dli_fname` is a NUL-terminated string owned by the loader, valid while the
    // library stays loaded, which it does for the duration of this call; it is copied at once.
    let name = unsafe { CStr::from_ptr(info.dli_fname) };
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(name.to_bytes())))
}

#[cfg(not(unix))]
fn loaded_from(_addr: *const c_void) -> Option<PathBuf> {
    None
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_missing_explicit_file_stops_the_search_and_says_so() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("libnvidia-ml.so.1");
        let err = Nvml::load_from(&path).expect_err("no such file");
        let Error::NvmlNotFound { tried } = &err else {
            panic!("{err}")
        };
        assert_eq!(tried.len(), 1, "{tried:?}");
        assert_eq!(tried[0].0, path.display().to_string());
        assert!(
            tried[0].1.contains("no other place was searched"),
            "{}",
            tried[0].1
        );
        assert!(err.to_string().contains("GPUWHY_NVML_PATH"));
    }

    #[test]
    fn an_environment_path_that_fails_is_the_only_one_tried() {
        let plan = search::plan(None, Some("/nonexistent/gpuwhy/libnvidia-ml.so.1".into()));
        let Err(Error::NvmlNotFound { tried }) = Nvml::load_plan(plan) else {
            panic!()
        };
        assert_eq!(tried.len(), 1);
        assert!(tried[0].1.contains("GPUWHY_NVML_PATH"), "{}", tried[0].1);
    }

    #[test]
    fn an_explicit_stub_is_refused_without_loading_it() {
        let err =
            Nvml::load_from(Path::new("/usr/local/cuda/lib64/stubs/libnvidia-ml.so")).unwrap_err();
        let Error::NvmlNotFound { tried } = err else {
            panic!()
        };
        assert!(tried[0].1.starts_with("refused"), "{}", tried[0].1);
    }

    #[test]
    fn a_library_without_nvml_init_is_not_nvml() {
        // libm is present on every glibc system and exports nothing called nvmlInit.
        let err = Nvml::load_from(Path::new("libm.so.6")).unwrap_err();
        assert!(matches!(err, Error::NvmlNotNvml { .. }), "{err}");
    }

    #[test]
    fn loaded_from_reports_the_file_of_a_symbol() {
        let p = loaded_from(libc::malloc as *const c_void).expect("libc is loaded");
        assert!(p.to_string_lossy().contains("libc"), "{}", p.display());
    }
}
