//! The report the schema tests check: a recording built by hand that covers the parts of the
//! format that are easy to get wrong (a GPU past the full-resolution window, a lost GPU,
//! unavailable metrics, host samples, events, a counted fault), diagnosed once.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use gpuwhy::analysis::diagnose;
use gpuwhy::metric::GpuMetric;
use gpuwhy::recording::{HostRecording, Recording, FULL_ROWS_DEFAULT};
use gpuwhy::report::{
    Capability, DeviceInfo, Event, ForeignProcess, HostFacts, JobGpus, JobGpusMethod, NvmlInfo,
    Report, RunInfo,
};
use serde_json::Value;

/// Rows pushed on GPU 0: past the full-resolution window, so the report has a `coarse` part.
const LONG_ROWS: usize = FULL_ROWS_DEFAULT + 2_500;

fn capabilities(unavailable: &[(GpuMetric, &str)]) -> BTreeMap<String, Capability> {
    GpuMetric::ALL
        .iter()
        .map(|m| {
            let cap = match unavailable.iter().find(|(u, _)| u == m) {
                Some((_, why)) => Capability::unavailable(*why),
                None => Capability::available(),
            };
            (m.name().to_string(), cap)
        })
        .collect()
}

/// One sample row of GPU 0 at row `i`: a sawtooth of utilization (busy, then waiting for
/// input), slow metrics only every 10th row as the sampler reads them, no GPM.
fn row_gpu0(i: usize) -> [f32; GpuMetric::COUNT] {
    use GpuMetric as M;
    let mut r = [f32::NAN; GpuMetric::COUNT];
    // Ten samples per simulated step: six busy, four waiting.
    let phase = i % 10;
    let busy = phase < 6;
    r[M::UtilGpu.index()] = if busy { 97.0 } else { 1.0 };
    r[M::UtilMem.index()] = if busy { 40.0 } else { 0.0 };
    r[M::MemUsed.index()] = 30_000.0;
    r[M::Power.index()] = if busy { 520.0 } else { 120.0 };
    r[M::SmClock.index()] = 1_980.0;
    r[M::MemClock.index()] = 2_619.0;
    r[M::GraphicsClock.index()] = 1_980.0;
    r[M::Pstate.index()] = 0.0;
    r[M::ClockReasons.index()] = 0.0;
    if phase == 0 {
        r[M::Temp.index()] = 55.0;
        r[M::PcieGen.index()] = 5.0;
        r[M::PcieWidth.index()] = 16.0;
        r[M::PcieRx.index()] = 900.0;
        r[M::PcieTx.index()] = 120.0;
    }
    r
}

