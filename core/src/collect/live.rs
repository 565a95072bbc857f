//! The latest value of each GPU, published for a live status line.

use std::sync::Mutex;

use super::gpu::Gpu;
use super::sampler::lock;
use crate::metric::GpuMetric;

/// The latest values of one GPU, for a live status line.
#[derive(Debug, Clone, Default)]
pub struct LiveGpu {
    /// NVML index.
    pub index: u32,
    /// Utilization, %.
    pub util: Option<f32>,
    /// Memory used, MiB.
    pub mem_used_mib: Option<f32>,
    /// Power, W.
    pub power_w: Option<f32>,
    /// Temperature, °C.
    pub temp_c: Option<f32>,
    /// SM clock, MHz.
    pub sm_clock_mhz: Option<f32>,
    /// Lost from the bus.
    pub lost: bool,
}

/// Publishes the latest row of each GPU for the live status line. A GPU without a row this
/// tick (buffered mode between its reads) keeps what it showed.
pub(super) fn update_live(
    live_slot: &Mutex<Vec<LiveGpu>>,
    gpus: &[Gpu],
    rows: &[(usize, f64, [f32; GpuMetric::COUNT])],
) {
    let opt = |v: f32| (!v.is_nan()).then_some(v);
    let mut l = lock(live_slot);
    let unchanged = rows.is_empty()
        && l.len() == gpus.len()
        && gpus
            .iter()
            .zip(l.iter())
            .all(|(g, p)| p.index == g.index && p.lost == g.lost);
    if unchanged {
        // No row and no GPU lost (buffered mode between reads): what it shows stands.
        return;
    }
    let prev = std::mem::take(&mut *l);
    *l = gpus
        .iter()
        .map(|g| {
            let before = prev.iter().find(|p| p.index == g.index);
            // The newest row of this GPU (a buffered read gives several, oldest first).
            let row = rows.iter().rev().find(|r| r.0 == g.pos).map(|r| r.2);
            let Some(row) = row.filter(|_| !g.lost) else {
                // A lost GPU shows nothing; one between its buffered reads, what it showed.
                let kept = before.filter(|_| !g.lost).cloned().unwrap_or_default();
                return LiveGpu {
                    index: g.index,
                    lost: g.lost,
                    ..kept
                };
            };
            let get = |m: GpuMetric| opt(row[m.index()]);
            LiveGpu {
                index: g.index,
                util: get(GpuMetric::UtilGpu),
                mem_used_mib: get(GpuMetric::MemUsed),
                power_w: get(GpuMetric::Power),
                // Temperature is read on slow ticks only: keep the last value between them.
                temp_c: get(GpuMetric::Temp).or_else(|| before.and_then(|p| p.temp_c)),
                sm_clock_mhz: get(GpuMetric::SmClock),
                lost: g.lost,
            }
        })
        .collect();
}
