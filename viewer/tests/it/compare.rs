//! Two reports side by side: the page's comparison says what `gpuwhy compare` says, and its
//! charts draw both runs.

use std::collections::BTreeMap;

use gpuwhy::report::{Column, Report, StepsData, Verdict};
use gpuwhy_viewer::chart::compare::{histograms_svg, utilization_svg};
use gpuwhy_viewer::compare::html::{section, section_html};
use gpuwhy_viewer::compare::Diff;
use gpuwhy_viewer::{Theme, View};

use crate::fixtures::{every_text, one_gpu};

/// A run of `n` steps whose data phase takes `data` seconds of each (the rest computes for
/// 0.55 s), with utilization near zero while it waits; `finding` is its top finding.
fn run(n: usize, data: f32, finding: Option<(&str, f64)>) -> Report {
    let step = data + 0.55;
    let rows = (n as f32 * step / 0.1) as usize;
    let util = (0..rows)
        .map(|i| {
            let t = (i as f32 * 0.1) % step;
            // A wobble so that the rank test has no ties to speak of.
            (if t < data { 3.0 } else { 97.0 }) + (i % 5) as f32 * 0.3
        })
        .collect();
    let mut r = one_gpu(util, vec![60.0; rows]);
    let power = r.series[0].data.metrics.get_mut("power").expect("power");
    for (i, p) in power.0.iter_mut().enumerate() {
        *p = 300.0 + (i % 11) as f32;
    }
    let (mut t, mut dur) = (Vec::new(), Vec::new());
    let mut per: BTreeMap<String, Column> = BTreeMap::new();
    for i in 0..n {
        let jitter = (i % 7) as f32 * 0.004;
        t.push(i as f64 * step as f64);
        dur.push(step + jitter);
        for (p, v) in [("data", data + jitter), ("compute", 0.55)] {
            per.entry(p.into())
                .or_insert_with(|| Column(Vec::new()))
                .0
                .push(v);
        }
    }
    r.steps = Some(StepsData {
        phases: vec!["data".into(), "compute".into()],
        count: n as u64,
        exact_steps: n as u64,
        t,
        duration: Column(dur),
        phase_durations: per,
        ..StepsData::default()
    });
    if let Some((id, confidence)) = finding {
        let mut f = every_text("x").findings[0].clone();
        f.id = id.into();
        f.confidence = confidence;
        r.findings = vec![f];
        r.verdict = Verdict {
            id: id.into(),
            title: "Waiting for data".into(),
            confidence,
            lost_share: Some(0.4),
            summary: String::new(),
        };
    } else {
        r.verdict = Verdict {
            id: "none".into(),
            title: "No bottleneck found".into(),
            confidence: 0.9,
            lost_share: None,
            summary: String::new(),
        };
    }
    r
}

/// A report as the page reads it (through the viewer's own reader).
fn read(r: &Report) -> View {
    View::load(r.to_json().as_bytes(), "r.json").expect("opens")
}

fn starved_and_fixed() -> (Report, Report) {
    (
        run(60, 0.45, Some(("data_starvation", 0.82))),
        run(90, 0.03, None),
    )
}