/// A recording with two GPUs (one past the full-resolution window, one lost after an XID),
/// host samples, events and a counted fault.
fn recording() -> Recording {
    use GpuMetric as M;
    let mut rec = Recording::new(RunInfo {
        start_unix_ms: 1_795_951_320_123,
        start: gpuwhy::report::rfc3339_utc(1_795_951_320_123),
        duration_s: (LONG_ROWS - 1) as f64 * 0.1,
        host: "node-07".into(),
        command: Some(vec!["python".into(), "train.py".into()]),
        exit_code: Some(0),
        label: Some("schema test".into()),
        rank: None,
        world_size: None,
        local_rank: None,
        data_loader: Some(gpuwhy::report::DataLoaderInfo {
            num_workers: Some(0),
            pin_memory: Some(false),
            prefetch_factor: None,
            persistent_workers: Some(false),
            batch_size: Some(32),
        }),
        traces: vec!["run.trace.json".into()],
        source: "nvml".into(),
        complete: true,
        ended_by: Some("command exited".into()),
        interval_s: 0.1,
        job_gpus: Some(JobGpus {
            indices: vec![0, 1],
            others: vec![],
            method: JobGpusMethod::Processes,
            reason: "GPU 0, 1 listed process 4242 of the recorded process tree".into(),
            shared: vec![ForeignProcess {
                device: 0,
                pid: 7777,
                name: Some("python3".into()),
                used_mib: Some(3000.0),
                memory_share: Some(3000.0 / 81_559.0),
                sm_share: Some(0.25),
                first_s: 1.0,
                last_s: 30.0,
            }],
        }),
    });
    rec.nvml = Some(NvmlInfo {
        path: "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1".into(),
        driver_version: Some("550.54.15".into()),
        nvml_version: Some("12.550.54.15".into()),
        cuda_driver_version: Some("12.4".into()),
        symbols: [
            ("nvmlInit".to_string(), Some("nvmlInit_v2".to_string())),
            ("nvmlGpmMetricsGet".to_string(), None),
        ]
        .into_iter()
        .collect(),
    });
    let no_gpm = "GPM is not supported on this GPU (Hopper and newer only)";
    let gpm = [
        M::GpmSmUtil,
        M::GpmSmOccupancy,
        M::GpmTensor,
        M::GpmDramBw,
        M::GpmPcieRx,
        M::GpmPcieTx,
        M::GpmNvlinkRx,
        M::GpmNvlinkTx,
    ];
    let mut off: Vec<(GpuMetric, &str)> = gpm.iter().map(|m| (*m, no_gpm)).collect();
    off.push((
        M::NvlinkRx,
        "no NVLink on this GPU (link count 0 or unknown)",
    ));
    off.push((
        M::NvlinkTx,
        "no NVLink on this GPU (link count 0 or unknown)",
    ));
    let d0 = rec.add_device(DeviceInfo {
        index: 0,
        name: Some("NVIDIA A100-SXM4-80GB".into()),
        uuid: Some("GPU-00000000-1111-2222-3333-444444444444".into()),
        pci_bus_id: Some("00000000:07:00.0".into()),
        pci_device_id: Some(0x20B2_10DE),
        architecture: Some("ampere".into()),
        compute_capability: Some("8.0".into()),
        memory_total_mib: Some(81_920.0),
        memory_reserved_mib: Some(512.0),
        power_limit_w: Some(400.0),
        max_sm_clock_mhz: Some(1_410.0),
        max_mem_clock_mhz: Some(1_593.0),
        max_graphics_clock_mhz: Some(1_410.0),
        pcie_max_gen: Some(4),
        pcie_max_width: Some(16),
        temp_slowdown_c: Some(87.0),
        temp_shutdown_c: Some(92.0),
        pcie_device_max_gen: Some(4),
        pcie_device_max_width: Some(16),
        nvlink_links: Some(0),
        gpm: false,
        capabilities: capabilities(&off),
        lost_at_s: None,
        mig: None,
        health: Some(health()),
    });
    let mut off1 = off.clone();
    off1.push((M::PcieRx, "NOT_SUPPORTED from nvmlDeviceGetPcieThroughput"));
    off1.push((M::PcieTx, "NOT_SUPPORTED from nvmlDeviceGetPcieThroughput"));
    let d1 = rec.add_device(DeviceInfo {
        index: 1,
        name: Some("NVIDIA A100-SXM4-80GB".into()),
        memory_total_mib: Some(81_920.0),
        memory_reserved_mib: Some(512.0),
        pcie_max_gen: Some(4),
        pcie_max_width: Some(16),
        capabilities: capabilities(&off1),
        lost_at_s: Some(25.0),
        ..Default::default()
    });
    for i in 0..LONG_ROWS {
        rec.push_gpu(d0, i as f64 * 0.1, &row_gpu0(i));
    }
    for i in 0..250 {
        let mut r = row_gpu0(i);
        r[M::PcieRx.index()] = f32::NAN;
        r[M::PcieTx.index()] = f32::NAN;
        if i % 7 == 3 {
            // A transient error: a gap, not a zero.
            r[M::Power.index()] = f32::NAN;
        }
        rec.push_gpu(d1, i as f64 * 0.1, &r);
    }
    let facts = HostFacts {
        hostname: "node-07".into(),
        kernel: "6.8.0-45-generic".into(),
        cpu_model: "AMD EPYC 7763 64-Core Processor".into(),
        logical_cpus: 4,
        physical_cores: Some(2),
        mem_total_bytes: 540_000_000_000,
    };
    let mut host = HostRecording::new(facts, 4);
    for i in 0..100 {
        let mut row = vec![
            35.0f32, 2.0, 180.0, 9.0, 2.5e8, 1.0e6, 3.0e11, 4.0, 1.0, 0.0, 0.0, 0.0,
        ];
        row.extend([90.0, 95.0, 20.0, f32::NAN]);
        host.series.push(i as f64 * 0.5, &row);
    }
    host.unavailable.push((
        "psi_cpu_some".into(),
        "cannot read /proc/pressure/cpu: No such file or directory (os error 2)".into(),
    ));
    rec.host = Some(host);
    rec.push_event(Event {
        t_s: 24.9,
        device: Some(1),
        kind: "xid".into(),
        code: Some(79),
        detail: "XID 79 reported by the driver".into(),
    });
    rec.push_event(Event {
        t_s: 25.0,
        device: Some(1),
        kind: "gpu_lost".into(),
        code: Some(15),
        detail: "nvmlDeviceGetUtilizationRates returned GPU_IS_LOST".into(),
    });
    rec.push_event(Event {
        t_s: 12.0,
        device: None,
        kind: "checkpoint".into(),
        code: None,
        detail: String::new(),
    });
    rec.count_fault(Some(0), "nvmlDeviceGetPowerUsage", 10, "TIMEOUT", 3.2);
    rec.count_fault(Some(0), "nvmlDeviceGetPowerUsage", 10, "TIMEOUT", 7.9);
    rec.overhead.ticks = LONG_ROWS as u64;
    rec.overhead.nvml_calls = 11 * LONG_ROWS as u64;
    rec.overhead.nvml_call_mean_us = 4.2;
    rec.overhead.nvml_call_max_us = 310.0;
    rec.overhead.nvml_call_max_function = Some("nvmlDeviceGetPcieThroughput".into());
    rec
}

