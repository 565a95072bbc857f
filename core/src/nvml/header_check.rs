//! The bindings against NVIDIA's own `nvml.h` (the version pinned in `docs/nvml-loading.md`):
//! every struct mirror's size, alignment and field offsets and sizes, every constant and enum
//! value, and the prototype of every symbol gpuwhy binds, compiled as C assertions by
//! `nvml-header-check`. A difference fails this test with the compiler's message naming it.

use nvml_header_check::{layout, CType, Check};

use super::gpm;
use super::readings::{ClockType, PcieCounter, TemperatureThreshold};
use super::symbols;
use super::sys::{self, codes, value_type, *};
use crate::metric::reasons;

macro_rules! c_named {
    ($($t:ty),+ $(,)?) => {
        $(impl CType for $t {
            fn c_names() -> Vec<String> {
                vec![stringify!($t).to_string()]
            }
        })+
    };
}

c_named!(
    nvmlPciInfo_t,
    nvmlUtilization_t,
    nvmlMemory_t,
    nvmlMemory_v2_t,
    nvmlTemperature_v1_t,
    nvmlFieldValue_t,
    nvmlEventData_t,
    nvmlGpmSupport_t,
    nvmlGpmMetricsGet_t,
);

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
    layout!(c, nvmlGpmMetricsGet_t => "nvmlGpmMetricsGet_t" {
        version: "version", numMetrics: "numMetrics", sample1: "sample1",
        sample2: "sample2", metrics: "metrics",
    });
}

fn constants(c: &mut Check) {
    sizes_and_versions(c);
    value_types_and_codes(c);
    enums(c);
    ids_and_bits(c);
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
    c.constant("NVML_TEMPERATURE_GPU", sys::NVML_TEMPERATURE_GPU);
}

/// Field value types and return codes.
fn value_types_and_codes(c: &mut Check) {
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
    for (name, v) in super::error::CODES {
        let c_name = match *v {
            codes::SUCCESS => "NVML_SUCCESS".to_string(),
            _ => format!("NVML_ERROR_{name}"),
        };
        c.constant(&c_name, *v);
    }
}

/// Clock types, temperature thresholds and PCIe counters.
fn enums(c: &mut Check) {
    for (name, v) in [
        ("GRAPHICS", ClockType::Graphics),
        ("SM", ClockType::Sm),
        ("MEM", ClockType::Mem),
        ("VIDEO", ClockType::Video),
    ] {
        c.constant(&format!("NVML_CLOCK_{name}"), v as u32);
    }
    for (name, v) in [
        ("SHUTDOWN", TemperatureThreshold::Shutdown),
        ("SLOWDOWN", TemperatureThreshold::Slowdown),
        ("MEM_MAX", TemperatureThreshold::MemMax),
        ("GPU_MAX", TemperatureThreshold::GpuMax),
    ] {
        c.constant(&format!("NVML_TEMPERATURE_THRESHOLD_{name}"), v as u32);
    }
    c.constant("NVML_PCIE_UTIL_TX_BYTES", PcieCounter::Tx as u32);
    c.constant("NVML_PCIE_UTIL_RX_BYTES", PcieCounter::Rx as u32);
}

/// Event types, GPM metric ids, field ids, clock-event reason bits and architecture ids.
fn ids_and_bits(c: &mut Check) {
    c.constant("nvmlEventTypeXidCriticalError", super::EVENT_XID_CRITICAL);
    for (c_name, v) in [
        ("GRAPHICS_UTIL", gpm::GPM_GRAPHICS_UTIL),
        ("SM_UTIL", gpm::GPM_SM_UTIL),
        ("SM_OCCUPANCY", gpm::GPM_SM_OCCUPANCY),
        ("ANY_TENSOR_UTIL", gpm::GPM_ANY_TENSOR_UTIL),
        ("DRAM_BW_UTIL", gpm::GPM_DRAM_BW_UTIL),
        ("PCIE_TX_PER_SEC", gpm::GPM_PCIE_TX_PER_SEC),
        ("PCIE_RX_PER_SEC", gpm::GPM_PCIE_RX_PER_SEC),
        ("NVLINK_TOTAL_RX_PER_SEC", gpm::GPM_NVLINK_TOTAL_RX_PER_SEC),
        ("NVLINK_TOTAL_TX_PER_SEC", gpm::GPM_NVLINK_TOTAL_TX_PER_SEC),
    ] {
        c.constant(&format!("NVML_GPM_METRIC_{c_name}"), v);
    }
    for (c_name, v) in super::fields::ids::ALL {
        c.constant(c_name, v);
    }
    for (bit, _, c_name) in reasons::NAMED {
        c.constant(c_name, bit);
    }
    c.constant("nvmlClocksEventReasonAll", reasons::ALL);
    for (id, name) in super::ARCHITECTURES {
        c.constant(
            &format!("NVML_DEVICE_ARCH_{}", name.to_ascii_uppercase()),
            id,
        );
    }
}

#[test]
fn bindings_match_nvidias_header() {
    let mut c = Check::new("core");
    layouts(&mut c);
    constants(&mut c);
    super::mig::header::facts(&mut c);
    super::samples::header::facts(&mut c);
    for (symbol, prototypes) in symbols::prototypes() {
        c.function(symbol, prototypes);
    }
    match c.run() {
        Ok(n) => assert!(n > 250, "only {n} facts were checked"),
        Err(e) => panic!("{e}"),
    }
}
