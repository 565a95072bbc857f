//! The recent ring: the latest rows in order, within its row count and its byte budget.

use super::*;

#[test]
fn the_ring_keeps_the_latest_rows_in_order() {
    let mut r = Ring::new(1, 3, &[]);
    let mut ev = Vec::new();
    let mut out = Vec::new();
    for i in 0..5 {
        r.push(i as f64, &[i as f32 * 10.0], &[]);
        let old = r.evict(&mut ev, &[]);
        if i >= 3 {
            assert_eq!(old, Some((i - 3) as f64));
            assert_eq!(ev, vec![(i - 3) as f32 * 10.0]);
        } else {
            assert_eq!(old, None);
        }
        assert_eq!(r.evict(&mut ev, &[]), None, "one row out per row in");
    }
    r.times_into(&mut out);
    assert_eq!(out, vec![2.0, 3.0, 4.0]);
    let mut col = Vec::new();
    r.column_into(0, &[], &mut col);
    assert_eq!(col, vec![20.0, 30.0, 40.0]);
}

#[test]
fn rows_that_do_not_encode_small_shorten_the_ring_within_its_budget() {
    // 30 000 rows of one column, 9 B a row in the budget; times that are not whole ticks
    // and values of random bits take more once frozen, about 12 B.
    let divs = [1];
    let mut r = Ring::new(1, 30_000, &divs);
    let mut ev = Vec::new();
    let (mut out_rows, mut x, mut pushed) = (0, 0x9e37_79b9_7f4a_7c15u64, Vec::new());
    for i in 0..100_000u32 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let t = f64::from(i) + (x >> 40) as f64 * 1e-12;
        let v = f32::from_bits(0x3f80_0000 | (x as u32 & 0x007f_ffff));
        pushed.push((t, v));
        r.push(t, &[v], &divs);
        while r.evict(&mut ev, &divs).is_some() {
            out_rows += 1;
        }
        assert!(r.heap_bytes() <= r.worst_case_bytes());
    }
    let mut t = Vec::new();
    r.times_into(&mut t);
    assert_eq!(
        t.len() + out_rows,
        100_000,
        "every row is kept or handed back"
    );
    assert!(t.len() < 30_000, "the budget binds before the row count");
    assert!(t.len() > 15_000, "{} rows: the budget is used", t.len());
    let mut col = Vec::new();
    r.column_into(0, &divs, &mut col);
    let kept = &pushed[100_000 - t.len()..];
    assert!(kept
        .iter()
        .zip(t.iter().zip(&col))
        .all(|((a, b), (c, d))| a.to_bits() == c.to_bits() && b.to_bits() == d.to_bits()));
}

#[test]
fn a_ring_of_one_block_keeps_its_rows_whatever_the_values() {
    // 900 rows of random bits: more bytes than 900 rows' budget, less than the block of
    // wide rows the bound holds room for anyway.
    let mut r = Ring::new(24, 900, &[]);
    let (mut ev, mut x) = (Vec::new(), 0x9e37_79b9_7f4a_7c15u64);
    for i in 0..5_000u32 {
        let row: Vec<f32> = (0..24)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                f32::from_bits(x as u32)
            })
            .collect();
        r.push(f64::from(i), &row, &[]);
        while r.evict(&mut ev, &[]).is_some() {}
        assert!(r.heap_bytes() <= r.worst_case_bytes());
        assert_eq!(r.len(), (i as usize + 1).min(900));
    }
}
