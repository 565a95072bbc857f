//! `gpuwhy_config`: how a session records, readable from callers built against older or
//! newer headers.

use std::ffi::{c_char, CStr};
use std::path::PathBuf;

use gpuwhy_core::collect::{RecorderConfig, DEFAULT_INTERVAL_S};

use crate::boundary::Fail;
use crate::gpuwhy_status::{GPUWHY_INVALID_ARGUMENT, GPUWHY_STRUCT_SIZE};

/// Flags of gpuwhy_config.flags, or-ed together.
pub type gpuwhy_flags = u32;
/// Do not read GPM metrics, for users who run Nsight Systems/Compute or DCGM profiling at
/// the same time (they contend for the same hardware counters).
pub const GPUWHY_FLAG_NO_GPM: gpuwhy_flags = 1;
/// Do not load NVML at all: record step timings (and the host) only.
pub const GPUWHY_FLAG_NO_GPU: gpuwhy_flags = 2;
/// Do not sample the host (CPU, memory, disk) from /proc.
pub const GPUWHY_FLAG_NO_HOST: gpuwhy_flags = 4;
/// Fail gpuwhy_session_new() with GPUWHY_NO_GPU when no GPU can be sampled, instead of
/// recording step timings only.
pub const GPUWHY_FLAG_REQUIRE_GPU: gpuwhy_flags = 8;
const KNOWN_FLAGS: u32 =
    GPUWHY_FLAG_NO_GPM | GPUWHY_FLAG_NO_GPU | GPUWHY_FLAG_NO_HOST | GPUWHY_FLAG_REQUIRE_GPU;

/// A `struct_size` above this is taken for an uninitialised struct, not a newer one.
const MAX_STRUCT_SIZE: usize = 4096;

/// How a session records. Initialise it with gpuwhy_config_init(), then set fields; a
/// zeroed struct with `struct_size = sizeof(gpuwhy_config)` is also valid and means the
/// defaults. Fields are only ever appended: a program built against an older header passes
/// a smaller `struct_size` and gets the defaults for the fields it does not know.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct gpuwhy_config {
    /// `sizeof(gpuwhy_config)` as the caller compiled it (set by gpuwhy_config_init()).
    pub struct_size: u32,
    /// GPUWHY_FLAG_* or-ed together; unknown bits are refused.
    pub flags: gpuwhy_flags,
    /// Seconds between GPU samples, 0.01 to 10; 0 means the default (0.1).
    pub sample_interval_s: f64,
    /// Full path of libnvidia-ml.so.1, or NULL to search (GPUWHY_NVML_PATH, then the
    /// system's loader). Copied; the caller keeps ownership.
    pub nvml_path: *const c_char,
    /// A free-form label stored in the report (`run.label`), or NULL. Copied.
    pub label: *const c_char,
    /// Where gpuwhy_session_stop() writes the report (atomically), or NULL to write nothing
    /// by itself. While recording, a crash journal `<output_path>.partial` is flushed every
    /// 2 s; `gpuwhy diagnose` reads it after a crash. Copied.
    pub output_path: *const c_char,
    /// Rank of this process in a distributed job, with `world_size`; a negative rank or a
    /// `world_size` of 0 means "from the RANK and WORLD_SIZE environment variables, if set".
    pub rank: i32,
    /// Number of ranks in the job (see `rank`).
    pub world_size: i32,
}

impl gpuwhy_config {
    /// The defaults, with `struct_size` set to `size`.
    pub(crate) fn defaults(size: u32) -> gpuwhy_config {
        gpuwhy_config {
            struct_size: size,
            flags: 0,
            sample_interval_s: DEFAULT_INTERVAL_S,
            nvml_path: std::ptr::null(),
            label: std::ptr::null(),
            output_path: std::ptr::null(),
            rank: -1,
            world_size: 0,
        }
    }
}

/// The size of the first (and so far only) version of the struct.
pub(crate) const CONFIG_V1_SIZE: usize = size_of::<gpuwhy_config>();

/// Checks a caller's `struct_size` against this library's.
pub(crate) fn check_size(size: usize) -> Result<(), Fail> {
    if size < CONFIG_V1_SIZE {
        return Err(Fail::new(
            GPUWHY_STRUCT_SIZE,
            format!("gpuwhy_config.struct_size is {size}, smaller than any gpuwhy_config ({CONFIG_V1_SIZE} bytes); set it with gpuwhy_config_init(&config, sizeof config)"),
        ));
    }
    if size > MAX_STRUCT_SIZE {
        return Err(Fail::new(
            GPUWHY_STRUCT_SIZE,
            format!("gpuwhy_config.struct_size is {size}: the struct looks uninitialised; set it with gpuwhy_config_init(&config, sizeof config)"),
        ));
    }
    Ok(())
}

/// What a session is started with, read from a caller's config.
#[derive(Debug)]
pub(crate) struct Settings {
    pub recorder: RecorderConfig,
    pub output: Option<PathBuf>,
    pub require_gpu: bool,
}

