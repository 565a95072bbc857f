//! Test support: checks hand-written Rust mirrors of NVML against NVIDIA's own `nvml.h`.
//!
//! What it is for: gpuwhy's core and its simulator bind NVML by hand (no link-time
//! dependency). This crate fetches the header NVIDIA ships on PyPI (`nvidia-nvml-dev`, at the
//! version pinned in `docs/nvml-loading.md`) into a cache under `target/`, and checks a
//! [`Check`] list of facts that a crate states from its own definitions (struct sizes, field
//! offsets and sizes, constants and enum values, function prototypes) by compiling one C
//! file of `_Static_assert`s against the header. Any difference fails the compile, and the
//! compiler's messages say which fact differs. What it is not for: anything at run time;
//! only tests depend on it.
//!
//! Prototypes are compared with GCC's `__builtin_types_compatible_p`, so argument count,
//! argument types and return type must all agree. Rust cannot tell an opaque handle
//! (`nvmlDevice_t`) from `void *`, so a Rust `*mut c_void` argument is accepted where the
//! header has any pointer that gpuwhy passes as raw memory (see [`CType`] for `c_void`).

use std::ffi::c_void;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

mod fetch;

pub use fetch::{header_dir, pinned_version};

/// A Rust type's C spellings: every C type name the header may use for it. More than one
/// only where C has distinct names for one ABI type (`unsigned long` and `unsigned long
/// long` on LP64, `char` and `signed char`, an opaque handle and `void`).
pub trait CType {
    /// The C spellings, the most likely first.
    fn c_names() -> Vec<String>;
}

macro_rules! c_type {
    ($($t:ty => [$($c:literal),+]),+ $(,)?) => {
        $(impl CType for $t {
            fn c_names() -> Vec<String> {
                vec![$($c.to_string()),+]
            }
        })+
    };
}

c_type! {
    u8 => ["unsigned char"],
    i8 => ["char", "signed char"],
    u16 => ["unsigned short"],
    i16 => ["short"],
    u32 => ["unsigned int"],
    i32 => ["int"],
    u64 => ["unsigned long long", "unsigned long"],
    i64 => ["long long", "long"],
    f64 => ["double"],
    // What gpuwhy passes as `void *`: the opaque handles and the process-list buffers whose
    // element type depends on the symbol version.
    c_void => [
        "void",
        "struct nvmlDevice_st",
        "struct nvmlEventSet_st",
        "struct nvmlGpmSample_st",
        "nvmlProcessInfo_v1_t",
        "nvmlProcessInfo_v2_t"
    ],
}

impl<T: CType> CType for *mut T {
    fn c_names() -> Vec<String> {
        T::c_names().into_iter().map(|c| format!("{c} *")).collect()
    }
}

impl<T: CType> CType for *const T {
    fn c_names() -> Vec<String> {
        T::c_names()
            .into_iter()
            .map(|c| format!("const {c} *"))
            .collect()
    }
}

/// A function pointer type's C prototypes: every combination of its types' spellings.
pub trait CSig {
    /// `(number of arguments, each possible C function-pointer type)`.
    fn c_prototypes() -> (usize, Vec<String>);
}

/// Every `R (*)(A, B, …)` that combines the given spellings.
fn prototypes(ret: &[String], args: &[Vec<String>]) -> Vec<String> {
    let mut lists: Vec<Vec<String>> = vec![Vec::new()];
    for arg in args {
        lists = lists
            .iter()
            .flat_map(|l| {
                arg.iter().map(move |a| {
                    let mut l = l.clone();
                    l.push(a.clone());
                    l
                })
            })
            .collect();
    }
    let mut out = Vec::new();
    for r in ret {
        for l in &lists {
            let params = if l.is_empty() {
                "void".to_string()
            } else {
                l.join(", ")
            };
            out.push(format!("{r} (*)({params})"));
        }
    }
    out
}

