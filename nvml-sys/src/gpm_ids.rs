//! `nvmlGpmMetricId_t` values gpuwhy reads through GPM (Hopper and newer).

/// `NVML_GPM_METRIC_GRAPHICS_UTIL`: % of time any compute/graphics work was active.
pub const GPM_GRAPHICS_UTIL: u32 = 1;
/// `NVML_GPM_METRIC_SM_UTIL`: % of SMs busy.
pub const GPM_SM_UTIL: u32 = 2;
/// `NVML_GPM_METRIC_SM_OCCUPANCY`: % of resident warps vs the theoretical maximum.
pub const GPM_SM_OCCUPANCY: u32 = 3;
/// `NVML_GPM_METRIC_ANY_TENSOR_UTIL`: % of time any tensor pipe was active.
pub const GPM_ANY_TENSOR_UTIL: u32 = 5;
/// `NVML_GPM_METRIC_DRAM_BW_UTIL`: % of theoretical DRAM bandwidth.
pub const GPM_DRAM_BW_UTIL: u32 = 10;
/// `NVML_GPM_METRIC_PCIE_TX_PER_SEC`: MiB/s sent by the GPU.
pub const GPM_PCIE_TX_PER_SEC: u32 = 20;
/// `NVML_GPM_METRIC_PCIE_RX_PER_SEC`: MiB/s received by the GPU.
pub const GPM_PCIE_RX_PER_SEC: u32 = 21;
/// `NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC`: MiB/s received over all NVLinks.
pub const GPM_NVLINK_TOTAL_RX_PER_SEC: u32 = 60;
/// `NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC`: MiB/s sent over all NVLinks.
pub const GPM_NVLINK_TOTAL_TX_PER_SEC: u32 = 61;

/// Every id above with its name in `nvml.h`.
pub const ALL: [(&str, u32); 9] = [
    ("NVML_GPM_METRIC_GRAPHICS_UTIL", GPM_GRAPHICS_UTIL),
    ("NVML_GPM_METRIC_SM_UTIL", GPM_SM_UTIL),
    ("NVML_GPM_METRIC_SM_OCCUPANCY", GPM_SM_OCCUPANCY),
    ("NVML_GPM_METRIC_ANY_TENSOR_UTIL", GPM_ANY_TENSOR_UTIL),
    ("NVML_GPM_METRIC_DRAM_BW_UTIL", GPM_DRAM_BW_UTIL),
    ("NVML_GPM_METRIC_PCIE_TX_PER_SEC", GPM_PCIE_TX_PER_SEC),
    ("NVML_GPM_METRIC_PCIE_RX_PER_SEC", GPM_PCIE_RX_PER_SEC),
    (
        "NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC",
        GPM_NVLINK_TOTAL_RX_PER_SEC,
    ),
    (
        "NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC",
        GPM_NVLINK_TOTAL_TX_PER_SEC,
    ),
];
