//! `gpuwhy_config`: how a session records, readable from callers built against older or
//! newer headers.

use std::ffi::{c_char, CStr};
use std::path::PathBuf;

use gpuwhy_core::collect::{RecorderConfig, DEFAULT_INTERVAL_S};
use gpuwhy_core::report::JobPlace;
use gpuwhy_core::session::PROVISIONAL_PERIOD_S;

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
    /// `world_size` of 0 means "from the RANK, WORLD_SIZE and LOCAL_RANK environment
    /// variables, if set" (all three, `local_rank` included).
    pub rank: i32,
    /// Number of ranks in the job (see `rank`).
    pub world_size: i32,
    /// Rank of this process among the ranks on its node (`run.local_rank`; `gpuwhy merge`
    /// takes the GPU with this NVML index for the rank's own); negative for unknown. Used
    /// only with an explicit `rank` and `world_size`: otherwise LOCAL_RANK is read with
    /// RANK and WORLD_SIZE. Appended after `world_size`: default -1, and what a program
    /// built against an older header gets.
    pub local_rank: i32,
    /// A baseline report to compare the run with when the session stops, or NULL: the
    /// report's `comparison` section then holds what `gpuwhy compare BASELINE RUN` shows
    /// (step times with a significance test, per-GPU medians, the findings resolved, new and
    /// persisting). A baseline that cannot be read or was recorded on other GPUs does not
    /// fail the session: the reason is in `comparison.error`. Read when the session stops,
    /// not before. Copied. Appended after `local_rank`: default NULL.
    pub baseline_path: *const c_char,
    /// The job's GPUs, or NULL to work them out (`run.job_gpus`): comma-separated NVML
    /// indices (as nvidia-smi numbers GPUs) or `GPU-` UUIDs, e.g. "0,1". The other GPUs are
    /// still sampled and shown but no rule judges or compares them. NULL: the GPUs whose
    /// process list holds this process, else those `CUDA_VISIBLE_DEVICES` names, else all
    /// (docs/job-gpus.md). A list that does not parse fails gpuwhy_session_new() with
    /// GPUWHY_INVALID_ARGUMENT. Copied. Appended after `baseline_path`: default NULL.
    pub gpus: *const c_char,
    /// Inside a container: the host's `/proc` mounted into it (e.g. "/host/proc"), or NULL.
    /// NVML lists processes by their host pids; through this directory's `NSpid` lines
    /// they are matched to this process, so its GPUs are found by process as outside a
    /// container (docs/job-gpus.md). A directory that cannot be read leaves the pids
    /// unmapped (the GPUs are then found as for NULL). Copied. Appended after `gpus`:
    /// default NULL.
    pub host_proc: *const c_char,
    /// Recorded seconds between two passes of the provisional diagnosis, which keeps the
    /// rows around each new finding's evidence at full resolution in a long run
    /// (docs/report-format.md, "Retention"): 0 means the default (600), a negative number
    /// turns the passes off (no windows are then kept around findings), and a
    /// positive number sets the period; NaN or an infinity fails gpuwhy_session_new() with
    /// GPUWHY_INVALID_ARGUMENT. Appended after `host_proc`: default 0.
    pub provisional_period_s: f64,
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
            local_rank: -1,
            baseline_path: std::ptr::null(),
            gpus: std::ptr::null(),
            host_proc: std::ptr::null(),
            provisional_period_s: 0.0,
        }
    }
}

/// The size of the first version of the struct (up to `world_size`): the smallest accepted.
pub(crate) const CONFIG_V1_SIZE: usize = std::mem::offset_of!(gpuwhy_config, local_rank);
/// The size of this version of the struct.
pub(crate) const CONFIG_SIZE: usize = size_of::<gpuwhy_config>();

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
    pub baseline: Option<PathBuf>,
    /// The provisional diagnosis's period, `None` when turned off.
    pub provisional_period_s: Option<f64>,
}

/// Reads the config at `ptr`: the fields a caller's `struct_size` covers, the defaults for
/// the others (an older header's smaller struct); the bytes past this library's fields, from
/// a newer header, must be zero.
///
/// A raw pointer, not a reference: an older header's struct is smaller than this one, and
/// a newer header's bytes lie past `size_of::<gpuwhy_config>()`, where a reference's
/// permission to read ends.
///
/// # Safety
/// `ptr` must point to an initialised gpuwhy_config of `struct_size` readable bytes, and
/// its string fields must be NULL or point to NUL-terminated strings.
pub(crate) unsafe fn read(ptr: *const gpuwhy_config) -> Result<Settings, Fail> {
    // SAFETY: the caller's promise about `ptr`, passed on.
    let cfg = unsafe { copy(ptr) }?;
    // SAFETY: the string fields were copied from the caller's struct, which promises them
    // NULL or NUL-terminated.
    unsafe { settings(&cfg) }
}

