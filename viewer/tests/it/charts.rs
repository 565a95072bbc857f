//! Charts rendered to SVG and checked for what a person would see: the series drawn, the
//! axis labels, and gaps kept as gaps.

use gpuwhy_viewer::chart::{heatmap, steps, timeline, Frame, Overlay, LEFT, RIGHT};
use gpuwhy_viewer::{Theme, Trace, View};

use crate::fixtures::one_gpu;

/// `(stroke colour, stroke width, point count)` of every polyline in an SVG.
fn polylines(svg: &str) -> Vec<(String, String, usize)> {
    svg.split("<polyline")
        .skip(1)
        .map(|p| {
            let attr = |name: &str| {
                let key = format!("{name}=\"");
                let start = p.find(&key).map(|i| i + key.len()).unwrap_or(0);
                p[start..].split('"').next().unwrap_or("").to_string()
            };
            let points = attr("points").split_whitespace().count();
            (attr("stroke"), attr("stroke-width"), points)
        })
        .collect()
}

/// Polylines of the data series drawn in the `i`-th series colour (legend swatches are
/// wider and not counted).
pub fn series_lines(svg: &str, i: usize) -> Vec<usize> {
    let color = Theme::hex(Theme::light().series[i]);
    polylines(svg)
        .into_iter()
        .filter(|(c, w, _)| *c == color && w == "1")
        .map(|(_, _, n)| n)
        .collect()
}

fn render(view: &View, width: u32) -> String {
    let f = Frame::new(width, view.t_range.0, view.t_range.1);
    timeline::svg(view, 0, &f, &Theme::light()).expect("renders")
}

#[test]
fn timeline_draws_each_panel_with_its_title_and_time_axis() {
    let view = View::new(one_gpu(vec![50.0; 100], vec![60.0; 100]));
    let svg = render(&view, 800);
    for title in ["Utilization (%)", "Power (W)", "Temperature (°C)"] {
        assert!(svg.contains(title), "panel {title}");
    }
    // Panels without samples are left out rather than drawn empty.
    assert!(!svg.contains("PCIe (MB/s)"));
    let missing = timeline::missing(&view, 0);
    assert!(missing
        .iter()
        .any(|(t, why)| *t == "PCIe" && why.contains("NOT_SUPPORTED")));
    // The power limit is a reference line with its value in the legend, drawn as one
    // dashed element (not one element per dash).
    assert!(svg.contains("limit 400"));
    assert_eq!(svg.matches("stroke-dasharray=\"5 4\"").count(), 1);
    // Time labels along the bottom axis, in seconds for a 10 s run.
    assert!(
        svg.contains(">\n0 s\n<") || svg.contains("0 s"),
        "time labels"
    );
    assert!(svg.contains("8 s"));
    // One line per panel, each in the first series colour.
    assert_eq!(series_lines(&svg, 0).len(), 3);
}

#[test]
fn null_samples_break_the_line_and_are_not_drawn_as_zero() {
    let mut util = vec![80.0f32; 100];
    for v in &mut util[40..50] {
        *v = f32::NAN;
    }
    let view = View::new(one_gpu(util, vec![f32::NAN; 100]));
    let trace = Trace::new(&view.report.series[0].data, "util_gpu", 1.0);
    let runs = trace.decimate(0.0, 10.0, 700);
    assert_eq!(runs.len(), 2, "one run before the gap, one after");
    assert!(runs.iter().flatten().all(|&(_, v)| v == 80.0), "no zeros");
    let svg = render(&view, 800);
    // Utilization is split in two; power (no gap) and the missing temperature are not.
    let util_lines: Vec<usize> = series_lines(&svg, 0);
    assert_eq!(
        util_lines.len(),
        3,
        "two utilization runs and one power line"
    );
    assert!(!svg.contains("Temperature"));
}

#[test]
fn a_slow_metric_read_every_tenth_row_is_one_line_until_a_read_is_missed() {
    let temp: Vec<f32> = (0..200)
        .map(|i| if i % 10 == 0 { 60.0 } else { f32::NAN })
        .collect();
    let view = View::new(one_gpu(vec![50.0; 200], temp.clone()));
    let data = &view.report.series[0].data;
    assert_eq!(
        Trace::new(data, "temp", 1.0).decimate(0.0, 20.0, 500).len(),
        1
    );
    let mut missed = temp;
    missed[100] = f32::NAN;
    let view = View::new(one_gpu(vec![50.0; 200], missed));
    let data = &view.report.series[0].data;
    assert_eq!(
        Trace::new(data, "temp", 1.0).decimate(0.0, 20.0, 500).len(),
        2
    );
}

