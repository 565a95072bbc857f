//! Reading a report the fast way gives what serde_json and core's types give.

use std::collections::BTreeMap;

use gpuwhy::report::{
    CoarseColumn, CoarseData, Column, Fault, HostData, HostFacts, NvmlInfo, Overhead, PhaseStats,
    Report, SeriesData, StepsData, Tool,
};
use gpuwhy_viewer::View;

use crate::fixtures::{every_text, one_gpu};

/// Bit patterns, so that `NaN` (a `null`) compares equal to itself.
fn bits(c: &Column) -> Vec<u32> {
    c.0.iter().map(|x| x.to_bits()).collect()
}

fn same_columns(a: &BTreeMap<String, Column>, b: &BTreeMap<String, Column>) {
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (k, c) in a {
        assert_eq!(bits(c), bits(&b[k]), "column {k}");
    }
}

/// A report with every part set to something other than its default: coarse buckets,
/// host samples and facts, steps, faults, the NVML library, the recorder's cost, and
/// numbers written in every way JSON allows.
pub(crate) fn rich() -> Report {
    let mut r = every_text("text with \"quotes\", \\ and \u{e9}");
    r.run.job_gpus = Some(gpuwhy::report::JobGpus {
        indices: vec![0],
        others: vec![1, 2],
        method: gpuwhy::report::JobGpusMethod::CudaVisibleDevices,
        reason: "CUDA_VISIBLE_DEVICES=0 names GPU 0".into(),
        shared: vec![gpuwhy::report::ForeignProcess {
            device: 0,
            pid: 31337,
            name: Some("python3".into()),
            used_mib: Some(20_000.0),
            memory_share: Some(0.25),
            sm_share: Some(0.3),
            first_s: 0.5,
            last_s: 9.5,
        }],
    });
    let odd = vec![
        0.1,
        -0.0,
        1e-7,
        3.4e38,
        123_456.79,
        f32::NAN,
        1.0 / 3.0,
        7.0,
    ];
    let s = &mut r.series[0].data;
    s.t = (0..odd.len()).map(|i| i as f64 * 0.1).collect();
    for m in ["util_gpu", "temp", "power", "nvlink_rx"] {
        s.metrics.insert(m.into(), Column(odd.clone()));
    }
    let col = CoarseColumn {
        min: Column(vec![1.0, f32::NAN]),
        mean: Column(vec![2.5, f32::NAN]),
        max: Column(vec![4.0, f32::NAN]),
        ..CoarseColumn::default()
    };
    s.coarse = Some(CoarseData {
        rows_per_bucket: 64,
        t_start: vec![10.0, 16.4],
        t_end: vec![16.3, 22.7],
        metrics: [("util_gpu".into(), col.clone()), ("pstate".into(), col)].into(),
        ..CoarseData::default()
    });
    let d = &mut r.devices[0];
    (d.uuid, d.pci_bus_id, d.pci_device_id) = (Some("GPU-1".into()), Some("0:1".into()), Some(7));
    (d.architecture, d.compute_capability) = (Some("Hopper".into()), Some("9.0".into()));
    (d.memory_total_mib, d.max_sm_clock_mhz) = (Some(81_920.0), Some(1980.0));
    (d.max_mem_clock_mhz, d.max_graphics_clock_mhz) = (Some(2619.0), Some(1980.5));
    (d.pcie_max_gen, d.pcie_max_width, d.nvlink_links) = (Some(5), Some(16), Some(18));
    (d.temp_slowdown_c, d.gpm, d.lost_at_s) = (Some(87.0), true, Some(3.25));
    r.findings[0].evidence[0].time_range = Some([1.5, 2.0]);
    r.findings[0].evidence[0].value = f64::NAN;
    r.run.start_unix_ms = -1_700_000_000_000;
    (r.run.exit_code, r.run.rank, r.run.world_size) = (Some(-9), Some(3), Some(8));
    r.run.ended_by = Some("signal".into());
    r.tool = Tool {
        name: "gpuwhy".into(),
        version: "9.9.9".into(),
    };
    r.nvml = Some(NvmlInfo {
        path: "/usr/lib/libnvidia-ml.so.1".into(),
        driver_version: Some("550.1".into()),
        nvml_version: None,
        cuda_driver_version: Some("12.4".into()),
        symbols: [
            ("nvmlInit_v2".into(), None),
            ("x".into(), Some("missing".into())),
        ]
        .into(),
    });
    r.gpu_absent_reason = Some("none".into());
    r.faults = vec![Fault {
        device: Some(0),
        function: "nvmlDeviceGetPowerUsage".into(),
        code: 15,
        name: "GPU_IS_LOST".into(),
        count: 3,
        first_s: 1.0,
        last_s: 2.5,
    }];
    r.overhead = Overhead {
        ticks: 100,
        late_ticks: 2,
        skipped_ticks: 1,
        wakeups: Some(31),
        sampler_cpu_s: Some(0.25),
        cpu_per_tick_us: Some(41.5),
        cpu_per_gpu_tick_us: None,
        nvml_calls: 1200,
        nvml_call_mean_us: 3.5,
        nvml_call_max_us: 120.0,
        nvml_call_max_function: Some("nvmlDeviceGetClockInfo".into()),
        memory_bytes: 4096,
        memory_bound_bytes: 1 << 20,
        events_dropped: 4,
    };
    let stats = PhaseStats {
        count: 3,
        sum_s: 0.3,
        min_s: 0.05,
        max_s: 0.2,
        p50_s: 0.1,
        p95_s: 0.19,
        p99_s: 0.2,
    };
    r.steps = Some(StepsData {
        phases: vec!["data".into(), "forward".into()],
        count: 3,
        t: vec![0.0, 0.1, 0.3],
        duration: Column(vec![0.1, 0.2, f32::NAN]),
        phase_durations: [("data".into(), Column(vec![0.05, f32::NAN, 0.1]))].into(),
        gpu_phase_durations: [("forward".into(), Column(vec![0.04, 0.1, 0.1]))].into(),
        stats: [("step".into(), stats.clone())].into(),
        gpu_stats: [("forward".into(), stats)].into(),
        exact_steps: 3,
        quantile_error: 0.01,
        ignored_markers: 1,
        memory_bytes: 512,
        memory_bound_bytes: 4096,
        threads: Vec::new(),
    });
    r.host = Some(HostData {
        facts: HostFacts {
            hostname: "node1".into(),
            kernel: "6.1".into(),
            cpu_model: "EPYC".into(),
            logical_cpus: 64,
            physical_cores: Some(32),
            mem_total_bytes: 1 << 40,
        },
        units: [("cpu".to_string(), "%".to_string())].into(),
        data: SeriesData {
            t: vec![0.5, 1.5],
            metrics: [("cpu".to_string(), Column(vec![12.5, f32::NAN]))].into(),
            coarse: None,
        },
        unavailable: [("psi".to_string(), "no /proc/pressure".to_string())].into(),
    });
    r
}

