//! The table of NVML entry points, resolved once when the library is loaded.
//!
//! Each logical binding is a [`Chain`] of candidate symbols, newest first (docs/nvml-facts.md,
//! "Versioned symbols"). Only the candidates the library exports are kept. A call goes to the first
//! candidate still in use; when it answers FUNCTION_NOT_FOUND, DEPRECATED or
//! ARGUMENT_VERSION_MISMATCH the chain moves on to the next candidate for good, so a driver that
//! exports a symbol but has retired it costs one wasted call, not one per sample.
//!
//! The function pointers live here and in [`super::Nvml`] only; nothing hands them out.

use std::sync::atomic::{AtomicUsize, Ordering};

use libloading::Library;

use super::error::{wants_fallback, NvmlError};
use super::sys::fns::*;
use super::sys::health::*;
use super::sys::*;

/// The two memory-info entry points, which take different structs.
#[derive(Clone, Copy)]
pub(super) enum MemoryInfoFn {
    /// `nvmlDeviceGetMemoryInfo_v2` (R510+).
    V2(DevStructFn<nvmlMemory_v2_t>),
    /// `nvmlDeviceGetMemoryInfo`.
    V1(DevStructFn<nvmlMemory_t>),
}

/// The two temperature entry points.
#[derive(Clone, Copy)]
pub(super) enum TemperatureFn {
    /// `nvmlDeviceGetTemperatureV` (R570+).
    Versioned(DevStructFn<nvmlTemperature_v1_t>),
    /// `nvmlDeviceGetTemperature` (deprecated in 13.0).
    Legacy(DevEnumUintFn),
}

/// One logical binding: its exported candidates, newest first, and which one is in use.
pub(super) struct Chain<F> {
    /// The plain NVML name of the binding, e.g. `nvmlDeviceGetPciInfo`.
    pub(super) name: &'static str,
    /// Exported candidates in order of preference.
    candidates: Vec<(&'static str, F)>,
    /// Index into `candidates` of the one in use; only ever grows.
    active: AtomicUsize,
}

impl<F: Copy> Chain<F> {
    /// A chain over `found`, keeping the candidates the library exports.
    pub(super) fn new(
        name: &'static str,
        found: impl IntoIterator<Item = (&'static str, Option<F>)>,
    ) -> Self {
        let candidates = found
            .into_iter()
            .filter_map(|(s, f)| f.map(|f| (s, f)))
            .collect();
        Self {
            name,
            candidates,
            active: AtomicUsize::new(0),
        }
    }

    /// The symbol calls currently go to, if any candidate is exported.
    pub(super) fn resolved(&self) -> Option<&'static str> {
        self.candidates
            .get(self.active.load(Ordering::Relaxed))
            .map(|(s, _)| *s)
    }

    /// The function calls currently go to.
    pub(super) fn get(&self) -> Option<F> {
        self.candidates
            .get(self.active.load(Ordering::Relaxed))
            .map(|(_, f)| *f)
    }

