//! Every layout, constant and prototype of this crate against NVIDIA's own `nvml.h` (the
//! version pinned in `docs/nvml-loading.md`): each struct's size, alignment and field offsets
//! and sizes, the struct versions and buffer sizes, the value types, the health enums and
//! the health calls' prototypes, compiled as C assertions by `nvml-header-check`. The loader
//! and the simulator check only what is theirs (their own enums, the symbols they bind or
//! export) in their own header tests.

use nvml_header_check::{layout, CSig, Check};

use crate::health::{self, *};
use crate::*;

fn layouts(c: &mut Check) {
    layout!(c, nvmlPciInfo_t => "nvmlPciInfo_t" {
        busIdLegacy: "busIdLegacy", domain: "domain", bus: "bus", device: "device",
        pciDeviceId: "pciDeviceId", pciSubSystemId: "pciSubSystemId", busId: "busId",
    });
    layout!(c, nvmlUtilization_t => "nvmlUtilization_t" { gpu: "gpu", memory: "memory" });
    layout!(c, nvmlMemory_t => "nvmlMemory_t" { total: "total", free: "free", used: "used" });
    layout!(c, nvmlMemory_v2_t => "nvmlMemory_v2_t" {
        version: "version", total: "total", reserved: "reserved", free: "free", used: "used",
    });
    layout!(c, nvmlTemperature_v1_t => "nvmlTemperature_v1_t" {
        version: "version", sensorType: "sensorType", temperature: "temperature",
    });
    layout!(c, nvmlValue_t => "nvmlValue_t" {
        dVal: "dVal", siVal: "siVal", uiVal: "uiVal", ulVal: "ulVal", ullVal: "ullVal",
        sllVal: "sllVal", usVal: "usVal",
    });
    layout!(c, nvmlFieldValue_t => "nvmlFieldValue_t" {
        fieldId: "fieldId", scopeId: "scopeId", timestamp: "timestamp",
        latencyUsec: "latencyUsec", valueType: "valueType", nvmlReturn: "nvmlReturn",
        value: "value",
    });
    layout!(c, nvmlProcessInfo_v1_t => "nvmlProcessInfo_v1_t" {
        pid: "pid", usedGpuMemory: "usedGpuMemory",
    });
    layout!(c, nvmlProcessInfo_t => "nvmlProcessInfo_t" {
        pid: "pid", usedGpuMemory: "usedGpuMemory", gpuInstanceId: "gpuInstanceId",
        computeInstanceId: "computeInstanceId",
    });
    layout!(c, nvmlEventData_t => "nvmlEventData_t" {
        device: "device", eventType: "eventType", eventData: "eventData",
        gpuInstanceId: "gpuInstanceId", computeInstanceId: "computeInstanceId",
    });
    layout!(c, nvmlGpmSupport_t => "nvmlGpmSupport_t" {
        version: "version", isSupportedDevice: "isSupportedDevice",
    });
    layout!(c, nvmlGpmMetric_t => "nvmlGpmMetric_t" {
        metricId: "metricId", nvmlReturn: "nvmlReturn", value: "value",
        shortName: "metricInfo.shortName", longName: "metricInfo.longName",
        unit: "metricInfo.unit",
    });
    layout!(c, nvmlSample_t => "nvmlSample_t" {
        timeStamp: "timeStamp", sampleValue: "sampleValue",
    });
    layout!(c, nvmlProcessUtilizationSample_t => "nvmlProcessUtilizationSample_t" {
        pid: "pid", timeStamp: "timeStamp", smUtil: "smUtil", memUtil: "memUtil",
        encUtil: "encUtil", decUtil: "decUtil",
    });
    layout!(c, nvmlGpmMetricsGet_t => "nvmlGpmMetricsGet_t" {
        version: "version", numMetrics: "numMetrics", sample1: "sample1",
        sample2: "sample2", metrics: "metrics",
    });
}

/// Struct versions and buffer sizes.
fn sizes_and_versions(c: &mut Check) {
    c.constant("nvmlMemory_v2", NVML_MEMORY_V2);
    c.constant("nvmlTemperature_v1", NVML_TEMPERATURE_V1);
    c.constant("NVML_GPM_SUPPORT_VERSION", NVML_GPM_SUPPORT_VERSION);
    c.constant("NVML_GPM_METRICS_GET_VERSION", NVML_GPM_METRICS_GET_VERSION);
    c.constant("NVML_GPM_METRIC_MAX", NVML_GPM_METRIC_MAX as u64);
    c.constant(
        "(unsigned long long)NVML_VALUE_NOT_AVAILABLE",
        NVML_VALUE_NOT_AVAILABLE_U64,
    );
    c.constant(
        "NVML_DEVICE_NAME_V2_BUFFER_SIZE",
        NVML_DEVICE_NAME_V2_BUFFER_SIZE as u64,
    );
    c.constant(
        "NVML_DEVICE_UUID_V2_BUFFER_SIZE",
        NVML_DEVICE_UUID_V2_BUFFER_SIZE as u64,
    );
    c.constant(
        "NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE",
        NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE as u64,
    );
    c.constant(
        "NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE",
        NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE as u64,
    );
    c.constant("NVML_TEMPERATURE_GPU", NVML_TEMPERATURE_GPU);
}