#[test]
fn reads_what_serde_reads_keeping_the_drawn_gpu_columns() {
    let want = rich();
    for json in [
        want.to_json(),
        want.to_json_plain(),
        serde_json::to_string(&want).expect("serialises"),
    ] {
        let got = View::load(json.as_bytes(), "r.json")
            .map_err(|e| e.message)
            .expect("opens")
            .report;
        let mut serde: Report = serde_json::from_str(&json).expect("serde reads it");
        // The columns no chart draws are skipped, not read.
        let s = &mut serde.series[0].data;
        s.metrics.remove("nvlink_rx");
        s.coarse.as_mut().expect("coarse").metrics.remove("pstate");
        // Nor what the page never shows (the NVML symbol table, …).
        unshown(&mut serde);
        // Written out again, `NaN` is `null` on both sides: everything else must match.
        assert_eq!(got.to_json(), serde.to_json());
        let (g, s) = (&got.series[0].data, &serde.series[0].data);
        same_columns(&g.metrics, &s.metrics);
    }
}

#[test]
fn numbers_read_bit_for_bit_as_serde_reads_them() {
    let numbers = [
        "0",
        "-0",
        "7",
        "-12",
        "0.1",
        "0.30000000000000004",
        // Past 2^53: one multiplication would round twice (1.4 instead of the next double).
        "1.4000000000000001",
        "2.4000000000000004",
        "9007199254740993",
        "0.1000000000000000055511151231257827",
        "1e5",
        "1E+2",
        "2.5e-3",
        "-1.5e-7",
        "123456789012345678",
        "12345678901234567890123",
        "1e300",
        "4.9e-324",
        "3.4028235e38",
        "99999999999999999999.5",
        "0.000000000000000000000000001",
        "null",
    ];
    let json = format!(
        r#"{{"schema":"gpuwhy.report/1","series":[{{"t":[{t}],"metrics":{{"power":[{v}]}}}}],
            "steps":{{"t":[{t}],"duration":[{v}]}}}}"#,
        t = numbers[..numbers.len() - 1].join(", "),
        v = numbers.join(" ,\n "),
    );
    let got = View::load(json.as_bytes(), "r.json")
        .map_err(|e| e.message)
        .expect("opens");
    let serde: Report = serde_json::from_str(&json).expect("serde reads it");
    let (g, s) = (&got.report.series[0].data, &serde.series[0].data);
    assert_eq!(
        g.t.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        s.t.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
    same_columns(&g.metrics, &s.metrics);
    let (gs, ss) = (
        got.report.steps.expect("steps"),
        serde.steps.expect("steps"),
    );
    assert_eq!(bits(&gs.duration), bits(&ss.duration));
}

