//! The simulator against NVIDIA's own `nvml.h` (pinned in `docs/nvml-loading.md`): every
//! constant `abi.rs` still writes itself and the prototype of every exported function,
//! compiled as C assertions by `nvml-header-check`. The struct layouts are the binding
//! crate's and are checked once, there (`nvml-sys/src/header.rs`).

use nvml_header_check::{sig_of, Check};

use crate::abi::*;
use crate::exports::{self, *};

fn constants(c: &mut Check) {
    for (name, v) in [
        ("NVML_SUCCESS", SUCCESS),
        ("NVML_ERROR_UNINITIALIZED", ERROR_UNINITIALIZED),
        ("NVML_ERROR_INVALID_ARGUMENT", ERROR_INVALID_ARGUMENT),
        ("NVML_ERROR_NOT_SUPPORTED", ERROR_NOT_SUPPORTED),
        ("NVML_ERROR_NO_PERMISSION", ERROR_NO_PERMISSION),
        ("NVML_ERROR_INSUFFICIENT_SIZE", ERROR_INSUFFICIENT_SIZE),
        ("NVML_ERROR_TIMEOUT", ERROR_TIMEOUT),
        ("NVML_ERROR_FUNCTION_NOT_FOUND", ERROR_FUNCTION_NOT_FOUND),
        ("NVML_ERROR_GPU_IS_LOST", ERROR_GPU_IS_LOST),
        (
            "NVML_ERROR_ARGUMENT_VERSION_MISMATCH",
            ERROR_ARGUMENT_VERSION_MISMATCH,
        ),
        ("NVML_ERROR_UNKNOWN", ERROR_UNKNOWN),
        ("nvmlMemory_v2", MEMORY_V2_VERSION),
        ("nvmlTemperature_v1", TEMPERATURE_V1_VERSION),
        ("NVML_GPM_SUPPORT_VERSION", GPM_SUPPORT_VERSION),
        ("NVML_GPM_METRICS_GET_VERSION", GPM_METRICS_GET_VERSION),
        ("NVML_VALUE_TYPE_UNSIGNED_INT", VALUE_TYPE_UNSIGNED_INT),
        (
            "NVML_VALUE_TYPE_UNSIGNED_LONG_LONG",
            VALUE_TYPE_UNSIGNED_LONG_LONG,
        ),
        ("NVML_VALUE_TYPE_SIGNED_INT", VALUE_TYPE_SIGNED_INT),
        ("NVML_TEMPERATURE_GPU_MAX", TEMPERATURE_GPU_MAX),
        ("NVML_TEMPERATURE_COUNT", TEMPERATURE_COUNT),
        (
            "NVML_TEMPERATURE_THRESHOLD_COUNT",
            TEMPERATURE_THRESHOLD_COUNT,
        ),
        ("NVML_FI_DEV_PERF_POLICY_THERMAL", FI_PERF_POLICY_THERMAL),
        ("NVML_GPM_METRIC_MAX", GPM_METRIC_MAX as u32),
        ("NVML_PSTATE_UNKNOWN", PSTATE_UNKNOWN),
    ] {
        c.constant(name, v);
    }
    c.constant(
        "nvmlEventTypeSingleBitEccError | nvmlEventTypeDoubleBitEccError \
         | nvmlEventTypePState | nvmlEventTypeXidCriticalError",
        SUPPORTED_EVENT_TYPES,
    );
}

/// `$module::$name(_, …)` for every export: its type, as Rust declares it, in C.
macro_rules! functions {
    ($c:expr; $($m:ident :: $f:ident ( $($p:tt),* )),+ $(,)?) => {{
        let mut names = Vec::new();
        $(
            $c.function(
                stringify!($f),
                sig_of($m::$f as unsafe extern "C" fn($($p),*) -> _),
            );
            names.push(stringify!($f));
        )+
        names
    }};
}

/// The health exports have the binding crate's prototype types, the ones gpuwhy's loader
/// binds and the binding crate's header test checks: a mismatch does not compile.
#[test]
fn health_exports_have_the_binding_crates_types() {
    use gpuwhy_nvml_sys::health as sys;
    let exports: [(&str, usize); 8] = [
        (
            "nvmlDeviceGetEccMode",
            health::nvmlDeviceGetEccMode as sys::EccModeFn as usize,
        ),
        (
            "nvmlDeviceGetTotalEccErrors",
            health::nvmlDeviceGetTotalEccErrors as sys::TotalEccErrorsFn as usize,
        ),
        (
            "nvmlDeviceGetMemoryErrorCounter",
            health::nvmlDeviceGetMemoryErrorCounter as sys::MemoryErrorCounterFn as usize,
        ),
        (
            "nvmlDeviceGetRemappedRows",
            health::nvmlDeviceGetRemappedRows as sys::RemappedRowsFn as usize,
        ),
        (
            "nvmlDeviceGetRetiredPages",
            health::nvmlDeviceGetRetiredPages as sys::RetiredPagesFn as usize,
        ),
        (
            "nvmlDeviceGetRetiredPagesPendingStatus",
            health::nvmlDeviceGetRetiredPagesPendingStatus as sys::RetiredPagesPendingFn as usize,
        ),
        (
            "nvmlDeviceGetNvLinkErrorCounter",
            health::nvmlDeviceGetNvLinkErrorCounter as sys::NvLinkErrorCounterFn as usize,
        ),
        (
            "nvmlDeviceGetGpuMaxPcieLinkGeneration",
            health::nvmlDeviceGetGpuMaxPcieLinkGeneration as sys::GpuMaxPcieLinkGenerationFn
                as usize,
        ),
    ];
    let names: Vec<&str> = exports.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, sys::FUNCTIONS);
    assert!(exports.iter().all(|(_, f)| *f != 0));
}

