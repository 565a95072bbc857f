//! `NVML_FI_*` field ids gpuwhy reads with `nvmlDeviceGetFieldValues`. None is in 199–273:
//! those were renumbered between driver releases (docs/nvml-facts.md, "Field ids"), so they
//! are not used.

/// `NVML_FI_DEV_PERF_POLICY_POWER` (alias `NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP`):
/// cumulative ns the power cap held the clocks down.
pub const PERF_POLICY_POWER: u32 = 74;
/// `NVML_FI_DEV_PERF_POLICY_SYNC_BOOST` (alias `NVML_FI_DEV_CLOCKS_EVENT_REASON_SYNC_BOOST`):
/// cumulative ns a sync-boost group held the clocks down.
pub const PERF_POLICY_SYNC_BOOST: u32 = 76;
/// `NVML_FI_DEV_PERF_POLICY_BOARD_LIMIT`: cumulative ns the board limit held the clocks
/// down.
pub const PERF_POLICY_BOARD_LIMIT: u32 = 77;
/// `NVML_FI_DEV_PERF_POLICY_RELIABILITY`: cumulative ns the reliability policy held the
/// clocks down.
pub const PERF_POLICY_RELIABILITY: u32 = 79;
/// `NVML_FI_DEV_NVLINK_LINK_COUNT`: number of NVLinks.
pub const NVLINK_LINK_COUNT: u32 = 91;
/// `NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX`: payload sent, cumulative KiB.
pub const NVLINK_DATA_TX: u32 = 138;
/// `NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX`: payload received, cumulative KiB.
pub const NVLINK_DATA_RX: u32 = 139;
/// `NVML_FI_DEV_POWER_INSTANT`: current power draw, mW ("supported on all architectures").
pub const POWER_INSTANT: u32 = 186;
/// `NVML_FI_DEV_TEMPERATURE_SHUTDOWN_TLIMIT`: °C at which the GPU may shut down.
pub const TEMPERATURE_SHUTDOWN_TLIMIT: u32 = 193;
/// `NVML_FI_DEV_TEMPERATURE_SLOWDOWN_TLIMIT`: °C at which hardware slowdown may begin.
pub const TEMPERATURE_SLOWDOWN_TLIMIT: u32 = 194;
/// `NVML_FI_DEV_TEMPERATURE_MEM_MAX_TLIMIT`: °C of memory at which software slowdown
/// may begin.
pub const TEMPERATURE_MEM_MAX_TLIMIT: u32 = 195;
/// `NVML_FI_DEV_TEMPERATURE_GPU_MAX_TLIMIT`: °C above which clocks may drop below base.
pub const TEMPERATURE_GPU_MAX_TLIMIT: u32 = 196;
/// `NVML_FI_DEV_PCIE_COUNT_TX_BYTES`: PCIe bytes sent, cumulative ("value can be wrapped").
pub const PCIE_COUNT_TX_BYTES: u32 = 197;
/// `NVML_FI_DEV_PCIE_COUNT_RX_BYTES`: PCIe bytes received, cumulative ("value can be
/// wrapped").
pub const PCIE_COUNT_RX_BYTES: u32 = 198;
/// `NVML_FI_DEV_GPU_TEMP`: GPU temperature, °C with sub-degree precision (13.5 header;
/// new ids are not subject to the 199–273 renumbering, older drivers answer
/// NOT_SUPPORTED).
pub const GPU_TEMP: u32 = 308;
/// The scope id meaning "the sum over all links" for NVLink fields.
pub const ALL_LINKS: u32 = u32::MAX;

/// Every id above with its name in `nvml.h`.
pub const ALL: [(&str, u32); 16] = [
    ("NVML_FI_DEV_PERF_POLICY_POWER", PERF_POLICY_POWER),
    (
        "NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP",
        PERF_POLICY_POWER,
    ),
    ("NVML_FI_DEV_PERF_POLICY_SYNC_BOOST", PERF_POLICY_SYNC_BOOST),
    (
        "NVML_FI_DEV_PERF_POLICY_BOARD_LIMIT",
        PERF_POLICY_BOARD_LIMIT,
    ),
    (
        "NVML_FI_DEV_PERF_POLICY_RELIABILITY",
        PERF_POLICY_RELIABILITY,
    ),
    ("NVML_FI_DEV_NVLINK_LINK_COUNT", NVLINK_LINK_COUNT),
    ("NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX", NVLINK_DATA_TX),
    ("NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX", NVLINK_DATA_RX),
    (
        "NVML_FI_DEV_TEMPERATURE_SHUTDOWN_TLIMIT",
        TEMPERATURE_SHUTDOWN_TLIMIT,
    ),
    (
        "NVML_FI_DEV_TEMPERATURE_SLOWDOWN_TLIMIT",
        TEMPERATURE_SLOWDOWN_TLIMIT,
    ),
    (
        "NVML_FI_DEV_TEMPERATURE_MEM_MAX_TLIMIT",
        TEMPERATURE_MEM_MAX_TLIMIT,
    ),
    (
        "NVML_FI_DEV_TEMPERATURE_GPU_MAX_TLIMIT",
        TEMPERATURE_GPU_MAX_TLIMIT,
    ),
    ("NVML_FI_DEV_GPU_TEMP", GPU_TEMP),
    ("NVML_FI_DEV_POWER_INSTANT", POWER_INSTANT),
    ("NVML_FI_DEV_PCIE_COUNT_TX_BYTES", PCIE_COUNT_TX_BYTES),
    ("NVML_FI_DEV_PCIE_COUNT_RX_BYTES", PCIE_COUNT_RX_BYTES),
];
