//! `nvidia-smi -q` dumps of both wordings, `-d` excerpts, looped dumps and lost GPUs.

use super::*;
use crate::import::{detect, Kind};
use crate::metric::reasons;
use crate::recording::Recording;

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/import/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).expect("fixture")
}

fn col(rec: &Recording, dev: usize, m: GpuMetric) -> Vec<f32> {
    rec.devices[dev].series.column(m.index()).to_vec()
}

fn available(rec: &Recording, dev: usize, m: GpuMetric) -> bool {
    rec.devices[dev].info.capabilities[m.name()].available
}

#[test]
fn a_whole_dump_of_an_older_driver_is_one_sample_per_gpu() {
    let text = fixture("smi_q_r470_two_gpus.txt");
    assert_eq!(detect(text.as_bytes()), Some(Kind::Smi));
    let out = parse(&text, &ImportOptions::default()).expect("parses");
    let rec = &out.recording;
    assert_eq!(rec.run.source, "smi");
    assert_eq!(out.samples, 1);
    assert_eq!(rec.devices.len(), 2);
    assert_eq!(rec.run.start, "2026-12-01T09:30:05.000Z");
    let i0 = &rec.devices[0].info;
    assert_eq!(i0.name.as_deref(), Some("NVIDIA A100-PCIE-40GB"));
    assert_eq!(
        i0.uuid.as_deref(),
        Some("GPU-1111aaaa-2222-3333-4444-555566667777")
    );
    assert_eq!(i0.pci_bus_id.as_deref(), Some("00000000:3B:00.0"));
    assert_eq!(i0.memory_total_mib, Some(40536.0));
    assert_eq!(i0.power_limit_w, Some(250.0));
    assert_eq!(
        (
            i0.max_sm_clock_mhz,
            i0.max_graphics_clock_mhz,
            i0.max_mem_clock_mhz
        ),
        (Some(1410.0), Some(1410.0), Some(1215.0)),
        "Max Clocks, not Applications Clocks"
    );
    assert_eq!((i0.pcie_max_gen, i0.pcie_max_width), (Some(4), Some(16)));
    assert_eq!(i0.temp_slowdown_c, Some(89.0));
    let m = |d, m| col(rec, d, m)[0];
    assert_eq!(m(0, GpuMetric::UtilGpu), 98.0);
    assert_eq!(m(0, GpuMetric::UtilMem), 61.0);
    assert_eq!(m(0, GpuMetric::MemUsed), 38012.0);
    assert_eq!(m(0, GpuMetric::Power), 249.61);
    assert_eq!(m(0, GpuMetric::Temp), 71.0);
    assert_eq!(m(0, GpuMetric::SmClock), 1170.0);
    assert_eq!(m(0, GpuMetric::GraphicsClock), 1170.0);
    assert_eq!(m(0, GpuMetric::MemClock), 1215.0);
    assert_eq!(m(0, GpuMetric::Pstate), 0.0);
    assert_eq!(m(0, GpuMetric::PcieRx), 2500.0, "KB/s read as MB/s");
    assert_eq!(m(0, GpuMetric::PcieTx), 125.0);
    assert_eq!(
        m(0, GpuMetric::ClockReasons),
        reasons::SW_POWER_CAP as f32,
        "only the active reason"
    );
    // The second GPU: a degraded link, P2, no PCIe counters, two uncorrectable ECC errors.
    assert_eq!(m(1, GpuMetric::PcieGen), 3.0);
    assert_eq!(m(1, GpuMetric::PcieWidth), 8.0);
    assert_eq!(m(1, GpuMetric::Pstate), 2.0);
    assert_eq!(m(1, GpuMetric::ClockReasons), 0.0, "all reasons Not Active");
    assert!(m(1, GpuMetric::PcieRx).is_nan(), "N/A is missing, not 0");
    let ecc: Vec<_> = rec.events.iter().filter(|e| e.kind == "ecc").collect();
    assert_eq!(ecc.len(), 1);
    assert_eq!(
        (ecc[0].device, ecc[0].code),
        (Some(1), Some(2)),
        "volatile, not aggregate"
    );
    assert!(out.notes.iter().any(|n| n.contains("one snapshot per GPU")));
    assert!(out.notes.iter().any(|n| n.contains("uncorrectable ECC")));
    // Metrics a -q dump never shows are unavailable with the reason.
    assert!(!available(rec, 0, GpuMetric::GpmSmUtil));
    assert!(available(rec, 0, GpuMetric::UtilGpu));
}

#[test]
fn a_performance_excerpt_of_a_newer_driver_reads_event_reasons_not_their_counters() {
    let text = fixture("smi_q_d_perf_r550.txt");
    assert_eq!(detect(text.as_bytes()), Some(Kind::Smi));
    let out = parse(&text, &ImportOptions::default()).expect("parses");
    let rec = &out.recording;
    assert_eq!(rec.devices.len(), 1);
    let mask = col(rec, 0, GpuMetric::ClockReasons)[0] as u64;
    assert_eq!(
        mask,
        reasons::HW_SLOWDOWN | reasons::HW_THERMAL | reasons::SW_THERMAL,
        "the counters block (`SW Power Capping : 5150 us`) is not a reason"
    );
    assert_eq!(
        col(rec, 0, GpuMetric::Power)[0],
        402.17,
        "the first printed draw"
    );
    assert_eq!(rec.devices[0].info.power_limit_w, Some(700.0));
    assert_eq!(col(rec, 0, GpuMetric::SmClock)[0], 1095.0);
    assert_eq!(rec.devices[0].info.max_sm_clock_mhz, Some(1980.0));
    assert_eq!(rec.devices[0].info.pcie_max_gen, Some(5));
    // The excerpt has no Utilization section: unavailable, saying why.
    assert!(!available(rec, 0, GpuMetric::UtilGpu));
    let why = rec.devices[0].info.capabilities["util_gpu"]
        .reason
        .clone()
        .unwrap_or_default();
    assert!(why.contains("nvidia-smi -q"), "{why}");
}

