//! The week-long report benchmark's measuring half, built with optimisations by
//! `cargo xtask bench` (`xtask/src/bench_week.rs` prints the result): a synthetic recording
//! of 8 GPUs at the default 100 ms interval (and the host every 0.5 s) pushed through the
//! recorder's storage at injected times — an hour and a week of it — its heap against the
//! documented bound, and the report file each writes, in the plain and the compact form.
//!
//! Usage: `week_bench OUT_DIR`; writes `hour.json` and `week.json` (compact form), their
//! `.json.gz` and `-plain.json` (the form written before) there and prints one JSON object
//! on stdout.

use std::path::Path;
use std::time::Instant;

use gpuwhy::metric::GpuMetric;
use gpuwhy::recording::{HostRecording, Recording};
use gpuwhy::report::{Capability, DeviceInfo, HostFacts, Report, RunInfo};
use serde_json::{json, Value};

#[path = "support/week_replay.rs"]
mod week_replay;

const GPUS: usize = 8;
const INTERVAL_S: f64 = 0.1;
/// Ticks between slow reads (temperature, PCIe, NVLink, GPM), as the sampler does.
const SLOW: u64 = 10;
/// Ticks between host reads.
const HOST: u64 = 5;
const CORES: usize = 16;

/// A deterministic noise source (xorshift), so each run measures the same data.
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

fn device(index: u32) -> DeviceInfo {
    DeviceInfo {
        index,
        name: Some("NVIDIA H100 80GB HBM3".into()),
        architecture: Some("hopper".into()),
        memory_total_mib: Some(81_559.0),
        power_limit_w: Some(700.0),
        max_sm_clock_mhz: Some(1980.0),
        max_mem_clock_mhz: Some(2619.0),
        max_graphics_clock_mhz: Some(1980.0),
        pcie_max_gen: Some(5),
        pcie_max_width: Some(16),
        nvlink_links: Some(18),
        gpm: true,
        capabilities: GpuMetric::ALL
            .iter()
            .map(|m| (m.name().to_string(), Capability::available()))
            .collect(),
        ..DeviceInfo::default()
    }
}

/// One GPU's row at tick `k`: a straggler job's shape (GPU 5 busy, the others waiting for
/// it 60% of every 2 s step), NVML's precision (whole %, MHz, mW), slow metrics on their
/// staggered ticks and `null` between.
fn row(g: usize, k: u64, n: &mut Noise) -> [f32; GpuMetric::COUNT] {
    let mut r = [f32::NAN; GpuMetric::COUNT];
    let phase = (k % 20) as f32 / 20.0;
    let busy = g == 5 || phase < 0.4;
    let util = if busy { 97.0 } else { 35.0 } + (n.next() * 4.0).round() - 2.0;
    let set = |r: &mut [f32; GpuMetric::COUNT], m: GpuMetric, v: f32| r[m.index()] = v;
    set(&mut r, GpuMetric::UtilGpu, util.clamp(0.0, 100.0));
    set(&mut r, GpuMetric::UtilMem, (util * 0.4).round());
    set(
        &mut r,
        GpuMetric::MemUsed,
        61_440.0 + if busy { 512.0 } else { 0.0 },
    );
    let mw = (if busy { 610_000.0 } else { 260_000.0 } + n.next() * 40_000.0).round();
    set(&mut r, GpuMetric::Power, mw / 1000.0);
    set(&mut r, GpuMetric::SmClock, 1980.0);
    set(&mut r, GpuMetric::MemClock, 2619.0);
    set(&mut r, GpuMetric::GraphicsClock, 1980.0);
    set(&mut r, GpuMetric::Pstate, 0.0);
    set(
        &mut r,
        GpuMetric::ClockReasons,
        if busy { 0.0 } else { 1.0 },
    );
    if (k + g as u64) % SLOW == 0 {
        set(&mut r, GpuMetric::Temp, 55.0 + (n.next() * 10.0).round());
        let kb = |x: f32| (x * 1e6 / 1024.0).round() * 1024.0 / 1e6;
        set(&mut r, GpuMetric::PcieRx, kb(200.0 + n.next() * 800.0));
        set(&mut r, GpuMetric::PcieTx, kb(50.0 + n.next() * 100.0));
        set(&mut r, GpuMetric::PcieGen, 5.0);
        set(&mut r, GpuMetric::PcieWidth, 16.0);
        set(
            &mut r,
            GpuMetric::NvlinkRx,
            kb(20_000.0 + n.next() * 5_000.0),
        );
        set(
            &mut r,
            GpuMetric::NvlinkTx,
            kb(20_000.0 + n.next() * 5_000.0),
        );
        let pct = |x: f32| (x * 100.0).round() / 100.0;
        set(&mut r, GpuMetric::GpmSmUtil, pct(util * 0.9));
        set(&mut r, GpuMetric::GpmSmOccupancy, pct(util * 0.5));
        set(&mut r, GpuMetric::GpmTensor, pct(util * 0.3 + n.next()));
        set(&mut r, GpuMetric::GpmDramBw, pct(util * 0.2 + n.next()));
        for m in [GpuMetric::GpmPcieRx, GpuMetric::GpmPcieTx] {
            set(&mut r, m, (n.next() * 1e6).round() / 1000.0);
        }
        for m in [GpuMetric::GpmNvlinkRx, GpuMetric::GpmNvlinkTx] {
            set(&mut r, m, (2e7 + n.next() * 5e6).round() / 1000.0);
        }
    }
    r
}

