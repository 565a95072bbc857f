//! NVML event sets: Xid errors and other device events, delivered by a blocking wait.
//! Linux only in NVML itself (the Windows driver reports an empty supported mask).

use std::ffi::{c_uint, c_void};

use super::device::Device;
use super::error::NvmlError;
use super::library::{check, Nvml};
use super::sys::{self, codes};

/// `nvmlEventTypeXidCriticalError`: a critical Xid error; the Xid is in [`EventData::xid`].
pub const EVENT_XID_CRITICAL: u64 = super::sys::enums::NVML_EVENT_TYPE_XID_CRITICAL_ERROR;

/// One event from [`EventSet::wait`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventData {
    /// The device it came from.
    pub device: Device,
    /// The event bit, e.g. [`EVENT_XID_CRITICAL`].
    pub event_type: u64,
    /// For Xid events the Xid number (999 = unknown Xid); 0 for other events.
    pub xid: u64,
}

/// An NVML event set, freed on drop. Send but not Sync: NVML does not make one set safe
/// for concurrent use (docs/nvml-facts.md, "Conventions"), so register and wait take `&mut self`.
pub struct EventSet<'nvml> {
    nvml: &'nvml Nvml,
    handle: sys::nvmlEventSet_t,
}

// SAFETY: the set handle is an opaque NVML object with no thread affinity; moving it to
// another thread is fine as long as only one thread uses it at a time, which `&mut self`
// on every operation and the absence of `Sync` guarantee. `&Nvml` is Send (Nvml is Sync).
unsafe impl Send for EventSet<'_> {}

impl std::fmt::Debug for EventSet<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EventSet({:p})", self.handle)
    }
}

impl Nvml {
    /// Creates an empty event set.
    pub fn event_set(&self) -> Result<EventSet<'_>, NvmlError> {
        self.syms.event_set_create.call(|symbol, f| {
            let mut handle: *mut c_void = std::ptr::null_mut();
            // SAFETY: `f` is `nvmlReturn_t (nvmlEventSet_t*)`; `handle` is a valid out-pointer.
            let rc = unsafe { f(&mut handle) };
            check(symbol, rc)?;
            if handle.is_null() {
                return Err(NvmlError::new(
                    "nvmlEventSetCreate (returned a NULL set)",
                    codes::UNKNOWN,
                ));
            }
            Ok(EventSet { nvml: self, handle })
        })
    }
}

impl EventSet<'_> {
    /// Registers the events of `mask` that `d` supports and returns the mask actually
    /// registered. Only events after this call are delivered.
    ///
    /// # Errors
    ///
    /// NOT_SUPPORTED when `d` supports none of `mask` (the set stays usable for other
    /// devices); NVML's error otherwise. After UNKNOWN, NVML asks that the set be dropped.
    pub fn register(&mut self, d: Device, mask: u64) -> Result<u64, NvmlError> {
        let h = self.nvml.raw(d)?;
        let supported = self.nvml.syms.supported_event_types.call(|symbol, f| {
            let mut out: u64 = 0;
            // SAFETY: `f` is `nvmlReturn_t (nvmlDevice_t, unsigned long long*)`; `out` is valid.
            let rc = unsafe { f(h, &mut out) };
            check(symbol, rc).map(|()| out)
        });
        let wanted = match supported {
            Ok(s) => mask & s,
            // Without the query, let registration itself say what it accepts.
            Err(e) if e.missing_symbol => mask,
            Err(e) => return Err(e),
        };
        if wanted == 0 {
            return Err(NvmlError::new(
                "nvmlDeviceGetSupportedEventTypes",
                codes::NOT_SUPPORTED,
            ));
        }
        let set = self.handle;
        self.nvml.syms.register_events.call(|symbol, f| {
            // SAFETY: `f` is `nvmlReturn_t (nvmlDevice_t, unsigned long long, nvmlEventSet_t)`;
            // `h` and `set` are live handles from this library.
            let rc = unsafe { f(h, wanted, set) };
            check(symbol, rc).map(|()| wanted)
        })
    }

    /// Waits up to `timeout_ms` for an event: `Ok(None)` on timeout. May return early when
    /// the thread is interrupted (then also `Ok(None)` or an error, as NVML reports it).
    pub fn wait(&mut self, timeout_ms: u32) -> Result<Option<EventData>, NvmlError> {
        let set = self.handle;
        let owner = self.nvml.id;
        let res = self.nvml.syms.event_set_wait.call(|symbol, f| {
            let mut data = sys::nvmlEventData_t {
                device: std::ptr::null_mut(),
                eventType: 0,
                eventData: 0,
                gpuInstanceId: u32::MAX,
                computeInstanceId: u32::MAX,
            };
            // SAFETY: `f` is `nvmlReturn_t (nvmlEventSet_t, nvmlEventData_t*, unsigned int)`;
            // `set` is live and `data` is a full 32-byte struct (the unversioned function
            // fills only its first 24 bytes).
            let rc = unsafe { f(set, &mut data, timeout_ms as c_uint) };
            check(symbol, rc).map(|()| data)
        });
        match res {
            Ok(data) => Ok(Some(EventData {
                device: Device {
                    handle: data.device,
                    owner,
                },
                event_type: data.eventType,
                xid: data.eventData,
            })),
            Err(e) if e.code == codes::TIMEOUT => Ok(None),
            Err(e) => Err(e),
        }
    }
}

impl Drop for EventSet<'_> {
    fn drop(&mut self) {
        if let Some(free) = self.nvml.syms.event_set_free.get() {
            // SAFETY: `free` is `nvmlReturn_t (nvmlEventSet_t)`; the set was created by this
            // library and is freed exactly once, here. Failure cannot be acted on in drop.
            let _ = unsafe { free(self.handle) };
        }
    }
}
