//! The trace reader on generated traces with known answers (`scripts/gen_trace.py`; the
//! small trace's numbers are worked out in its docstring and `docs/trace-format.md`).

use super::*;

/// A generated trace fixture's path (shared with the analysis tests).
pub(crate) fn path(name: &str) -> String {
    format!("{}/tests/fixtures/trace/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// One fixture read as a rank.
pub(crate) fn read(name: &str, choices: Choices) -> RankSummary {
    let f = std::fs::File::open(path(name)).expect("fixture");
    let opts = ReadOptions {
        choices,
        label: name.into(),
        position: 0,
    };
    read_rank(f, &opts).expect("reads")
}

/// Equal to a millionth.
pub(crate) fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

#[test]
fn small_trace_busy_idle_and_overlap_are_the_hand_computed_ones() {
    let r = read("small.json", Choices::default());
    assert_eq!(r.rank, 0);
    assert_eq!(r.world_size, Some(1));
    assert_eq!(r.devices, vec!["NVIDIA H100 80GB HBM3".to_string()]);
    assert!(close(r.span_us, 2953.0), "{}", r.span_us);
    assert!(close(r.busy_us, 2574.0), "{}", r.busy_us);
    assert!(close(r.idle_share, 379.0 / 2953.0));
    assert!(close(r.compute_us, 2550.0) && close(r.comm_us, 300.0));
    assert!(close(r.memory_us, 24.0) && close(r.host_copy_us, 24.0));
    assert!(close(r.comm_overlap_us, 300.0));
    assert_eq!(r.comm_overlap_share, Some(1.0));
    let i = r.main_stream_idle;
    assert!(close(i.host_wait_us, 364.0), "{i:?}");
    assert!(
        close(i.kernel_wait_us, 15.0) && close(i.other_us, 0.0),
        "{i:?}"
    );
    assert_eq!(r.streams.len(), 2);
    assert_eq!((r.streams[0].stream, r.streams[1].stream), (7, 20));
    // The NCCL stream waits 900 µs twice for its launches.
    assert!(close(r.streams[1].idle.host_wait_us, 1800.0));
}

#[test]
fn small_trace_kernels_launches_syncs_and_steps() {
    let r = read("small.json", Choices::default());
    assert_eq!(r.kernels.count, 15);
    assert!(close(r.kernels.duration_us.p50, 200.0) && close(r.kernels.duration_us.mean, 190.0));
    assert_eq!(r.kernels.short_share, 0.0);
    assert_eq!(r.kernels.shorter_than_launch_share, Some(0.0));
    assert_eq!((r.launch.matched, r.launch.unmatched), (18, 0));
    assert_eq!(
        r.launch.delay_outliers, 6,
        "B (305 µs) and D (210 µs) each step"
    );
    assert_eq!(r.launch.runtime_outliers, 0);
    assert_eq!(r.syncs.stream_sync, 3);
    assert_eq!(r.syncs.pageable_async_memcpy, 3);
    assert_eq!(r.syncs.total, 6);
    assert_eq!(r.steps.len(), 3);
    for st in &r.steps {
        assert!(
            close(st.cpu_us, 1000.0) && close(st.gpu_busy_us, 858.0),
            "{st:?}"
        );
        assert!(close(st.gpu_span_us, 953.0) && close(st.comm_us, 100.0));
        assert_eq!((st.kernels, st.syncs), (5, 2));
        assert_eq!(st.last_comm_offset_us, Some(708.0));
    }
    assert!(close(r.step_stats.gpu_cpu_ratio.p50, 0.858));
    assert_eq!(r.step_stats.syncs.p50, 2.0);
    let top = &r.top_kernels[0];
    assert_eq!(top.name, "sm90_xmma_gemm_bf16bf16_bf16f32");
    assert_eq!(top.count, 6);
    assert!(close(top.total_us, 1800.0) && close(top.share, 1800.0 / 2850.0));
}

#[test]
fn hta_inclusion_choices_change_the_numbers_as_documented() {
    let r = read("small.json", Choices::hta());
    assert_eq!(r.steps.len(), 2, "last step dropped");
    assert!(close(r.span_us, 1953.0), "{}", r.span_us);
    assert!(
        close(r.busy_us, 1736.0),
        "sync records count as busy: {}",
        r.busy_us
    );
    let i = r.main_stream_idle;
    assert!(
        close(i.host_wait_us, 207.0) && close(i.kernel_wait_us, 10.0),
        "{i:?}"
    );
    let t = TraceSummary::from_ranks(vec![r], Choices::hta());
    assert!(t
        .choices_text
        .iter()
        .any(|c| c.contains("last ProfilerStep dropped")));
}

#[test]
fn hta_choices_round_fractional_timestamps_as_hta_does() {
    // fractional.json, per HTA's parser: each start rounded up, each end (ts + dur) down.
    // The last step (launching gemm_d) is dropped. Kernels on stream 7:
    //   gemm_a [10.3, 110.7] → [11, 110]; gemm_b [150.6, 350.8] → [151, 350];
    //   tiny [400.2, 400.7] → [401, 400] (−1 µs, kept as HTA keeps it);
    //   gemm_c [450.9, 750.95] → [451, 750].
    // span = 750 − 11 = 739; busy = 99 + 199 − 1 + 299 = 596; idle = 143.
    let r = read("fractional.json", Choices::hta());
    assert!(close(r.span_us, 739.0), "{}", r.span_us);
    assert!(close(r.busy_us, 596.0), "{}", r.busy_us);
    assert!(close(r.idle_share, 143.0 / 739.0), "{}", r.idle_share);
    // All of it host wait: each kernel's (rounded-up) launch comes after the previous end.
    assert!(
        close(r.main_stream_idle.host_wait_us, 143.0),
        "{:?}",
        r.main_stream_idle
    );
    // Unrounded: span 740.65, busy 601.15, idle 139.5 (0.52 points less idle).
    let mut unrounded = Choices::hta();
    unrounded.round_timestamps = false;
    let u = read("fractional.json", unrounded);
    assert!(close(u.idle_share, 139.5 / 740.65), "{}", u.idle_share);
    assert!((r.idle_share - u.idle_share) * 100.0 > 0.5);
    let t = TraceSummary::from_ranks(vec![r], Choices::hta());
    assert!(t
        .choices_text
        .iter()
        .any(|c| c.contains("rounded to whole µs")));
}

#[test]
fn gzip_reads_the_same_as_plain() {
    let a = read("small.json", Choices::default());
    let mut b = read("small.json.gz", Choices::default());
    b.source = a.source.clone();
    assert_eq!(a, b);
}

#[test]
fn truncated_or_foreign_input_is_a_clear_error_never_a_panic() {
    let bytes = std::fs::read(path("small.json")).expect("fixture");
    let opts = ReadOptions {
        label: "cut.json".into(),
        ..Default::default()
    };
    let e = read_slice(&bytes[..bytes.len() / 2], &opts).expect_err("cut");
    let msg = e.to_string();
    assert!(msg.contains("cut short") && msg.contains("byte"), "{msg}");
    let e = read_slice(b"{\"hello\": 1}", &opts).expect_err("no events");
    assert!(e.to_string().contains("traceEvents"), "{e}");
    let e = read_slice(b"not json", &opts).expect_err("garbage");
    assert!(e.to_string().contains("not a valid Chrome trace"), "{e}");
    let gz = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3];
    assert!(read_slice(&gz, &opts).is_err());
    for cut in [1, 10, 100, 1000, 5000] {
        let _ = read_slice(&bytes[..cut.min(bytes.len())], &opts);
    }
    // Odd but valid shapes: string pids, missing fields, a bare event array.
    let odd = br#"[{"ph":"X","cat":"kernel","name":"k","pid":"GPU 0","tid":"stream 7","ts":"5.5","dur":2},
                   {"ph":"X","cat":"kernel","name":"k","ts":10},{"ph":"i","name":"x"}]"#;
    let r = read_slice(odd, &opts).expect("array form");
    assert_eq!(r.kernels.count, 1);
    assert!(close(r.span_us, 2.0));
}
