//! `cargo xtask bench sampler`: what watching GPUs and the host costs, against baselines
//! measured in the same run.
//!
//! - NVML calls per GPU per tick in buffered mode (the default: utilization and
//!   the SM clock from the driver's sample buffers once a second, the field batch every tick
//!   only where the adaptive cadence asks; the bench's GPUs carry steady NVLink traffic, so
//!   a second in eleven), in per-tick mode with the field batch (`GPUWHY_NVML_SAMPLES=0`), and without the batch
//!   (`GPUWHY_NVML_FIELDS=0`), goal ≤ 3 where fields are supported. The
//!   baseline without the batch reads less (temperature and PCIe once a second, no NVLink),
//!   and the output says so: it is what a single-call sampler can afford, not the same data
//!   for more calls.
//! - The sampler thread's CPU per GPU per tick against `pynvml` polling the same metrics at
//!   the batch-off cadence through the same simulated library, every simulated call costing
//!   what a real driver call costs (`GPUWHY_SIM_CALL_US`), goal ≥ 3× cheaper. The three sides
//!   take turns over [`ROUNDS`] rounds; a ratio below one is printed as "dearer", and each
//!   goal as met or not.
//! - The host sample's CPU per sample, as it is now (slow-moving data every
//!   `gpuwhy::host::SLOW_EVERY` samples, host-wide `/proc` files kept open) against every file
//!   read every sample.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use gpuwhy::collect::{thread_cpu_seconds, ENV_FIELDS, ENV_SAMPLES, RECHECK_EVERY};
use gpuwhy::host::{HostSampler, SLOW_EVERY};
use gpuwhy_tests::{install_sim, patched, scenario};
use serde_json::Value;

use crate::{cargo, root, run_cmd};

/// Sampling interval for the sampler comparison, seconds: the default, so the slow tick's
/// share of the calls is what a user pays.
const INTERVAL_S: f64 = gpuwhy::collect::DEFAULT_INTERVAL_S;
/// Wall seconds each side polls per round.
const DURATION_S: f64 = 4.0;
/// Wall seconds buffered mode polls per round: long enough to hold one second read every
/// tick to recheck steady traffic (`gpuwhy::collect::RECHECK_EVERY` seconds after the first
/// read once), so its figure is what a long recording pays.
const BUFFERED_S: f64 = 14.0;
/// Wall seconds of gpuwhy's short recordings, whose figures are taken from the long ones so
/// what stays is the cost of a tick: opening the GPUs (about 16 calls each for the static
/// facts) is paid once per run, and pynvml's figures start after its handles are had.
const SHORT_S: f64 = 1.0;
/// Rounds; the three sides take turns in each, so a busy machine's noise falls on all of them
/// alike instead of on whichever ran while it was busiest.
const ROUNDS: usize = 3;
/// Microseconds each simulated NVML call costs: a real driver's figure (docs/scenarios.md,
/// "Call cost").
const SIM_CALL_US: &str = "20";
/// The simulator's per-call cost variable.
const ENV_CALL_US: &str = "GPUWHY_SIM_CALL_US";
/// Host samples per side and round, and rounds (the sides alternate to share the noise).
const HOST_SAMPLES: usize = 40;
const HOST_ROUNDS: usize = 5;

