//! A one-shot probe of the GPUs: static facts and which metrics work, for `gpuwhy devices`.

use std::path::Path;

use super::cost::CallStats;
use super::facts::nvml_info;
use super::gpu::Gpu;
use crate::metric::GpuMetric;
use crate::nvml::{Nvml, NvmlError};
use crate::report::{DeviceInfo, NvmlInfo};
use crate::Result;

/// What [`probe`] found.
#[derive(Debug, Clone)]
pub struct Probe {
    /// The library's facts.
    pub nvml: NvmlInfo,
    /// Each device with its capabilities.
    pub devices: Vec<DeviceInfo>,
    /// Calls that failed while a GPU was opened (its handle, or one of its static facts),
    /// other than with "not supported here", by NVML index: what a recording lists in its
    /// `faults`.
    pub open_errors: Vec<(u32, NvmlError)>,
}

/// Loads NVML, opens every GPU and reads every metric once (twice for the rate metrics that
/// need two readings), returning the library facts and each device with its capabilities.
pub fn probe(nvml_path: Option<&Path>, gpm: bool) -> Result<Probe> {
    let nvml = Nvml::load(nvml_path)?;
    let info = nvml_info(&nvml);
    let count = nvml.device_count().map_err(|e| nvml.error(e))?;
    let mut stats = CallStats::default();
    let mut out = Vec::new();
    let mut open_errors = Vec::new();
    for i in 0..count {
        match Gpu::open(&nvml, i as usize, i, gpm, &mut stats) {
            Ok((mut g, mut d)) => {
                open_errors.extend(g.take_open_errors().into_iter().map(|e| (i, e)));
                let mut row = [f32::NAN; GpuMetric::COUNT];
                let _ = g.sample(&nvml, true, &mut row, &mut stats);
                if g.gpm {
                    if let (Ok(a), Ok(b)) = (nvml.gpm_sample(), nvml.gpm_sample()) {
                        let mut o = Vec::new();
                        let first = nvml.gpm_sample_get(g.handle(), &a);
                        // GPM needs more than 100 ms between its two samples
                        // (`docs/references.md#nvml-gpm-interval`).
                        std::thread::sleep(std::time::Duration::from_millis(110));
                        let r = first
                            .and_then(|()| nvml.gpm_sample_get(g.handle(), &b))
                            .and_then(|()| nvml.gpm_metrics(&a, &b, Gpu::gpm_ids()));
                        g.store_gpm(r, &mut row, &mut o);
                    }
                }
                d.capabilities = g.capabilities();
                d.lost_at_s = g.lost.then_some(0.0);
                out.push(d);
            }
            Err(e) => {
                open_errors.push((i, e));
                let mut d = DeviceInfo {
                    index: i,
                    ..Default::default()
                };
                d.name = Some(format!("(cannot open: {e})"));
                out.push(d);
            }
        }
    }
    Ok(Probe {
        nvml: info,
        devices: out,
        open_errors,
    })
}