#[test]
fn long_series_are_decimated_to_a_min_max_pair_per_pixel_column() {
    let util: Vec<f32> = (0..100_000).map(|i| (i % 100) as f32).collect();
    let view = View::new(one_gpu(util, vec![f32::NAN; 100_000]));
    let width = 600;
    let svg = render(&view, width);
    let columns = (width - LEFT - RIGHT) as usize;
    let points: usize = series_lines(&svg, 0).iter().max().copied().unwrap_or(0);
    assert!(
        points <= 2 * columns,
        "{points} points for {columns} columns"
    );
    assert!(points >= columns, "every column drawn: {points}");
    // The extremes survive decimation.
    let trace = Trace::new(&view.report.series[0].data, "util_gpu", 1.0);
    let runs = trace.decimate(0.0, 10_000.0, columns as u32);
    let all: Vec<f64> = runs.iter().flatten().map(|p| p.1).collect();
    assert_eq!(all.iter().copied().fold(f64::INFINITY, f64::min), 0.0);
    assert_eq!(all.iter().copied().fold(f64::NEG_INFINITY, f64::max), 99.0);
}

#[test]
fn points_that_change_nothing_on_screen_are_left_out() {
    // A flat line over thousands of pixel columns is its two ends.
    let view = View::new(one_gpu(vec![50.0; 10_000], vec![f32::NAN; 10_000]));
    assert_eq!(series_lines(&render(&view, 1200), 0), vec![2, 2]);
    // Steps keep their corners: each level's two ends.
    let util: Vec<f32> = (0..10_000)
        .map(|i| if (i / 2500) % 2 == 0 { 10.0 } else { 90.0 })
        .collect();
    let view = View::new(one_gpu(util, vec![f32::NAN; 10_000]));
    assert_eq!(series_lines(&render(&view, 1200), 0)[0], 8);
    // In one pixel column, a point between two others goes; an extreme stays.
    let mut o = Overlay::default();
    let c = Theme::light().series[0];
    o.line([(0, 5), (3, 5), (3, 2), (3, 1), (3, 4), (6, 4), (9, 4)], c);
    assert_eq!(o.lines[0].0, vec![(0, 5), (3, 5), (3, 1), (3, 4), (9, 4)]);
}

#[test]
fn zooming_draws_only_the_visible_range() {
    let util: Vec<f32> = (0..1000)
        .map(|i| if i < 500 { 10.0 } else { 90.0 })
        .collect();
    let view = View::new(one_gpu(util, vec![f32::NAN; 1000]));
    let trace = Trace::new(&view.report.series[0].data, "util_gpu", 1.0);
    let runs = trace.decimate(60.0, 80.0, 100);
    assert!(runs
        .iter()
        .flatten()
        .all(|&(t, v)| (60.0..=80.0).contains(&t) && v == 90.0));
}

#[test]
fn heatmap_has_one_labelled_row_per_gpu() {
    // GPU 0 flips between idle and busy (a new colour in every cell), GPU 1 stays at 50%.
    let flips = (0..50).map(|i| (i % 2) as f32 * 100.0).collect();
    let mut r = one_gpu(flips, vec![f32::NAN; 50]);
    let mut second = r.series[0].clone();
    second.device = 1;
    second.data.metrics.get_mut("util_gpu").expect("util").0 = vec![50.0; 50];
    r.series.push(second);
    let view = View::new(r);
    let f = Frame::new(700, 0.0, 5.0);
    let svg = heatmap::gpu_svg(&view, &f, &Theme::dark()).expect("renders");
    assert!(svg.contains("GPU 0") && svg.contains("GPU 1"));
    let widths: Vec<i32> = svg
        .split("<rect")
        .skip(1)
        .filter_map(|r| r.split("width=\"").nth(1)?.split('"').next()?.parse().ok())
        .collect();
    assert!(widths.len() >= 40, "{} cells", widths.len());
    // A steady GPU is one cell across the whole plot, not a row of equal cells.
    let plot = (700 - LEFT - RIGHT) as i32;
    assert_eq!(
        widths.iter().filter(|&&w| w >= plot - 2).count(),
        1,
        "{widths:?}"
    );
}

#[test]
fn step_histogram_marks_p50_and_p95() {
    let mut r = one_gpu(vec![50.0; 50], vec![f32::NAN; 50]);
    let mut s = gpuwhy::report::StepsData {
        phases: vec!["data".into(), "forward".into()],
        ..Default::default()
    };
    for i in 0..200 {
        s.t.push(i as f64 * 0.1);
        s.duration.0.push(if i % 10 == 0 { 0.5 } else { 0.1 });
    }
    s.phase_durations.insert(
        "data".into(),
        gpuwhy::report::Column(s.duration.0.iter().map(|d| d - 0.05).collect()),
    );
    s.phase_durations
        .insert("forward".into(), gpuwhy::report::Column(vec![0.05; 200]));
    s.count = 200;
    r.steps = Some(s);
    let view = View::new(r);
    let svg = steps::histogram_svg(&view, 700, &Theme::light())
        .expect("renders")
        .expect("has steps");
    assert!(svg.contains("p50 100 ms"), "{svg}");
    assert!(svg.contains("p95 500 ms"));
    assert!(svg.contains("Step time, 200 steps"));
    let f = Frame::new(700, 0.0, 20.0);
    let stacked = steps::stacked_svg(&view, &f, &Theme::light())
        .expect("renders")
        .expect("has steps");
    assert!(stacked.contains(">\ndata\n<") || stacked.contains("data"));
    assert!(stacked.matches("<rect").count() > 50);
}
