//! Each health level named with its GPU and its action, from every form of `nvidia-smi`
//! output people paste: a whole `-q`/`-a` block, `-q -x` XML, a fragment without header or
//! GPU line, and looped dumps for a count that rises. The texts are written here in the
//! formats of public dumps (docs/importing.md); none is a copy.

use crate::analysis::diagnose_any;
use crate::import::{ImportOptions, Input, Kind};
use crate::report::{Report, Severity};

fn diagnose_text(text: &str) -> Report {
    diagnose_any(
        Some(Input::Bytes {
            kind: Kind::Smi,
            bytes: text.as_bytes(),
            opts: ImportOptions::default(),
        }),
        None,
    )
    .expect("diagnoses")
    .report
}

/// The GPU's block of a `-q` dump with its remapped rows and ECC counts as given.
fn block(bus: &str, remap: (&str, &str), dram: (u64, u64), width: u32) -> String {
    format!(
        "GPU {bus}
    Product Name                          : NVIDIA A100-SXM4-80GB
    PCI
        GPU Link Info
            PCIe Generation
                Max                       : 4
                Current                   : 1
            Link Width
                Max                       : 16x
                Current                   : {width}x
    Utilization
        Gpu                               : 0 %
    ECC Mode
        Current                           : Enabled
        Pending                           : Enabled
    ECC Errors
        Volatile
            SRAM Correctable              : 0
            SRAM Uncorrectable            : 0
            DRAM Correctable              : {}
            DRAM Uncorrectable            : {}
        Aggregate
            SRAM Correctable              : 0
            SRAM Uncorrectable            : 0
            DRAM Correctable              : {}
            DRAM Uncorrectable            : {}
    Remapped Rows
        Correctable Error                 : 0
        Uncorrectable Error               : 0
        Pending                           : {}
        Remapping Failure Occurred        : {}
",
        dram.0, dram.1, dram.0, dram.1, remap.0, remap.1
    )
}

fn dump(blocks: &[String]) -> String {
    format!(
        "==============NVSMI LOG==============\n\nTimestamp : Mon Dec  7 09:30:05 2026\nDriver Version : 550.54.15\nCUDA Version : 12.4\n\nAttached GPUs : {}\n{}",
        blocks.len(),
        blocks.concat()
    )
}

const HEALTHY: ((&str, &str), (u64, u64)) = (("No", "No"), (0, 0));

/// The top finding is `gpu_fault` on `gpu` at `severity`, and its first action says `does`.
fn named(r: &Report, gpu: u32, severity: Severity, does: &str) {
    let f = r.findings.first().expect("a finding");
    assert_eq!(f.id, "gpu_fault", "{:#?}", r.findings);
    assert_eq!(f.devices, vec![gpu]);
    assert_eq!(f.severity, severity, "{}", f.summary);
    assert!(f.actions[0].text.contains(does), "{does}: {:?}", f.actions);
    // Nothing about patterns over time from a snapshot of idle GPUs.
    for id in [
        "comm_sync",
        "rank_imbalance",
        "data_starvation",
        "unexplained_idle",
    ] {
        assert!(
            r.findings.iter().all(|f| f.id != id),
            "{id}: {:#?}",
            r.findings
        );
    }
}

#[test]
fn a_pending_remap_in_a_multi_gpu_dump_names_that_gpu_and_says_reset_it() {
    let text = dump(&[
        block("00000000:07:00.0", HEALTHY.0, HEALTHY.1, 16),
        block("00000000:0B:00.0", ("Yes", "No"), (353, 0), 16),
    ]);
    named(&diagnose_text(&text), 1, Severity::High, "Reset GPU 1");
}

#[test]
fn a_remap_failure_or_uncorrected_errors_say_drain() {
    let failed = dump(&[block("00000000:07:00.0", ("No", "Yes"), (0, 0), 16)]);
    named(&diagnose_text(&failed), 0, Severity::Critical, "drain");
    let wrong = dump(&[
        block("00000000:07:00.0", HEALTHY.0, HEALTHY.1, 16),
        block("00000000:0B:00.0", HEALTHY.0, HEALTHY.1, 16),
        block("00000000:0C:00.0", ("No", "No"), (12, 2), 16),
    ]);
    named(&diagnose_text(&wrong), 2, Severity::Critical, "drain");
}

