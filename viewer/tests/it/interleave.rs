//! A long report's rows and buckets interleaved in time (the first minute, buckets, a window
//! around an event, buckets, the last minute; docs/report-format.md, "Retention"): drawn
//! merged by time.

use gpuwhy::report::{CoarseColumn, CoarseData, Column, Report};
use gpuwhy_viewer::chart::{timeline, Frame};
use gpuwhy_viewer::{Theme, Trace, View};

use crate::charts::series_lines;
use crate::fixtures::one_gpu;

/// Rows once a second over `0..=60` (10 %), `300..=360` (90 %) and `600..=660` (30 %);
/// buckets of 30 s between them (`61..=299` and `361..=599`), each from 0 % to 100 %, mean
/// 50 %.
pub fn interleaved() -> Report {
    let mut t = Vec::new();
    let mut util = Vec::new();
    for (from, v) in [(0, 10.0), (300, 90.0), (600, 30.0)] {
        for s in from..=from + 60 {
            t.push(f64::from(s));
            util.push(v);
        }
    }
    let mut r = one_gpu(util, vec![f32::NAN; t.len()]);
    let (mut t_start, mut t_end) = (Vec::new(), Vec::new());
    for from in [61, 361] {
        for k in 0..8 {
            let s = from + 30 * k;
            t_start.push(f64::from(s));
            t_end.push(f64::from((s + 29).min(from + 238)));
        }
    }
    let n = t_start.len();
    let col = CoarseColumn {
        min: Column(vec![0.0; n]),
        mean: Column(vec![50.0; n]),
        max: Column(vec![100.0; n]),
        ..CoarseColumn::default()
    };
    let d = &mut r.series[0].data;
    d.t = t;
    d.coarse = Some(CoarseData {
        rows_per_bucket: 30,
        t_start,
        t_end,
        metrics: [("util_gpu".into(), col)].into(),
        ..CoarseData::default()
    });
    r.run.duration_s = 660.0;
    r
}

/// Each present sample of `util_gpu` in `t0..=t1`: its time, its lowest and highest value,
/// and whether it starts a run.
fn samples(r: &Report, t0: f64, t1: f64) -> Vec<(f64, f32, f32, bool)> {
    let mut out = Vec::new();
    Trace::new(&r.series[0].data, "util_gpu", 1.0).visit(t0, t1, |s, brk| {
        out.push((s.t, s.lo, s.hi, brk));
    });
    out
}

#[test]
fn rows_and_buckets_are_walked_in_time_order_as_one_run() {
    let r = interleaved();
    let all = samples(&r, 0.0, 660.0);
    assert_eq!(all.len(), 3 * 61 + 16, "every row and every bucket once");
    assert!(all.windows(2).all(|w| w[0].0 < w[1].0), "in time order");
    assert_eq!(all.iter().filter(|s| s.3).count(), 1, "no gap anywhere");
    // Which part each sample comes from, in order: rows, buckets, rows, buckets, rows.
    let kinds: Vec<bool> = all.iter().map(|s| s.1 != s.2).collect();
    let mut parts = kinds.clone();
    parts.dedup();
    assert_eq!(parts, vec![false, true, false, true, false]);
    let window: Vec<f32> = all
        .iter()
        .filter(|s| (300.0..=360.0).contains(&s.0))
        .map(|s| s.1)
        .collect();
    assert_eq!(
        window,
        vec![90.0; 61],
        "the event window's rows, at full resolution"
    );
}

