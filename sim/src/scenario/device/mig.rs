//! MIG devices of a simulated GPU: a GPU entry's `mig` list, each a device entry of its own
//! (memory, metrics, processes) with a GPU instance id, played behind its own handle.
//!
//! What a MIG device answers follows NVML's documentation (docs/job-gpus.md, "MIG"): its
//! name, `MIG-` UUID, memory and processes; not whole-GPU utilization, power, clocks,
//! temperature or PCIe, which belong to the GPU; GPM through `nvmlGpmMigSampleGet` on the
//! GPU with the instance id. A MIG-enabled GPU itself does not report utilization rates or
//! per-process utilization.

use std::sync::Arc;

use nvml_sim_workload::Schedule;

use super::{Device, DeviceFile};
use crate::scenario::address::generated_uuid;

/// Functions a MIG device handle answers NOT_SUPPORTED.
pub const UNSUPPORTED_ON_MIG_DEVICE: [&str; 18] = [
    "nvmlDeviceGetUtilizationRates",
    "nvmlDeviceGetPowerUsage",
    "nvmlDeviceGetEnforcedPowerLimit",
    "nvmlDeviceGetTemperatureV",
    "nvmlDeviceGetTemperature",
    "nvmlDeviceGetTemperatureThreshold",
    "nvmlDeviceGetClockInfo",
    "nvmlDeviceGetMaxClockInfo",
    "nvmlDeviceGetPerformanceState",
    "nvmlDeviceGetCurrentClocksEventReasons",
    "nvmlDeviceGetCurrentClocksThrottleReasons",
    "nvmlDeviceGetPcieThroughput",
    "nvmlDeviceGetCurrPcieLinkGeneration",
    "nvmlDeviceGetCurrPcieLinkWidth",
    "nvmlDeviceGetMaxPcieLinkGeneration",
    "nvmlDeviceGetMaxPcieLinkWidth",
    "nvmlDeviceGetProcessUtilization",
    "nvmlGpmSampleGet",
];

/// Functions a MIG-enabled GPU answers NOT_SUPPORTED (nvml.h: utilization rates and
/// per-process utilization are not supported on MIG-enabled GPUs).
pub const UNSUPPORTED_ON_MIG_GPU: [&str; 2] = [
    "nvmlDeviceGetUtilizationRates",
    "nvmlDeviceGetProcessUtilization",
];

/// Most MIG devices one GPU holds (seven on A100 and H100), the answer of
/// `nvmlDeviceGetMaxMigDeviceCount`.
pub const MAX_MIG_DEVICES: u32 = 7;

impl DeviceFile {
    /// Resolves this entry as MIG device `slot` of `gpu` (whose entry named `gpu_preset`).
    pub(super) fn resolve_mig(
        &self,
        gpu: &Device,
        gpu_preset: Option<&str>,
        slot: usize,
        seed: u64,
        scenario_name: &str,
        schedule: Option<&Arc<Schedule>>,
    ) -> Result<Device, String> {
        if !self.mig.is_empty() {
            return Err("a MIG device cannot hold MIG devices".into());
        }
        if self.count != 1 {
            return Err("a MIG device is one device: leave `count` out".into());
        }
        if slot >= MAX_MIG_DEVICES as usize {
            return Err(format!("a GPU holds at most {MAX_MIG_DEVICES} MIG devices"));
        }
        let gi = self
            .gpu_instance_id
            .ok_or("a MIG device needs its `gpu_instance_id`")?;
        let slot_seed = seed.wrapping_add(0x9E37_79B9 * (slot as u64 + 1));
        let mut d = self.resolve_with(gpu.index, slot_seed, scenario_name, schedule, gpu_preset)?;
        d.instance = Some((gi, self.compute_instance_id.unwrap_or(0)));
        if self.name.is_none() {
            let profile = self.profile.as_deref().unwrap_or("slice");
            d.name = format!("{} MIG {profile}", gpu.name);
        }
        if self.uuid.is_none() {
            let generated = generated_uuid(slot_seed, scenario_name, gpu.index);
            d.uuid = format!("MIG-{}", generated.trim_start_matches("GPU-"));
        }
        d.pci = gpu.pci;
        d.unsupported
            .extend(UNSUPPORTED_ON_MIG_DEVICE.map(String::from));
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu(json: &str) -> Result<Device, String> {
        let file: DeviceFile = serde_json::from_str(json).map_err(|e| e.to_string())?;
        file.resolve(0, 0, "test", None)
    }

    #[test]
    fn mig_devices_take_the_gpu_s_model_and_answer_only_for_their_slice() {
        let d = gpu(r#"{"preset": "H100-SXM5-80GB", "mig": [
            {"profile": "3g.40gb", "gpu_instance_id": 2, "memory_total_mib": 40448,
             "processes": [{"pid": 7, "used_mib": 1000}]},
            {"profile": "4g.40gb", "gpu_instance_id": 1, "compute_instance_id": 0, "memory_total_mib": 40448}
        ]}"#)
        .expect("valid");
        assert_eq!(d.mig.len(), 2);
        let m = &d.mig[0];
        assert_eq!(m.instance, Some((2, 0)));
        assert!(m.uuid.starts_with("MIG-"), "{}", m.uuid);
        assert_ne!(d.mig[0].uuid, d.mig[1].uuid);
        assert!(m.name.ends_with("MIG 3g.40gb"), "{}", m.name);
        assert_eq!(m.facts.memory_total_mib, 40448);
        assert_eq!(m.facts.architecture, 9, "the GPU's preset");
        assert!(m.gpm, "Hopper: GPM per instance");
        assert!(m
            .unsupported
            .iter()
            .any(|f| f == "nvmlDeviceGetUtilizationRates"));
        assert!(d
            .unsupported
            .iter()
            .any(|f| f == "nvmlDeviceGetUtilizationRates"));
        assert_eq!(m.processes.len(), 1);
        assert!(d.processes.is_empty());
    }

    #[test]
    fn a_mig_device_needs_its_instance_and_cannot_nest() {
        let e = gpu(r#"{"mig": [{"memory_total_mib": 10000}]}"#).expect_err("no id");
        assert!(e.contains("gpu_instance_id"), "{e}");
        let e = gpu(r#"{"mig": [{"gpu_instance_id": 1, "mig": [{"gpu_instance_id": 2}]}]}"#)
            .expect_err("nested");
        assert!(e.contains("cannot hold"), "{e}");
        let plain = gpu("{}").expect("valid");
        assert!(plain.mig.is_empty() && plain.instance.is_none());
        assert!(!plain
            .unsupported
            .iter()
            .any(|f| f == "nvmlDeviceGetUtilizationRates"));
    }
}
