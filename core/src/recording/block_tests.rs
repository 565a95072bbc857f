use super::*;

fn read(b: &Block, columns: usize, divs: &[u32]) -> (Vec<f64>, Vec<Vec<f32>>) {
    let mut t = Vec::new();
    b.times_into(0, &mut t);
    let cols = (0..columns)
        .map(|c| {
            let mut v = Vec::new();
            b.column_into(c, 0, divs, &mut v);
            v
        })
        .collect();
    (t, cols)
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn whole_numbers_in_range_stay_narrow_and_read_back_the_same() {
    let divs = [1, 1];
    let mut b = Block::new(2, &divs, 8);
    let rows = [
        [0.0, 65_534.0],
        [f32::NAN, 100.0],
        [97.0, f32::NAN],
        [1.0, 2.0],
    ];
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(b.push(i as f64 / 10.0, r, &divs), 0, "row {i} fits");
    }
    let (t, cols) = read(&b, 2, &divs);
    assert_eq!(t, vec![0.0, 0.1, 0.2, 0.3]);
    assert_eq!(bits(&cols[0]), bits(&[0.0, f32::NAN, 97.0, 1.0]));
    assert_eq!(bits(&cols[1]), bits(&[65_534.0, 100.0, f32::NAN, 2.0]));
    // Times as u32 ticks, values as u16.
    assert_eq!(
        b.heap_bytes(),
        8 * (4 + 2 + 2) + 2 * std::mem::size_of::<Slot>()
    );
}

#[test]
fn a_value_that_does_not_fit_widens_its_column_without_changing_any_value() {
    let odd = [
        65_535.0,
        70_000.0,
        -1.0,
        -0.0,
        45.5,
        1e30,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MIN_POSITIVE,
        3.0e-7,
    ];
    for v in odd {
        let divs = [1, 1];
        let mut b = Block::new(2, &divs, 4);
        b.push(0.0, &[12.0, 7.0], &divs);
        assert_eq!(b.push(1.0, &[v, 8.0], &divs), 4 * 2, "{v} widens");
        b.push(2.0, &[f32::NAN, 9.0], &divs);
        b.push(3.0, &[13.0, 10.0], &divs);
        let (_, cols) = read(&b, 2, &divs);
        assert_eq!(bits(&cols[0]), bits(&[12.0, v, f32::NAN, 13.0]), "{v}");
        assert_eq!(cols[1], vec![7.0, 8.0, 9.0, 10.0], "the other column stays");
        let mut row = Vec::new();
        b.row_into(1, &divs, &mut row);
        assert_eq!(row[0].to_bits(), v.to_bits());
    }
}

#[test]
fn hundredths_are_narrow_only_when_they_read_back_exactly() {
    // At 100 values per unit, 45.67 as an f32 is the f32 nearest 4567 / 100: narrow. A value
    // between hundredths is not, and its column turns wide instead of being rounded.
    let divs = [100];
    let mut b = Block::new(1, &divs, 4);
    assert_eq!(b.push(0.0, &[45.67], &divs), 0);
    assert_eq!(b.push(1.0, &[0.01], &divs), 0);
    assert_eq!(b.push(2.0, &[45.671], &divs), 4 * 2);
    let (_, cols) = read(&b, 1, &divs);
    assert_eq!(cols[0], vec![45.67, 0.01, 45.671]);
}

#[test]
fn sample_times_over_a_week_stay_ticks_and_read_back_the_same() {
    // The sampler's times: whole 0.1 ms ticks, here 100 ms apart with jitter, for 8 days:
    // past 2^32 ticks (about 4.97 days) from the start, which each block's base absorbs.
    let week = 8 * 86_400 * 10;
    let (mut blocks, mut cur) = (Vec::new(), Block::new(0, &[], CHUNK));
    let mut want = Vec::new();
    for i in 0..week as i64 {
        let tick = i * 1_000 + (i * 7919) % 13;
        let t = tick as f64 / 10_000.0;
        if cur.is_full() {
            blocks.push(std::mem::replace(&mut cur, Block::new(0, &[], CHUNK)));
        }
        assert_eq!(cur.push(t, &[], &[]), 0, "{t} is a whole tick");
        want.push(t);
    }
    blocks.push(cur);
    let mut got = Vec::new();
    for b in &blocks {
        b.times_into(0, &mut got);
    }
    assert!(got
        .iter()
        .zip(&want)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
    assert_eq!(got.len(), want.len());
    assert!(*got.last().expect("rows") > 4.97 * 86_400.0);
}

#[test]
fn times_that_are_not_ticks_or_too_far_apart_turn_the_block_to_seconds() {
    for t1 in [0.000_05, 1.0 / 3.0, 430_000.0, -5.0, -0.0, f64::NAN, 1e300] {
        let mut b = Block::new(1, &[1], 3);
        b.push(10.0, &[1.0], &[1]);
        assert_eq!(b.push(t1, &[2.0], &[1]), 3 * 4, "{t1} widens the times");
        b.push(20.0, &[3.0], &[1]);
        let (t, cols) = read(&b, 1, &[1]);
        let want = [10.0, t1, 20.0];
        assert!(
            t.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()),
            "{t:?}"
        );
        assert_eq!(cols[0], vec![1.0, 2.0, 3.0]);
        assert_eq!(b.time(1).to_bits(), t1.to_bits());
    }
}

#[test]
fn the_gpu_columns_narrow_where_nvml_gives_whole_numbers() {
    let divs = narrow_gpu_divs();
    assert_eq!(divs.len(), GpuMetric::COUNT);
    assert_eq!(divs.iter().filter(|d| **d == 1).count(), 10);
    assert_eq!(div_of(&divs, GpuMetric::Power.index()), 0);
    assert_eq!(div_of(&divs, GpuMetric::SmClock.index()), 1);
}
