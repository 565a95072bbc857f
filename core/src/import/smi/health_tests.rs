//! Health counters of `nvidia-smi -q` dumps: both ECC layouts, retired pages, remapped rows,
//! `N/A`, fragments and excerpts with and without their header, and the XML form. The texts
//! are written here in the formats of public dumps (docs/importing.md); none is a copy.

use crate::import::smi::parse;
use crate::import::{detect, ImportOptions, Kind};
use crate::metric::{reasons, GpuMetric};
use crate::report::{DeviceHealth, EccCounts, RemappedRows, RetiredPages};

fn read(text: &str) -> crate::import::Imported {
    assert_eq!(detect(text.as_bytes()), Some(Kind::Smi), "detected: {text}");
    parse(text, &ImportOptions::default()).expect("parses")
}

fn health(out: &crate::import::Imported, dev: usize) -> &DeviceHealth {
    out.recording.devices[dev]
        .info
        .health
        .as_ref()
        .expect("health was read")
}

/// An Ampere block of a newer driver: SRAM/DRAM counts, a pending remap.
const AMPERE: &str = "\
GPU 00000000:9E:00.0
    Product Name                          : NVIDIA A100-SXM4-80GB
    PCI
        GPU Link Info
            PCIe Generation
                Max                       : 4
                Current                   : 3
                Device Current            : 3
                Device Max                : 4
                Host Max                  : 5
            Link Width
                Max                       : 16x
                Current                   : 8x
    Utilization
        Gpu                               : 97 %
    ECC Mode
        Current                           : Enabled
        Pending                           : Enabled
    ECC Errors
        Volatile
            SRAM Correctable              : 0
            SRAM Uncorrectable Parity     : 1
            SRAM Uncorrectable SEC-DED    : 2
            DRAM Correctable              : 353
            DRAM Uncorrectable            : 0
        Aggregate
            SRAM Correctable              : 4
            SRAM Uncorrectable Parity     : 1
            SRAM Uncorrectable SEC-DED    : 2
            DRAM Correctable              : 360
            DRAM Uncorrectable            : 1
            SRAM Threshold Exceeded       : No
        Aggregate Uncorrectable SRAM Sources
            SRAM L2                       : 3
            SRAM SM                       : 0
    Retired Pages
        Single Bit ECC                    : N/A
        Double Bit ECC                    : N/A
        Pending Page Blacklist            : N/A
    Remapped Rows
        Correctable Error                 : 1
        Uncorrectable Error               : 0
        Pending                           : Yes
        Remapping Failure Occurred        : No
        Bank Remap Availability Histogram
            Max                           : 639 bank(s)
            High                          : 1 bank(s)
    Temperature
        GPU Current Temp                  : 61 C
        GPU T.Limit Temp                  : 20 C
        GPU Shutdown Temp                 : 92 C
        GPU Slowdown Temp                 : 89 C
        GPU Max Operating Temp            : 85 C
    GPU Power Readings
        Power Draw                        : 301.50 W
        Current Power Limit               : 400.00 W
";

#[test]
fn an_ampere_block_gives_its_counters_by_location_and_its_pending_remap() {
    let out = read(AMPERE);
    let h = health(&out, 0);
    assert_eq!(
        (h.ecc_enabled, h.ecc_pending_enabled),
        (Some(true), Some(true))
    );
    assert_eq!(h.readings.len(), 1);
    let r = &h.readings[0];
    assert_eq!(r.t_s, 0.0);
    assert_eq!(
        r.ecc_locations["sram"],
        EccCounts {
            volatile_corrected: Some(0),
            volatile_uncorrected: Some(3),
            aggregate_corrected: Some(4),
            aggregate_uncorrected: Some(3),
        },
        "parity + SEC-DED is the SRAM uncorrectable count; the sources are not added again"
    );
    assert_eq!(r.ecc_locations["dram"].volatile_corrected, Some(353));
    assert_eq!(
        r.ecc,
        EccCounts {
            volatile_corrected: Some(353),
            volatile_uncorrected: Some(3),
            aggregate_corrected: Some(364),
            aggregate_uncorrected: Some(4),
        },
        "the whole GPU is SRAM + DRAM"
    );
    assert_eq!(
        r.remapped_rows,
        Some(RemappedRows {
            correctable: Some(1),
            uncorrectable: Some(0),
            pending: Some(true),
            failure: Some(false),
        })
    );
    assert_eq!(r.retired_pages, None, "N/A is not zero");
    assert!(h.unavailable["retired_pages"].contains("N/A"), "{h:?}");
    assert!(!h.unavailable.contains_key("ecc"));
    // The thresholds and the link: shutdown temperature (not the T.Limit one), the GPU's own
    // maximum generation, the current link as samples.
    let info = &out.recording.devices[0].info;
    assert_eq!(info.temp_shutdown_c, Some(92.0));
    assert_eq!(info.temp_slowdown_c, Some(89.0));
    assert_eq!(info.pcie_device_max_gen, Some(4));
    assert_eq!(
        (info.pcie_max_gen, info.pcie_max_width),
        (Some(4), Some(16))
    );
    assert_eq!(info.power_limit_w, Some(400.0));
    let s = &out.recording.devices[0].series;
    assert_eq!(s.column(GpuMetric::PcieGen.index()), &[3.0]);
    assert_eq!(s.column(GpuMetric::PcieWidth.index()), &[8.0]);
    // Volatile uncorrected errors are still an `ecc` event.
    let ecc: Vec<_> = out
        .recording
        .events
        .iter()
        .filter(|e| e.kind == "ecc")
        .collect();
    assert_eq!(ecc.len(), 1);
    assert_eq!(ecc[0].code, Some(3));
}

