//! The sampler's first step: open every GPU NVML counts, then the XID event set and the
//! GPM sample buffers that the ticks read into.

use super::{lock, Shared};
use crate::collect::clock::Clock;
use crate::collect::cost::CallStats;
use crate::collect::facts::nvml_info;
use crate::collect::gpu::Gpu;
use crate::collect::health::HealthWatch;
use crate::collect::host_rows::host_column_name;
use crate::collect::procwatch::ProcWatch;
use crate::collect::RecorderConfig;
use crate::host::HostSampler;
use crate::metric::GpuMetric;
use crate::nvml::{EventSet, GpmSample, Nvml, EVENT_XID_CRITICAL};
use crate::report::{Capability, DeviceInfo};

/// A GPU's two GPM samples (the last and the next) and whether the last one was taken.
pub(super) type GpmPair<'n> = Option<(GpmSample<'n>, GpmSample<'n>, bool)>;

/// What the ticks read from: NVML, the opened GPUs and their event set and GPM buffers,
/// the host and the job's processes, and the cost of it all.
pub(super) struct Sources<'n> {
    pub nvml: Option<&'n Nvml>,
    pub gpus: Vec<Gpu>,
    pub events: Option<EventSet<'n>>,
    pub gpm: Vec<GpmPair<'n>>,
    /// How each device's GPM is read: `Some` for a MIG slice (`collect::mig`).
    pub gpm_routes: Vec<Option<crate::collect::mig::GpmRoute>>,
    pub host: Option<HostSampler>,
    pub procs: ProcWatch,
    pub stats: CallStats,
    /// Thread CPU spent reading GPUs inside ticks, nanoseconds.
    pub gpu_work_ns: u64,
    /// Each GPU's health counters (`collect::health`), in the order of `gpus`; `None` for
    /// a MIG slice, whose GPU's counters are its own.
    pub health: Vec<Option<HealthWatch>>,
}

impl<'n> Sources<'n> {
    /// Opens the GPUs (each recorded as a device, a failed one with why), then the event
    /// set and GPM buffers; `shared.probed` is set once the devices are listed.
    pub fn open(
        shared: &Shared,
        cfg: &RecorderConfig,
        clock: &Clock,
        nvml: Option<&'n Nvml>,
    ) -> Self {
        let mut stats = CallStats::default();
        let (gpus, gpm_routes) = nvml.map_or_else(
            || (Vec::new(), Vec::new()),
            |n| open_gpus(shared, cfg, clock, n, &mut stats),
        );
        let mut gpus = gpus;
        if cfg.nvml_samples {
            for g in &mut gpus {
                g.buffer_samples();
            }
        }
        shared.probed.set();
        let health = {
            let rec = lock(&shared.rec);
            gpus.iter()
                .zip(&gpm_routes)
                .map(|(g, route)| {
                    let links = rec.devices.get(g.pos).and_then(|d| d.info.nvlink_links);
                    route.is_none().then(|| HealthWatch::new(links))
                })
                .collect()
        };
        let events = nvml.and_then(|n| {
            let mut set = n.event_set().ok()?;
            for g in &gpus {
                // A GPU without event support leaves the set usable for the others.
                let _ = set.register(g.handle(), EVENT_XID_CRITICAL);
            }
            Some(set)
        });
        let gpm = gpus
            .iter()
            .map(|g| {
                let n = nvml?;
                if !g.gpm {
                    return None;
                }
                Some((n.gpm_sample().ok()?, n.gpm_sample().ok()?, false))
            })
            .collect();
        Sources {
            nvml,
            gpus,
            events,
            gpm,
            gpm_routes,
            host: cfg.host.then(|| HostSampler::new(cfg.target_pid)),
            procs: ProcWatch::new(cfg.job.pid.or(cfg.target_pid)).with_ns(
                cfg.job
                    .host_proc
                    .as_deref()
                    .map(crate::collect::nsmap::NsMap::at),
            ),
            stats,
            gpu_work_ns: 0,
            health,
        }
    }

    /// Host columns that could not be read, under their report names.
    pub fn host_unavailable(&self) -> Option<Vec<(String, String)>> {
        let s = self.host.as_ref()?;
        Some(
            s.unavailable()
                .iter()
                .map(|(k, v)| (host_column_name(k).to_string(), v.clone()))
                .collect(),
        )
    }
}

/// The opened GPUs and MIG slices, and how each one's GPM is read.
type Opened = (Vec<Gpu>, Vec<Option<crate::collect::mig::GpmRoute>>);

/// Counts and opens the GPUs, recording each as a device of the recording, then the MIG
/// slices of MIG-enabled GPUs as devices of their own after them.
fn open_gpus(
    shared: &Shared,
    cfg: &RecorderConfig,
    clock: &Clock,
    n: &Nvml,
    stats: &mut CallStats,
) -> Opened {
    let info = nvml_info(n);
    let count = match n.device_count() {
        Ok(c) => c,
        Err(e) => {
            lock(&shared.rec).gpu_absent_reason =
                Some(format!("NVML loaded but could not count GPUs: {e}"));
            0
        }
    };
    let mut rec = lock(&shared.rec);
    rec.nvml = Some(info);
    if count == 0 && rec.gpu_absent_reason.is_none() {
        rec.gpu_absent_reason = Some("NVML reports no GPU on this machine".into());
    }
    let mut gpus = Vec::new();
    for i in 0..count {
        let pos = rec.devices.len();
        // A failed call while opening is a fault like one while sampling: listed with
        // its function and code, at the time the GPUs were opened.
        let t = clock.now();
        match Gpu::open(n, pos, i, cfg.gpm, stats) {
            Ok((mut g, info)) => {
                for e in g.take_open_errors() {
                    rec.count_fault(Some(i), e.function, e.code, e.code_name(), t);
                }
                rec.add_device(info);
                gpus.push(g);
            }
            Err(e) => {
                rec.count_fault(Some(i), e.function, e.code, e.code_name(), t);
                let mut info = DeviceInfo {
                    index: i,
                    ..Default::default()
                };
                for m in GpuMetric::ALL {
                    info.capabilities.insert(
                        m.name().into(),
                        Capability::unavailable(format!("device handle unavailable: {e}")),
                    );
                }
                rec.add_device(info);
            }
        }
    }
    let mut routes = vec![None; gpus.len()];
    let whole: Vec<(crate::nvml::Device, u32)> =
        gpus.iter().map(|g| (g.handle(), g.index)).collect();
    for (h, index) in whole {
        let next = (rec.devices.len() as u32, rec.devices.len());
        for m in crate::collect::mig::open_slices(n, h, index, next, cfg.gpm, stats) {
            rec.add_device(m.info);
            gpus.push(m.gpu);
            routes.push(m.route);
        }
    }
    (gpus, routes)
}