#[test]
fn the_verdict_diff_is_the_one_gpuwhy_compare_prints() {
    for (a, b) in [
        starved_and_fixed(),
        (starved_and_fixed().1, starved_and_fixed().1),
    ] {
        // `gpuwhy compare` reads the files as the page does: the samples at the precision
        // the file keeps them (this fixture's utilization is not whole percents).
        let file = |r: &Report| {
            Report::from_slice(r.to_json().as_bytes(), std::path::Path::new("r.json"))
                .expect("reads")
        };
        let core = gpuwhy::compare::compare(&file(&a), &file(&b), false).expect("comparable");
        let d = Diff::of(&read(&a), &read(&b));
        assert_eq!(d.summary, core.summary);
        assert_eq!(d.verdict, core.verdict);
        assert_eq!(d.steps, core.steps);
        assert_eq!(d.gpus.len(), core.gpus.len());
        for (x, y) in d.gpus.iter().zip(&core.gpus) {
            assert_eq!(
                (x.index, x.util_p50, x.power_p50, x.util_test),
                (y.index, y.util_p50, y.power_p50, y.util_test)
            );
        }
    }
    let (a, b) = starved_and_fixed();
    let d = Diff::of(&read(&a), &read(&b));
    assert!(
        d.summary
            .contains("data_starvation 0.82 → resolved; new top finding: none"),
        "{}",
        d.summary
    );
    assert!(
        d.summary.contains("step time p50 -41.5% (significant")
            && d.summary.contains("(significant"),
        "{}",
        d.summary
    );
    let html = section_html(&d, ("before.json", "after.json"));
    for text in [
        "resolved",
        "before.json",
        "after.json",
        "p95",
        "Throughput",
        "GPU 0",
    ] {
        assert!(html.contains(text), "{text} in {html}");
    }
    assert!(!html.contains("not strictly comparable"));
    // The section for the page: the text, then both runs' histograms, then one chart per
    // GPU with both runs.
    let names = ("before.json", "after.json");
    let page = section(&read(&a), &read(&b), names, 900, &Theme::light()).expect("draws");
    assert!(page.starts_with(&html));
    assert_eq!(
        page.matches("<figure class=\"compare-chart compare-hist\">")
            .count(),
        1
    );
    assert_eq!(
        page.matches("<figure class=\"compare-chart compare-util\">")
            .count(),
        1
    );
    assert!(page.contains("<figcaption>GPU 0 · Test GPU</figcaption>"));
}

#[test]
fn different_hardware_is_compared_with_a_warning_and_report_text_is_escaped() {
    let (a, mut b) = starved_and_fixed();
    b.devices[0].name = Some("<img src=x onerror=alert(1)>".into());
    b.run.label = Some("</table><script>x()</script>".into());
    let d = Diff::of(&read(&a), &read(&b));
    let html = section_html(&d, ("a.json", "<b>.json"));
    assert!(html.contains("not strictly comparable"), "{html}");
    assert!(!html.contains("<img") && !html.contains("<script") && !html.contains("<b>"));
    assert!(html.contains("&lt;/table&gt;&lt;script&gt;"));
    // The whole section: the GPU's name is escaped in its chart's caption and text
    // alternative too.
    let (va, vb) = (read(&a), read(&b));
    let page = section(&va, &vb, ("a.json", "b.json"), 900, &Theme::light()).expect("draws");
    assert!(!page.contains("<img") && !page.contains("<script"));
    assert!(page.contains("<figcaption>GPU 0 · Test GPU / GPU 0 · &lt;img src=x"));
    assert!(page.contains("aria-label=\"Utilization of GPU 0 · Test GPU / GPU 0 · &lt;img"));
}

/// `(stroke, stroke-width, points)` of each polyline.
fn polylines(svg: &str) -> Vec<(String, String, usize)> {
    svg.split("<polyline")
        .skip(1)
        .map(|p| {
            let attr = |name: &str| {
                let key = format!(" {name}=\"");
                let start = p.find(&key).map_or(0, |i| i + key.len());
                p[start..].split('"').next().unwrap_or("").to_string()
            };
            let n = attr("points").split_whitespace().count();
            (attr("stroke"), attr("stroke-width"), n)
        })
        .collect()
}

#[test]
fn the_histograms_overlay_both_runs_with_their_p50_and_p95() {
    let (a, b) = starved_and_fixed();
    let (a, b) = (read(&a), read(&b));
    let theme = Theme::light();
    let svg = histograms_svg(&a, &b, 900, &theme)
        .expect("draws")
        .expect("both have steps");
    let colors = [0, 1].map(|i| Theme::hex(theme.series[i]));
    // One outline per run, in its colour: up and across each of the 40 bins.
    let outlines: Vec<_> = polylines(&svg)
        .into_iter()
        .filter(|(_, w, n)| w == "2" && *n > 4)
        .collect();
    assert_eq!(outlines.len(), 2, "{outlines:?}");
    assert_eq!(outlines[0].0, colors[0]);
    assert_eq!(outlines[1].0, colors[1]);
    assert!(outlines.iter().all(|o| o.2 == 2 * 40 + 2));
    // Each run's p50 as a solid line of two points, in its colour; p95 dashed.
    for c in &colors {
        let p50 = polylines(&svg)
            .into_iter()
            .filter(|(s, w, n)| s == c && w == "1" && *n == 2)
            .count();
        assert_eq!(p50, 1, "p50 in {c}");
        let p95 = format!("stroke=\"{c}\" stroke-width=\"1\" stroke-dasharray=\"5 4\"");
        assert_eq!(svg.matches(&p95).count(), 1, "p95 in {c}");
    }
    assert!(svg.contains("baseline (60 steps)") && svg.contains("candidate (90 steps)"));
    assert!(
        svg.contains("p50 1.01 s, p95 1.02 s") && svg.contains("p50 592 ms, p95 604 ms"),
        "{svg}"
    );
    // Shares, not counts: runs of different lengths are on one scale.
    assert!(svg.contains('%'));
    // Without steps in one run there is nothing to overlay.
    let none = read(&one_gpu(vec![50.0; 10], vec![50.0; 10]));
    assert!(histograms_svg(&a, &none, 900, &theme)
        .expect("draws")
        .is_none());
}