/// The diagnosed report of [`recording`] and its JSON, built once (diagnosing ~40 000 rows
/// takes a moment in a debug build).
pub(crate) fn report() -> &'static (Report, Value) {
    static REPORT: OnceLock<(Report, Value)> = OnceLock::new();
    REPORT.get_or_init(|| {
        let mut report = Report::from_recording(&recording());
        diagnose(&mut report);
        let doc = serde_json::from_str(&report.to_json()).expect("the report is JSON");
        (report, doc)
    })
}

/// Health counters with every field set: a remap pending and corrected DRAM errors rising
/// between the two readings.
fn health() -> gpuwhy::report::DeviceHealth {
    use gpuwhy::report::{
        DeviceHealth, EccCounts, HealthReading, NvlinkErrors, RemappedRows, RetiredPages,
    };
    let ecc = |corrected| EccCounts {
        volatile_corrected: Some(corrected),
        volatile_uncorrected: Some(0),
        aggregate_corrected: Some(corrected + 40),
        aggregate_uncorrected: Some(0),
    };
    let reading = |t_s, corrected| HealthReading {
        t_s,
        ecc: ecc(corrected),
        ecc_locations: [
            ("dram".to_string(), ecc(corrected)),
            ("sram".to_string(), ecc(0)),
        ]
        .into_iter()
        .collect(),
        remapped_rows: Some(RemappedRows {
            correctable: Some(1),
            uncorrectable: Some(0),
            pending: Some(true),
            failure: Some(false),
        }),
        retired_pages: Some(RetiredPages {
            single_bit: Some(0),
            double_bit: Some(0),
            pending: Some(false),
        }),
        nvlink_errors: Some(NvlinkErrors {
            crc_flit: Some(0),
            crc_data: Some(0),
            replay: Some(0),
            recovery: Some(0),
        }),
    };
    DeviceHealth {
        ecc_enabled: Some(true),
        ecc_pending_enabled: Some(true),
        readings: vec![reading(0.0, 3), reading(25.0, 9)],
        unavailable: [(
            "nvlink_errors".to_string(),
            "no NVLink on this GPU".to_string(),
        )]
        .into_iter()
        .collect(),
    }
}
