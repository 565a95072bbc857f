//! What one provisional pass of a session costs (`core/src/session/provisional.rs`), built
//! with optimisations by `cargo xtask bench week` (`xtask/src/bench_week.rs` prints it): a
//! synthetic recording of 8 GPUs at the default 100 ms interval and the host every 0.5 s,
//! 70 minutes long so the recent ring is full, pushed through the recorder's storage at
//! injected times; then the pass over its last ten minutes, five times.
//!
//! Usage: `provisional_bench`; prints one JSON object on stdout.

use gpuwhy::collect::thread_cpu_seconds;
use gpuwhy::metric::GpuMetric;
use gpuwhy::recording::{HostRecording, Recording};
use gpuwhy::report::{Capability, DeviceInfo, HostFacts, RunInfo};
use gpuwhy::session::{provisional_pass, PROVISIONAL_PERIOD_S};
use serde_json::json;

const GPUS: u32 = 8;
const INTERVAL_S: f64 = 0.1;
const CORES: usize = 16;
const MINUTES: u64 = 70;
const PASSES: usize = 5;

fn device(index: u32) -> DeviceInfo {
    DeviceInfo {
        index,
        name: Some("NVIDIA H100 80GB HBM3".into()),
        architecture: Some("hopper".into()),
        memory_total_mib: Some(81_559.0),
        power_limit_w: Some(700.0),
        max_sm_clock_mhz: Some(1980.0),
        capabilities: GpuMetric::ALL
            .iter()
            .map(|m| (m.name().to_string(), Capability::available()))
            .collect(),
        ..DeviceInfo::default()
    }
}

/// GPU `g`'s row at tick `k`: a data-starved sawtooth (busy 6 ticks of 10), GPU 5 slower.
fn row(g: u32, k: u64) -> [f32; GpuMetric::COUNT] {
    let mut r = [f32::NAN; GpuMetric::COUNT];
    let busy = (k + u64::from(g)) % 10 < if g == 5 { 8 } else { 6 };
    r[GpuMetric::UtilGpu.index()] = if busy { 98.0 } else { 2.0 };
    r[GpuMetric::UtilMem.index()] = if busy { 45.0 } else { 1.0 };
    r[GpuMetric::MemUsed.index()] = 60_000.0;
    r[GpuMetric::Power.index()] = if busy { 620.0 } else { 150.0 };
    r[GpuMetric::Temp.index()] = 60.0;
    r[GpuMetric::SmClock.index()] = 1_980.0;
    r[GpuMetric::Pstate.index()] = 0.0;
    r[GpuMetric::ClockReasons.index()] = 0.0;
    r
}

fn main() {
    let mut rec = Recording::new(RunInfo::default());
    for g in 0..GPUS {
        rec.add_device(device(g));
    }
    rec.host = Some(HostRecording::new(HostFacts::default(), CORES));
    let ticks = MINUTES * 600;
    let host_row = vec![40.0_f32; 12 + CORES];
    for k in 0..ticks {
        let t = k as f64 * INTERVAL_S;
        for g in 0..GPUS {
            rec.push_gpu(g as usize, t, &row(g, k));
        }
        if let (0, Some(h)) = (k % 5, rec.host.as_mut()) {
            h.series.push(t, &host_row);
        }
        rec.run.duration_s = t;
    }
    let after = rec.run.duration_s - PROVISIONAL_PERIOD_S;
    let mut cpu = Vec::new();
    let mut last = None;
    for _ in 0..PASSES {
        let c0 = thread_cpu_seconds();
        let out = provisional_pass(&rec, Some(after), &[]);
        if let (Some(a), Some(b)) = (c0, thread_cpu_seconds()) {
            cpu.push(b - a);
        }
        last = Some(out);
    }
    cpu.sort_by(f64::total_cmp);
    let out = last.unwrap_or_default();
    let v = json!({
        "gpus": GPUS,
        "period_s": PROVISIONAL_PERIOD_S,
        "gpu_rows": out.gpu_rows,
        "copied_bytes": out.copied_bytes,
        "copy_s": out.copy_s,
        "diagnose_s": out.diagnose_s,
        "cpu_s_median": cpu.get(cpu.len() / 2).copied(),
        "rules": out.rules,
        "windows": out.windows.iter().map(|w| w.1.clone()).collect::<Vec<_>>(),
    });
    println!("{v}");
}