#[test]
fn utilization_draws_both_runs_on_the_longer_runs_axis() {
    let (a, b) = starved_and_fixed();
    let (a, b) = (read(&a), read(&b));
    let theme = Theme::light();
    let svg = utilization_svg(&a, &b, 0, 900, &theme)
        .expect("draws")
        .expect("both have GPU 0");
    for (i, run) in ["baseline", "candidate"].iter().enumerate() {
        let c = Theme::hex(theme.series[i]);
        let data = polylines(&svg)
            .into_iter()
            .filter(|(s, w, n)| *s == c && w == "1" && *n > 10)
            .count();
        assert_eq!(data, 1, "{run}: one line");
        assert!(svg.contains(run), "{run} in the legend");
    }
    // The baseline runs 60 s, the candidate 52 s: the axis runs to the longer.
    assert!(svg.contains("50 s") && svg.contains("Utilization"), "{svg}");
    assert!(utilization_svg(&a, &b, 1, 900, &theme)
        .expect("draws")
        .is_none());
}

#[test]
fn the_rank_test_and_medians_are_cores_own() {
    use gpuwhy_viewer::compare::stats;
    let wide = |v: &[f32]| v.iter().map(|x| f64::from(*x)).collect::<Vec<f64>>();
    // Many ties, a gap in the data, and more values than the test ranks (thinned evenly).
    let mut a: Vec<f32> = (0..25_000)
        .map(|i| ((i * 7919) % 1000) as f32 / 10.0)
        .collect();
    a[17] = f32::NAN;
    let b: Vec<f32> = (0..3_000)
        .map(|i| ((i * 31) % 997) as f32 / 10.0 + 5.0)
        .collect();
    let small = [1.0, 2.0, 2.0, 3.0];
    for (x, y) in [
        (&a[..], &b[..]),
        (&b[..], &a[..]),
        (&small[..], &[2.0, 2.0, 4.0][..]),
        (&small[..], &small[..]),
        (&[2.0; 10][..], &[2.0; 10][..]),
        (&[1.0][..], &small[..]),
    ] {
        let core = gpuwhy::compare::mann_whitney(&wide(x), &wide(y));
        assert_eq!(stats::mann_whitney(x, y), core);
    }
    assert!(stats::mann_whitney(&a, &b).is_some_and(|t| t.significant));
    for v in [&a[..], &b[..], &small[..]] {
        let core = gpuwhy::signals::stats::dist(wide(v)).map(|d| d.p50);
        assert_eq!(stats::median(v), core);
    }
    assert_eq!(stats::median(&[f32::NAN]), None);
}

#[test]
fn sorting_through_integer_keys_gives_the_total_order() {
    use gpuwhy_viewer::sort::total as sort_total;
    let mut v = vec![
        3.5,
        -0.0,
        f32::NAN,
        0.0,
        -f32::INFINITY,
        f32::MIN_POSITIVE / 2.0,
        -1e-40,
        f32::INFINITY,
        -2.25,
        -f32::NAN,
        1.0,
        -0.0,
        f32::MAX,
        f32::MIN,
    ];
    for i in 0..500 {
        v.push(((i * 7919) % 1013) as f32 / 7.0 - 70.0);
    }
    let mut want = v.clone();
    want.sort_by(f32::total_cmp);
    sort_total(&mut v);
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
    assert_eq!(bits(&v), bits(&want));
    assert!(v[0].is_nan() && v[0].is_sign_negative() && v[v.len() - 1].is_nan());
}
