//! What callers create during a run: event sets, GPM samples, and the NVLink counters the
//! field values integrate.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{c_uint, c_void};

use super::{lock, Global};
use crate::abi::*;
use crate::scenario::Device;

/// Spacing of opaque tokens handed out for event sets and GPM samples. They are never
/// dereferenced, only looked up, so a stale or forged token is harmless.
const TOKEN_BASE: usize = 0x5EED_0000;
const TOKEN_STEP: usize = 16;

/// Longest simulated step when integrating link rates into counters, seconds: shorter than
/// the shortest phase of a bundled scenario's step (6 ms), so a burst is not stepped over and
/// the counters' rate over a tick is the scenario's throughput.
const INTEGRATION_STEP_S: f64 = 0.005;
/// Most integration steps one call may take (bounds the cost of long gaps at high speed:
/// past 2 s between calls the steps grow longer, and a long window then averages over many
/// steps of the scenario's workload instead of resolving each burst).
const MAX_INTEGRATION_STEPS: f64 = 400.0;

#[derive(Default)]
pub(super) struct EventSet {
    /// Registered event-type mask per device index.
    registered: BTreeMap<u32, u64>,
    /// (fault index, device index) pairs already delivered through this set.
    delivered: BTreeSet<(usize, u32)>,
}

/// A GPM sample: which device, at what simulated time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GpmSnapshot {
    /// Device index.
    pub device: u32,
    /// Simulated time of the sample.
    pub t: f64,
}

#[derive(Default, Clone, Copy)]
pub(super) struct NvlinkCounters {
    t: f64,
    tx_kib: f64,
    rx_kib: f64,
    /// PCIe bytes, integrated from the KB/s patterns with NVML's 1 KB = 1024 bytes.
    pcie_tx_bytes: f64,
    pcie_rx_bytes: f64,
    /// Nanoseconds each perf policy held the clocks down, in [`POLICIES`] order.
    policy_ns: [f64; POLICIES.len()],
}

/// The perf-policy counters (fields 74–79) the simulator keeps, each with the
/// `clock_event_reasons` bits whose time it accumulates: power cap, thermal (software or
/// hardware), sync boost, board limit, reliability.
pub const POLICIES: [(c_uint, u64); 5] = [
    (FI_PERF_POLICY_POWER, 0x4),
    (FI_PERF_POLICY_THERMAL, 0x20 | 0x40),
    (FI_PERF_POLICY_SYNC_BOOST, 0x10),
    (FI_PERF_POLICY_BOARD_LIMIT, 0x200),
    (FI_PERF_POLICY_RELIABILITY, 0x400),
];

fn new_token(g: &mut Global) -> usize {
    g.next_token += 1;
    TOKEN_BASE + g.next_token * TOKEN_STEP
}

fn token_ptr(token: usize) -> *mut c_void {
    std::ptr::without_provenance_mut(token)
}

/// `nvmlEventSetCreate`.
pub fn event_set_create() -> Result<NvmlEventSet, NvmlReturn> {
    let mut g = lock();
    if g.run.is_none() {
        return Err(ERROR_UNINITIALIZED);
    }
    let token = new_token(&mut g);
    let run = g.run.as_mut().ok_or(ERROR_UNINITIALIZED)?;
    run.event_sets.insert(token, EventSet::default());
    Ok(token_ptr(token))
}

/// `nvmlDeviceRegisterEvents` after the device checks.
pub fn event_register(set: NvmlEventSet, device: u32, mask: u64) -> Result<(), NvmlReturn> {
    let mut g = lock();
    let run = g.run.as_mut().ok_or(ERROR_UNINITIALIZED)?;
    let set = run
        .event_sets
        .get_mut(&set.addr())
        .ok_or(ERROR_INVALID_ARGUMENT)?;
    *set.registered.entry(device).or_default() |= mask;
    Ok(())
}

/// The earliest XID event due on `set` and not yet delivered through it, as
/// (device, XID number); marks it delivered. Events scripted before the registration are
/// delivered too, so a late registration cannot miss a scenario's fault.
pub fn event_take(set: NvmlEventSet) -> Result<Option<(&'static Device, u64)>, NvmlReturn> {
    let mut g = lock();
    let run = g.run.as_mut().ok_or(ERROR_UNINITIALIZED)?;
    let t = run.now();
    let scenario = run.scenario;
    let set = run
        .event_sets
        .get_mut(&set.addr())
        .ok_or(ERROR_INVALID_ARGUMENT)?;
    let mut due: Option<(f64, usize, u32, u64)> = None;
    for (fi, fault) in scenario.faults.iter().enumerate() {
        let Some((at, xid)) = fault.xid_event() else {
            continue;
        };
        if at > t {
            continue;
        }
        for (&dev, &mask) in &set.registered {
            let wanted = mask & EVENT_TYPE_XID_CRITICAL_ERROR != 0 && fault.applies_to(Some(dev));
            if wanted && !set.delivered.contains(&(fi, dev)) && due.is_none_or(|d| at < d.0) {
                due = Some((at, fi, dev, xid));
            }
        }
    }
    Ok(due.and_then(|(_, fi, dev, xid)| {
        set.delivered.insert((fi, dev));
        scenario.devices.get(dev as usize).map(|d| (d, xid))
    }))
}