/// A Python virtual environment with nvidia-ml-py, created once under target/.
fn python_with_pynvml() -> Result<PathBuf> {
    let venv = root().join("target").join("bench-venv");
    let py = venv.join("bin").join("python");
    let has = |py: &Path| {
        Command::new(py)
            .args(["-c", "import pynvml"])
            .status()
            .is_ok_and(|s| s.success())
    };
    if !has(&py) {
        run_cmd(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
        run_cmd(Command::new(&py).args(["-m", "pip", "install", "--quiet", "nvidia-ml-py"]))?;
    }
    if !has(&py) {
        bail!("pynvml is not importable from {}", py.display());
    }
    Ok(py)
}

/// How gpuwhy reads the GPUs in a bench run.
#[derive(Clone, Copy)]
enum Mode {
    /// Utilization and SM clock from the sample buffers once a second, the field batch every
    /// tick or once a second by the adaptive cadence (the default).
    Buffered,
    /// Every tick, the field batch and three single calls (`GPUWHY_NVML_SAMPLES=0`).
    Batched,
    /// Every tick, every metric by its own call (`GPUWHY_NVML_FIELDS=0` as well).
    Single,
}

/// What one recording cost.
struct Run {
    ticks: f64,
    wakeups: f64,
    devices: f64,
    nvml_calls: f64,
    sampler_cpu_s: f64,
    cpu_per_gpu_tick_us: f64,
}

/// The release build of `core/examples/sampler_run.rs`: gpuwhy's side is measured as users
/// run it, not as the debug build of this xtask binary runs.
fn sampler_run() -> Result<PathBuf> {
    run_cmd(cargo().args([
        "build",
        "--release",
        "--quiet",
        "-p",
        "gpuwhy",
        "--example",
        "sampler_run",
    ]))?;
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), PathBuf::from);
    Ok(target.join("release").join("examples").join("sampler_run"))
}