macro_rules! c_sig {
    ($($a:ident),*) => {
        impl<R: CType, $($a: CType),*> CSig for unsafe extern "C" fn($($a),*) -> R {
            fn c_prototypes() -> (usize, Vec<String>) {
                let args: Vec<Vec<String>> = vec![$($a::c_names()),*];
                (args.len(), prototypes(&R::c_names(), &args))
            }
        }
    };
}

c_sig!();
c_sig!(A);
c_sig!(A, B);
c_sig!(A, B, C);
c_sig!(A, B, C, D);
c_sig!(A, B, C, D, E);
c_sig!(A, B, C, D, E, F);

/// The C prototypes of `f`'s type (a fn item or pointer coerced to an `unsafe extern "C"
/// fn` pointer by the caller).
pub fn sig_of<F: CSig>(_f: F) -> (usize, Vec<String>) {
    F::c_prototypes()
}

/// One field of a struct: its C name, its offset and its size in the Rust mirror.
pub type Field = (&'static str, usize, usize);

/// The facts one crate states about its NVML mirrors, as C assertions.
pub struct Check {
    who: String,
    asserts: Vec<String>,
}

impl Check {
    /// An empty list; `who` names the crate in every failure message.
    pub fn new(who: &str) -> Self {
        Self {
            who: who.to_string(),
            asserts: Vec::new(),
        }
    }

    fn assert(&mut self, cond: String, what: String) {
        let what = format!("{}: {what}", self.who).replace('"', "'");
        self.asserts
            .push(format!("_Static_assert({cond}, \"{what}\");"));
    }

    /// The C type `c` has this size, alignment and these fields (C name, offset, size).
    pub fn layout(&mut self, c: &str, size: usize, align: usize, fields: &[Field]) {
        self.assert(
            format!("sizeof({c}) == {size}"),
            format!("sizeof({c}) is {size} in Rust"),
        );
        self.assert(
            format!("_Alignof({c}) == {align}"),
            format!("_Alignof({c}) is {align} in Rust"),
        );
        for (f, off, fsize) in fields {
            self.assert(
                format!("offsetof({c}, {f}) == {off}"),
                format!("offsetof({c}, {f}) is {off} in Rust"),
            );
            self.assert(
                format!("sizeof((({c} *)0)->{f}) == {fsize}"),
                format!("sizeof({c}.{f}) is {fsize} in Rust"),
            );
        }
    }

    /// The C constant expression `c` (a macro, enum value or `sizeof`) equals `value`.
    pub fn constant(&mut self, c: &str, value: impl Into<i128>) {
        let v: i128 = value.into();
        self.assert(
            format!("(long long)({c}) == (long long){v}LL"),
            format!("{c} is {v} in Rust"),
        );
    }

    /// The header declares `name` with one of `prototypes` (from [`sig_of`]).
    pub fn function(&mut self, name: &str, (argc, prototypes): (usize, Vec<String>)) {
        let cond = prototypes
            .iter()
            .map(|p| format!("__builtin_types_compatible_p(__typeof__(&{name}), {p})"))
            .collect::<Vec<_>>()
            .join(" || ");
        let first = prototypes.first().cloned().unwrap_or_default();
        self.assert(
            cond,
            format!("{name} has another prototype than Rust's {argc}-argument {first}"),
        );
    }

    /// The C source of the check.
    pub fn source(&self) -> String {
        let mut s = String::from(
            "/* generated by nvml-header-check */\n#define NVML_NO_UNVERSIONED_FUNC_DEFS\n\
             #include <stddef.h>\n#include \"nvml.h\"\n",
        );
        for a in &self.asserts {
            let _ = writeln!(s, "{a}");
        }
        s
    }

    /// Fetches the header if needed and compiles the check against it. `Err` holds the
    /// compiler's messages (one per differing fact) or why the header could not be had.
    pub fn run(&self) -> Result<usize, String> {
        let dir = header_dir()?;
        compile(&dir, &self.source(), &self.who)?;
        Ok(self.asserts.len())
    }
}

/// Compiles `source` with the header in `dir` (syntax only: nothing is linked or run).
fn compile(dir: &Path, source: &str, who: &str) -> Result<(), String> {
    static CHECKS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CHECKS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let file: PathBuf = dir.join(format!(
        "check-{}-{}-{n}.c",
        who.replace(|c: char| !c.is_ascii_alphanumeric(), "_"),
        std::process::id()
    ));
    std::fs::write(&file, source).map_err(|e| format!("{}: {e}", file.display()))?;
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(&cc)
        .args(["-std=gnu11", "-fsyntax-only", "-fmax-errors=0", "-I"])
        .arg(dir)
        .arg(&file)
        .output()
        .map_err(|e| format!("cannot run the C compiler `{cc}`: {e}"))?;
    let _ = std::fs::remove_file(&file);
    if out.status.success() {
        Ok(())
    } else {
        let errors: Vec<String> = String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| l.contains("error"))
            .map(str::to_string)
            .collect();
        Err(format!(
            "{} differences from nvml.h {}:\n{}",
            errors.len(),
            pinned_version().unwrap_or_default(),
            errors.join("\n")
        ))
    }
}