    /// Runs `call` with the active candidate (its symbol name and pointer). If that reports a
    /// code for which [`wants_fallback`] holds and an older candidate exists, switches to the
    /// older one permanently and runs `call` again.
    pub(super) fn call<T>(
        &self,
        call: impl FnMut(&'static str, F) -> Result<T, NvmlError>,
    ) -> Result<T, NvmlError> {
        self.call_falling_back(wants_fallback, call)
    }

    /// [`Chain::call`], falling back on the codes for which `fallback` holds instead: for a
    /// binding whose newer symbol fails for reasons of its own (the CUDA version's `_v2`
    /// needs libcuda, which containers often lack).
    pub(super) fn call_falling_back<T>(
        &self,
        fallback: impl Fn(u32) -> bool,
        mut call: impl FnMut(&'static str, F) -> Result<T, NvmlError>,
    ) -> Result<T, NvmlError> {
        let mut i = self.active.load(Ordering::Relaxed);
        loop {
            let Some(&(symbol, f)) = self.candidates.get(i) else {
                return Err(NvmlError::missing(self.name));
            };
            match call(symbol, f) {
                Err(e) if fallback(e.code) && i + 1 < self.candidates.len() => {
                    // Another thread may have moved on already; either way the index only grows.
                    let _ = self.active.compare_exchange(
                        i,
                        i + 1,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    );
                    i += 1;
                }
                other => return other,
            }
        }
    }
}

/// Looks `symbol` up in `lib`.
///
/// # Safety
///
/// `F` must be an `unsafe extern "C" fn` type matching the C prototype of `symbol` exactly
/// (nvml.h; checked by the header test), and the returned pointer must not be called after `lib` is unloaded.
unsafe fn sym<F: Copy>(lib: &Library, symbol: &'static str) -> (&'static str, Option<F>) {
    let mut name = Vec::with_capacity(symbol.len() + 1);
    name.extend_from_slice(symbol.as_bytes());
    name.push(0);
    // SAFETY: the caller guarantees `F` is the symbol's true type and that the pointer does
    // not outlive `lib`; copying it out of the `Symbol` guard is the documented way to keep it.
    let found = unsafe { lib.get::<F>(&name) };
    (symbol, found.ok().map(|s| *s))
}

/// Declares [`Symbols`] (one `Chain` per binding) and its resolver. Each entry is
/// `field: Type = [ "newest_symbol" => map, ... ]` where `map` wraps the raw pointer into
/// `Type`'s candidate type. Keeping prototype and name side by side is what makes the one
/// `unsafe` lookup in the expansion checkable by reading.
macro_rules! symbols {
    ($( $(#[$doc:meta])* $field:ident : $name:literal, $ty:ty = [ $( $sym:literal : $raw:ty => $wrap:expr ),+ $(,)? ] ;)+) => {
        /// Every binding gpuwhy uses, resolved once at load.
        pub(super) struct Symbols {
            $( $(#[$doc])* pub(super) $field: Chain<$ty>, )+
        }

        impl Symbols {
            /// Resolves every binding in `lib`; absent symbols leave their chain shorter or empty.
            ///
            /// # Safety
            ///
            /// `lib` must stay loaded for as long as the returned table is used.
            pub(super) unsafe fn resolve(lib: &Library) -> Self {
                Self {
                    $( $field: Chain::new($name, [
                        $({
                            // SAFETY: the raw type is the prototype of this symbol in the
                            // NVML header (nvml.h; checked by the header test); the caller keeps `lib` loaded.
                            let (s, f) = unsafe { sym::<$raw>(lib, $sym) };
                            (s, f.map($wrap))
                        },)+
                    ]), )+
                }
            }

            /// `(binding, symbol in use)` for every binding, in declaration order.
            pub(super) fn resolved(&self) -> Vec<(&'static str, Option<&'static str>)> {
                vec![$( (self.$field.name, self.$field.resolved()), )+]
            }
        }

        /// Every candidate symbol with the C prototypes of the Rust type it is bound with,
        /// for the check against `nvml.h` (`header_check.rs`).
        #[cfg(test)]
        pub(super) fn prototypes() -> Vec<(&'static str, (usize, Vec<String>))> {
            vec![$($(
                ($sym, <$raw as nvml_header_check::CSig>::c_prototypes()),
            )+)+]
        }
    };
}

/// Identity for candidates whose pointer type is the chain's type.
fn same<F>(f: F) -> F {
    f
}

symbols! {
    /// Initialisation (refcounted).
    init: "nvmlInit", VoidFn = ["nvmlInit_v2": VoidFn => same, "nvmlInit": VoidFn => same];
    /// Shutdown (refcounted).
    shutdown: "nvmlShutdown", VoidFn = ["nvmlShutdown": VoidFn => same];
    /// Static text for a return code.
    error_string: "nvmlErrorString", ErrorStringFn = ["nvmlErrorString": ErrorStringFn => same];
    /// Driver version string.
    driver_version: "nvmlSystemGetDriverVersion", SysStrFn =
        ["nvmlSystemGetDriverVersion": SysStrFn => same];
    /// NVML version string.
    nvml_version: "nvmlSystemGetNVMLVersion", SysStrFn =
        ["nvmlSystemGetNVMLVersion": SysStrFn => same];
    /// CUDA driver version, 1000*major + 10*minor.
    cuda_driver_version: "nvmlSystemGetCudaDriverVersion", SysIntFn = [
        "nvmlSystemGetCudaDriverVersion_v2": SysIntFn => same,
        "nvmlSystemGetCudaDriverVersion": SysIntFn => same,
    ];
    /// Device count.
    device_count: "nvmlDeviceGetCount", SysUintFn = [
        "nvmlDeviceGetCount_v2": SysUintFn => same,
        "nvmlDeviceGetCount": SysUintFn => same,
    ];
    /// Handle by index.
    handle_by_index: "nvmlDeviceGetHandleByIndex", HandleByIndexFn = [
        "nvmlDeviceGetHandleByIndex_v2": HandleByIndexFn => same,
        "nvmlDeviceGetHandleByIndex": HandleByIndexFn => same,
    ];
    /// Product name.
    name: "nvmlDeviceGetName", DevStrFn = ["nvmlDeviceGetName": DevStrFn => same];
    /// UUID.
    uuid: "nvmlDeviceGetUUID", DevStrFn = ["nvmlDeviceGetUUID": DevStrFn => same];
    /// PCI identity. The unversioned function fills the older, shorter layout (see `device.rs`).
    pci_info: "nvmlDeviceGetPciInfo", DevStructFn<nvmlPciInfo_t> = [
        "nvmlDeviceGetPciInfo_v3": DevStructFn<nvmlPciInfo_t> => same,
        "nvmlDeviceGetPciInfo_v2": DevStructFn<nvmlPciInfo_t> => same,
        "nvmlDeviceGetPciInfo": DevStructFn<nvmlPciInfo_t> => same,
    ];
    /// `nvmlDeviceArchitecture_t`.
    architecture: "nvmlDeviceGetArchitecture", DevUintFn =
        ["nvmlDeviceGetArchitecture": DevUintFn => same];
    /// CUDA compute capability.
    compute_capability: "nvmlDeviceGetCudaComputeCapability", DevIntIntFn =
        ["nvmlDeviceGetCudaComputeCapability": DevIntIntFn => same];
    /// GPU and memory-controller busy percentages.
    utilization: "nvmlDeviceGetUtilizationRates", DevStructFn<nvmlUtilization_t> =
        ["nvmlDeviceGetUtilizationRates": DevStructFn<nvmlUtilization_t> => same];
    /// Memory capacity.
    memory_info: "nvmlDeviceGetMemoryInfo", MemoryInfoFn = [
        "nvmlDeviceGetMemoryInfo_v2": DevStructFn<nvmlMemory_v2_t> => MemoryInfoFn::V2,
        "nvmlDeviceGetMemoryInfo": DevStructFn<nvmlMemory_t> => MemoryInfoFn::V1,
    ];
    /// Board power, mW.
    power_usage: "nvmlDeviceGetPowerUsage", DevUintFn =
        ["nvmlDeviceGetPowerUsage": DevUintFn => same];
    /// Enforced power limit, mW.
    enforced_power_limit: "nvmlDeviceGetEnforcedPowerLimit", DevUintFn =
        ["nvmlDeviceGetEnforcedPowerLimit": DevUintFn => same];
    /// GPU temperature.
    temperature: "nvmlDeviceGetTemperature", TemperatureFn = [
        "nvmlDeviceGetTemperatureV": DevStructFn<nvmlTemperature_v1_t> => TemperatureFn::Versioned,
        "nvmlDeviceGetTemperature": DevEnumUintFn => TemperatureFn::Legacy,
    ];
    /// Temperature thresholds.
    temperature_threshold: "nvmlDeviceGetTemperatureThreshold", DevEnumUintFn =
        ["nvmlDeviceGetTemperatureThreshold": DevEnumUintFn => same];
    /// Current clocks.
    clock_info: "nvmlDeviceGetClockInfo", DevEnumUintFn =
        ["nvmlDeviceGetClockInfo": DevEnumUintFn => same];
    /// Maximum clocks.
    max_clock_info: "nvmlDeviceGetMaxClockInfo", DevEnumUintFn =
        ["nvmlDeviceGetMaxClockInfo": DevEnumUintFn => same];
    /// P-state.
    performance_state: "nvmlDeviceGetPerformanceState", DevUintFn =
        ["nvmlDeviceGetPerformanceState": DevUintFn => same];
    /// Clock-event ("throttle") reason bits.
    clock_event_reasons: "nvmlDeviceGetCurrentClocksEventReasons", DevU64Fn = [
        "nvmlDeviceGetCurrentClocksEventReasons": DevU64Fn => same,
        "nvmlDeviceGetCurrentClocksThrottleReasons": DevU64Fn => same,
    ];
    /// PCIe throughput over a 20 ms window.
    pcie_throughput: "nvmlDeviceGetPcieThroughput", DevEnumUintFn =
        ["nvmlDeviceGetPcieThroughput": DevEnumUintFn => same];
    /// Current PCIe generation.
    pcie_link_gen: "nvmlDeviceGetCurrPcieLinkGeneration", DevUintFn =
        ["nvmlDeviceGetCurrPcieLinkGeneration": DevUintFn => same];
    /// Current PCIe width.
    pcie_link_width: "nvmlDeviceGetCurrPcieLinkWidth", DevUintFn =
        ["nvmlDeviceGetCurrPcieLinkWidth": DevUintFn => same];
    /// Maximum PCIe generation.
    max_pcie_link_gen: "nvmlDeviceGetMaxPcieLinkGeneration", DevUintFn =
        ["nvmlDeviceGetMaxPcieLinkGeneration": DevUintFn => same];
    /// Maximum PCIe width.
    max_pcie_link_width: "nvmlDeviceGetMaxPcieLinkWidth", DevUintFn =
        ["nvmlDeviceGetMaxPcieLinkWidth": DevUintFn => same];
    /// Buffered power, utilization and clock samples (`samples.rs`).
    samples: "nvmlDeviceGetSamples", super::samples::SamplesFn =
        ["nvmlDeviceGetSamples": super::samples::SamplesFn => same];
    /// Field values.
    field_values: "nvmlDeviceGetFieldValues", FieldValuesFn =
        ["nvmlDeviceGetFieldValues": FieldValuesFn => same];
    /// Running compute processes; element stride 24, 24, 16 in this order.
    compute_processes: "nvmlDeviceGetComputeRunningProcesses", ProcessesFn = [
        "nvmlDeviceGetComputeRunningProcesses_v3": ProcessesFn => same,
        "nvmlDeviceGetComputeRunningProcesses_v2": ProcessesFn => same,
        "nvmlDeviceGetComputeRunningProcesses": ProcessesFn => same,
    ];
    /// Per-process utilization samples (`mig.rs`).
    process_utilization: "nvmlDeviceGetProcessUtilization", super::mig::ProcessUtilFn =
        ["nvmlDeviceGetProcessUtilization": super::mig::ProcessUtilFn => same];
    /// MIG mode, current and pending (`mig.rs`).
    mig_mode: "nvmlDeviceGetMigMode", super::mig::DevUintUintFn =
        ["nvmlDeviceGetMigMode": super::mig::DevUintUintFn => same];
    /// MIG device slots of a GPU.
    max_mig_device_count: "nvmlDeviceGetMaxMigDeviceCount", DevUintFn =
        ["nvmlDeviceGetMaxMigDeviceCount": DevUintFn => same];
    /// MIG device handle by slot.
    mig_device_by_index: "nvmlDeviceGetMigDeviceHandleByIndex", super::mig::MigByIndexFn =
        ["nvmlDeviceGetMigDeviceHandleByIndex": super::mig::MigByIndexFn => same];
    /// Whether a handle is a MIG device's.
    is_mig_device: "nvmlDeviceIsMigDeviceHandle", DevUintFn =
        ["nvmlDeviceIsMigDeviceHandle": DevUintFn => same];
    /// A MIG device's parent GPU.
    mig_parent: "nvmlDeviceGetDeviceHandleFromMigDeviceHandle", super::mig::DevHandleFn =
        ["nvmlDeviceGetDeviceHandleFromMigDeviceHandle": super::mig::DevHandleFn => same];
    /// A MIG device's GPU instance id.
    gpu_instance_id: "nvmlDeviceGetGpuInstanceId", DevUintFn =
        ["nvmlDeviceGetGpuInstanceId": DevUintFn => same];
    /// A MIG device's compute instance id.
    compute_instance_id: "nvmlDeviceGetComputeInstanceId", DevUintFn =
        ["nvmlDeviceGetComputeInstanceId": DevUintFn => same];
    /// GPM snapshot of one GPU instance.
    gpm_mig_sample_get: "nvmlGpmMigSampleGet", super::mig::GpmMigSampleGetFn =
        ["nvmlGpmMigSampleGet": super::mig::GpmMigSampleGetFn => same];
    /// Event-set creation.
    event_set_create: "nvmlEventSetCreate", AllocFn = ["nvmlEventSetCreate": AllocFn => same];
    /// Event registration.
    register_events: "nvmlDeviceRegisterEvents", RegisterEventsFn =
        ["nvmlDeviceRegisterEvents": RegisterEventsFn => same];
    /// Supported event mask.
    supported_event_types: "nvmlDeviceGetSupportedEventTypes", DevU64Fn =
        ["nvmlDeviceGetSupportedEventTypes": DevU64Fn => same];
    /// Waiting for an event.
    event_set_wait: "nvmlEventSetWait", EventSetWaitFn = [
        "nvmlEventSetWait_v2": EventSetWaitFn => same,
        "nvmlEventSetWait": EventSetWaitFn => same,
    ];
    /// Freeing an event set.
    event_set_free: "nvmlEventSetFree", FreeFn = ["nvmlEventSetFree": FreeFn => same];
    /// GPM support query.
    gpm_query_support: "nvmlGpmQueryDeviceSupport", DevStructFn<nvmlGpmSupport_t> =
        ["nvmlGpmQueryDeviceSupport": DevStructFn<nvmlGpmSupport_t> => same];
    /// GPM sample allocation.
    gpm_sample_alloc: "nvmlGpmSampleAlloc", AllocFn = ["nvmlGpmSampleAlloc": AllocFn => same];
    /// GPM sample release.
    gpm_sample_free: "nvmlGpmSampleFree", FreeFn = ["nvmlGpmSampleFree": FreeFn => same];
    /// GPM snapshot.
    gpm_sample_get: "nvmlGpmSampleGet", GpmSampleGetFn =
        ["nvmlGpmSampleGet": GpmSampleGetFn => same];
    /// GPM metrics between two snapshots.
    gpm_metrics_get: "nvmlGpmMetricsGet", GpmMetricsGetFn =
        ["nvmlGpmMetricsGet": GpmMetricsGetFn => same];
    /// ECC mode, current and pending (`health.rs`).
    ecc_mode: "nvmlDeviceGetEccMode", EccModeFn = ["nvmlDeviceGetEccMode": EccModeFn => same];
    /// ECC error totals by type and counter.
    total_ecc_errors: "nvmlDeviceGetTotalEccErrors", TotalEccErrorsFn =
        ["nvmlDeviceGetTotalEccErrors": TotalEccErrorsFn => same];
    /// ECC errors by memory location.
    memory_error_counter: "nvmlDeviceGetMemoryErrorCounter", MemoryErrorCounterFn =
        ["nvmlDeviceGetMemoryErrorCounter": MemoryErrorCounterFn => same];
    /// Remapped rows, pending and failed remaps.
    remapped_rows: "nvmlDeviceGetRemappedRows", RemappedRowsFn =
        ["nvmlDeviceGetRemappedRows": RemappedRowsFn => same];
    /// Retired pages by cause.
    retired_pages: "nvmlDeviceGetRetiredPages", RetiredPagesFn =
        ["nvmlDeviceGetRetiredPages": RetiredPagesFn => same];
    /// Whether pages are pending retirement.
    retired_pages_pending: "nvmlDeviceGetRetiredPagesPendingStatus", RetiredPagesPendingFn =
        ["nvmlDeviceGetRetiredPagesPendingStatus": RetiredPagesPendingFn => same];
    /// One NVLink error counter of one link.
    nvlink_error_counter: "nvmlDeviceGetNvLinkErrorCounter", NvLinkErrorCounterFn =
        ["nvmlDeviceGetNvLinkErrorCounter": NvLinkErrorCounterFn => same];
    /// The GPU's own maximum PCIe generation, whatever its slot.
    gpu_max_pcie_link_gen: "nvmlDeviceGetGpuMaxPcieLinkGeneration", GpuMaxPcieLinkGenerationFn =
        ["nvmlDeviceGetGpuMaxPcieLinkGeneration": GpuMaxPcieLinkGenerationFn => same];
}

#[cfg(test)]
mod tests;