#[test]
fn an_older_block_splits_single_and_double_bit_by_location() {
    let text = "\
GPU 00000000:04:00.0
    Product Name                    : Tesla K80
    ECC Mode
        Current                     : Enabled
        Pending                     : Disabled
    ECC Errors
        Volatile
            Single Bit
                Device Memory       : 12
                Register File       : 0
                L1 Cache            : 0
                L2 Cache            : 1
                Texture Memory      : 0
                Texture Shared      : N/A
                CBU                 : N/A
                Total               : 13
            Double Bit
                Device Memory       : 2
                Register File       : 0
                L1 Cache            : 0
                L2 Cache            : 0
                Texture Memory      : 0
                Texture Shared      : N/A
                CBU                 : 0
                Total               : 2
        Aggregate
            Single Bit
                Device Memory       : 40
                Total               : 40
            Double Bit
                Device Memory       : 2
                Total               : 2
    Retired Pages
        Single Bit ECC              : 3
        Double Bit ECC              : 1
        Pending                     : Yes
";
    let out = read(text);
    let h = health(&out, 0);
    assert_eq!(
        (h.ecc_enabled, h.ecc_pending_enabled),
        (Some(true), Some(false))
    );
    let r = &h.readings[0];
    assert_eq!(
        r.ecc,
        EccCounts {
            volatile_corrected: Some(13),
            volatile_uncorrected: Some(2),
            aggregate_corrected: Some(40),
            aggregate_uncorrected: Some(2),
        },
        "the printed Total"
    );
    assert_eq!(
        r.ecc_locations["device_memory"].volatile_corrected,
        Some(12)
    );
    assert_eq!(r.ecc_locations["l2_cache"].volatile_corrected, Some(1));
    assert_eq!(r.ecc_locations["cbu"].volatile_uncorrected, Some(0));
    assert_eq!(
        r.ecc_locations.get("texture_shm"),
        None,
        "N/A everywhere: no counts"
    );
    assert_eq!(
        r.retired_pages,
        Some(RetiredPages {
            single_bit: Some(3),
            double_bit: Some(1),
            pending: Some(true),
        })
    );
    assert_eq!(r.remapped_rows, None);
    assert!(
        h.unavailable["remapped_rows"].contains("not printed"),
        "{h:?}"
    );
}

#[test]
fn a_fragment_of_only_ecc_errors_is_one_unnamed_gpu_indented_or_not() {
    let indented = "\
    ECC Errors
        Volatile
            SRAM Correctable              : 0
            SRAM Uncorrectable            : 1
            DRAM Correctable              : 0
            DRAM Uncorrectable            : 0
        Aggregate
            SRAM Correctable              : 0
            SRAM Uncorrectable            : 5
            DRAM Correctable              : 0
            DRAM Uncorrectable            : 0
";
    let margin: String = indented
        .lines()
        .map(|l| format!("{}\n", l.strip_prefix("    ").unwrap_or(l)))
        .collect();
    for text in [indented, margin.as_str()] {
        let out = read(text);
        assert_eq!(out.recording.devices.len(), 1);
        assert_eq!(out.recording.devices[0].info.pci_bus_id, None);
        let r = &health(&out, 0).readings[0];
        assert_eq!(r.ecc.volatile_uncorrected, Some(1));
        assert_eq!(r.ecc.aggregate_uncorrected, Some(5));
        assert_eq!(r.ecc_locations["sram"].aggregate_uncorrected, Some(5));
        assert!(
            out.notes
                .iter()
                .any(|n| n.contains("only its health counters")),
            "{:?}",
            out.notes
        );
        // No metric was in the fragment: every one is unavailable, none is 0.
        let util = &out.recording.devices[0].info.capabilities["util_gpu"];
        assert!(!util.available);
    }
}