/// `layout!(check, RustType => "c_type" { rust_field: "cField", … })`: states the size,
/// alignment and every listed field's offset and size of a `#[repr(C)]` mirror.
#[macro_export]
macro_rules! layout {
    ($check:expr, $t:ty => $c:literal { $($f:ident : $cf:literal),* $(,)? }) => {{
        $check.layout(
            $c,
            ::std::mem::size_of::<$t>(),
            ::std::mem::align_of::<$t>(),
            &[$((
                $cf,
                ::std::mem::offset_of!($t, $f),
                $crate::field_size(|p: *const $t| {
                    // SAFETY: never called: only the closure's return type is used.
                    unsafe { &raw const (*p).$f }
                }),
            )),*],
        )
    }};
}

/// The size of the field a projection closure points at (the closure is never called).
pub fn field_size<T, F>(_project: impl Fn(*const T) -> *const F) -> usize {
    std::mem::size_of::<F>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prototypes_spell_every_combination() {
        type F = unsafe extern "C" fn(*mut c_void, u64) -> u32;
        let (argc, p) = F::c_prototypes();
        assert_eq!(argc, 2);
        assert_eq!(p.len(), 6 * 2);
        assert!(p.contains(&"unsigned int (*)(struct nvmlDevice_st *, unsigned long long)".into()));
        type G = unsafe extern "C" fn() -> u32;
        assert_eq!(G::c_prototypes().1, ["unsigned int (*)(void)"]);
    }

    #[test]
    fn messages_name_the_crate_and_the_fact() {
        let mut c = Check::new("core");
        c.constant("NVML_SUCCESS", 0u32);
        assert!(c
            .source()
            .contains("_Static_assert((long long)(NVML_SUCCESS) == (long long)0LL, \"core: NVML_SUCCESS is 0 in Rust\");"));
    }

    #[test]
    fn each_difference_from_the_header_is_reported_and_agreement_is_not() {
        let mut c = Check::new("self-test");
        c.constant("NVML_ERROR_NOT_SUPPORTED", 3u32);
        c.constant("NVML_PSTATE_UNKNOWN", 31u32);
        c.layout(
            "nvmlUtilization_t",
            8,
            4,
            &[("gpu", 0, 4), ("memory", 8, 4)],
        );
        type Right = unsafe extern "C" fn(*mut u32) -> u32;
        type Wrong = unsafe extern "C" fn(*mut u64) -> u32;
        c.function("nvmlDeviceGetCount_v2", Right::c_prototypes());
        c.function("nvmlDeviceGetCount", Wrong::c_prototypes());
        let e = c.run().expect_err("three facts differ");
        assert!(e.starts_with("3 differences"), "{e}");
        assert!(e.contains("NVML_PSTATE_UNKNOWN is 31 in Rust"), "{e}");
        assert!(
            e.contains("offsetof(nvmlUtilization_t, memory) is 8"),
            "{e}"
        );
        assert!(
            e.contains("nvmlDeviceGetCount has another prototype"),
            "{e}"
        );
        assert!(!e.contains("NOT_SUPPORTED"), "{e}");
    }
}
