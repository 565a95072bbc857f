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

/// Values as the sampler gives them, a job's shape: constant clocks, P-state and PCIe link,
/// utilization and power that move every row, the slow metrics every tenth row (`null`
/// between), and no GPM or NVLink.
fn driver_row(k: u64, n: &mut Noise) -> [f32; GpuMetric::COUNT] {
    let mut r = [f32::NAN; GpuMetric::COUNT];
    let busy = k % 20 < 12;
    let set = |r: &mut [f32; GpuMetric::COUNT], m: GpuMetric, v: f32| r[m.index()] = v;
    let util = if busy { 95.0 } else { 20.0 } + (n.next() * 6.0).round();
    set(&mut r, GpuMetric::UtilGpu, util);
    set(&mut r, GpuMetric::UtilMem, (util * 0.4).round());
    set(&mut r, GpuMetric::MemUsed, 61_440.0);
    set(
        &mut r,
        GpuMetric::Power,
        (n.next() * 400_000.0 + 200_000.0).round() / 1000.0,
    );
    set(&mut r, GpuMetric::SmClock, 1_980.0);
    set(&mut r, GpuMetric::MemClock, 2_619.0);
    set(&mut r, GpuMetric::GraphicsClock, 1_980.0);
    set(&mut r, GpuMetric::Pstate, 0.0);
    set(
        &mut r,
        GpuMetric::ClockReasons,
        if busy { 0.0 } else { 1.0 },
    );
    if k % 10 == 3 {
        set(&mut r, GpuMetric::Temp, 60.0 + (n.next() * 4.0).round());
        set(&mut r, GpuMetric::PcieGen, 5.0);
        set(&mut r, GpuMetric::PcieWidth, 16.0);
        set(&mut r, GpuMetric::PcieRx, (n.next() * 9e5).round() / 1000.0);
        set(&mut r, GpuMetric::PcieTx, (n.next() * 9e4).round() / 1000.0);
    }
    r
}

fn gpu_buf(r: Retention) -> SeriesBuf {
    let mut s = SeriesBuf::with_precision(
        GpuMetric::COUNT,
        r,
        &banded_gpu_columns(),
        &narrow_gpu_divs(),
    );
    s.count_reasons(GpuMetric::ClockReasons.index(), GpuMetric::UtilGpu.index());
    s
}

#[test]
fn frozen_blocks_read_back_every_value_and_time_bit_for_bit() {
    // Nothing folded: every row stays in the first rows, a window or the ring, all three
    // frozen block by block; values and times of every kind the encoder treats apart.
    let r = Retention {
        head_rows: 2_500,
        recent_rows: 4_000,
        window_rows: 40_000,
        buckets: 64,
    };
    let mut s = gpu_buf(r);
    s.mark(0.0, 1e9, PRIO_FAULT);
    let odd = [
        f32::from_bits(0x7fc0_0001),
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MAX,
        f32::MIN_POSITIVE / 4.0,
        1e-3,
        70_000.0,
        -3.0,
        45.5,
        16_777_217.0,
    ];
    let mut n = Noise(3);
    let mut pushed = Vec::new();
    for k in 0..12_000u64 {
        // Noisy rows only past the first ones, whose budget is the tightest.
        let mut v = if k % 3 == 0 && k >= 2_500 {
            row(k, &mut n)
        } else {
            driver_row(k, &mut n)
        };
        if k % 7 == 0 {
            let c = (k / 7) as usize % GpuMetric::COUNT;
            v[c] = odd[(k / 7) as usize % odd.len()];
        }
        let t = time(k) + if k % 4_000 < 1_000 { 1e-7 } else { 0.0 };
        s.push(t, &v);
        pushed.push((t, v));
    }
    let t = s.times();
    assert_eq!(t.len(), 12_000, "every row kept");
    assert!(t
        .iter()
        .zip(&pushed)
        .all(|(a, b)| a.to_bits() == b.0.to_bits()));
    let divs = narrow_gpu_divs();
    for c in 0..GpuMetric::COUNT {
        let col = s.column(c);
        for (got, (_, want)) in col.iter().zip(&pushed) {
            // A narrow column keeps every NaN as the missing value, as the dense block does.
            let same = got.to_bits() == want[c].to_bits()
                || divs[c] > 0 && got.is_nan() && want[c].is_nan();
            assert!(same, "column {c}: {got} for {}", want[c]);
        }
    }
    // Reading only the rows after an instant gives what reading all and cutting gives.
    let cols: Vec<Vec<f32>> = (0..GpuMetric::COUNT).map(|c| s.column(c)).collect();
    for after in [
        None,
        Some(-1.0),
        Some(t[100]),
        Some(t[3_000]),
        Some(t[11_990]),
        Some(1e12),
    ] {
        let i = after.map_or(0, |a| t.partition_point(|x| *x <= a));
        let (ta, ca) = s.rows_after(after);
        assert!(ta
            .iter()
            .zip(&t[i..])
            .all(|(a, b)| a.to_bits() == b.to_bits()));
        assert_eq!(ta.len(), t.len() - i);
        for (a, b) in ca.iter().zip(&cols) {
            assert_eq!(a.len(), b.len() - i);
            assert!(a
                .iter()
                .zip(&b[i..])
                .all(|(x, y)| x.to_bits() == y.to_bits()));
        }
    }
}

#[test]
fn rows_as_a_driver_gives_them_keep_the_full_hour_the_first_minutes_and_the_windows() {
    let mut s = gpu_buf(Retention::default());
    let mut n = Noise(5);
    let (hours, mut marked) = (3, 0);
    for k in 0..hours * 36_000u64 {
        let t = k as f64 / 10.0;
        if k % 9_000 == 4_500 && k < 2 * 36_000 {
            s.mark(t - 30.0, t + 30.0, PRIO_EVENT);
            marked += 601;
        }
        s.push(t, &driver_row(k, &mut n));
        if k % 5_000 == 0 {
            assert!(s.heap_bytes() <= s.worst_case_bytes());
        }
    }
    assert_eq!(
        s.times().len(),
        HEAD_ROWS_DEFAULT + RECENT_ROWS_DEFAULT + marked,
        "the budgets hold every row the row counts allow"
    );
}

#[test]
fn rows_that_do_not_encode_small_keep_fewer_rows_within_the_bound() {
    // Random bits in every column and times off the tick: about 100 B a row once frozen,
    // against 32 in the budgets.
    let mut s = gpu_buf(Retention::default());
    let bound = s.worst_case_bytes();
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut peak = 0;
    for k in 0..60_000u64 {
        let mut v = [0f32; GpuMetric::COUNT];
        for c in &mut v {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *c = f32::from_bits((x as u32) & 0x7f7f_ffff);
        }
        let t = k as f64 / 10.0 + (x >> 44) as f64 * 1e-9;
        if k % 3_000 == 0 {
            s.mark(t - 30.0, t + 30.0, (k / 3_000 % 4) as u8 + 1);
        }
        s.push(t, &v);
        peak = peak.max(s.heap_bytes());
        assert!(
            s.heap_bytes() <= bound,
            "row {k}: {} > {bound}",
            s.heap_bytes()
        );
    }
    let kept = s.times().len();
    assert!(
        kept < 60_000 / 2,
        "{kept} rows kept: fewer than the row counts allow"
    );
    assert!(kept > 10_000, "{kept} rows kept: the budgets are used");
    assert!(
        peak > bound * 3 / 4,
        "the data was large: {peak} of {bound}"
    );
}
