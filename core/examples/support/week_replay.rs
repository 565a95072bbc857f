//! The replay half of `week_bench` (included with `#[path]`): rows of one kind of data pushed
//! into a fresh GPU stream with the default retention for two and a half hours at 100 ms,
//! 23 one-minute windows marked before the last hour, and what the stream's byte budgets
//! held of them; and what freezing and decoding a block costs.

use std::path::Path;
use std::time::Instant;

use gpuwhy::metric::GpuMetric;
use gpuwhy::recording::{
    banded_gpu_columns, narrow_gpu_divs, BlockProbe, Retention, SeriesBuf, RECENT_ROWS_DEFAULT,
};
use gpuwhy::report::Report;
use serde_json::{json, Value};

/// Rows of one GPU: values only, replayed in a loop.
pub type Rows = Vec<Vec<f32>>;

/// Windows marked before the last hour: 23 × 601 rows fit the 14,400 window rows.
const WINDOWS: u64 = 23;
/// Ticks from one window to the next: the last ends before the last hour begins.
const SPACING: u64 = 2_000;
const TICKS: u64 = 90_000;

fn gpu_names() -> Vec<&'static str> {
    GpuMetric::ALL.iter().map(|m| m.name()).collect()
}

/// Each GPU's rows of a report (a simulator scenario's) or of a log gpuwhy imports.
pub fn load_rows(path: &Path) -> Option<Vec<Rows>> {
    let bytes = std::fs::read(path).ok()?;
    let series: Vec<(Vec<f64>, Vec<Vec<f32>>)> =
        match gpuwhy::import::detect(&bytes[..bytes.len().min(4096)]) {
            Some(kind) if kind.as_str() != "report" => {
                let opts = gpuwhy::import::ImportOptions {
                    path: path.to_path_buf(),
                    interval_s: Some(1.0),
                    ..Default::default()
                };
                let imp = match gpuwhy::import::import(kind, &bytes, &opts) {
                    Ok(imp) => imp,
                    Err(e) => {
                        eprintln!("week_bench: {e}");
                        return None;
                    }
                };
                imp.recording
                    .devices
                    .iter()
                    .map(|d| {
                        let s = &d.series;
                        (s.times(), (0..s.columns()).map(|c| s.column(c)).collect())
                    })
                    .collect()
            }
            _ => {
                let r = Report::from_slice(&bytes, path).ok()?;
                r.series
                    .iter()
                    .map(|s| {
                        let n = s.data.t.len();
                        let cols = gpu_names()
                            .iter()
                            .map(|m| {
                                s.data
                                    .metrics
                                    .get(*m)
                                    .map_or(vec![f32::NAN; n], |c| c.0.clone())
                            })
                            .collect();
                        (s.data.t.clone(), cols)
                    })
                    .collect()
            }
        };
    let gpus: Vec<Rows> = series
        .into_iter()
        .filter(|(t, _)| t.len() >= 10)
        .map(|(t, cols)| {
            (0..t.len())
                .map(|i| {
                    cols.iter()
                        .map(|c| c.get(i).copied().unwrap_or(f32::NAN))
                        .collect()
                })
                .collect()
        })
        .collect();
    (!gpus.is_empty()).then_some(gpus)
}

fn stream() -> SeriesBuf {
    let mut s = SeriesBuf::with_precision(
        GpuMetric::COUNT,
        Retention::default(),
        &banded_gpu_columns(),
        &narrow_gpu_divs(),
    );
    s.count_reasons(GpuMetric::ClockReasons.index(), GpuMetric::UtilGpu.index());
    s
}

/// Replays `rows(k)` for 2.5 hours at 100 ms into a fresh stream; what it held.
pub fn replay(name: &str, mut rows: impl FnMut(u64) -> Vec<f32>) -> Value {
    let mut s = stream();
    let mut first = Vec::new();
    let mut over = 0u64;
    for k in 0..TICKS {
        let t = k as f64 / 10.0;
        // Windows every 200 s from 10 minutes on, all older than the last hour.
        if k >= 6_000 && (k - 6_000) % SPACING == 0 && (k - 6_000) / SPACING < WINDOWS {
            s.mark(t - 30.0, t + 30.0, 2);
        }
        let r = rows(k);
        if first.len() < 1_024 {
            first.push(r.clone());
        }
        s.push(t, &r);
        if k % 1_000 == 0 {
            over += u64::from(s.heap_bytes() > s.worst_case_bytes());
        }
    }
    let kept = s.kept();
    let t: Vec<f64> = (0..first.len()).map(|k| k as f64 / 10.0).collect();
    let probe = BlockProbe::new(GpuMetric::COUNT, &narrow_gpu_divs(), &t, &first);
    let (freeze_s, decode_s) = block_costs(&probe);
    json!({
        "name": name,
        "recent_rows": kept.recent_rows,
        "recent_minutes": kept.recent_rows as f64 / 600.0,
        "recent_cap": RECENT_ROWS_DEFAULT,
        "head_rows": kept.head_rows,
        "window_rows": kept.window_rows,
        "window_rows_marked": WINDOWS * 601,
        "bytes_per_row": kept.frozen_bytes as f64 / kept.frozen_rows.max(1) as f64,
        "heap_bytes": s.heap_bytes(),
        "bound_bytes": s.worst_case_bytes(),
        "over_bound": over,
        "freeze_us_per_block": freeze_s * 1e6,
        "decode_us_per_block": decode_s * 1e6,
    })
}

/// Seconds to freeze the probe's block and to decode it (median of 101 each).
fn block_costs(probe: &BlockProbe) -> (f64, f64) {
    let median = |f: &dyn Fn() -> usize| {
        let mut v: Vec<f64> = (0..101)
            .map(|_| {
                let t0 = Instant::now();
                std::hint::black_box(f());
                t0.elapsed().as_secs_f64()
            })
            .collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    (median(&|| probe.freeze()), median(&|| probe.decode()))
}