/// One recording of the GPUs alone in `mode`, by the release runner `exe`.
fn record(exe: &Path, lib: &Path, mode: Mode, seconds: f64) -> Result<Run> {
    let mode = match mode {
        Mode::Buffered => "buffered",
        Mode::Batched => "batched",
        Mode::Single => "single",
    };
    let out = Command::new(exe)
        .arg(lib)
        .args([mode, &seconds.to_string(), &INTERVAL_S.to_string()])
        .env_remove(ENV_FIELDS)
        .env_remove(ENV_SAMPLES)
        .output()
        .context("cannot run sampler_run")?;
    if !out.status.success() {
        bail!(
            "sampler_run failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let v: Value = serde_json::from_slice(&out.stdout).context("sampler_run output")?;
    let num = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    Ok(Run {
        ticks: num("ticks"),
        wakeups: num("wakeups"),
        devices: num("devices"),
        nvml_calls: num("nvml_calls"),
        sampler_cpu_s: num("sampler_cpu_s"),
        cpu_per_gpu_tick_us: num("cpu_per_gpu_tick_us"),
    })
}

/// Totals over the rounds of one side: ticks, wake-ups, GPU-ticks, NVML calls, whole-thread
/// CPU seconds and polling-work CPU seconds.
#[derive(Default)]
struct Side {
    ticks: f64,
    wakeups: f64,
    gpu_ticks: f64,
    calls: f64,
    cpu_s: f64,
    work_s: f64,
}

impl Side {
    /// Adds one recording, or takes it away (`sign` -1: a short run's fixed costs).
    fn add_report(&mut self, r: &Run, sign: f64) {
        let per = r.ticks * r.devices;
        self.ticks += sign * r.ticks;
        self.wakeups += sign * r.wakeups;
        self.gpu_ticks += sign * per;
        self.calls += sign * r.nvml_calls;
        self.cpu_s += sign * r.sampler_cpu_s;
        self.work_s += sign * r.cpu_per_gpu_tick_us * per / 1e6;
    }

    /// Adds a long recording less a short one of the same side: the cost of the ticks
    /// between, without the run's fixed costs.
    fn add_marginal(&mut self, exe: &Path, lib: &Path, mode: Mode) -> Result<usize> {
        let seconds = match mode {
            Mode::Buffered => BUFFERED_S,
            Mode::Batched | Mode::Single => DURATION_S,
        };
        let long = record(exe, lib, mode, seconds)?;
        self.add_report(&long, 1.0);
        self.add_report(&record(exe, lib, mode, SHORT_S)?, -1.0);
        Ok(long.devices as usize)
    }

    /// (NVML calls, whole-thread CPU µs, polling-work CPU µs) per GPU per tick.
    fn per_gpu_tick(&self) -> (f64, f64, f64) {
        let per = self.gpu_ticks.max(1.0);
        (
            self.calls / per,
            self.cpu_s / per * 1e6,
            self.work_s / per * 1e6,
        )
    }
}

/// Adds one pynvml run to `side`.
fn pynvml(py: &Path, sim_dir: &Path, side: &mut Side) -> Result<()> {
    let out = Command::new(py)
        .arg(root().join("xtask").join("bench").join("pynvml_poll.py"))
        .arg(INTERVAL_S.to_string())
        .arg(DURATION_S.to_string())
        .env("LD_LIBRARY_PATH", sim_dir)
        .env(ENV_CALL_US, SIM_CALL_US)
        .output()
        .context("cannot run the pynvml baseline")?;
    if !out.status.success() {
        bail!(
            "pynvml baseline failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let v: Value = serde_json::from_slice(&out.stdout).context("pynvml baseline output")?;
    let num = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    side.gpu_ticks += num("ticks") * num("gpus");
    side.calls += num("calls");
    side.cpu_s += num("cpu_s");
    side.work_s += num("work_s");
    Ok(())
}

/// "3.21× cheaper" or "1.20× dearer": a ratio below one is not a saving. Two decimals, so a
/// ratio just either side of a goal does not print as the goal itself.
fn cheaper(theirs: f64, ours: f64) -> String {
    if ours <= theirs {
        format!("{:.2}× cheaper", theirs / ours)
    } else {
        format!("{:.2}× dearer", ours / theirs)
    }
}

/// "met" or "not met".
fn met(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "NOT met"
    }
}

pub fn sampler() -> Result<()> {
    let text = scenario("straggler_8gpu").context("bundled scenario straggler_8gpu")?;
    let text = patched(text, &[("speed", Value::from(1.0))]);
    let sim = install_sim(&text, false)?;
    let py = python_with_pynvml()?;
    let exe = sampler_run()?;
    let load_before = load_average();
    std::env::set_var(ENV_CALL_US, SIM_CALL_US);
    let mut sides: [Side; 3] = Default::default();
    let mut theirs = Side::default();
    let mut gpus = 0;
    for _ in 0..ROUNDS {
        for (side, mode) in sides
            .iter_mut()
            .zip([Mode::Buffered, Mode::Batched, Mode::Single])
        {
            gpus = side.add_marginal(&exe, sim.lib(), mode)?;
        }
        pynvml(&py, sim.dir(), &mut theirs)?;
    }
    std::env::remove_var(ENV_CALL_US);
    let [buffered, batched, single] = sides.each_ref().map(Side::per_gpu_tick);
    let their = theirs.per_gpu_tick();
    println!(
        "sampler: {gpus} GPUs, interval {} ms, {ROUNDS} rounds of {DURATION_S} s per side (buffered {BUFFERED_S} s; sides alternate; gpuwhy in a release build, as users run it; its figures less a {SHORT_S} s run's, so opening the GPUs is left out as pynvml's init is), same simulated libnvidia-ml.so.1, {SIM_CALL_US} µs per NVML call (a real driver's cost)",
        INTERVAL_S * 1e3,
    );
    // The figures move with what else the machine runs: say how busy it was.
    println!(
        "  load average (1 min): {load_before} before, {} after",
        load_average()
    );
    print_calls(buffered.0, batched.0, single.0, their.0);
    print_cpu([buffered, batched, single], their);
    println!(
        "    wake-ups of the sampler thread per tick: buffered {:.2}, field batch {:.2}, batch off {:.2}; pynvml's loop 1 (ticks with nothing to read are slept through, docs/nvml-loading.md)",
        sides[0].wakeups / sides[0].ticks.max(1.0),
        sides[1].wakeups / sides[1].ticks.max(1.0),
        sides[2].wakeups / sides[2].ticks.max(1.0),
    );
    host()
}

/// The calls per GPU per tick of each side, with the goal.
fn print_calls(buffered: f64, batched: f64, single: f64, theirs: f64) {
    // Every NVML call is a trip into the kernel driver on real hardware, so the count is what
    // a user pays.
    println!("  NVML calls per GPU per tick (goal ≤ 3 where fields are supported):");
    println!(
        "    buffered (default)  : {buffered:6.2}  goal {}  (the field call every tick only in seconds with link bursts, slowdowns or a recheck of steady traffic, here every {RECHECK_EVERY}th; once a second 3 or 4 sample-buffer reads, memory, the field call and the slow reads)",
        met(buffered <= 3.0)
    );
    println!(
        "    field batch         : {batched:6.2}  goal {}  ({ENV_SAMPLES}=0; every tick: utilization, memory, SM clock, which have no field id, and the field call; the rest once a second)",
        met(batched <= 3.0)
    );
    println!(
        "    batch off (baseline): {single:6.2}  ({ENV_FIELDS}=0; reads less: temperature and PCIe once a second, no NVLink, the clock-event mask instead of counters)"
    );
    println!(
        "    pynvml polling      : {theirs:6.2}  (the batch-off cadence through single calls)"
    );
}

/// The CPU per GPU per tick of each side (buffered, batched, single) against pynvml's.
fn print_cpu(ours: [(f64, f64, f64); 3], their: (f64, f64, f64)) {
    let [(_, buf_total, buf_work), (_, bat_total, bat_work), (_, one_total, one_work)] = ours;
    let (_, their_total, their_work) = their;
    println!("  per GPU per tick, whole sampler thread / process CPU, wake-ups included (goal ≥ 3× cheaper than pynvml):");
    println!("    gpuwhy, buffered    : {buf_total:8.2} µs  (polling work alone {buf_work:.2} µs)");
    println!("    gpuwhy, field batch : {bat_total:8.2} µs  (polling work alone {bat_work:.2} µs)");
    println!("    gpuwhy, batch off   : {one_total:8.2} µs  (polling work alone {one_work:.2} µs)");
    println!(
        "    pynvml polling      : {their_total:8.2} µs  (polling work alone {their_work:.2} µs)"
    );
    println!(
        "    ratio               : buffered {} than pynvml, goal {} (field batch: {}, batch off: {}); polling work alone {}",
        cheaper(their_total, buf_total),
        met(their_total >= 3.0 * buf_total),
        cheaper(their_total, bat_total),
        cheaper(their_total, one_total),
        cheaper(their_work, buf_work),
    );
    println!(
        "    note: pynvml reads utilization and the SM clock with a call every tick; buffered mode reads the driver's own samples of them once a second (each row: the latest sample at or before its time, the driver sampling every 1/6 s to 1 s), so its rows are up to ~1 s late and no finer than the driver samples"
    );
}

/// The machine's one-minute load average, as `/proc/loadavg` gives it, or "unknown".
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".into())
}

/// CPU seconds of this thread spent on `n` samples of `s`.
fn host_cpu(s: &mut HostSampler, n: usize) -> Result<f64> {
    let a = thread_cpu_seconds().context("the OS gave no thread CPU time")?;
    for _ in 0..n {
        std::hint::black_box(s.sample());
    }
    let b = thread_cpu_seconds().context("the OS gave no thread CPU time")?;
    Ok(b - a)
}

/// The host sample before and after, watching this process's tree.
fn host() -> Result<()> {
    let pid = Some(std::process::id());
    let mut now = HostSampler::new(pid);
    let mut before = HostSampler::with_cadence(pid, 1, false);
    let (mut t_now, mut t_before) = (0.0, 0.0);
    for _ in 0..HOST_ROUNDS {
        t_before += host_cpu(&mut before, HOST_SAMPLES)?;
        t_now += host_cpu(&mut now, HOST_SAMPLES)?;
    }
    let n = (HOST_SAMPLES * HOST_ROUNDS) as f64;
    let (us_now, us_before) = (t_now / n * 1e6, t_before / n * 1e6);
    println!(
        "host sample: CPU per sample ({} samples each, alternating; one sample per {} s)",
        HOST_SAMPLES * HOST_ROUNDS,
        gpuwhy::collect::HOST_PERIOD_S
    );
    println!("    every file every sample, opened each time (before): {us_before:8.1} µs");
    println!(
        "    disk, pressure, tree every {SLOW_EVERY}th, /proc kept open : {us_now:8.1} µs  ({:.1}× cheaper)",
        us_before / us_now
    );
    Ok(())
}
