use super::*;
use crate::report::HostData;
use serde_json::{json, Value};

/// A stream of `n` samples at 100 ms with every GPU metric, values spread over each
/// metric's range and off its precision grid, and a few missing.
fn gpu_stream(n: usize) -> SeriesData {
    let t = (0..n).map(|i| i as f64 / 10.0).collect();
    let metrics = GpuMetric::ALL
        .iter()
        .map(|m| {
            let col = (0..n)
                .map(|i| match i % 7 {
                    3 => f32::NAN,
                    _ => (i as f32 * 13.37 + m.index() as f32).sin().abs() * 4000.0 + 0.123_456,
                })
                .collect();
            (m.name().to_string(), Column(col))
        })
        .collect();
    SeriesData {
        t,
        metrics,
        coarse: None,
    }
}

fn round_trip(data: &SeriesData) -> (Value, SeriesData) {
    let doc = serde_json::to_value(data).expect("serialises");
    let back = serde_json::from_value(doc.clone()).expect("parses");
    (doc, back)
}

#[test]
fn every_gpu_metric_survives_at_its_stated_precision() {
    let data = gpu_stream(500);
    let (doc, back) = round_trip(&data);
    assert!(
        doc.get("t").is_none() && doc.get("metrics").is_none(),
        "compact form only"
    );
    assert_eq!(back.t, data.t, "times are exact");
    for m in GpuMetric::ALL {
        let (want, got) = (&data.metrics[m.name()].0, &back.metrics[m.name()].0);
        assert_eq!(want.len(), got.len(), "{}", m.name());
        let half_step = 0.5 / f64::from(m.per_unit());
        for (w, g) in want.iter().zip(got) {
            if w.is_nan() {
                assert!(g.is_nan(), "{}: missing stays missing", m.name());
                continue;
            }
            // Within half a step of the precision, plus the f32's own rounding.
            let err = (f64::from(*w) - f64::from(*g)).abs();
            assert!(
                err <= half_step + f64::from(w.abs()) * 1e-7,
                "{}: {w} read back as {g} (precision 1/{})",
                m.name(),
                m.per_unit()
            );
        }
    }
}

#[test]
fn values_on_the_precision_grid_are_kept_exactly() {
    let mut data = SeriesData {
        t: vec![0.0, 0.1002, 0.2, 0.3001],
        ..SeriesData::default()
    };
    let cols = [
        ("util_gpu", vec![97.0, 0.0, 100.0, 3.0]),
        ("power", vec![312.457, 70.001, 699.999, 0.0]),
        ("sm_clock", vec![1980.0, 1755.0, 345.0, 1980.0]),
        ("clock_reasons", vec![0.0, 4.0, 1024.0, 1.0]),
        ("pcie_rx", vec![1.024, 0.001_024, 15_753.216, 0.0]),
        ("cpu_total", vec![12.5, 0.01, 99.99, 100.0]),
        ("disk_read", vec![4_096.0, 0.0, 1.5e9, 7.0]),
    ];
    for (name, vals) in cols {
        data.metrics.insert(name.into(), Column(vals));
    }
    let (_, back) = round_trip(&data);
    assert_eq!(back, data);
}

#[test]
fn runs_fold_constant_and_stepping_columns() {
    let n = 10_000;
    let data = SeriesData {
        t: (0..n).map(|i| i as f64 / 10.0).collect(),
        metrics: [
            ("pcie_gen".to_string(), Column(vec![4.0; n])),
            ("gpm_tensor".to_string(), Column(vec![f32::NAN; n])),
        ]
        .into(),
        coarse: None,
    };
    let (doc, back) = round_trip(&data);
    assert_eq!(
        doc["times"],
        json!({"div": 10_000, "runs": [0, [1000, n - 1]]})
    );
    assert_eq!(doc["columns"]["pcie_gen"]["runs"], json!([4, [0, n - 1]]));
    assert_eq!(doc["columns"]["gpm_tensor"]["runs"], json!([[null, n]]));
    assert_eq!(back.t.len(), n);
    assert!(back.metrics["gpm_tensor"].0.iter().all(|v| v.is_nan()));
    assert_eq!(back.metrics["pcie_gen"].0, vec![4.0; n]);
}

#[test]
fn short_runs_stay_single_values_and_nulls_mix_in() {
    let data = SeriesData {
        t: vec![0.0, 1.0, 2.0, 3.0, 4.0],
        metrics: [(
            "util_gpu".to_string(),
            Column(vec![5.0, 5.0, f32::NAN, 7.0, -1.0]),
        )]
        .into(),
        coarse: None,
    };
    let (doc, back) = round_trip(&data);
    assert_eq!(
        doc["columns"]["util_gpu"]["runs"],
        json!([5, 0, null, 2, -8])
    );
    assert_eq!(back.metrics["util_gpu"].0[..2], [5.0, 5.0]);
    assert!(back.metrics["util_gpu"].0[2].is_nan());
    assert_eq!(back.metrics["util_gpu"].0[3..], [7.0, -1.0]);
}

