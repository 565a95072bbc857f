use super::*;
use crate::metric::GpuMetric;
use crate::report::packed::plain;
use crate::report::series::SeriesData;
use serde_json::{json, Value};

/// `n` buckets of 300 rows at 100 ms, a week apart at most, with values off the precision
/// grid, a missing bucket in each column and banded utilization.
fn buckets(n: usize) -> CoarseData {
    let t_start: Vec<f64> = (0..n).map(|i| 3600.0 + i as f64 * 30.0).collect();
    let t_end = t_start.iter().map(|t| t + 29.9).collect();
    let metrics = [GpuMetric::UtilGpu, GpuMetric::Power, GpuMetric::PcieRx]
        .iter()
        .map(|m| {
            let v = |i: usize, k: f32| match i % 11 {
                5 => f32::NAN,
                _ => (i as f32 * 0.37 + k).sin().abs() * 300.0 + 0.123_4,
            };
            let col = CoarseColumn {
                min: Column((0..n).map(|i| v(i, 0.0)).collect()),
                mean: Column((0..n).map(|i| v(i, 1.0)).collect()),
                max: Column((0..n).map(|i| v(i, 2.0)).collect()),
                count: (0..n).map(|i| if i % 11 == 5 { 0 } else { 300 }).collect(),
                bands: match m {
                    GpuMetric::UtilGpu => (0..7).map(|b| vec![b * 40; n]).collect(),
                    _ => Vec::new(),
                },
            };
            (m.name().to_string(), col)
        })
        .collect();
    CoarseData {
        rows_per_bucket: 300,
        t_start,
        t_end,
        metrics,
        rows: vec![300; n],
        band_edges: vec![5.0, 25.0, 50.0, 75.0, 90.0, 95.0],
        reasons: None,
    }
}

fn stream(c: CoarseData) -> SeriesData {
    SeriesData {
        coarse: Some(c),
        ..SeriesData::default()
    }
}

fn close(want: &Column, got: &Column, half_step: f64, what: &str) {
    assert_eq!(want.0.len(), got.0.len(), "{what}");
    for (w, g) in want.0.iter().zip(&got.0) {
        if w.is_nan() {
            assert!(g.is_nan(), "{what}: missing stays missing");
            continue;
        }
        let err = (f64::from(*w) - f64::from(*g)).abs();
        assert!(
            err <= half_step + f64::from(w.abs()) * 1e-7,
            "{what}: {w} read back as {g}"
        );
    }
}

#[test]
fn buckets_survive_the_compact_form_at_their_stated_precision() {
    let data = stream(buckets(200));
    let doc = serde_json::to_value(&data).expect("serialises");
    let c = &doc["coarse"];
    assert!(c["t_start"]["runs"].is_array(), "bucket times are packed");
    assert!(c["rows"]["runs"].is_array(), "rows are packed");
    let util = &c["metrics"]["util_gpu"];
    assert_eq!(util["min"]["div"], json!(1));
    assert_eq!(util["mean"]["div"], json!(MEAN_STEPS));
    assert!(util["count"]["runs"].is_array() && util["bands"][0]["runs"].is_array());
    let back: SeriesData = serde_json::from_value(doc).expect("parses");
    let (want, got) = (
        data.coarse.as_ref().expect("buckets"),
        back.coarse.as_ref().expect("buckets"),
    );
    assert_eq!(got.t_start, want.t_start, "bucket times are exact");
    assert_eq!(got.t_end, want.t_end);
    assert_eq!(got.rows, want.rows, "counts are exact");
    assert_eq!(got.band_edges, want.band_edges);
    assert_eq!(got.rows_per_bucket, want.rows_per_bucket);
    for (name, w) in &want.metrics {
        let g = &got.metrics[name];
        let step = 1.0 / f64::from(per_unit(name).expect("a GPU metric"));
        close(&w.min, &g.min, step / 2.0, name);
        close(&w.max, &g.max, step / 2.0, name);
        close(&w.mean, &g.mean, step / 2.0 / f64::from(MEAN_STEPS), name);
        assert_eq!(g.count, w.count, "{name}: counts are exact");
        assert_eq!(g.bands, w.bands, "{name}: bands are exact");
    }
}

#[test]
fn the_plain_form_of_buckets_is_the_one_older_readers_know() {
    let data = stream(buckets(20));
    let doc = plain(|| serde_json::to_value(&data)).expect("serialises");
    let c = &doc["coarse"];
    assert!(c["t_start"].is_array() && c["rows"].is_array());
    let util = &c["metrics"]["util_gpu"];
    assert!(util["min"].is_array() && util["mean"].is_array() && util["count"].is_array());
    assert!(util["bands"][0].is_array());
    let back: SeriesData = serde_json::from_value(doc.clone()).expect("parses");
    // Compared as text: `NaN` is not equal to itself.
    let again = plain(|| serde_json::to_value(&back)).expect("serialises");
    assert_eq!(again, doc, "the plain form is exact");
}

#[test]
fn constant_buckets_cost_a_few_bytes_whatever_their_number() {
    let bands_text = |n: usize| {
        let mut c = buckets(n);
        for col in c.metrics.values_mut() {
            col.count = vec![300; n];
            col.bands = col.bands.iter().map(|b| vec![b[0]; n]).collect();
        }
        let packed = serde_json::to_value(stream(c.clone())).expect("serialises");
        let plain_doc = plain(|| serde_json::to_value(stream(c))).expect("serialises");
        let text = |v: &Value| serde_json::to_string(v).expect("json").len();
        let bands = |v: &Value| text(&v["coarse"]["metrics"]["util_gpu"]["bands"]);
        assert!(text(&packed) * 2 < text(&plain_doc), "{n} buckets");
        bands(&packed)
    };
    // Seven bands, each one run: only the run lengths' digits grow.
    assert!(bands_text(4_000) <= bands_text(40) + 7 * 2 * 2);
}

#[test]
fn damaged_packed_counts_are_refused() {
    for runs in [json!([-1]), json!([null]), json!([[4_294_967_296i64, 1]])] {
        let doc = json!({"coarse": {"rows_per_bucket": 1, "t_start": [0.0], "t_end": [0.0],
            "metrics": {}, "rows": {"div": 1, "runs": runs}}});
        let err = serde_json::from_value::<SeriesData>(doc).expect_err("refused");
        assert!(err.to_string().contains("damaged"), "{err}");
    }
    let doc = json!({"coarse": {"rows_per_bucket": 1, "t_start": [0.0], "t_end": [0.0],
        "metrics": {}, "rows": {"div": 10, "runs": [1]}}});
    let err = serde_json::from_value::<SeriesData>(doc).expect_err("refused");
    assert!(err.to_string().contains("div"), "{err}");
}
