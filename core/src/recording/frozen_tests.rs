//! The frozen form on its own: every stream kind round-trips bit for bit, and no block takes
//! more than its worst case.

use super::*;

/// A block of `t` and `rows`, frozen, read back whole; checks both against the block.
fn round_trip(columns: usize, divs: &[u32], t: &[f64], rows: &[Vec<f32>]) -> Frozen {
    let mut b = Block::new(columns, divs, t.len().max(1));
    for (t, r) in t.iter().zip(rows) {
        b.push(*t, r, divs);
    }
    let f = Frozen::encode(&b, columns, divs);
    assert_eq!(f.len(), b.len());
    assert!(f.heap_bytes() <= Frozen::worst_case_bytes(columns, t.len()));
    let (mut got, mut want) = (Vec::new(), Vec::new());
    f.times_into(0, &mut got);
    b.times_into(0, &mut want);
    assert_eq!(bits64(&got), bits64(&want), "times");
    for c in 0..columns {
        let (mut got, mut want) = (Vec::new(), Vec::new());
        f.column_into(c, 0, &mut got);
        b.column_into(c, 0, divs, &mut want);
        assert_eq!(bits32(&got), bits32(&want), "column {c}");
        // From a later row too, as the ring reads its oldest block.
        let mut tail = Vec::new();
        f.column_into(c, t.len() / 2, &mut tail);
        assert_eq!(bits32(&tail), bits32(&want[t.len() / 2..]));
    }
    f
}

fn bits64(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn bits32(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

#[test]
fn random_bits_stay_plain_and_read_back() {
    let mut x = 7u64;
    let n = 1_024;
    let t: Vec<f64> = (0..n)
        .map(|_| f64::from_bits(xorshift(&mut x) >> 2))
        .collect();
    let rows: Vec<Vec<f32>> = (0..n)
        .map(|_| {
            (0..3)
                .map(|_| f32::from_bits(xorshift(&mut x) as u32))
                .collect()
        })
        .collect();
    let f = round_trip(3, &[], &t, &rows);
    assert!(f.heap_bytes() > n * 20, "random bits do not shrink");
}

#[test]
fn steady_times_constant_and_missing_columns_take_almost_nothing() {
    let n = 1_024;
    let t: Vec<f64> = (0..n).map(|k| 3_600.0 + k as f64 / 10.0).collect();
    let rows: Vec<Vec<f32>> = (0..n)
        .map(|k| vec![1_980.0, f32::NAN, if k % 10 == 0 { 61.0 } else { f32::NAN }])
        .collect();
    let f = round_trip(3, &[1, 0, 1], &t, &rows);
    assert!(f.heap_bytes() < 400, "{} bytes", f.heap_bytes());
}

#[test]
fn every_kind_of_value_reads_back_in_every_mode() {
    let odd = [
        0.0,
        -0.0,
        f32::NAN,
        f32::from_bits(0x7fc0_0001),
        f32::from_bits(0xffc0_0000),
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MAX,
        f32::MIN,
        f32::MIN_POSITIVE / 8.0,
        0.01,
        0.1,
        250.125,
        16_777_217.0,
        -3.0,
        65_535.0,
    ];
    // Column 0 all hundredths (whole at 100), 1 all thousandths, 2 every odd value, 3 whole.
    let n = 700;
    let t: Vec<f64> = (0..n)
        .map(|k| {
            if k % 50 == 7 {
                k as f64 * 0.1 + 1e-9
            } else {
                k as f64 * 0.1
            }
        })
        .collect();
    let rows: Vec<Vec<f32>> = (0..n)
        .map(|k| {
            vec![
                ((k * 37 % 10_000) as f64 / 100.0) as f32,
                ((k * 7_919 % 1_000_000) as f64 / 1_000.0) as f32,
                odd[k % odd.len()],
                (k as f32) * 3.0 - 900.0,
            ]
        })
        .collect();
    let f = round_trip(4, &[0, 0, 0, 1], &t, &rows);
    let mode = |s: usize| f.stream(s)[0];
    assert_eq!(mode(0), XOR, "times off the tick");
    // The mode, the number of presence runs (1) and the one run (700: 2 bytes), the scale.
    assert_eq!((mode(1), f.stream(1)[4]), (INT, 1), "hundredths");
    assert_eq!((mode(2), f.stream(2)[4]), (INT, 2), "thousandths");
    assert!(
        matches!(mode(3), XOR | RAW),
        "odd values are not whole at any scale"
    );
    assert_eq!((mode(4), f.stream(4)[4]), (INT, 0), "whole numbers");
    // A single row and an empty block.
    round_trip(4, &[], &t[..1], &rows[..1]);
    round_trip(4, &[], &[], &[]);
}

#[test]
fn varints_and_zigzag_cover_the_extremes() {
    for d in [0i64, 1, -1, i64::MAX, i64::MIN, 1 << 40, -(1 << 40)] {
        assert_eq!(unzigzag(zigzag(d)), d);
    }
    let mut out = Vec::new();
    let xs = [0u64, 1, 127, 128, u64::MAX, 1 << 63];
    for x in xs {
        put_varint(&mut out, x);
    }
    let mut at = 0;
    for x in xs {
        assert_eq!(get_varint(&out, &mut at), x);
    }
    assert_eq!(at, out.len());
}
