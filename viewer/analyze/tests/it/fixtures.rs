//! Inputs: core's import and trace fixtures, and generated logs long enough for the rules.

use std::fmt::Write;

/// A file under `core/tests/fixtures/`.
pub fn core_fixture(rel: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../core/tests/fixtures/{rel}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A `nvidia-smi dmon` log (current layout, `-s puc`, no time column) of `samples`
/// one-second rows per GPU: every GPU busy 6 s then idle 4 s, over and over, with the
/// header repeated every 20 rows as dmon does.
pub fn dmon_log(samples: usize, gpus: u32) -> String {
    let mut s = String::new();
    for i in 0..samples {
        if i % 20 == 0 {
            s.push_str("# gpu    pwr  gtemp  mtemp     sm    mem    enc    dec    jpg    ofa   mclk   pclk\n");
            s.push_str("# Idx      W      C      C      %      %      %      %      %      %    MHz    MHz\n");
        }
        for g in 0..gpus {
            let busy = i % 10 < 6;
            let (pwr, sm, mem) = if busy { (610, 97, 45) } else { (120, 2, 1) };
            writeln!(
                s,
                "{g:>5} {pwr:>6} {:>6}      - {sm:>6} {mem:>6}      0      0      0      0   2619   1980",
                50 + g
            )
            .expect("write to a String");
        }
    }
    s
}

/// The journal of a recording that stopped before writing its report: the header and
/// `samples` one-second GPU rows of one GPU, busy 6 s then idle 4 s.
pub fn journal(samples: usize) -> String {
    use gpuwhy::metric::GpuMetric;
    use gpuwhy::report::journal::{JournalHeader, JournalLine, JOURNAL_SCHEMA};
    use gpuwhy::report::{Column, DeviceInfo, RunInfo};

    let header = JournalHeader {
        schema: JOURNAL_SCHEMA.into(),
        run: RunInfo {
            source: "nvml".into(),
            interval_s: 1.0,
            ..RunInfo::default()
        },
        nvml: None,
        gpu_absent_reason: None,
        devices: vec![DeviceInfo {
            index: 0,
            name: Some("NVIDIA A100-SXM4-80GB".into()),
            ..DeviceInfo::default()
        }],
        host: None,
        capacity: None,
    };
    let rows = (0..samples)
        .map(|i| {
            let mut row = vec![f32::NAN; GpuMetric::COUNT];
            let busy = i % 10 < 6;
            row[GpuMetric::UtilGpu.index()] = if busy { 97.0 } else { 2.0 };
            row[GpuMetric::Power.index()] = if busy { 380.0 } else { 90.0 };
            Column(row)
        })
        .collect();
    let line = JournalLine::Gpu {
        dev: 0,
        t: (0..samples).map(|i| i as f64).collect(),
        rows,
    };
    let json = |v: Result<String, serde_json::Error>| v.expect("a journal line serialises");
    format!(
        "{}\n{}\n",
        json(serde_json::to_string(&header)),
        json(serde_json::to_string(&line))
    )
}
