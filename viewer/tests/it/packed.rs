//! The compact series form read by the page's own reader: the same samples core reads, a
//! long column across the reader's window, and damaged runs refused with where they are.

use gpuwhy::report::Report;
use gpuwhy_viewer::View;

use crate::fixtures::one_gpu;

/// What core reads from the same bytes, columns as bit patterns (`NaN` equal to itself).
fn core_reads(json: &str) -> Vec<(String, Vec<u32>)> {
    let r = Report::from_slice(json.as_bytes(), std::path::Path::new("r.json")).expect("core");
    let s = &r.series[0].data;
    s.metrics
        .iter()
        .map(|(k, c)| (k.clone(), c.0.iter().map(|x| x.to_bits()).collect()))
        .collect()
}

#[test]
fn a_long_packed_stream_reads_as_core_reads_it() {
    // 200,000 samples: the packed columns run far past the reader's 64 KiB window.
    let n = 200_000;
    let util = (0..n)
        .map(|i| match i % 13 {
            0 => f32::NAN,
            k => (k * 7 + i % 101) as f32,
        })
        .collect();
    let mut r = one_gpu(util, vec![61.0; n]);
    // A column no chart draws, skipped: differences of both signs across every window edge.
    let nvlink = (0..n).map(|i| ((i * 7919) % 1000) as f32).collect();
    r.series[0]
        .data
        .metrics
        .insert("nvlink_rx".into(), gpuwhy::report::Column(nvlink));
    // 0.1 ms ticks with jitter, as the sampler writes them.
    r.series[0].data.t = (0..n).map(|i| (i * 1000 + i % 3) as f64 / 1e4).collect();
    let json = r.to_json();
    let doc: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert!(doc["series"][0]["times"]["runs"].is_array(), "compact form");
    let got = View::load(json.as_bytes(), "r.json").expect("opens").report;
    let s = &got.series[0].data;
    assert_eq!(s.t, r.series[0].data.t, "times exactly");
    let got: Vec<(String, Vec<u32>)> = s
        .metrics
        .iter()
        .map(|(k, c)| (k.clone(), c.0.iter().map(|x| x.to_bits()).collect()))
        .collect();
    assert!(
        got.iter().all(|(k, _)| k != "nvlink_rx"),
        "not drawn, not read"
    );
    let want: Vec<_> = core_reads(&json)
        .into_iter()
        .filter(|(k, _)| k != "nvlink_rx")
        .collect();
    assert_eq!(got, want);
}

#[test]
fn damaged_packed_columns_are_refused_with_where() {
    let doc = |series: &str| format!(r#"{{"schema":"gpuwhy.report/1","series":[{series}]}}"#);
    for (series, says) in [
        (r#"{"times":{"div":10,"runs":[0,[1,2,3]]}}"#, "expected `]`"),
        (r#"{"times":{"div":10,"runs":[0,null]}}"#, "cannot be null"),
        (
            r#"{"columns":{"util_gpu":{"div":1,"runs":[1,"x"]}}}"#,
            "expected a whole number",
        ),
        (r#"{"columns":{"util_gpu":{"runs":[1]}}}"#, "positive `div`"),
        (
            r#"{"columns":{"util_gpu":{"div":1,"runs":[[0,99999999999]]}}}"#,
            "longer than any",
        ),
    ] {
        let e = View::load(doc(series).as_bytes(), "r.json")
            .err()
            .expect("refused");
        assert!(e.message.contains(says), "{series}: {}", e.message);
        assert!(
            e.message.contains("line 1 column"),
            "{series}: {}",
            e.message
        );
    }
    let cut = doc(r#"{"columns":{"util_gpu":{"div":1,"runs":[1,2"#);
    assert!(View::load(&cut.as_bytes()[..cut.len() - 2], "r.json").is_err());
    // `div` after the runs is read as well.
    let late = doc(
        r#"{"times":{"runs":[0,[5,2]],"div":10},"columns":{"util_gpu":{"runs":[20,[-1,2]],"div":2}}}"#,
    );
    let r = View::load(late.as_bytes(), "r.json").expect("opens").report;
    assert_eq!(r.series[0].data.t, vec![0.0, 0.5, 1.0]);
    assert_eq!(r.series[0].data.metrics["util_gpu"].0, vec![10.0, 9.5, 9.0]);
}