/// `nvmlEventSetFree`.
pub fn event_set_free(set: NvmlEventSet) -> Result<(), NvmlReturn> {
    let mut g = lock();
    let run = g.run.as_mut().ok_or(ERROR_UNINITIALIZED)?;
    run.event_sets
        .remove(&set.addr())
        .map(drop)
        .ok_or(ERROR_INVALID_ARGUMENT)
}

/// `nvmlGpmSampleAlloc`.
#[cfg(not(feature = "old-driver"))]
pub fn gpm_alloc() -> Result<NvmlGpmSample, NvmlReturn> {
    let mut g = lock();
    if g.run.is_none() {
        return Err(ERROR_UNINITIALIZED);
    }
    let token = new_token(&mut g);
    let run = g.run.as_mut().ok_or(ERROR_UNINITIALIZED)?;
    run.gpm_samples.insert(token, None);
    Ok(token_ptr(token))
}

/// `nvmlGpmSampleFree`.
#[cfg(not(feature = "old-driver"))]
pub fn gpm_free(sample: NvmlGpmSample) -> Result<(), NvmlReturn> {
    let mut g = lock();
    let run = g.run.as_mut().ok_or(ERROR_UNINITIALIZED)?;
    run.gpm_samples
        .remove(&sample.addr())
        .map(drop)
        .ok_or(ERROR_INVALID_ARGUMENT)
}

/// Records a GPM sample of `device` at `t` (after `nvmlGpmSampleGet`'s device checks).
#[cfg(not(feature = "old-driver"))]
pub fn gpm_record(sample: NvmlGpmSample, device: u32, t: f64) -> Result<(), NvmlReturn> {
    let mut g = lock();
    let run = g.run.as_mut().ok_or(ERROR_UNINITIALIZED)?;
    let slot = run
        .gpm_samples
        .get_mut(&sample.addr())
        .ok_or(ERROR_INVALID_ARGUMENT)?;
    *slot = Some(GpmSnapshot { device, t });
    Ok(())
}

/// The snapshots of two samples; both must exist and have been taken.
#[cfg(not(feature = "old-driver"))]
pub fn gpm_pair(
    s1: NvmlGpmSample,
    s2: NvmlGpmSample,
) -> Result<(GpmSnapshot, GpmSnapshot), NvmlReturn> {
    let g = lock();
    let run = g.run.as_ref().ok_or(ERROR_UNINITIALIZED)?;
    let get = |s: NvmlGpmSample| {
        run.gpm_samples
            .get(&s.addr())
            .copied()
            .flatten()
            .ok_or(ERROR_INVALID_ARGUMENT)
    };
    Ok((get(s1)?, get(s2)?))
}

/// Cumulative link counters of `device` at `t`.
#[derive(Debug, Clone, Copy)]
pub struct LinkTotals {
    /// NVLink KiB sent.
    pub nvlink_tx_kib: f64,
    /// NVLink KiB received.
    pub nvlink_rx_kib: f64,
    /// PCIe bytes sent.
    pub pcie_tx_bytes: f64,
    /// PCIe bytes received.
    pub pcie_rx_bytes: f64,
    /// Nanoseconds each perf policy held the clocks down, in [`POLICIES`] order.
    pub policy_ns: [f64; POLICIES.len()],
}

/// Every cumulative link counter of `device` at `t` (NVLink KiB, PCIe bytes): the integral
/// of its rate patterns since init, advanced incrementally so each call costs only the time
/// since the last.
pub fn link_totals(device: &Device, t: f64) -> Result<LinkTotals, NvmlReturn> {
    use crate::metric::Metric;
    let mut g = lock();
    let run = g.run.as_mut().ok_or(ERROR_UNINITIALIZED)?;
    let c = run
        .nvlink
        .get_mut(device.index as usize)
        .ok_or(ERROR_INVALID_ARGUMENT)?;
    if t > c.t {
        let steps = ((t - c.t) / INTEGRATION_STEP_S)
            .ceil()
            .clamp(1.0, MAX_INTEGRATION_STEPS);
        let dt = (t - c.t) / steps;
        for i in 0..steps as u32 {
            let mid = c.t + dt * (f64::from(i) + 0.5);
            c.tx_kib += device.value(Metric::NvlinkTxKibs, mid) * dt;
            c.rx_kib += device.value(Metric::NvlinkRxKibs, mid) * dt;
            c.pcie_tx_bytes += device.value(Metric::PcieTxKbs, mid) * 1024.0 * dt;
            c.pcie_rx_bytes += device.value(Metric::PcieRxKbs, mid) * 1024.0 * dt;
            let bits = device.value(Metric::ClockEventReasons, mid).round() as u64;
            for (ns, (_, mask)) in c.policy_ns.iter_mut().zip(POLICIES) {
                if bits & mask != 0 {
                    *ns += dt * 1e9;
                }
            }
        }
        c.t = t;
    }
    Ok(LinkTotals {
        nvlink_tx_kib: c.tx_kib,
        nvlink_rx_kib: c.rx_kib,
        pcie_tx_bytes: c.pcie_tx_bytes,
        pcie_rx_bytes: c.pcie_rx_bytes,
        policy_ns: c.policy_ns,
    })
}