/// Reads the config at `ptr` (the bytes past this library's fields, from a newer header,
/// must be zero).
///
/// A raw pointer, not a reference: the bytes of a newer header's bigger struct lie past
/// `size_of::<gpuwhy_config>()`, where a reference's permission to read ends.
///
/// # Safety
/// `ptr` must point to an initialised gpuwhy_config of `struct_size` readable bytes, and
/// its string fields must be NULL or point to NUL-terminated strings.
pub(crate) unsafe fn read(ptr: *const gpuwhy_config) -> Result<Settings, Fail> {
    // SAFETY: the caller promises an initialised struct at `ptr`.
    let cfg = unsafe { &*ptr };
    let size = cfg.struct_size as usize;
    check_size(size)?;
    if size > CONFIG_V1_SIZE {
        // SAFETY: the caller promises `size` readable bytes at `ptr` (checked ≤ 4096 above).
        let all = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), size) };
        if all[CONFIG_V1_SIZE..].iter().any(|b| *b != 0) {
            return Err(Fail::new(
                GPUWHY_STRUCT_SIZE,
                format!("this config sets fields that this libgpuwhy ({}, {CONFIG_V1_SIZE}-byte config) does not know: the program was compiled against a newer gpuwhy.h; link the matching library", env!("CARGO_PKG_VERSION")),
            ));
        }
    }
    if cfg.flags & !KNOWN_FLAGS != 0 {
        return Err(invalid(format!(
            "unknown flags 0x{:x} in gpuwhy_config.flags",
            cfg.flags & !KNOWN_FLAGS
        )));
    }
    let flag = |f: u32| cfg.flags & f != 0;
    if flag(GPUWHY_FLAG_NO_GPU) && flag(GPUWHY_FLAG_REQUIRE_GPU) {
        return Err(invalid(
            "GPUWHY_FLAG_NO_GPU and GPUWHY_FLAG_REQUIRE_GPU contradict each other",
        ));
    }
    let mut rc = RecorderConfig {
        no_gpu: flag(GPUWHY_FLAG_NO_GPU),
        gpm: !flag(GPUWHY_FLAG_NO_GPM),
        host: !flag(GPUWHY_FLAG_NO_HOST),
        target_pid: Some(std::process::id()),
        ..RecorderConfig::default()
    };
    if cfg.sample_interval_s != 0.0 {
        rc.interval_s = cfg.sample_interval_s;
    }
    rc.validate().map_err(|e| invalid(e.to_string()))?;
    // SAFETY: the caller promises NULL or a NUL-terminated string in each.
    let (nvml, label, output) = unsafe {
        (
            text(cfg.nvml_path, "nvml_path")?,
            text(cfg.label, "label")?,
            text(cfg.output_path, "output_path")?,
        )
    };
    rc.nvml_path = nvml.map(PathBuf::from);
    rc.run.label = label;
    let (rank, world) = rank_and_world(cfg.rank, cfg.world_size, |k| std::env::var(k).ok())?;
    rc.run.rank = rank;
    rc.run.world_size = world;
    let output = output.map(PathBuf::from);
    if let Some(out) = &output {
        rc.journal = Some(gpuwhy_core::report::journal::journal_path(out));
    }
    Ok(Settings {
        recorder: rc,
        output,
        require_gpu: flag(GPUWHY_FLAG_REQUIRE_GPU),
    })
}

fn invalid(message: impl Into<String>) -> Fail {
    Fail::new(GPUWHY_INVALID_ARGUMENT, message)
}

/// The rank and world size from the config, else from `RANK`/`WORLD_SIZE` (set by torchrun,
/// DeepSpeed and most launchers); neither is an error.
fn rank_and_world(
    rank: i32,
    world: i32,
    env: impl Fn(&str) -> Option<String>,
) -> Result<(Option<u32>, Option<u32>), Fail> {
    let (rank, world) = if rank >= 0 && world > 0 {
        (rank as u32, world as u32)
    } else {
        let get = |k: &str| env(k).and_then(|v| v.trim().parse::<u32>().ok());
        match (get("RANK"), get("WORLD_SIZE")) {
            (Some(r), Some(w)) if r < w => (r, w),
            _ => return Ok((None, None)),
        }
    };
    if rank >= world {
        return Err(invalid(format!(
            "rank {rank} is not below world_size {world}"
        )));
    }
    Ok((Some(rank), Some(world)))
}

/// A copy of the C string at `p` (None for NULL).
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string.
pub(crate) unsafe fn text(p: *const c_char, what: &str) -> Result<Option<String>, Fail> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: non-NULL, and NUL-terminated by the caller's promise.
    let c = unsafe { CStr::from_ptr(p) };
    c.to_str()
        .map(|s| Some(s.to_string()))
        .map_err(|_| invalid(format!("{what} is not valid UTF-8")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_comes_from_the_config_then_the_environment() {
        let none = |_: &str| None;
        assert_eq!(rank_and_world(3, 8, none).ok(), Some((Some(3), Some(8))));
        assert_eq!(rank_and_world(-1, 0, none).ok(), Some((None, None)));
        let env = |k: &str| match k {
            "RANK" => Some("5".to_string()),
            "WORLD_SIZE" => Some("16".to_string()),
            _ => None,
        };
        assert_eq!(rank_and_world(-1, 0, env).ok(), Some((Some(5), Some(16))));
        assert!(rank_and_world(8, 8, none).is_err());
    }
}
