//! `nvidia-smi -q -x`: the XML twin of a text dump reads the same, looped documents are a
//! log, a cut last document is noted, and what is not XML of nvidia-smi is refused.

use super::*;
use crate::import::smi::parse;
use crate::import::{detect, import, ImportOptions, Kind};
use crate::metric::{reasons, GpuMetric};
use crate::recording::Recording;

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/import/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).expect("fixture")
}

/// Every column of every device, as text (`NaN` is not equal to itself).
fn columns(rec: &Recording) -> Vec<String> {
    rec.devices
        .iter()
        .flat_map(|d| {
            GpuMetric::ALL
                .iter()
                .map(move |m| format!("{} {:?}", m.name(), d.series.column(m.index())))
        })
        .collect()
}

#[test]
fn the_xml_of_a_dump_reads_as_its_text_does() {
    let xml = fixture("smi_q_x_r470_two_gpus.xml");
    assert_eq!(detect(xml.as_bytes()), Some(Kind::Smi));
    let a = parse(&xml, &ImportOptions::default()).expect("XML parses");
    let b = parse(
        &fixture("smi_q_r470_two_gpus.txt"),
        &ImportOptions::default(),
    )
    .expect("text parses");
    let (ra, rb) = (&a.recording, &b.recording);
    assert_eq!(ra.devices.len(), 2);
    assert_eq!(columns(ra), columns(rb));
    for (da, db) in ra.devices.iter().zip(&rb.devices) {
        assert_eq!(da.info, db.info, "the same static facts");
    }
    assert_eq!(ra.run.start, rb.run.start, "the dump's timestamp");
    assert_eq!(ra.events, rb.events, "the same ECC event");
    assert_eq!(a.notes, b.notes);
    // And what they hold, so that two equally wrong readers cannot pass.
    let col = |d: usize, m: GpuMetric| ra.devices[d].series.column(m.index())[0];
    assert_eq!(col(0, GpuMetric::UtilGpu), 98.0);
    assert_eq!(col(0, GpuMetric::PcieRx), 2500.0, "KB/s read as MB/s");
    assert_eq!(col(0, GpuMetric::Power), 249.61);
    assert_eq!(col(0, GpuMetric::SmClock), 1170.0);
    assert_eq!(col(1, GpuMetric::PcieWidth), 8.0);
    assert_eq!(
        col(0, GpuMetric::ClockReasons),
        reasons::SW_POWER_CAP as f32
    );
    assert_eq!(ra.devices[0].info.max_sm_clock_mhz, Some(1410.0));
    assert!(ra
        .events
        .iter()
        .any(|e| e.kind == "ecc" && e.code == Some(2)));
}

/// A current driver's document (R550 wording), printed twice by `-l 1`.
fn looped(reason: &str, util: u32, second: &str) -> String {
    format!(
        r#"<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">
<nvidia_smi_log>
    <timestamp>Sun Nov 29 23:58:{second} 2026</timestamp>
    <driver_version>550.54.15</driver_version>
    <attached_gpus>1</attached_gpus>
    <gpu id="00000000:18:00.0">
        <product_name>NVIDIA H100 80GB HBM3</product_name>
        <performance_state>P0</performance_state>
        <clocks_event_reasons>
            <clocks_event_reason_gpu_idle>Not Active</clocks_event_reason_gpu_idle>
            <clocks_event_reason_{reason}>Active</clocks_event_reason_{reason}>
        </clocks_event_reasons>
        <clocks_event_reasons_counters>
            <clocks_event_reasons_counters_sw_power_cap>5150 us</clocks_event_reasons_counters_sw_power_cap>
        </clocks_event_reasons_counters>
        <utilization><gpu_util>{util} %</gpu_util><memory_util>40 %</memory_util></utilization>
        <temperature><gpu_temp>81 C</gpu_temp></temperature>
        <gpu_power_readings>
            <power_draw>N/A</power_draw>
            <average_power_draw>402.17 W</average_power_draw>
            <instant_power_draw>410.03 W</instant_power_draw>
            <current_power_limit>700.00 W</current_power_limit>
        </gpu_power_readings>
        <clocks><sm_clock>1095 MHz</sm_clock></clocks>
    </gpu>
</nvidia_smi_log>
"#
    )
}

#[test]
fn a_looped_xml_dump_is_a_log_of_one_sample_per_document() {
    let text = looped("sw_thermal_slowdown", 55, "41") + &looped("sw_power_cap", 95, "43");
    let out = import(Kind::Smi, text.as_bytes(), &ImportOptions::default()).expect("parses");
    let rec = &out.recording;
    assert_eq!(out.samples, 2);
    let col = |m: GpuMetric| rec.devices[0].series.column(m.index());
    assert_eq!(col(GpuMetric::UtilGpu), vec![55.0, 95.0]);
    assert_eq!(
        col(GpuMetric::ClockReasons),
        vec![reasons::SW_THERMAL as f32, reasons::SW_POWER_CAP as f32],
        "reasons of the current wording; the counters are another section"
    );
    assert_eq!(
        col(GpuMetric::Power),
        vec![402.17, 402.17],
        "the first power printed, as in the text dump"
    );
    assert_eq!(rec.devices[0].series.times(), vec![0.0, 2.0]);
    assert_eq!(rec.devices[0].info.power_limit_w, Some(700.0));
}

#[test]
fn a_document_cut_mid_write_keeps_those_before_it() {
    let whole = looped("sw_power_cap", 95, "41");
    let cut = &whole[..whole.len() / 2];
    let text = whole.clone() + cut;
    let out = parse(&text, &ImportOptions::default()).expect("the first document is read");
    assert_eq!(out.samples, 1);
    assert!(
        out.notes.iter().any(|n| n.contains("document 2")),
        "{:?}",
        out.notes
    );
    let err = parse(cut, &ImportOptions::default()).expect_err("nothing whole to read");
    assert!(err.to_string().contains("not well-formed XML"), "{err}");
}

#[test]
fn only_xml_of_nvidia_smi_is_taken_for_a_dump() {
    assert!(is_xml("  <?xml version=\"1.0\"?>\n<nvidia_smi_log>"));
    assert!(!is_xml("<?xml version=\"1.0\"?>\n<svg></svg>"));
    assert!(!is_xml("gpu,util\n0,<nvidia_smi_log>"));
    assert_eq!(key("clocks_event_reason_sw_power_cap"), "sw power cap");
    assert_eq!(key("fb_memory_usage"), "fb memory usage");
    assert_eq!(key("gpu_util"), "gpu");
}
