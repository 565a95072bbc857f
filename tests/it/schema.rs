//! The report a recording turns into is valid against `docs/report.schema.json`, the schema
//! is strict about types, and `docs/report-format.md` states the numbers the code has.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

use gpuwhy::analysis::diagnose;
use gpuwhy::metric::GpuMetric;
use gpuwhy::recording::{
    HostRecording, Recording, SeriesBuf, COARSE_BUCKETS_DEFAULT, FULL_ROWS_DEFAULT, MAX_EVENTS,
};
use gpuwhy::report::{Capability, DeviceInfo, Event, HostFacts, NvmlInfo, Report, RunInfo};
use gpuwhy_tests::{record, scenario, Run};
use serde_json::{json, Value};

const SCHEMA: &str = include_str!("../../docs/report.schema.json");
const FORMAT_DOC: &str = include_str!("../../docs/report-format.md");

/// Rows pushed on GPU 0: past the full-resolution window, so the report has a `coarse` part.
const LONG_ROWS: usize = FULL_ROWS_DEFAULT + 2_500;

pub(crate) fn schema() -> Value {
    serde_json::from_str(SCHEMA).expect("docs/report.schema.json is valid JSON")
}

pub(crate) fn validator() -> jsonschema::Validator {
    jsonschema::draft202012::new(&schema())
        .expect("docs/report.schema.json is a valid draft 2020-12 schema")
}

