//! The library's global state: the init refcount, the scenario being played, simulated
//! time, and the per-run objects callers create (event sets, GPM samples).
//!
//! One mutex guards it all; NVML promises thread safety and the sampler calls from a
//! background thread while others may call too. The lock is never held while a call
//! sleeps (latency faults, event waits).

mod pause;
pub use pause::pause;
#[cfg(test)]
pub use pause::{init_pausing, paused_ms};

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::{Mutex, MutexGuard};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

mod objects;

use crate::abi::*;
use crate::scenario::{self, Device, Fault, Scenario};

pub use objects::*;
use objects::{EventSet, NvlinkCounters};

struct Global {
    refcount: u32,
    run: Option<Run>,
    /// The last scenario parsed, by its text, so re-initialising does not leak a new table.
    cache: Option<(String, &'static Scenario)>,
    next_token: usize,
}

static GLOBAL: Mutex<Global> = Mutex::new(Global {
    refcount: 0,
    run: None,
    cache: None,
    next_token: 0,
});

fn lock() -> MutexGuard<'static, Global> {
    // A panic inside a call is caught at the C boundary; the state it leaves is still
    // consistent (every mutation is a single assignment or insert), so poison is ignored.
    GLOBAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Everything that lives from the first successful init to the last shutdown.
struct Run {
    scenario: &'static Scenario,
    epoch: Instant,
    epoch_unix_us: i64,
    speed: f64,
    offset_s: f64,
    event_sets: BTreeMap<usize, EventSet>,
    #[cfg_attr(feature = "old-driver", allow(dead_code))]
    gpm_samples: BTreeMap<usize, Option<GpmSnapshot>>,
    nvlink: Vec<NvlinkCounters>,
}

impl Run {
    fn now(&self) -> f64 {
        self.offset_s + self.epoch.elapsed().as_secs_f64() * self.speed
    }

    fn device_of(&self, handle: NvmlDevice) -> Option<&'static Device> {
        let scenario: &'static Scenario = self.scenario;
        // A MIG device's handle is its address in its GPU's `mig` list.
        scenario
            .devices
            .iter()
            .flat_map(|d| std::iter::once(d).chain(&d.mig))
            .find(|d| std::ptr::eq(*d, handle.cast::<Device>().cast_const()))
    }
}

/// The context of one call that passed the common checks.
#[derive(Clone, Copy)]
pub struct Call {
    /// The scenario being played.
    pub scenario: &'static Scenario,
    /// Simulated time of the call.
    pub t: f64,
    epoch_unix_us: i64,
}

impl Call {
    /// Microseconds since 1970 at simulated time `t`: wall time at init plus simulated
    /// time, so rates computed from NVML timestamps agree with the scenario at any speed.
    pub fn unix_us(&self) -> i64 {
        self.epoch_unix_us + (self.t * 1e6) as i64
    }
}

/// The handle NVML callers see for a device: its address in the leaked device table.
pub fn handle_of(device: &'static Device) -> NvmlDevice {
    std::ptr::from_ref(device).cast_mut().cast::<c_void>()
}

/// `nvmlInit*`: loads the scenario on the first call, counts the others.
pub fn init() -> NvmlReturn {
    let mut g = lock();
    if g.refcount > 0 {
        g.refcount += 1;
        return SUCCESS;
    }
    let (scenario, speed) = match load(&mut g) {
        Ok(loaded) => loaded,
        Err(message) => {
            eprintln!("nvml-sim: {message}");
            return ERROR_UNKNOWN;
        }
    };
    if scenario.init_delay_ms > 0 {
        // A slow init, without the lock: other threads' calls meanwhile answer
        // UNINITIALIZED, as they would while the real library is still starting.
        drop(g);
        pause::pause_init(scenario.init_delay_ms);
        g = lock();
        if g.refcount > 0 {
            // Another thread's init finished first.
            g.refcount += 1;
            return SUCCESS;
        }
    }
    if let Some(code) = scenario.init_error {
        return code;
    }
    g.refcount = 1;
    g.run = Some(Run {
        scenario,
        epoch: Instant::now(),
        epoch_unix_us: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX)),
        speed,
        offset_s: 0.0,
        event_sets: BTreeMap::new(),
        gpm_samples: BTreeMap::new(),
        nvlink: vec![NvlinkCounters::default(); scenario.devices.len()],
    });
    SUCCESS
}

fn load(g: &mut Global) -> Result<(&'static Scenario, f64), String> {
    let (text, origin) = scenario::read()?;
    let scenario = match &g.cache {
        Some((cached, scenario)) if *cached == text => *scenario,
        _ => {
            let parsed = Scenario::from_json(&text)
                .map_err(|e| format!("scenario {origin} is not valid: {e}; {}", origin.remedy()))?;
            // Handles point into this table, so it must outlive every caller: leak it.
            // Re-inits with the same text reuse it, so only a changed scenario costs memory.
            let leaked: &'static Scenario = Box::leak(Box::new(parsed));
            g.cache = Some((text, leaked));
            leaked
        }
    };
    let speed = scenario::speed_override()?.unwrap_or(scenario.speed);
    Ok((scenario, speed))
}

/// `nvmlShutdown`: the last one ends the run. Extra shutdowns are not an error.
pub fn shutdown() -> NvmlReturn {
    let mut g = lock();
    if g.refcount > 0 {
        g.refcount -= 1;
        if g.refcount == 0 {
            g.run = None;
        }
    }
    SUCCESS
}

/// Common checks of a call about no particular device: initialised, scripted faults.
pub fn system(function: &str) -> Result<Call, NvmlReturn> {
    enter(function, Target::None).map(|(call, _)| call)
}

