//! The dense row form: what a recording writes is what was pushed, whatever the values, and
//! its memory stays within its bound on data chosen to be as large as possible.

use std::collections::BTreeMap;

use super::build::series_data;
use super::*;
use crate::report::{Column, SeriesData};

fn gpu_names() -> Vec<String> {
    GpuMetric::ALL
        .iter()
        .map(|m| m.name().to_string())
        .collect()
}

/// A deterministic noise source (xorshift) in [0, 1).
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// Values NVML gives (whole %, MHz, °C, mW) with gaps, and every so often one that does not
/// fit a narrow column: negative, fractional, too large, infinite, negative zero.
fn row(k: u64, n: &mut Noise) -> [f32; GpuMetric::COUNT] {
    let mut r = [f32::NAN; GpuMetric::COUNT];
    for (i, v) in r.iter_mut().enumerate() {
        let x = n.next();
        *v = match (k + i as u64) % 97 {
            0 => f32::NAN,
            1 if k % 5 == 0 => -3.0,
            2 if k % 7 == 0 => 70_000.0,
            3 if k % 11 == 0 => 45.5,
            4 if k % 13 == 0 => f32::INFINITY,
            5 if k % 17 == 0 => -0.0,
            _ => (x * 100.0).round(),
        };
    }
    r[GpuMetric::Power.index()] = (n.next() * 700_000.0).round() / 1000.0;
    r[GpuMetric::SmClock.index()] = 1_980.0;
    r
}

/// Times 100 ms apart as the sampler writes them (whole 0.1 ms ticks), with a jump past
/// 2^32 ticks (about 4.97 days) and an occasional time that is not a whole tick.
fn time(k: u64) -> f64 {
    let jump = if k >= 2_500 { 5 * 86_400 * 10_000 } else { 0 };
    let tick = (k * 1_000 + k % 3 + jump) as f64;
    if k % 1_001 == 500 {
        tick / 1e4 + 1e-9
    } else {
        tick / 1e4
    }
}

#[test]
fn the_compact_report_of_kept_rows_is_what_was_pushed() {
    let mut rec = Recording::new(crate::report::RunInfo::default());
    rec.add_device(crate::report::DeviceInfo::default());
    let mut n = Noise(0x9e37_79b9_7f4a_7c15);
    let (mut t, mut cols) = (Vec::new(), vec![Vec::new(); GpuMetric::COUNT]);
    for k in 0..5_000 {
        let r = row(k, &mut n);
        rec.push_gpu(0, time(k), &r);
        t.push(time(k));
        for (c, v) in cols.iter_mut().zip(r) {
            c.push(v);
        }
    }
    let names = gpu_names();
    let metrics: BTreeMap<String, Column> = names
        .iter()
        .cloned()
        .zip(cols.into_iter().map(Column))
        .collect();
    let want = SeriesData {
        t,
        metrics,
        coarse: None,
    };
    let got = series_data(&rec.devices[0].series, &names);
    let json = |d: &SeriesData| serde_json::to_string(d).expect("serialises");
    assert!(json(&got) == json(&want), "the compact form is unchanged");
    let plain = |d: &SeriesData| crate::report::plain(|| json(d));
    assert!(plain(&got) == plain(&want), "and so is the plain form");
    for (i, name) in names.iter().enumerate() {
        let a = &rec.devices[0].series.column(i);
        let b = &want.metrics[name].0;
        assert!(a
            .iter()
            .zip(b)
            .all(|(x, y)| x.to_bits() == y.to_bits() || x.is_nan() && y.is_nan()));
    }
}

#[test]
fn narrow_columns_keep_and_fold_exactly_what_wide_ones_do() {
    // Small capacities so that rows go through the head, the ring, windows and buckets.
    let r = Retention {
        head_rows: 300,
        recent_rows: 2_000,
        window_rows: 1_500,
        buckets: 64,
    };
    let banded = banded_gpu_columns();
    let mut dense = SeriesBuf::with_precision(GpuMetric::COUNT, r, &banded, &narrow_gpu_divs());
    let mut wide = SeriesBuf::with_retention(GpuMetric::COUNT, r, &banded);
    let mut n = Noise(7);
    for k in 0..60_000 {
        if k % 3_000 == 100 {
            let t = time(k + 2_500);
            dense.mark(t - 10.0, t + 10.0, (k % 3) as u8 + 1);
            wide.mark(t - 10.0, t + 10.0, (k % 3) as u8 + 1);
        }
        // Values that fit their narrow form, so both keep the same rows.
        let mut v = row(k, &mut n);
        for x in &mut v {
            if !(x.is_nan() || (0.0..1e4).contains(x) && x.fract() == 0.0) {
                *x = 42.0;
            }
        }
        v[GpuMetric::Power.index()] = 250.125;
        dense.push(time(k + 2_500), &v);
        wide.push(time(k + 2_500), &v);
    }
    let names = gpu_names();
    let json = |b: &SeriesBuf| serde_json::to_string(&series_data(b, &names)).expect("JSON");
    let (a, b) = (json(&dense), json(&wide));
    assert!(a.contains("\"coarse\""), "rows were folded");
    assert!(a == b, "the same rows, windows and buckets");
    assert!(dense.heap_bytes() < wide.heap_bytes());
}

#[test]
fn worst_case_data_stays_within_the_bound_throughout() {
    // All columns noisy and often too wide for their narrow form, times not always whole
    // ticks, windows of every importance marked all the time: the ring and the windows run
    // on their byte budgets, and buckets compact.
    for r in [
        Retention::default(),
        Retention {
            head_rows: 100,
            recent_rows: 3_000,
            window_rows: 2_000,
            buckets: 32,
        },
    ] {
        let banded = banded_gpu_columns();
        let mut s = SeriesBuf::with_precision(GpuMetric::COUNT, r, &banded, &narrow_gpu_divs());
        let mut n = Noise(11);
        let bound = s.worst_case_bytes();
        let mut peak = 0;
        for k in 0..150_000u64 {
            let t = time(k) + if k % 2 == 0 { 1e-7 } else { 0.0 };
            if k % 400 == 0 {
                s.mark(t - 5.0, t + 25.0, (k / 400 % 3) as u8 + 1);
            }
            let mut v = row(k, &mut n);
            for x in &mut v {
                *x += 0.25;
            }
            s.push(t, &v);
            peak = peak.max(s.heap_bytes());
            assert!(
                s.heap_bytes() <= bound,
                "row {k}: {} > {bound}",
                s.heap_bytes()
            );
        }
        assert_eq!(s.worst_case_bytes(), bound);
        assert!(peak > bound / 2, "the data was large: {peak} of {bound}");
        let c = s.coarse();
        assert_eq!(
            c.rows.iter().map(|r| u64::from(*r)).sum::<u64>() + s.times().len() as u64,
            150_000,
            "every row is kept or folded"
        );
    }
}
