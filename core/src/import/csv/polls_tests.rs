//! The poll size of a `--query-gpu` log without GPU columns, from its timestamps and from its
//! values, and the logs where neither settles it.

use super::*;

/// `polls` polls of `gpus` rows, the rows of a poll `jitter` s apart, polls 1 s apart.
fn times(gpus: usize, polls: usize, jitter: f64) -> Vec<Option<f64>> {
    (0..polls)
        .flat_map(|p| (0..gpus).map(move |g| Some(p as f64 + g as f64 * jitter)))
        .collect()
}

/// Rows of `gpus` GPUs in index order: each GPU its own temperature and memory in use,
/// drifting a little from poll to poll.
fn values(gpus: usize, polls: usize) -> Vec<Vec<f32>> {
    (0..polls)
        .flat_map(|p| {
            (0..gpus).map(move |g| {
                let wobble = (p % 3) as f32 * 0.4;
                vec![
                    60.0 + 4.0 * g as f32 + wobble,
                    30_000.0 + 900.0 * g as f32 + wobble,
                ]
            })
        })
        .collect()
}

fn keys_of(s: &Split) -> (usize, &[u32]) {
    match s {
        Split::Gpus { n, keys, .. } => (*n, keys),
        other => panic!("expected GPUs, got {other:?}"),
    }
}

#[test]
fn equal_or_close_timestamps_in_groups_give_the_poll_size() {
    for (gpus, jitter) in [(8, 0.0), (8, 0.003), (2, 0.002), (4, 0.0)] {
        let t = times(gpus, 5, jitter);
        let slots: Vec<usize> = (0..t.len()).collect();
        let s = split(&t, &slots, &vec![vec![]; t.len()]);
        let (n, keys) = keys_of(&s);
        assert_eq!(n, gpus, "jitter {jitter}");
        let want: Vec<u32> = (0..5).flat_map(|_| 0..gpus as u32).collect();
        assert_eq!(keys, want.as_slice());
    }
}

#[test]
fn a_poll_cut_short_by_the_end_of_the_log_keeps_the_others() {
    let mut t = times(4, 6, 0.001);
    t.truncate(22);
    let slots: Vec<usize> = (0..t.len()).collect();
    let s = split(&t, &slots, &vec![vec![]; t.len()]);
    let (n, keys) = keys_of(&s);
    assert_eq!(n, 4);
    assert_eq!(&keys[20..], &[0, 1]);
}

#[test]
fn one_row_per_time_is_one_gpu_and_one_time_for_all_rows_is_a_one_shot_query() {
    let t: Vec<Option<f64>> = (0..10)
        .map(|i| Some(i as f64 * 0.5 + (i % 2) as f64 * 0.01))
        .collect();
    let slots: Vec<usize> = (0..10).collect();
    assert_eq!(split(&t, &slots, &vec![vec![]; 10]), Split::One);
    // `nvidia-smi --query-gpu=… --format=csv` without `-l`: eight rows, one time.
    let t = vec![Some(100.0); 8];
    let slots: Vec<usize> = (0..8).collect();
    assert_eq!(keys_of(&split(&t, &slots, &vec![vec![]; 8])).0, 8);
}

#[test]
fn a_single_gpu_with_long_pauses_is_not_taken_for_a_node() {
    // 30 rows 1 s apart with a 60 s pause after row 10 and after row 20.
    let mut t = Vec::new();
    let mut now = 0.0;
    for i in 0..30 {
        t.push(Some(now));
        now += if i == 9 || i == 19 { 60.0 } else { 1.0 };
    }
    let slots: Vec<usize> = (0..30).collect();
    assert_ne!(
        std::mem::discriminant(&split(&t, &slots, &vec![vec![]; 30])),
        std::mem::discriminant(&Split::Gpus {
            n: 0,
            keys: vec![],
            how: ""
        })
    );
}

#[test]
fn without_timestamps_each_gpus_own_values_give_the_poll_size() {
    for gpus in [2, 4, 8] {
        let v = values(gpus, 6);
        let slots: Vec<usize> = (0..v.len()).collect();
        let s = split(&vec![None; v.len()], &slots, &v);
        let (n, keys) = keys_of(&s);
        assert_eq!(n, gpus);
        assert_eq!(keys[gpus + 1], 1);
    }
}

#[test]
fn a_damaged_line_read_past_keeps_the_gpus_after_it_in_place() {
    let mut v = values(4, 6);
    let mut slots: Vec<usize> = (0..v.len()).collect();
    // The row at slot 9 (GPU 1 of the third poll) was damaged and read past.
    v.remove(9);
    slots.remove(9);
    let s = split(&vec![None; v.len()], &slots, &v);
    let (n, keys) = keys_of(&s);
    assert_eq!(n, 4);
    assert_eq!(keys[9], 2, "the row after the damaged one is still GPU 2");
}

#[test]
fn a_single_gpu_or_identical_gpus_without_timestamps_cannot_be_split() {
    // One GPU warming up: every lag is further than the one before.
    let one: Vec<Vec<f32>> = (0..40).map(|i| vec![40.0 + i as f32, 1000.0]).collect();
    let slots: Vec<usize> = (0..40).collect();
    assert_eq!(split(&vec![None; 40], &slots, &one), Split::Unknown);
    // Constant values: nothing tells GPUs apart.
    let flat = vec![vec![50.0, 1000.0]; 16];
    let slots: Vec<usize> = (0..16).collect();
    assert_eq!(split(&vec![None; 16], &slots, &flat), Split::Unknown);
}