#[test]
fn corrected_errors_rising_between_looped_dumps_say_watch_with_the_rate() {
    let one = dump(&[block("00000000:07:00.0", ("No", "No"), (40, 0), 16)]);
    let two = one
        .replace("09:30:05", "09:40:05")
        .replace(": 40\n", ": 100\n");
    let r = diagnose_text(&format!("{one}{two}"));
    let f = r
        .findings
        .iter()
        .find(|f| f.id == "gpu_fault")
        .expect("gpu_fault");
    assert_eq!(f.devices, vec![0]);
    assert_eq!(f.severity, Severity::Low);
    assert!(f.summary.contains("rose by 60"), "{}", f.summary);
    assert!(f.summary.contains("360 an hour"), "{}", f.summary);
    assert!(
        f.actions[0].text.starts_with("Watch GPU 0"),
        "{:?}",
        f.actions
    );
}

#[test]
fn a_fragment_of_only_remapped_rows_or_ecc_errors_is_one_unnamed_gpu_read_for_its_health() {
    let remap = "    Remapped Rows
        Correctable Error                 : 0
        Uncorrectable Error               : 1
        Pending                           : Yes
        Remapping Failure Occurred        : No
";
    named(&diagnose_text(remap), 0, Severity::High, "Reset GPU 0");
    let ecc = "ECC Errors
    Volatile
        SRAM Correctable              : 0
        SRAM Uncorrectable            : 1
        DRAM Correctable              : 0
        DRAM Uncorrectable            : 0
";
    named(&diagnose_text(ecc), 0, Severity::Critical, "drain");
}

#[test]
fn the_xml_form_names_the_same_levels() {
    let gpu = |id: &str, pending: &str, failure: &str, unc: u64| {
        format!(
            "<gpu id=\"{id}\"><product_name>NVIDIA A100-SXM4-80GB</product_name>\
             <utilization><gpu_util>0 %</gpu_util></utilization>\
             <ecc_errors><volatile><sram_correctable>0</sram_correctable>\
             <dram_correctable>0</dram_correctable><dram_uncorrectable>{unc}</dram_uncorrectable>\
             </volatile></ecc_errors>\
             <remapped_rows><remapped_row_corr>0</remapped_row_corr>\
             <remapped_row_unc>0</remapped_row_unc><remapped_row_pending>{pending}</remapped_row_pending>\
             <remapped_row_failure>{failure}</remapped_row_failure></remapped_rows></gpu>"
        )
    };
    let xml = |gpus: &[String]| {
        format!(
            "<?xml version=\"1.0\" ?><nvidia_smi_log><timestamp>Mon Dec  7 09:30:05 2026</timestamp>\
             <driver_version>550.54.15</driver_version><attached_gpus>{}</attached_gpus>{}</nvidia_smi_log>",
            gpus.len(),
            gpus.concat()
        )
    };
    let pending = xml(&[
        gpu("00000000:07:00.0", "No", "No", 0),
        gpu("00000000:0B:00.0", "Yes", "No", 0),
    ]);
    named(&diagnose_text(&pending), 1, Severity::High, "Reset GPU 1");
    let failed = xml(&[gpu("00000000:07:00.0", "No", "Yes", 0)]);
    named(&diagnose_text(&failed), 0, Severity::Critical, "drain");
    let wrong = xml(&[gpu("00000000:07:00.0", "No", "No", 3)]);
    named(&diagnose_text(&wrong), 0, Severity::Critical, "drain");
}

#[test]
fn a_narrowed_link_is_named_on_an_idle_gpu_and_a_low_idle_generation_is_not() {
    let text = dump(&[
        block("00000000:07:00.0", HEALTHY.0, HEALTHY.1, 16),
        block("00000000:0B:00.0", HEALTHY.0, HEALTHY.1, 8),
    ]);
    let r = diagnose_text(&text);
    let f = r
        .findings
        .iter()
        .find(|f| f.id == "pcie_degraded")
        .expect("the narrow link");
    assert_eq!(f.devices, vec![1]);
    assert_eq!(f.lost_share, None, "a snapshot shows no copy time");
    // Both GPUs sit at generation 1 of 4 at idle: power saving, no finding on GPU 0.
    assert!(r
        .findings
        .iter()
        .all(|f| !f.devices.contains(&0) || f.id == "idle_gpu"));
}