/// This library's view of the caller's config: its bytes up to `struct_size`, defaults
/// past them.
///
/// # Safety
/// As [`read`]: `ptr` points to an initialised gpuwhy_config of `struct_size` readable bytes.
unsafe fn copy(ptr: *const gpuwhy_config) -> Result<gpuwhy_config, Fail> {
    // SAFETY: the caller promises an initialised struct at `ptr`, which starts with
    // `struct_size` (a u32, aligned as the struct is).
    let size = unsafe { ptr.cast::<u32>().read() } as usize;
    check_size(size)?;
    if size > CONFIG_SIZE {
        // SAFETY: the caller promises `size` readable bytes at `ptr` (checked ≤ 4096 above).
        let all = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), size) };
        if all[CONFIG_SIZE..].iter().any(|b| *b != 0) {
            return Err(Fail::new(
                GPUWHY_STRUCT_SIZE,
                format!("this config sets fields that this libgpuwhy ({}, {CONFIG_SIZE}-byte config) does not know: the program was compiled against a newer gpuwhy.h; link the matching library", env!("CARGO_PKG_VERSION")),
            ));
        }
    }
    let mut cfg = gpuwhy_config::defaults(size as u32);
    // SAFETY: `size.min(CONFIG_SIZE)` bytes are readable at `ptr` (the caller's promise) and
    // writable in `cfg`; every field's type takes any bit pattern (integers, a double, raw
    // pointers), and a smaller struct's bytes are a prefix of whole fields (a v1 struct ends
    // after `world_size`, which `check_size` guarantees is covered).
    unsafe {
        std::ptr::copy_nonoverlapping(
            ptr.cast::<u8>(),
            (&raw mut cfg).cast::<u8>(),
            size.min(CONFIG_SIZE),
        )
    };
    // A size that ends inside a field (no header ever had one) leaves that field's default.
    let has = |offset: usize, len: usize| size >= offset + len;
    if !has(
        std::mem::offset_of!(gpuwhy_config, local_rank),
        size_of::<i32>(),
    ) {
        cfg.local_rank = -1;
    }
    if !has(
        std::mem::offset_of!(gpuwhy_config, baseline_path),
        size_of::<*const c_char>(),
    ) {
        cfg.baseline_path = std::ptr::null();
    }
    if !has(
        std::mem::offset_of!(gpuwhy_config, gpus),
        size_of::<*const c_char>(),
    ) {
        cfg.gpus = std::ptr::null();
    }
    if !has(
        std::mem::offset_of!(gpuwhy_config, host_proc),
        size_of::<*const c_char>(),
    ) {
        cfg.host_proc = std::ptr::null();
    }
    if !has(
        std::mem::offset_of!(gpuwhy_config, provisional_period_s),
        size_of::<f64>(),
    ) {
        cfg.provisional_period_s = 0.0;
    }
    Ok(cfg)
}

/// The recorder's settings from a config: flags, interval, paths, the job's place.
///
/// # Safety
/// The string fields of `cfg` must be NULL or point to NUL-terminated strings.
unsafe fn settings(cfg: &gpuwhy_config) -> Result<Settings, Fail> {
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
    // SAFETY: the caller promises NULL or a NUL-terminated string in each.
    let (nvml, label, output, baseline, gpus, host_proc) = unsafe {
        (
            text(cfg.nvml_path, "nvml_path")?,
            text(cfg.label, "label")?,
            text(cfg.output_path, "output_path")?,
            text(cfg.baseline_path, "baseline_path")?,
            text(cfg.gpus, "gpus")?,
            text(cfg.host_proc, "host_proc")?,
        )
    };
    rc.job.gpus = gpus;
    rc.job.host_proc = host_proc.map(PathBuf::from);
    rc.validate().map_err(|e| invalid(e.to_string()))?;
    rc.nvml_path = nvml.map(PathBuf::from);
    rc.run.label = label;
    let place = job_place(cfg.rank, cfg.world_size, cfg.local_rank, |k| {
        std::env::var(k).ok()
    })?;
    if let Some(p) = place {
        p.apply(&mut rc.run);
    }
    let output = output.map(PathBuf::from);
    if let Some(out) = &output {
        rc.journal = Some(gpuwhy_core::report::journal::journal_path(out));
    }
    Ok(Settings {
        recorder: rc,
        output,
        require_gpu: flag(GPUWHY_FLAG_REQUIRE_GPU),
        baseline: baseline.map(PathBuf::from),
        provisional_period_s: provisional_period(cfg.provisional_period_s)?,
    })
}

/// `gpuwhy_config.provisional_period_s` read: 0 the default, negative off.
fn provisional_period(s: f64) -> Result<Option<f64>, Fail> {
    if !s.is_finite() {
        return Err(invalid(format!(
            "gpuwhy_config.provisional_period_s is {s}; use 0 for the default ({PROVISIONAL_PERIOD_S} s), a negative number to turn the provisional diagnosis off, or a number of seconds"
        )));
    }
    Ok(match s {
        0.0 => Some(PROVISIONAL_PERIOD_S),
        s if s < 0.0 => None,
        s => Some(s),
    })
}

fn invalid(message: impl Into<String>) -> Fail {
    Fail::new(GPUWHY_INVALID_ARGUMENT, message)
}

/// The rank, world size and local rank from the config, else from `RANK`, `WORLD_SIZE` and
/// `LOCAL_RANK` (set by torchrun, DeepSpeed and most launchers) as the whole library reads
/// them ([`JobPlace::from_lookup`]); neither is an error. Explicit numbers that do not fit
/// together are.
fn job_place(
    rank: i32,
    world: i32,
    local: i32,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<JobPlace>, Fail> {
    if rank >= 0 && world > 0 {
        let local = u32::try_from(local).ok();
        JobPlace::new(rank as u32, world as u32, local)
            .map(Some)
            .map_err(invalid)
    } else {
        Ok(JobPlace::from_lookup(env))
    }
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
mod tests;
