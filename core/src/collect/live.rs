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

/// Publishes the latest row of each GPU for the live status line.
pub(super) fn update_live(
    live_slot: &Mutex<Vec<LiveGpu>>,
    gpus: &[Gpu],
    rows: &[(usize, [f32; GpuMetric::COUNT])],
) {
    let opt = |v: f32| (!v.is_nan()).then_some(v);
    let live: Vec<LiveGpu> = gpus
        .iter()
        .map(|g| {
            let row = rows.iter().find(|r| r.0 == g.pos).map(|r| r.1);
            let get = |m: GpuMetric| row.and_then(|r| opt(r[m.index()]));
            LiveGpu {
                index: g.index,
                util: get(GpuMetric::UtilGpu),
                mem_used_mib: get(GpuMetric::MemUsed),
                power_w: get(GpuMetric::Power),
                temp_c: get(GpuMetric::Temp),
                sm_clock_mhz: get(GpuMetric::SmClock),
                lost: g.lost,
            }
        })
        .collect();
    let mut l = lock(live_slot);
    // Temperature is read on slow ticks only: keep the last value between them.
    let prev = std::mem::take(&mut *l);
    *l = live
        .into_iter()
        .map(|mut g| {
            if g.temp_c.is_none() {
                g.temp_c = prev
                    .iter()
                    .find(|p| p.index == g.index)
                    .and_then(|p| p.temp_c);
            }
            g
        })
        .collect();
}