/// Common checks of a call about `handle`: initialised, valid handle, faults, lost GPU,
/// `unsupported` and `no_permission`.
pub fn device(function: &str, handle: NvmlDevice) -> Result<(Call, &'static Device), NvmlReturn> {
    device_call(function, Target::Handle(handle))
}

/// Like [`device`] for a call that names the device by its index in the scenario's table
/// (GPM samples; the `old-driver` build has none).
#[cfg_attr(feature = "old-driver", allow(dead_code))]
pub fn device_by_index(function: &str, index: u32) -> Result<(Call, &'static Device), NvmlReturn> {
    device_call(function, Target::Index(index))
}

/// Like [`device`] for `nvmlDeviceGetHandleByIndex`: `index` counts only the devices still
/// listed, so once a GPU is removed the ones after it move down one index.
pub fn device_listed(function: &str, index: u32) -> Result<(Call, &'static Device), NvmlReturn> {
    device_call(function, Target::Listed(index))
}

/// Where GPM samples of MIG devices number them: [`mig_gpm_id`].
const MIG_GPM_BASE: u32 = 0x4000_0000;

/// The number a GPM sample of MIG device `slot` of GPU `gpu` records as its device, told
/// apart from the GPUs' table positions by [`device_at`].
#[cfg_attr(feature = "old-driver", allow(dead_code))]
pub fn mig_gpm_id(gpu: u32, slot: usize) -> u32 {
    MIG_GPM_BASE + gpu * 16 + slot as u32
}

/// The device a GPM sample's number stands for: a GPU by table position, or a MIG device
/// by [`mig_gpm_id`].
fn device_at(scenario: &'static Scenario, id: u32) -> Option<&'static Device> {
    if id < MIG_GPM_BASE {
        return scenario.devices.get(id as usize);
    }
    let rel = id - MIG_GPM_BASE;
    scenario
        .devices
        .get((rel / 16) as usize)?
        .mig
        .get((rel % 16) as usize)
}

/// The devices still listed at simulated time `t` (not removed by a `gpu_removed` fault).
pub fn listed(scenario: &'static Scenario, t: f64) -> impl Iterator<Item = &'static Device> {
    scenario
        .devices
        .iter()
        .filter(move |d| !is_removed(scenario, d.index, t))
}

fn device_call(function: &str, target: Target) -> Result<(Call, &'static Device), NvmlReturn> {
    let (call, device) = enter(function, target)?;
    device.map(|d| (call, d)).ok_or(ERROR_INVALID_ARGUMENT)
}

enum Target {
    None,
    Handle(NvmlDevice),
    #[cfg_attr(feature = "old-driver", allow(dead_code))]
    Index(u32),
    Listed(u32),
}

fn enter(function: &str, target: Target) -> Result<(Call, Option<&'static Device>), NvmlReturn> {
    let (call, device) = {
        let g = lock();
        let run = g.run.as_ref().ok_or(ERROR_UNINITIALIZED)?;
        let t = run.now();
        let device = match target {
            Target::None => None,
            Target::Listed(i) => Some(
                listed(run.scenario, t)
                    .nth(i as usize)
                    .ok_or(ERROR_INVALID_ARGUMENT)?,
            ),
            Target::Handle(h) => Some(run.device_of(h).ok_or(ERROR_INVALID_ARGUMENT)?),
            Target::Index(i) => Some(device_at(run.scenario, i).ok_or(ERROR_INVALID_ARGUMENT)?),
        };
        let call = Call {
            scenario: run.scenario,
            t,
            epoch_unix_us: run.epoch_unix_us,
        };
        (call, device)
    };
    let index = device.map(|d| d.index);
    let active = |from: f64, until: f64| call.t >= from && call.t < until;
    let mut delay_ms = 0u64;
    let mut error = None;
    for fault in call.scenario.faults.iter().filter(|f| f.applies_to(index)) {
        match fault {
            Fault::Latency {
                function: f,
                ms,
                from_s,
                until_s,
                ..
            } if f == function && active(*from_s, *until_s) => {
                delay_ms = delay_ms.saturating_add(*ms);
            }
            Fault::Error {
                function: f,
                code,
                from_s,
                until_s,
                ..
            } if f == function && active(*from_s, *until_s) => {
                error = error.or(Some(*code));
            }
            _ => {}
        }
    }
    pause::pause(delay_ms);
    if let Some(code) = error {
        return Err(code);
    }
    if let Some(d) = device {
        if is_lost(call.scenario, d.index, call.t) || is_removed(call.scenario, d.index, call.t) {
            return Err(ERROR_GPU_IS_LOST);
        }
        if d.unsupported.iter().any(|f| f == function) {
            return Err(ERROR_NOT_SUPPORTED);
        }
        if d.no_permission.iter().any(|f| f == function) {
            return Err(ERROR_NO_PERMISSION);
        }
    }
    Ok((call, device))
}

fn is_lost(scenario: &Scenario, index: u32, t: f64) -> bool {
    scenario.faults.iter().any(|f| {
        matches!(f, Fault::GpuLost { at_s, .. } if *at_s <= t) && f.applies_to(Some(index))
    })
}

fn is_removed(scenario: &Scenario, index: u32, t: f64) -> bool {
    scenario.faults.iter().any(|f| {
        matches!(f, Fault::GpuRemoved { at_s, .. } if *at_s <= t) && f.applies_to(Some(index))
    })
}

/// Moves simulated time forward, so tests reach scripted times without sleeping.
#[cfg(test)]
pub fn advance(seconds: f64) {
    if let Some(run) = lock().run.as_mut() {
        run.offset_s += seconds;
    }
}

/// The current init refcount.
#[cfg(test)]
pub fn refcount() -> u32 {
    lock().refcount
}