#[test]
fn looped_dumps_are_a_short_log_with_their_timestamps() {
    let one = fixture("smi_q_r470_two_gpus.txt");
    let two = one.replace("09:30:05", "09:30:10").replace("98 %", "5 %");
    let out = parse(&format!("{one}{two}"), &ImportOptions::default()).expect("parses");
    let rec = &out.recording;
    assert_eq!(out.samples, 2);
    assert_eq!(rec.devices.len(), 2, "GPUs are told apart by bus id");
    assert_eq!(col(rec, 0, GpuMetric::UtilGpu), vec![98.0, 5.0]);
    assert_eq!(rec.devices[0].series.times(), &[0.0, 5.0]);
    assert_eq!(rec.run.interval_s, 5.0);
    assert!(!out.notes.iter().any(|n| n.contains("one snapshot")));
}

#[test]
fn a_lost_gpu_is_a_gpu_lost_event() {
    let text = "==============NVSMI LOG==============\n\n\
        Timestamp : Tue Dec  1 09:30:05 2026\n\
        Unable to determine the device handle for GPU 0000:65:00.0: GPU is lost.  Reboot the system to recover this GPU\n\
        GPU 00000000:3B:00.0\n    Utilization\n        Gpu : 40 %\n";
    let out = parse(text, &ImportOptions::default()).expect("parses");
    let rec = &out.recording;
    assert_eq!(rec.devices.len(), 2);
    let lost: Vec<_> = rec.events.iter().filter(|e| e.kind == "gpu_lost").collect();
    assert_eq!(lost.len(), 1);
    assert_eq!(lost[0].device, Some(0));
    assert_eq!(
        rec.devices[0].info.pci_bus_id.as_deref(),
        Some("0000:65:00.0")
    );
    assert_eq!(col(rec, 1, GpuMetric::UtilGpu), vec![40.0]);
}

#[test]
fn a_dump_pasted_without_its_banner_is_still_told_apart() {
    let text =
        "GPU 00000000:3B:00.0\n    Performance State : P0\n    Utilization\n        Gpu : 7 %\n";
    assert_eq!(detect(text.as_bytes()), Some(Kind::Smi));
    let out = parse(text, &ImportOptions::default()).expect("parses");
    assert_eq!(col(&out.recording, 0, GpuMetric::UtilGpu), vec![7.0]);
    // Not a dump: a line that only looks like a GPU block, or prose.
    assert_eq!(detect(b"GPU 0 is slow\n  see: below\n"), None);
    assert_eq!(detect(b"GPU 00000000:3B:00.0\nnothing indented\n"), None);
}

#[test]
fn a_banner_without_gpus_is_refused_clearly_and_garbage_never_panics() {
    let e = parse(
        "==============NVSMI LOG==============\nTimestamp : x\n",
        &ImportOptions::default(),
    )
    .expect_err("no GPU block");
    assert!(e.to_string().contains("without a GPU block"), "{e}");
    for text in [
        "",
        "GPU 0:0:0.0\n",
        "==============NVSMI LOG==============\nGPU 00000000:3B:00.0\n\t\tUtilization\n\t\t\tGpu : 1e40 %\n",
        "GPU 00000000:3B:00.0\n    Clocks Event Reasons\n        SW Power Cap : maybe\n    Max Clocks\n SM : -5 MHz\n",
        "==============NVSMI LOG==============\nTimestamp : Foo Bar 99 99:99:99 99999\nGPU 00000000:3B:00.0\n  x\n",
    ] {
        let _ = parse(text, &ImportOptions::default());
    }
}

#[test]
fn a_quoted_part_of_one_block_without_its_gpu_line_is_one_gpu() {
    // As posts quote it: from `Performance State` to `Utilization`, indented, nothing above.
    let text = "    Fan Speed                       : 0 %\n\
        \x20   Performance State               : P2\n\
        \x20   Clocks Throttle Reasons\n\
        \x20       Idle                        : Not Active\n\
        \x20       SW Power Cap                : Not Active\n\
        \x20       Unknown                     : Active\n\
        \x20   FB Memory Usage\n\
        \x20       Total                       : 6143 MiB\n\
        \x20       Used                        : 144 MiB\n\
        \x20   Utilization\n\
        \x20       Gpu                         : 100 %\n";
    assert_eq!(detect(text.as_bytes()), Some(Kind::Smi));
    let out = parse(text, &ImportOptions::default()).expect("parses");
    let rec = &out.recording;
    assert_eq!(rec.devices.len(), 1);
    assert_eq!(rec.devices[0].info.pci_bus_id, None);
    assert_eq!(rec.devices[0].info.memory_total_mib, Some(6143.0));
    assert_eq!(col(rec, 0, GpuMetric::Pstate), vec![2.0]);
    assert_eq!(col(rec, 0, GpuMetric::UtilGpu), vec![100.0]);
    assert_eq!(
        col(rec, 0, GpuMetric::ClockReasons),
        vec![0.0],
        "`Unknown` has no NVML bit here"
    );
    // Indented text that is not a block is not taken for one.
    assert_eq!(
        detect(b"    hello : world\n    Performance State : P0\n"),
        None
    );
}