/// Field value types.
fn value_types(c: &mut Check) {
    for (name, v) in [
        ("DOUBLE", value_type::DOUBLE),
        ("UNSIGNED_INT", value_type::UNSIGNED_INT),
        ("UNSIGNED_LONG", value_type::UNSIGNED_LONG),
        ("UNSIGNED_LONG_LONG", value_type::UNSIGNED_LONG_LONG),
        ("SIGNED_LONG_LONG", value_type::SIGNED_LONG_LONG),
        ("SIGNED_INT", value_type::SIGNED_INT),
        ("UNSIGNED_SHORT", value_type::UNSIGNED_SHORT),
    ] {
        c.constant(&format!("NVML_VALUE_TYPE_{name}"), v);
    }
}

/// The field ids, GPM metric ids, the other enums' values, the health enums and the health calls' prototypes.
fn health(c: &mut Check) {
    for (name, v) in [
        ("NVML_FEATURE_DISABLED", NVML_FEATURE_DISABLED),
        ("NVML_FEATURE_ENABLED", NVML_FEATURE_ENABLED),
        (
            "NVML_MEMORY_ERROR_TYPE_CORRECTED",
            NVML_MEMORY_ERROR_TYPE_CORRECTED,
        ),
        (
            "NVML_MEMORY_ERROR_TYPE_UNCORRECTED",
            NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
        ),
        ("NVML_VOLATILE_ECC", NVML_VOLATILE_ECC),
        ("NVML_AGGREGATE_ECC", NVML_AGGREGATE_ECC),
        (
            "NVML_MEMORY_LOCATION_DEVICE_MEMORY",
            NVML_MEMORY_LOCATION_DEVICE_MEMORY,
        ),
        (
            "NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS",
            NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS,
        ),
        (
            "NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR",
            NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR,
        ),
        ("NVML_NVLINK_ERROR_DL_REPLAY", NVML_NVLINK_ERROR_DL_REPLAY),
        (
            "NVML_NVLINK_ERROR_DL_RECOVERY",
            NVML_NVLINK_ERROR_DL_RECOVERY,
        ),
        (
            "NVML_NVLINK_ERROR_DL_CRC_FLIT",
            NVML_NVLINK_ERROR_DL_CRC_FLIT,
        ),
        (
            "NVML_NVLINK_ERROR_DL_CRC_DATA",
            NVML_NVLINK_ERROR_DL_CRC_DATA,
        ),
        ("NVML_NVLINK_MAX_LINKS", NVML_NVLINK_MAX_LINKS),
    ] {
        c.constant(name, v);
    }
    for (name, v, _) in NVML_MEMORY_LOCATIONS {
        c.constant(name, v);
    }
    c.constant(
        "NVML_MEMORY_LOCATION_COUNT",
        NVML_MEMORY_LOCATIONS.len() as u32,
    );
    for (name, v) in crate::field_ids::ALL.into_iter().chain(crate::gpm_ids::ALL) {
        c.constant(name, v);
    }
    for (name, v) in crate::enums::ALL {
        c.constant(name, v);
    }
    for (name, prototypes) in health_prototypes() {
        c.function(name, prototypes);
    }
}

/// The health calls' names with the C prototypes of their Rust types, in the order of
/// [`health::FUNCTIONS`].
fn health_prototypes() -> Vec<(&'static str, (usize, Vec<String>))> {
    let p = [
        EccModeFn::c_prototypes(),
        TotalEccErrorsFn::c_prototypes(),
        MemoryErrorCounterFn::c_prototypes(),
        RemappedRowsFn::c_prototypes(),
        RetiredPagesFn::c_prototypes(),
        RetiredPagesPendingFn::c_prototypes(),
        NvLinkErrorCounterFn::c_prototypes(),
        GpuMaxPcieLinkGenerationFn::c_prototypes(),
    ];
    health::FUNCTIONS.into_iter().zip(p).collect()
}

#[test]
fn layouts_and_constants_match_nvidias_header() {
    let mut c = Check::new("nvml-sys");
    layouts(&mut c);
    sizes_and_versions(&mut c);
    value_types(&mut c);
    health(&mut c);
    match c.run() {
        Ok(n) => assert!(n > 150, "only {n} facts were checked"),
        Err(e) => panic!("{e}"),
    }
}
