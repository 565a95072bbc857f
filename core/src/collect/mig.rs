//! MIG devices, recorded as devices of their own (`docs/job-gpus.md`, "MIG").
//!
//! A MIG-enabled GPU's slices are what CUDA jobs see: each has a `MIG-` UUID, its own
//! memory and processes, and (Hopper) GPM per GPU instance, read through its GPU with
//! `nvmlGpmMigSampleGet`. Whole-GPU utilization is not supported on them; the sampler reads
//! them like GPUs and what they lack becomes unavailable with the driver's reason. They are
//! numbered after the GPUs and carry `devices[].mig` (their GPU and instance).

use crate::nvml::{Device, GpmSample, Nvml, NvmlError};
use crate::report::{DeviceInfo, MigDevice};

use super::cost::CallStats;
use super::gpu::Gpu;

/// Seconds between GPM snapshots of a MIG device: GPM SM activity is the only busy signal a
/// slice has (utilization is not supported), so it is read more often than a GPU's (once a
/// second), yet more than 100 ms apart as `nvmlGpmMigSampleGet` requires (nvml.h).
pub const GPM_PERIOD_S: f64 = 0.15;

/// Most MIG slots asked for per GPU: seven slices on A100 and H100, with room to spare
/// against a driver that answers a larger count.
const MAX_SLOTS: u32 = 16;

/// Where a MIG device's GPM snapshots come from: its GPU and GPU instance.
#[derive(Debug, Clone, Copy)]
pub struct GpmRoute {
    /// The GPU the slice belongs to.
    pub gpu: Device,
    /// Its GPU instance id.
    pub gpu_instance: u32,
}

/// One opened MIG device.
pub struct Opened {
    /// Its sampler state.
    pub gpu: Gpu,
    /// Its static facts, with `mig` set.
    pub info: DeviceInfo,
    /// How its GPM is read, when it is.
    pub route: Option<GpmRoute>,
}

/// The MIG devices of GPU `gpu` (recorded as device `gpu_index`), numbered from
/// `next_index` at recording positions from `next_pos`. A GPU without MIG mode, or a
/// driver without the MIG functions, has none.
pub fn open_slices(
    n: &Nvml,
    gpu: Device,
    gpu_index: u32,
    (next_index, next_pos): (u32, usize),
    want_gpm: bool,
    stats: &mut CallStats,
) -> Vec<Opened> {
    let enabled = stats
        .time("nvmlDeviceGetMigMode", || n.mig_mode(gpu))
        .is_ok_and(|(current, _)| current);
    if !enabled {
        return Vec::new();
    }
    let Ok(max) = stats.time("nvmlDeviceGetMaxMigDeviceCount", || {
        n.max_mig_device_count(gpu)
    }) else {
        return Vec::new();
    };
    let mut out: Vec<Opened> = Vec::new();
    for slot in 0..max.min(MAX_SLOTS) {
        // NOT_FOUND is an empty slot.
        let Ok(h) = stats.time("nvmlDeviceGetMigDeviceHandleByIndex", || {
            n.mig_device_by_index(gpu, slot)
        }) else {
            continue;
        };
        let index = next_index + out.len() as u32;
        let pos = next_pos + out.len();
        let (g, mut info) = Gpu::open_handle(n, pos, index, h, want_gpm.then_some(gpu));
        let gpu_instance = n.gpu_instance_id(h).ok();
        info.mig = Some(MigDevice {
            parent: gpu_index,
            slot,
            gpu_instance,
            compute_instance: n.compute_instance_id(h).ok(),
        });
        let route = gpu_instance.filter(|_| g.gpm).map(|gi| GpmRoute {
            gpu,
            gpu_instance: gi,
        });
        out.push(Opened {
            gpu: g,
            info,
            route,
        });
    }
    out
}

/// Takes a GPM snapshot into `sample`: of the GPU instance for a MIG device (`route`), of
/// device `h` otherwise.
pub fn gpm_snapshot(
    n: &Nvml,
    h: Device,
    route: Option<GpmRoute>,
    sample: &GpmSample<'_>,
    stats: &mut CallStats,
) -> Result<(), NvmlError> {
    match route {
        Some(r) => stats.time("nvmlGpmMigSampleGet", || {
            n.gpm_mig_sample_get(r.gpu, r.gpu_instance, sample)
        }),
        None => stats.time("nvmlGpmSampleGet", || n.gpm_sample_get(h, sample)),
    }
}