#[test]
fn an_excerpt_with_elisions_is_read_around_them_and_says_how_many() {
    // The global lines and the GPU line, then `[...]` where the post cut sections out.
    let text = "\
Timestamp                                 : Wed Jun  7 19:32:16 2023
Driver Version                            : 510.73.08

Attached GPUs                             : 8
GPU 00000000:10:1C.0
    Product Name                          : NVIDIA A100-SXM4-80GB
    [...]
    Remapped Rows
        Correctable Error                 : 0
        Uncorrectable Error               : 2
        Pending                           : Yes
        Remapping Failure Occurred        : No
[...]
";
    let out = read(text);
    assert_eq!(
        out.recording.devices[0].info.pci_bus_id.as_deref(),
        Some("00000000:10:1C.0")
    );
    let r = &health(&out, 0).readings[0];
    assert_eq!(r.remapped_rows.and_then(|x| x.pending), Some(true));
    assert_eq!(r.remapped_rows.and_then(|x| x.uncorrectable), Some(2));
    assert!(
        out.notes.iter().any(|n| n.starts_with("2 elided lines")),
        "{:?}",
        out.notes
    );
}

#[test]
fn a_throttle_reasons_and_clocks_excerpt_without_header_is_read() {
    let text = "\
Clocks Throttle Reasons
    Idle                        : Not Active
    Applications Clocks Setting : Not Active
    SW Power Cap                : Active
    HW Slowdown                 : Not Active
    Sync Boost                  : Not Active
    SW Thermal Slowdown         : Not Active
Clocks
    Graphics                    : 1189 MHz
    SM                          : 1189 MHz
    Memory                      : 877 MHz
...
";
    let out = read(text);
    let s = &out.recording.devices[0].series;
    assert_eq!(
        s.column(GpuMetric::ClockReasons.index()),
        &[reasons::SW_POWER_CAP as f32]
    );
    assert_eq!(s.column(GpuMetric::SmClock.index()), &[1189.0]);
    assert_eq!(s.column(GpuMetric::MemClock.index()), &[877.0]);
    assert!(
        out.recording.devices[0].info.health.is_none(),
        "no health section"
    );
    assert!(out.notes.iter().any(|n| n.starts_with("1 elided line was")));
}

#[test]
fn a_gpu_without_row_remapping_or_ecc_says_so_and_reads_no_zeros() {
    let text = "\
GPU 00000000:01:00.0
    Product Name                          : NVIDIA GeForce RTX 3050
    ECC Mode
        Current                           : N/A
        Pending                           : N/A
    ECC Errors
        Volatile
            SRAM Correctable              : N/A
            DRAM Uncorrectable            : N/A
    Retired Pages
        Single Bit ECC                    : N/A
        Pending Page Blacklist            : N/A
    Remapped Rows                         : N/A
";
    let out = read(text);
    let h = health(&out, 0);
    assert_eq!(h.ecc_enabled, None);
    let r = &h.readings[0];
    assert!(r.ecc.is_empty() && r.ecc_locations.is_empty());
    assert_eq!((r.remapped_rows, r.retired_pages), (None, None));
    for group in ["ecc_mode", "ecc", "retired_pages", "remapped_rows"] {
        assert!(h.unavailable[group].contains("N/A"), "{group}: {h:?}");
    }
    assert!(out.recording.events.is_empty());
}

#[test]
fn looped_dumps_give_one_health_reading_per_dump_on_the_run_clock() {
    let one = format!(
        "==============NVSMI LOG==============\nTimestamp : Tue Dec  1 09:30:05 2026\n{AMPERE}"
    );
    let two = one.replace("09:30:05", "09:30:35").replace(
        "DRAM Correctable              : 353",
        "DRAM Correctable              : 400",
    );
    let out = parse(&format!("{one}{two}"), &ImportOptions::default()).expect("parses");
    let h = health(&out, 0);
    let t: Vec<f64> = h.readings.iter().map(|r| r.t_s).collect();
    assert_eq!(t, vec![0.0, 30.0]);
    let dram: Vec<_> = h
        .readings
        .iter()
        .map(|r| r.ecc_locations["dram"].volatile_corrected)
        .collect();
    assert_eq!(dram, vec![Some(353), Some(400)]);
}

#[test]
fn text_that_only_mentions_the_words_is_not_a_dump() {
    for text in [
        "ECC Errors are bad, see Remapped Rows\n",
        "timestamp, ecc.errors.corrected.volatile.total\n2026/11/29 11:22:00.101, 0\n",
        "# gpu   pwr\n# Idx     W\n    0    50\n",
        "    hello : world\n    Performance State : P0\n",
    ] {
        assert_ne!(detect(text.as_bytes()), Some(Kind::Smi), "{text}");
    }
}