#[test]
fn an_empty_stream_round_trips() {
    let empty = SeriesData::default();
    let (doc, back) = round_trip(&empty);
    assert_eq!(
        doc,
        json!({"times": {"div": 10_000, "runs": []}, "columns": {}})
    );
    assert_eq!(back, empty);
    let mut no_rows = SeriesData::default();
    no_rows
        .metrics
        .insert("util_gpu".into(), Column(Vec::new()));
    assert_eq!(round_trip(&no_rows).1, no_rows);
}

#[test]
fn off_grid_times_and_unknown_columns_keep_full_precision() {
    let data = SeriesData {
        t: vec![0.0, 0.123_456_789, 1.0 / 3.0],
        metrics: [("my_counter".to_string(), Column(vec![0.1, 1e30, f32::NAN]))].into(),
        coarse: None,
    };
    let (doc, back) = round_trip(&data);
    assert!(doc["times"].is_array(), "{}", doc["times"]);
    assert!(doc["columns"]["my_counter"].is_array());
    assert_eq!(back.t, data.t);
    assert_eq!(back.metrics["my_counter"].0[..2], [0.1, 1e30]);
    // A value too large for its precision falls back to the plain form, not to a wrong one.
    let huge = SeriesData {
        t: vec![0.0],
        metrics: [("disk_read".to_string(), Column(vec![f32::MAX]))].into(),
        coarse: None,
    };
    let (doc, back) = round_trip(&huge);
    assert!(doc["columns"]["disk_read"].is_array());
    assert_eq!(back, huge);
}

#[test]
fn the_plain_form_is_written_on_request_and_still_read() {
    let data = gpu_stream(20);
    let doc = plain(|| serde_json::to_value(&data).expect("serialises"));
    assert!(doc["t"].is_array() && doc["metrics"]["util_gpu"].is_array());
    assert!(
        !PLAIN.with(Cell::get),
        "the plain form is only for that call"
    );
    let back: SeriesData = serde_json::from_value(doc).expect("parses");
    assert_eq!(back.t, data.t);
    assert_eq!(back.metrics.len(), GpuMetric::COUNT);
    // A report written before the compact form: a host stream with units and facts.
    let old = json!({"t": [0.0, 0.5], "metrics": {"cpu_total": [12.5, null]},
                     "units": {"cpu_total": "%"}, "facts": {"logical_cpus": 4}});
    let host: HostData = serde_json::from_value(old).expect("old host");
    assert_eq!(host.data.t, vec![0.0, 0.5]);
    assert_eq!(host.data.metrics["cpu_total"].0[0], 12.5);
    assert_eq!(host.facts.logical_cpus, 4);
}

#[test]
fn damaged_packed_columns_are_refused_with_a_reason() {
    let cases = [
        (
            json!({"times": {"div": 10_000, "runs": [[1, 1u64 << 40]]}}),
            "more than",
        ),
        (
            json!({"columns": {"util_gpu": {"runs": [1]}}}),
            "positive `div`",
        ),
        (
            json!({"columns": {"util_gpu": {"div": 0, "runs": [1]}}}),
            "positive `div`",
        ),
        (
            json!({"columns": {"util_gpu": {"div": 1, "runs": [[1]]}}}),
            "invalid length",
        ),
        (
            json!({"columns": {"util_gpu": {"div": 1, "runs": ["x"]}}}),
            "an integer, null",
        ),
        (
            json!({"times": {"div": 1, "runs": [0, null]}}),
            "cannot be null",
        ),
    ];
    for (doc, want) in cases {
        let err = serde_json::from_value::<SeriesData>(doc.clone()).expect_err("refused");
        assert!(err.to_string().contains(want), "{doc}: {err}");
    }
}

#[test]
fn host_columns_have_a_precision_by_unit() {
    // Every host column the recorder writes (recording::HOST_COLUMNS, named here: the
    // report model does not depend on the recording) has one.
    for name in ["proc_count", "disk_read", "disk_write", "mem_available"] {
        assert_eq!(per_unit(name), Some(1), "{name}");
    }
    for name in ["cpu_iowait", "psi_cpu_some", "psi_io_some", "psi_io_full"] {
        assert_eq!(per_unit(name), Some(100), "{name}");
    }
    for name in ["psi_mem_some", "psi_mem_full"] {
        assert_eq!(per_unit(name), Some(100), "{name}");
    }
    assert_eq!(per_unit("cpu_total"), Some(100));
    assert_eq!(per_unit("proc_cpu"), Some(100));
    assert_eq!(per_unit("proc_count"), Some(1));
    assert_eq!(per_unit("mem_available"), Some(1));
    assert_eq!(per_unit("cpu17"), Some(100));
    assert_eq!(per_unit("cpu"), None);
    assert_eq!(per_unit("power"), Some(1_000));
    assert_eq!(per_unit("unknown"), None);
}