fn host_row(n: &mut Noise) -> Vec<f32> {
    let pct = |x: f32| (x * 100.0).round() / 100.0;
    let mut v = vec![
        pct(40.0 + n.next() * 20.0),
        pct(n.next()),
        pct(350.0 + n.next() * 100.0),
        12.0,
        (n.next() * 1e8).round(),
        (n.next() * 1e7).round(),
        5.0e11,
        pct(n.next() * 5.0),
        pct(n.next()),
        0.0,
        0.0,
        0.0,
    ];
    v.extend((0..CORES).map(|_| pct(n.next() * 100.0)));
    v
}

/// Records `seconds` of the job and measures what it costs.
fn measure(seconds: f64, out: &Path) -> Value {
    let ticks = (seconds / INTERVAL_S) as u64;
    let mut rec = Recording::new(RunInfo {
        source: "synthetic".into(),
        complete: true,
        interval_s: INTERVAL_S,
        duration_s: seconds,
        ..RunInfo::default()
    });
    for g in 0..GPUS {
        rec.add_device(device(g as u32));
    }
    rec.host = Some(HostRecording::new(
        HostFacts {
            logical_cpus: CORES,
            ..HostFacts::default()
        },
        CORES,
    ));
    let mut noise = Noise(0x9E37_79B9_7F4A_7C15);
    let started = Instant::now();
    for k in 0..ticks {
        // Times as the sampler keeps them: rounded to 0.1 ms.
        let t = (k as f64 * INTERVAL_S * 1e4).round() / 1e4;
        for g in 0..GPUS {
            let r = row(g, k, &mut noise);
            rec.push_gpu(g, t, &r);
        }
        if k % HOST == 0 {
            let h = host_row(&mut noise);
            if let Some(host) = rec.host.as_mut() {
                host.series.push(t, &h);
            }
        }
    }
    let record_s = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let mut report = Report::from_recording(&rec);
    gpuwhy::analysis::diagnose(&mut report);
    let diagnose_s = started.elapsed().as_secs_f64();
    // The form gpuwhy wrote before the compact one: plain arrays, pretty JSON.
    let old = gpuwhy::report::plain(|| serde_json::to_string_pretty(&report))
        .expect("a report serialises");
    let name = if seconds > 86_400.0 { "week" } else { "hour" };
    let path = out.join(format!("{name}.json"));
    let plain_path = out.join(format!("{name}-plain.json"));
    std::fs::write(&plain_path, &old).expect("writes the plain form");
    report.save(&path).expect("writes the report");
    let gz = path.with_extension("json.gz");
    report.save(&gz).expect("writes the gzip report");
    let size = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
    let started = Instant::now();
    let back = Report::load(&path).expect("reads the report back");
    let parse_s = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let old_back = Report::from_slice(old.as_bytes(), &path).expect("reads the plain form");
    let parse_old_s = started.elapsed().as_secs_f64();
    json!({
        "seconds": seconds,
        "samples": rec.devices.iter().map(|d| d.series.total_rows()).sum::<u64>(),
        "top": back.verdict.id,
        "top_plain": old_back.verdict.id,
        "heap_bytes": rec.heap_bytes(),
        "gpu_recent_minutes": rec.devices[0].series.kept().recent_rows as f64 / 600.0,
        "gpu_head_rows": rec.devices[0].series.kept().head_rows,
        "bound_bytes": rec.worst_case_bytes(),
        "bound_gpus_events_bytes": rec.worst_case_bytes()
            - rec.host.as_ref().map_or(0, |h| h.series.worst_case_bytes()),
        "old_bytes": old.len(),
        "new_bytes": size(&path),
        "gz_bytes": size(&gz),
        "record_s": record_s,
        "diagnose_s": diagnose_s,
        "parse_s": parse_s,
        "parse_old_s": parse_old_s,
        "path": path,
        "plain_path": plain_path,
    })
}

fn main() {
    let out = std::env::args().nth(1).unwrap_or_else(|| ".".into());
    let out = Path::new(&out);
    std::fs::create_dir_all(out).expect("creates the output directory");
    if std::env::var_os("WEEK_BENCH_REPLAY_ONLY").is_some() {
        println!("{}", json!({ "replay": replays() }));
        return;
    }
    let hour = measure(3_600.0, out);
    let week = measure(7.0 * 86_400.0, out);
    println!(
        "{}",
        json!({ "hour": hour, "week": week, "replay": replays() })
    );
}

/// Each kind of data replayed into a fresh stream: the week's GPU 0 and GPU 5, the files
/// named after the output directory (simulator scenarios' reports, real logs), and rows of
/// random bits (the worst case).
fn replays() -> Vec<Value> {
    let mut out = Vec::new();
    for g in [0, 5] {
        let mut n = Noise(0x9E37_79B9_7F4A_7C15 + g as u64);
        out.push(week_replay::replay(&format!("bench week GPU {g}"), |k| {
            row(g, k, &mut n).to_vec()
        }));
    }
    for path in std::env::args().skip(2) {
        let path = Path::new(&path);
        let Some(gpus) = week_replay::load_rows(path) else {
            eprintln!("week_bench: cannot read rows from {}", path.display());
            continue;
        };
        let name = path
            .file_name()
            .map_or_else(String::new, |f| f.to_string_lossy().into());
        let rows = &gpus[0];
        let label = format!("{name} GPU 0 ({} rows, replayed in a loop)", rows.len());
        out.push(week_replay::replay(&label, |k| {
            rows[k as usize % rows.len()].clone()
        }));
    }
    let mut x = 0x2545_F491_4F6C_DD1D_u64;
    out.push(week_replay::replay("random bits (worst case)", |_| {
        (0..GpuMetric::COUNT)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                f32::from_bits((x as u32) & 0x7f7f_ffff)
            })
            .collect()
    }));
    out
}
