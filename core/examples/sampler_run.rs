//! One recording of the GPUs alone, for `cargo xtask bench sampler`: built in release, as
//! users run gpuwhy, so the sampler's own cost is measured as they pay it (the xtask binary
//! itself is a debug build).
//!
//! Usage: `sampler_run LIBNVML MODE SECONDS INTERVAL_S`, MODE one of `buffered` (the sample
//! buffers and the adaptive cadence), `batched` (the field batch every tick, the default) or
//! `single` (every metric by its own call). Prints one JSON line: ticks, the sampler thread's
//! wake-ups, devices, NVML calls, its CPU seconds and its polling work per GPU per tick.

use std::time::Duration;

use gpuwhy::collect::{Recorder, RecorderConfig, ENV_FIELDS};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [lib, mode, seconds, interval] = args.as_slice() else {
        eprintln!("usage: sampler_run LIBNVML buffered|batched|single SECONDS INTERVAL_S");
        std::process::exit(2);
    };
    let number = |s: &str| {
        s.parse::<f64>()
            .unwrap_or_else(|_| panic!("not a number: {s}"))
    };
    // Single-threaded until the recorder starts: nothing else reads the environment.
    match mode.as_str() {
        "single" => std::env::set_var(ENV_FIELDS, "0"),
        "batched" | "buffered" => std::env::remove_var(ENV_FIELDS),
        m => panic!("unknown mode {m}"),
    }
    let cfg = RecorderConfig {
        interval_s: number(interval),
        nvml_path: Some(lib.into()),
        host: false,
        nvml_samples: mode == "buffered",
        ..RecorderConfig::default()
    };
    let rec = Recorder::start(cfg).unwrap_or_else(|e| panic!("cannot record: {e}"));
    std::thread::sleep(Duration::from_secs_f64(number(seconds)));
    let r = rec.stop();
    let o = &r.overhead;
    let line = serde_json::json!({
        "ticks": o.ticks,
        "wakeups": o.wakeups,
        "devices": r.devices.len(),
        "nvml_calls": o.nvml_calls,
        "sampler_cpu_s": o.sampler_cpu_s,
        "cpu_per_gpu_tick_us": o.cpu_per_gpu_tick_us,
    });
    println!("{line}");
}