/// Every way `doc` breaks the schema, one line each.
pub(crate) fn errors(v: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    v.iter_errors(doc)
        .map(|e| format!("at {}: {e}", e.instance_path()))
        .collect()
}

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
        source: "nvml".into(),
        complete: true,
        ended_by: Some("command exited".into()),
        interval_s: 0.1,
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
        power_limit_w: Some(400.0),
        max_sm_clock_mhz: Some(1_410.0),
        max_mem_clock_mhz: Some(1_593.0),
        max_graphics_clock_mhz: Some(1_410.0),
        pcie_max_gen: Some(4),
        pcie_max_width: Some(16),
        temp_slowdown_c: Some(87.0),
        nvlink_links: Some(0),
        gpm: false,
        capabilities: capabilities(&off),
        lost_at_s: None,
    });
    let mut off1 = off.clone();
    off1.push((M::PcieRx, "NOT_SUPPORTED from nvmlDeviceGetPcieThroughput"));
    off1.push((M::PcieTx, "NOT_SUPPORTED from nvmlDeviceGetPcieThroughput"));
    let d1 = rec.add_device(DeviceInfo {
        index: 1,
        name: Some("NVIDIA A100-SXM4-80GB".into()),
        memory_total_mib: Some(81_920.0),
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

#[test]
fn a_diagnosed_report_is_valid_against_the_published_schema() {
    let (report, doc) = report();
    // The test must cover the parts of the format that are easy to get wrong.
    assert!(
        report.series[0].data.coarse.is_some(),
        "GPU 0 ran past the full-resolution window"
    );
    assert!(report.series[1].data.coarse.is_none());
    assert!(
        report.findings.iter().any(|f| f.id == "gpu_fault"),
        "findings: {:?}",
        report.findings
    );
    assert!(report
        .findings
        .iter()
        .any(|f| f.evidence.iter().any(|e| e.time_range.is_some())));
    assert_eq!(
        doc["series"][0]["metrics"]["temp"][1],
        Value::Null,
        "a value not read is null, not 0"
    );
    assert_eq!(doc["series"][0]["metrics"]["gpm_sm_util"][0], Value::Null);
    assert_eq!(doc["series"][0]["coarse"]["rows_per_bucket"], json!(1));
    assert!(doc["series"][0]["coarse"]["metrics"]["util_gpu"]["mean"].is_array());

    let errs = errors(&validator(), doc);
    assert!(
        errs.is_empty(),
        "the report breaks docs/report.schema.json:\n{}",
        errs.join("\n")
    );
}

/// What a broken document breaks, and how to break it.
type Breakage = (&'static str, fn(&mut Value));

#[test]
fn reports_recorded_through_the_simulator_are_valid() {
    let v = validator();
    let root = schema();
    for name in ["gpu_lost", "straggler_8gpu"] {
        let run = Run {
            duration_s: Some(20.0),
            speed: 20.0,
            host: true,
            ..Run::default()
        };
        let report = record(scenario(name).expect("bundled scenario"), &run).expect("records");
        let doc: Value = serde_json::from_str(&report.to_json()).expect("JSON");
        let errs = errors(&v, &doc);
        assert!(
            errs.is_empty(),
            "the {name} report breaks docs/report.schema.json:\n{}",
            errs.join("\n")
        );
        let mut missing = Vec::new();
        undocumented(&root, &root, &doc, "", &mut missing);
        assert!(
            missing.is_empty(),
            "{name}: fields written but not in docs/report.schema.json: {missing:?}"
        );
    }
}

#[test]
fn the_schema_rejects_wrong_types() {
    let v = validator();
    let good = &report().1;
    let broken: [Breakage; 9] = [
        ("findings is a string", |d| d["findings"] = json!("x")),
        ("severity outside the enum", |d| {
            d["findings"][0]["severity"] = json!("huge")
        }),
        ("action cost outside the enum", |d| {
            d["findings"][0]["actions"][0]["cost"] = json!("free")
        }),
        ("evidence without agrees", |d| {
            d["findings"][0]["evidence"][0]
                .as_object_mut()
                .expect("object")
                .remove("agrees");
        }),
        ("a sample that is text", |d| {
            d["series"][0]["metrics"]["util_gpu"][0] = json!("97")
        }),
        ("a negative device index", |d| {
            d["devices"][0]["index"] = json!(-1)
        }),
        ("capability without available", |d| {
            d["devices"][0]["capabilities"]["power"] = json!({ "reason": "x" })
        }),
        ("another major version", |d| {
            d["schema"] = json!("gpuwhy.report/2")
        }),
        ("no schema", |d| {
            d.as_object_mut().expect("object").remove("schema");
        }),
    ];
    for (what, breaks) in broken {
        let mut doc = good.clone();
        breaks(&mut doc);
        assert!(
            !v.is_valid(&doc),
            "the schema accepted a report with {what}"
        );
    }
}

#[test]
fn the_schema_accepts_unknown_fields_and_minor_versions() {
    let v = validator();
    let mut doc = report().1.clone();
    doc["schema"] = json!("gpuwhy.report/1.3");
    doc["added_in_1_3"] = json!({ "anything": [1, 2] });
    doc["devices"][0]["new_fact"] = json!("x");
    doc["findings"][0]["new_score"] = json!(0.5);
    let errs = errors(&v, &doc);
    assert!(
        errs.is_empty(),
        "forward compatibility broken:\n{}",
        errs.join("\n")
    );
    // And gpuwhy itself reads such a document.
    let back = Report::from_slice(doc.to_string().as_bytes(), Path::new("future.json"))
        .expect("a 1.x report is read");
    assert_eq!(back.devices.len(), 2);
}

/// Resolves a local `$ref` (`#/$defs/name`) and `anyOf` with `null` to the object schema.
fn resolve<'a>(root: &'a Value, mut node: &'a Value) -> &'a Value {
    loop {
        if let Some(r) = node.get("$ref").and_then(Value::as_str) {
            let name = r
                .strip_prefix("#/$defs/")
                .expect("only local $defs references");
            node = &root["$defs"][name];
        } else if let Some(alts) = node.get("anyOf").and_then(Value::as_array) {
            node = alts
                .iter()
                .find(|a| a.get("type") != Some(&json!("null")))
                .expect("a non-null alternative");
        } else {
            return node;
        }
    }
}

/// Every object key the writer emits is described by the schema (unknown keys are allowed by
/// the schema, so validation alone would not notice a field the schema forgot).
pub(crate) fn undocumented(
    root: &Value,
    schema: &Value,
    doc: &Value,
    path: &str,
    out: &mut Vec<String>,
) {
    let schema = resolve(root, schema);
    match doc {
        Value::Object(map) => {
            let props = schema.get("properties").and_then(Value::as_object);
            let extra = schema.get("additionalProperties").filter(|a| a.is_object());
            for (k, v) in map {
                match (props.and_then(|p| p.get(k)), extra) {
                    (Some(s), _) | (None, Some(s)) => {
                        undocumented(root, s, v, &format!("{path}/{k}"), out)
                    }
                    (None, None) => out.push(format!("{path}/{k}")),
                }
            }
        }
        Value::Array(items) => {
            if let Some(s) = schema.get("items") {
                for (i, v) in items.iter().enumerate().take(3) {
                    undocumented(root, s, v, &format!("{path}/{i}"), out);
                }
            }
        }
        _ => {}
    }
}

#[test]
fn the_schema_describes_every_field_gpuwhy_writes() {
    let root = schema();
    let mut missing = Vec::new();
    undocumented(&root, &root, &report().1, "", &mut missing);
    assert!(
        missing.is_empty(),
        "fields written but not in docs/report.schema.json: {missing:?}"
    );
}

#[test]
fn the_format_doc_example_is_a_valid_report() {
    let start = FORMAT_DOC
        .find("```json\n")
        .expect("docs/report-format.md has a JSON example")
        + "```json\n".len();
    let len = FORMAT_DOC[start..].find("```").expect("the example ends");
    let example = &FORMAT_DOC[start..start + len];
    let doc: Value =
        serde_json::from_str(example).expect("the example in docs/report-format.md is JSON");
    let errs = errors(&validator(), &doc);
    assert!(
        errs.is_empty(),
        "the example in docs/report-format.md breaks the schema:\n{}",
        errs.join("\n")
    );
    let report = Report::from_slice(example.as_bytes(), Path::new("example.json"))
        .expect("gpuwhy reads the example");
    assert_eq!(report.verdict.id, "data_starvation");
}

#[test]
fn the_format_doc_lists_every_metric_with_its_unit() {
    for m in GpuMetric::ALL {
        let row = format!("| `{}` | {} |", m.name(), m.unit());
        assert!(
            FORMAT_DOC.contains(&row),
            "docs/report-format.md has no row starting {row}"
        );
    }
}

#[test]
fn the_format_doc_states_the_memory_bound_the_code_computes() {
    // One stream of 24 GPU columns with the default capacities.
    let per_gpu = SeriesBuf::new(GpuMetric::COUNT).worst_case_bytes();
    let mut rec = Recording::new(RunInfo::default());
    rec.add_device(DeviceInfo::default());
    let one = rec.worst_case_bytes();
    for i in 1..8 {
        rec.add_device(DeviceInfo {
            index: i,
            ..Default::default()
        });
    }
    let eight = rec.worst_case_bytes();
    assert_eq!(one, per_gpu + MAX_EVENTS * 256);
    assert_eq!(eight, 8 * per_gpu + MAX_EVENTS * 256);
    // Numbers as the doc writes them: 5,382,976.
    let grouped = |n: usize| {
        let s = n.to_string();
        let mut groups = Vec::new();
        let mut end = s.len();
        while end > 3 {
            groups.push(&s[end - 3..end]);
            end -= 3;
        }
        groups.push(&s[..end]);
        groups.reverse();
        groups.join(",")
    };
    for (what, n) in [
        ("per GPU stream", per_gpu),
        ("1 GPU", one),
        ("8 GPUs", eight),
    ] {
        assert!(
            FORMAT_DOC.contains(&grouped(n)),
            "docs/report-format.md does not state {what} = {} bytes",
            grouped(n)
        );
    }
    for (name, n) in [
        ("FULL_ROWS_DEFAULT", FULL_ROWS_DEFAULT),
        ("COARSE_BUCKETS_DEFAULT", COARSE_BUCKETS_DEFAULT),
        ("MAX_EVENTS", MAX_EVENTS),
    ] {
        assert!(
            FORMAT_DOC.contains(&grouped(n)),
            "docs/report-format.md does not state {name} = {}",
            grouped(n)
        );
    }
}
