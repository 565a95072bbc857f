//! Charts that must stay readable at both ends of a run's size: the step-time columns of a
//! 15-step run and of a 100,000-step one, and a metric read once a second among metrics
//! read every 100 ms (PCIe throughput), whose reads must not look like a continuous line.

use gpuwhy::report::{Column, StepsData};
use gpuwhy_viewer::chart::{steps, timeline, Frame, DOT_SPACING, LEFT, RIGHT, TITLE_H};
use gpuwhy_viewer::{Theme, View};

use crate::fixtures::one_gpu;

/// `(x, width)` of every `<rect>` filled with `color` in an SVG, under the title strip
/// (where the legend's swatches are).
fn rects(svg: &str, color: &str) -> Vec<(f64, f64)> {
    svg.split("<rect")
        .skip(1)
        .filter(|r| r.contains(&format!("fill=\"{color}\"")))
        .filter_map(|r| {
            let attr = |name: &str| -> Option<f64> {
                r.split(&format!(" {name}=\""))
                    .nth(1)?
                    .split('"')
                    .next()?
                    .parse()
                    .ok()
            };
            (attr("y")? >= f64::from(TITLE_H)).then_some((attr("x")?, attr("width")?))
        })
        .collect()
}

/// `n` steps of `len` seconds back to back, each a data phase of a fifth of it and a
/// forward phase of the rest.
fn steps_of(n: usize, len: f64) -> StepsData {
    let mut s = StepsData {
        phases: vec!["data".into(), "forward".into()],
        count: n as u64,
        ..Default::default()
    };
    s.t = (0..n).map(|i| i as f64 * len).collect();
    s.duration = Column(vec![len as f32; n]);
    s.phase_durations
        .insert("data".into(), Column(vec![(len * 0.2) as f32; n]));
    s.phase_durations
        .insert("forward".into(), Column(vec![(len * 0.8) as f32; n]));
    s
}

fn stacked(n: usize, len: f64, width: u32) -> String {
    let mut r = one_gpu(vec![50.0; 10], vec![f32::NAN; 10]);
    r.steps = Some(steps_of(n, len));
    let view = View::new(r);
    let f = Frame::new(width, 0.0, n as f64 * len);
    steps::stacked_svg(&view, &f, &Theme::light())
        .expect("renders")
        .expect("has steps")
}

#[test]
fn fifteen_steps_are_fifteen_wide_columns() {
    let data = Theme::hex(Theme::light().series[0]);
    for width in [1200, 380] {
        let svg = stacked(15, 0.8, width);
        let cols = rects(&svg, &data);
        assert_eq!(cols.len(), 15, "one data column per step at {width} px");
        // Each step spans its own 0.8 s of the 12 s run: a fifteenth of the plot, less
        // the one-pixel gap that keeps neighbours apart.
        let plot = f64::from(width - LEFT - RIGHT);
        for (x, w) in &cols {
            assert!(
                *w >= plot / 15.0 - 3.0,
                "{w} px wide at {x} ({width} px chart)"
            );
        }
        assert!(svg.contains("a column per step"), "{svg:.400}");
    }
}

#[test]
fn a_hundred_thousand_steps_are_averaged_into_columns_a_few_pixels_wide() {
    let data = Theme::hex(Theme::light().series[0]);
    let width = 1200;
    let svg = stacked(100_000, 0.25, width);
    let cols = rects(&svg, &data);
    let plot = f64::from(width - LEFT - RIGHT);
    // One column per three pixels, each covering its own stretch: no hairlines, no gaps.
    assert!(
        cols.len() as f64 >= plot / 3.0 - 2.0,
        "{} columns",
        cols.len()
    );
    assert!(
        cols.len() as f64 <= plot / 3.0 + 1.0,
        "{} columns",
        cols.len()
    );
    assert!(cols.iter().all(|(_, w)| *w >= 2.0), "{cols:?}");
    assert!(svg.contains("mean per column"));
}

/// A GPU read every 0.1 s for `n` rows, with PCIe rx read on every tenth row only.
fn with_pcie(n: usize) -> View {
    let mut r = one_gpu(vec![50.0; n], vec![f32::NAN; n]);
    let pcie = (0..n)
        .map(|i| {
            if i % 10 == 0 {
                100.0 + (i % 70) as f32
            } else {
                f32::NAN
            }
        })
        .collect();
    r.series[0]
        .data
        .metrics
        .insert("pcie_rx".into(), Column(pcie));
    View::new(r)
}

#[test]
fn a_metric_read_once_a_second_is_drawn_as_its_reads() {
    let view = with_pcie(120);
    let f = Frame::new(1000, view.t_range.0, view.t_range.1);
    let svg = timeline::svg(&view, 0, &f, &Theme::light()).expect("renders");
    assert!(svg.contains("PCIe (MB/s)"));
    // The 12 reads are 12 dots (zero-length round-capped strokes) in one path…
    let dots: Vec<&str> = svg
        .split("<path")
        .skip(1)
        .filter(|p| p.contains("stroke-linecap=\"round\""))
        .collect();
    assert_eq!(dots.len(), 1, "one path of dots");
    assert_eq!(dots[0].matches("h0").count(), 12);
    // …while utilization and power, read on every row, stay lines (each its panel's first
    // series, in the same colour as PCIe rx).
    let color = Theme::hex(Theme::light().series[0]);
    let lines = svg
        .matches(&format!("<polyline fill=\"none\" stroke=\"{color}\""))
        .count();
    assert_eq!(
        lines, 2,
        "utilization and power are lines; PCIe is not a line"
    );

    // A long run, a read every few pixels or closer, is drawn as a line again (its
    // decimated min/max), where dots would merge into a smear.
    let long = with_pcie(40_000);
    let reads = 4_000;
    assert!(reads * DOT_SPACING > 1000 - (LEFT + RIGHT) as usize);
    let f = Frame::new(1000, long.t_range.0, long.t_range.1);
    let svg = timeline::svg(&long, 0, &f, &Theme::light()).expect("renders");
    assert!(!svg.contains("stroke-linecap=\"round\""));
    assert_eq!(
        svg.matches(&format!("<polyline fill=\"none\" stroke=\"{color}\""))
            .count(),
        3
    );
}
