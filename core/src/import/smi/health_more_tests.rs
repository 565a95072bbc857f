//! Health counters of `-q -x` (XML) dumps, and of the public dumps in the accuracy corpus.

use crate::import::smi::parse;
use crate::import::{detect, ImportOptions, Kind};
use crate::metric::GpuMetric;
use crate::report::{DeviceHealth, RemappedRows, RetiredPages};

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

#[test]
fn the_xml_form_reads_the_same_counters() {
    let xml = "<?xml version=\"1.0\" ?>
<nvidia_smi_log>
  <timestamp>Tue Dec  1 09:30:05 2026</timestamp>
  <gpu id=\"00000000:9E:00.0\">
    <product_name>NVIDIA A100-SXM4-80GB</product_name>
    <pci><pci_gpu_link_info>
      <pcie_gen><max_link_gen>4</max_link_gen><current_link_gen>4</current_link_gen>
        <device_current_link_gen>4</device_current_link_gen>
        <max_device_link_gen>4</max_device_link_gen><max_host_link_gen>5</max_host_link_gen></pcie_gen>
      <link_widths><max_link_width>16x</max_link_width><current_link_width>16x</current_link_width></link_widths>
    </pci_gpu_link_info></pci>
    <ecc_mode><current_ecc>Enabled</current_ecc><pending_ecc>Enabled</pending_ecc></ecc_mode>
    <ecc_errors>
      <volatile>
        <sram_correctable>0</sram_correctable>
        <sram_uncorrectable_parity>0</sram_uncorrectable_parity>
        <sram_uncorrectable_secded>0</sram_uncorrectable_secded>
        <dram_correctable>177</dram_correctable>
        <dram_uncorrectable>0</dram_uncorrectable>
      </volatile>
      <aggregate>
        <dram_correctable>177</dram_correctable>
        <sram_threshold_exceeded>No</sram_threshold_exceeded>
      </aggregate>
    </ecc_errors>
    <retired_pages>
      <multiple_single_bit_retirement><retired_count>2</retired_count><retired_pagelist>N/A</retired_pagelist></multiple_single_bit_retirement>
      <double_bit_retirement><retired_count>0</retired_count></double_bit_retirement>
      <pending_blacklist>Yes</pending_blacklist>
    </retired_pages>
    <remapped_rows>
      <remapped_row_corr>1</remapped_row_corr>
      <remapped_row_unc>0</remapped_row_unc>
      <remapped_row_pending>Yes</remapped_row_pending>
      <remapped_row_failure>No</remapped_row_failure>
    </remapped_rows>
    <temperature>
      <gpu_temp>30 C</gpu_temp>
      <gpu_temp_max_threshold>92 C</gpu_temp_max_threshold>
      <gpu_temp_slow_threshold>89 C</gpu_temp_slow_threshold>
    </temperature>
  </gpu>
</nvidia_smi_log>
";
    let out = read(xml);
    let h = health(&out, 0);
    assert_eq!(h.ecc_enabled, Some(true));
    let r = &h.readings[0];
    assert_eq!(r.ecc_locations["dram"].volatile_corrected, Some(177));
    assert_eq!(r.ecc.volatile_uncorrected, Some(0));
    assert_eq!(
        r.retired_pages,
        Some(RetiredPages {
            single_bit: Some(2),
            double_bit: Some(0),
            pending: Some(true),
        })
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
    let info = &out.recording.devices[0].info;
    assert_eq!(info.temp_shutdown_c, Some(92.0));
    assert_eq!(info.pcie_device_max_gen, Some(4));
}

fn corpus(name: &str) -> String {
    let path = format!("{}/../tests/corpus/real/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).expect("corpus file")
}

/// The public dumps of the accuracy corpus (tests/corpus/cases.json says where each is from):
/// the reader finds the unhealthy GPU and reads no zeros for what the dump does not show.
#[test]
fn the_public_dumps_in_the_corpus_read_their_health() {
    // A whole `-a` dump of four A100s; the second has a pending remap and 353 corrected
    // DRAM errors, the third a remap already applied.
    let out = read(&corpus("a100x4_remap_pending_a.txt"));
    assert_eq!(out.recording.devices.len(), 4);
    let pending: Vec<Option<bool>> = (0..4)
        .map(|d| {
            health(&out, d).readings[0]
                .remapped_rows
                .and_then(|r| r.pending)
        })
        .collect();
    assert_eq!(
        pending,
        vec![Some(false), Some(true), Some(false), Some(false)]
    );
    let r1 = &health(&out, 1).readings[0];
    assert_eq!(r1.ecc.volatile_corrected, Some(353));
    assert_eq!(r1.ecc.volatile_uncorrected, Some(0));
    let info = &out.recording.devices[1].info;
    assert_eq!(info.architecture.as_deref(), Some("Ampere"));
    assert_eq!(
        (info.temp_shutdown_c, info.pcie_device_max_gen),
        (Some(92.0), Some(4))
    );

    // An excerpt cut with `[...]`: one A100, a pending remap.
    let out = read(&corpus("mlengineering_a100_remap_pending_q.txt"));
    let r = &health(&out, 0).readings[0];
    assert_eq!(r.remapped_rows.and_then(|x| x.pending), Some(true));
    assert_eq!(r.ecc_locations["dram"].aggregate_corrected, Some(177));
    assert!(out.notes.iter().any(|n| n.starts_with("2 elided lines")));

    // Only the ECC Errors section: one unnamed GPU with an uncorrected SRAM error.
    let out = read(&corpus("mlengineering_sram_uncorrectable_ecc.txt"));
    assert_eq!(
        health(&out, 0).readings[0].ecc.volatile_uncorrected,
        Some(1)
    );

    // Eight idle RTX 4090s without ECC: the `T.Limit` thresholds (`-7 C`) are not read as
    // temperatures, and N/A counters stay unread.
    let out = read(&corpus("gpud_rtx4090x8_idle_q.txt"));
    assert_eq!(out.recording.devices.len(), 8);
    let info = &out.recording.devices[0].info;
    assert_eq!((info.temp_shutdown_c, info.temp_slowdown_c), (None, None));
    let h = health(&out, 0);
    assert_eq!(h.ecc_enabled, Some(false));
    assert!(h.readings[0].ecc.is_empty());
    assert!(h.unavailable["ecc"].contains("N/A"));
    assert_eq!(
        h.readings[0].remapped_rows.and_then(|r| r.pending),
        Some(false)
    );

    // Two identical cards, the first linked at x4 of its x8 at the full generation: the
    // link is read as samples beside each card's maxima, for the rules to compare.
    let out = read(&corpus("rtx4060ti_x2_narrow_link_a.txt"));
    let link: Vec<(f32, f32, Option<u32>, Option<u32>)> = out
        .recording
        .devices
        .iter()
        .map(|d| {
            let s = &d.series;
            (
                s.column(GpuMetric::PcieGen.index())[0],
                s.column(GpuMetric::PcieWidth.index())[0],
                d.info.pcie_max_gen,
                d.info.pcie_max_width,
            )
        })
        .collect();
    assert_eq!(
        link,
        vec![(4.0, 4.0, Some(4), Some(8)), (4.0, 8.0, Some(4), Some(8))]
    );
}