#[test]
fn the_whole_run_draws_bucket_extremes_between_the_rows() {
    let r = interleaved();
    let trace = Trace::new(&r.series[0].data, "util_gpu", 1.0);
    let runs = trace.decimate(0.0, 660.0, 66);
    assert_eq!(runs.len(), 1, "one line over rows and buckets");
    let line = &runs[0];
    assert!(
        line.windows(2).all(|w| w[0].0 <= w[1].0),
        "x never goes back"
    );
    let at = |lo: f64, hi: f64| -> Vec<f64> {
        line.iter()
            .filter(|p| p.0 > lo && p.0 < hi)
            .map(|p| p.1)
            .collect()
    };
    // Every bucket column reaches both extremes; every row column holds its part's value.
    for (lo, hi) in [(70.0, 290.0), (370.0, 590.0)] {
        let v = at(lo, hi);
        assert!(v.contains(&0.0) && v.contains(&100.0), "{v:?}");
    }
    assert!(at(0.0, 55.0).iter().all(|&v| v == 10.0));
    assert!(at(305.0, 355.0).iter().all(|&v| v == 90.0));
    assert!(at(605.0, 660.0).iter().all(|&v| v == 30.0));
}

#[test]
fn zooming_into_an_event_window_draws_its_rows_at_full_resolution() {
    let r = interleaved();
    let trace = Trace::new(&r.series[0].data, "util_gpu", 1.0);
    let runs = trace.decimate(300.0, 360.0, 600);
    assert_eq!(runs.len(), 1);
    let want: Vec<(f64, f64)> = (300..=360).map(|s| (f64::from(s), 90.0)).collect();
    assert_eq!(runs[0], want, "each row at its own time");
    // A range over the window's edge gets the neighbouring buckets' extremes as well.
    let edge = trace.decimate(250.0, 320.0, 700);
    let v: Vec<f64> = edge.iter().flatten().map(|p| p.1).collect();
    assert!(v.contains(&0.0) && v.contains(&100.0) && v.contains(&90.0));
}

#[test]
fn statistics_and_the_heatmap_see_rows_and_buckets_where_they_lie() {
    let r = interleaved();
    let trace = Trace::new(&r.series[0].data, "util_gpu", 1.0);
    let s = trace.stats(0.0, 660.0).expect("samples");
    assert_eq!((s.min, s.max, s.count), (0.0, 100.0, 3 * 61 + 16));
    let means = trace.slice_means(0.0, 660.0, 11);
    assert_eq!(means[0], Some(10.0));
    assert_eq!(means[2], Some(50.0));
    assert_eq!(means[5], Some(90.0));
    assert_eq!(means[10], Some(30.0));
    assert_eq!(trace.at(330.2).map(|s| s.mean), Some(90.0));
    assert_eq!(trace.at(200.0).map(|s| s.mean), Some(50.0));
}

#[test]
fn a_bucket_without_a_value_or_a_stretch_without_samples_breaks_the_line() {
    let mut r = interleaved();
    let c = r.series[0].data.coarse.as_mut().expect("coarse");
    c.metrics.get_mut("util_gpu").expect("util").mean.0[3] = f32::NAN;
    let runs = Trace::new(&r.series[0].data, "util_gpu", 1.0).decimate(0.0, 660.0, 660);
    assert_eq!(runs.len(), 2, "broken at the empty bucket");
    let mut r = interleaved();
    // The second event window's rows go: its buckets end 60 s before the last rows start.
    let d = &mut r.series[0].data;
    let keep: Vec<usize> = (0..d.t.len())
        .filter(|&i| !(300.0..=360.0).contains(&d.t[i]))
        .collect();
    d.t = keep.iter().map(|&i| d.t[i]).collect();
    let util = d.metrics.get_mut("util_gpu").expect("util");
    util.0 = keep.iter().map(|&i| util.0[i]).collect();
    let runs = Trace::new(&r.series[0].data, "util_gpu", 1.0).decimate(0.0, 660.0, 660);
    assert_eq!(runs.len(), 2, "broken where neither rows nor buckets are");
}

#[test]
fn the_page_spans_the_run_and_draws_it() {
    let view = View::new(interleaved());
    assert_eq!(view.t_range, (0.0, 660.0));
    let f = Frame::new(900, view.t_range.0, view.t_range.1);
    let svg = timeline::svg(&view, 0, &f, &Theme::light()).expect("renders");
    // Utilization is one line over rows and buckets; power has rows only: three runs,
    // with gaps where the buckets are.
    assert_eq!(series_lines(&svg, 0).len(), 1 + 3);
}