#[test]
fn a_column_that_does_not_fit_says_where() {
    for (json, says) in [
        (
            r#"{"schema":"gpuwhy.report/1","series":[{"t":[0, "x"]}]}"#,
            "invalid type: string",
        ),
        (
            r#"{"schema":"gpuwhy.report/1","series":[{"t":[0, null]}]}"#,
            "invalid type: null",
        ),
        (
            "{\"schema\":\"gpuwhy.report/1\",\n\"series\":[{\"metrics\":{\"power\":[1,{}]}}]}",
            "line 2 column",
        ),
        (
            r#"{"schema":"gpuwhy.report/1","verdict":{"id":"x","summary":"s"}}"#,
            "missing field `title`",
        ),
        (
            r#"{"schema":"gpuwhy.report/1","devices":[{"index":-1}]}"#,
            "number out of range at line 1 column 49",
        ),
        (
            r#"{"schema":"gpuwhy.report/1","series":{"t":[]}}"#,
            "expected an array",
        ),
    ] {
        let e = View::load(json.as_bytes(), "r.json")
            .err()
            .expect("refused");
        assert_eq!(e.kind, "damaged", "{json}: {}", e.message);
        assert!(e.message.contains(says), "{json}: {}", e.message);
    }
    // A column no chart reads is checked for what it holds, not parsed.
    let e = View::load(
        br#"{"schema":"gpuwhy.report/1","series":[{"metrics":{"pstate":[1,2}]}]}"#,
        "r.json",
    )
    .err()
    .expect("refused");
    assert_eq!(e.kind, "invalid", "{}", e.message);
    let one = one_gpu(vec![1.0, 2.0], vec![3.0, 4.0]).to_json();
    assert!(View::load(format!("{one} x").as_bytes(), "r.json").is_err());
}

/// Clears on the serde side what the page's reader skips because the page never shows it:
/// the NVML symbol table, how the job's GPUs were decided and other users' processes on them, how each lost share was
/// estimated, reserved memory and the NVML function behind each metric.
pub(crate) fn unshown(r: &mut Report) {
    if let Some(n) = r.nvml.as_mut() {
        n.symbols.clear();
    }
    if let Some(j) = r.run.job_gpus.as_mut() {
        j.method = Default::default();
        j.shared.clear();
    }
    for f in &mut r.findings {
        f.lost_share_basis = None;
    }
    for d in &mut r.devices {
        d.memory_reserved_mib = None;
        for c in d.capabilities.values_mut() {
            c.via = None;
        }
    }
}
