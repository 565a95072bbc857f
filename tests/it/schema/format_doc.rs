//! `docs/report-format.md` states what the code does: its example is a valid report, it
//! lists every metric with its unit, and it states the memory bound the code computes.

use std::path::Path;

use gpuwhy::metric::GpuMetric;
use gpuwhy::recording::{
    Recording, COARSE_BUCKETS_DEFAULT, FULL_ROWS_DEFAULT, MAX_EVENTS, WINDOW_NOTES_BOUND_BYTES,
};
use gpuwhy::report::{DeviceInfo, Report, RunInfo};
use serde_json::Value;

use super::{errors, validator};

const FORMAT_DOC: &str = include_str!("../../../docs/report-format.md");

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
    // One stream of 24 GPU columns with the default capacities (its utilization-like columns
    // count per band, which a plain `SeriesBuf::new` does not).
    let mut rec = Recording::new(RunInfo::default());
    rec.add_device(DeviceInfo::default());
    let per_gpu = rec.devices[0].series.worst_case_bytes();
    let one = rec.worst_case_bytes();
    for i in 1..8 {
        rec.add_device(DeviceInfo {
            index: i,
            ..Default::default()
        });
    }
    let eight = rec.worst_case_bytes();
    assert_eq!(one, per_gpu + MAX_EVENTS * 256 + WINDOW_NOTES_BOUND_BYTES);
    assert_eq!(
        eight,
        8 * per_gpu + MAX_EVENTS * 256 + WINDOW_NOTES_BOUND_BYTES
    );
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