#[test]
fn abi_and_exports_match_nvidias_header() {
    let mut c = Check::new("simulator");
    constants(&mut c);
    let mut names = functions!(c;
        system::nvmlInit_v2(),
        system::nvmlInit(),
        system::nvmlInitWithFlags(_),
        system::nvmlShutdown(),
        system::nvmlErrorString(_),
        system::nvmlSystemGetDriverVersion(_, _),
        system::nvmlSystemGetNVMLVersion(_, _),
        system::nvmlSystemGetCudaDriverVersion_v2(_),
        system::nvmlSystemGetCudaDriverVersion(_),
        system::nvmlDeviceGetCount_v2(_),
        system::nvmlDeviceGetCount(_),
        system::nvmlDeviceGetHandleByIndex_v2(_, _),
        system::nvmlDeviceGetHandleByIndex(_, _),
        identity::nvmlDeviceGetName(_, _, _),
        identity::nvmlDeviceGetUUID(_, _, _),
        identity::nvmlDeviceGetPciInfo_v3(_, _),
        identity::nvmlDeviceGetPciInfo_v2(_, _),
        identity::nvmlDeviceGetPciInfo(_, _),
        identity::nvmlDeviceGetArchitecture(_, _),
        identity::nvmlDeviceGetCudaComputeCapability(_, _, _),
        usage::nvmlDeviceGetUtilizationRates(_, _),
        usage::nvmlDeviceGetMemoryInfo_v2(_, _),
        usage::nvmlDeviceGetMemoryInfo(_, _),
        usage::nvmlDeviceGetPowerUsage(_, _),
        usage::nvmlDeviceGetEnforcedPowerLimit(_, _),
        clocks::nvmlDeviceGetTemperatureV(_, _),
        clocks::nvmlDeviceGetTemperature(_, _, _),
        clocks::nvmlDeviceGetTemperatureThreshold(_, _, _),
        clocks::nvmlDeviceGetClockInfo(_, _, _),
        clocks::nvmlDeviceGetMaxClockInfo(_, _, _),
        clocks::nvmlDeviceGetPerformanceState(_, _),
        clocks::nvmlDeviceGetCurrentClocksEventReasons(_, _),
        clocks::nvmlDeviceGetCurrentClocksThrottleReasons(_, _),
        pcie::nvmlDeviceGetPcieThroughput(_, _, _),
        pcie::nvmlDeviceGetCurrPcieLinkGeneration(_, _),
        pcie::nvmlDeviceGetCurrPcieLinkWidth(_, _),
        pcie::nvmlDeviceGetMaxPcieLinkGeneration(_, _),
        pcie::nvmlDeviceGetMaxPcieLinkWidth(_, _),
        fields::nvmlDeviceGetFieldValues(_, _, _),
        samples::nvmlDeviceGetSamples(_, _, _, _, _, _),
        processes::nvmlDeviceGetComputeRunningProcesses_v3(_, _, _),
        processes::nvmlDeviceGetComputeRunningProcesses_v2(_, _, _),
        processes::nvmlDeviceGetComputeRunningProcesses(_, _, _),
        events::nvmlEventSetCreate(_),
        events::nvmlDeviceRegisterEvents(_, _, _),
        events::nvmlDeviceGetSupportedEventTypes(_, _),
        events::nvmlEventSetWait_v2(_, _, _),
        events::nvmlEventSetWait(_, _, _),
        events::nvmlEventSetFree(_),
        gpm::nvmlGpmQueryDeviceSupport(_, _),
        gpm::nvmlGpmSampleAlloc(_),
        gpm::nvmlGpmSampleFree(_),
        gpm::nvmlGpmSampleGet(_, _),
        gpm::nvmlGpmMetricsGet(_),
        mig::nvmlDeviceGetMigMode(_, _, _),
        mig::nvmlDeviceGetMaxMigDeviceCount(_, _),
        mig::nvmlDeviceGetMigDeviceHandleByIndex(_, _, _),
        mig::nvmlDeviceIsMigDeviceHandle(_, _),
        mig::nvmlDeviceGetDeviceHandleFromMigDeviceHandle(_, _),
        mig::nvmlDeviceGetGpuInstanceId(_, _),
        mig::nvmlDeviceGetComputeInstanceId(_, _),
        mig::nvmlGpmMigSampleGet(_, _, _),
        mig::nvmlDeviceGetProcessUtilization(_, _, _, _),
        health::nvmlDeviceGetEccMode(_, _, _),
        health::nvmlDeviceGetTotalEccErrors(_, _, _, _),
        health::nvmlDeviceGetMemoryErrorCounter(_, _, _, _, _),
        health::nvmlDeviceGetRemappedRows(_, _, _, _, _),
        health::nvmlDeviceGetRetiredPages(_, _, _, _),
        health::nvmlDeviceGetRetiredPagesPendingStatus(_, _),
        health::nvmlDeviceGetNvLinkErrorCounter(_, _, _, _),
        health::nvmlDeviceGetGpuMaxPcieLinkGeneration(_, _),
    );
    // Every export is checked: the list above is the whole of `FUNCTIONS`.
    let mut all = exports::FUNCTIONS.to_vec();
    names.sort_unstable();
    all.sort_unstable();
    assert_eq!(names, all);
    match c.run() {
        Ok(n) => assert!(n > 90, "only {n} facts were checked"),
        Err(e) => panic!("{e}"),
    }
}
