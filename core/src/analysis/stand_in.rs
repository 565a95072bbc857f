//! Evidence that names what was measured: on a device without utilization (a MIG slice),
//! the utilization-based signals read GPM SM activity instead (`signals::gpm_activity`), so
//! an evidence item of such a device that says `util_gpu` is renamed to say which metric its
//! value came from (docs/job-gpus.md, "MIG").

use crate::metric::GpuMetric;
use crate::report::Finding;
use crate::signals::Signals;

/// What an evidence item of a device whose utilization is GPM SM activity says in place of
/// `util_gpu`.
pub const SM_ACTIVITY_FOR_UTIL: &str =
    "gpm_sm_util (SM activity, read where the device reports no util_gpu)";

/// Renames `util_gpu` in the evidence of the devices whose utilization signals read GPM SM
/// activity. An item of no device is renamed when every device's signals did.
pub(super) fn name_stand_ins(findings: &mut [Finding], signals: &Signals) {
    let from_gpm = |index: u32| {
        signals
            .devices
            .iter()
            .any(|d| d.index == index && d.util_from_gpm)
    };
    let all = !signals.devices.is_empty() && signals.devices.iter().all(|d| d.util_from_gpm);
    let util = GpuMetric::UtilGpu.name();
    for e in findings.iter_mut().flat_map(|f| f.evidence.iter_mut()) {
        let stand_in = e.device.map_or(all, from_gpm);
        if stand_in && e.metric.contains(util) && !e.metric.contains(SM_ACTIVITY_FOR_UTIL) {
            e.metric = e.metric.replace(util, SM_ACTIVITY_FOR_UTIL);
        }
    }
}
