//! `nvmlDeviceArchitecture_t`: the values and gpuwhy's name for each.

/// `nvmlDeviceArchitecture_t` values with gpuwhy's name for each: the header's
/// `NVML_DEVICE_ARCH_<NAME>` in lower case (checked against `nvml.h` by the header test).
/// 11, 12 and 15 are the DLA and NPU engines of the 13.x header, not GPUs.
pub const ARCHITECTURES: [(u32, &str); 14] = [
    (2, "kepler"),
    (3, "maxwell"),
    (4, "pascal"),
    (5, "volta"),
    (6, "turing"),
    (7, "ampere"),
    (8, "ada"),
    (9, "hopper"),
    (10, "blackwell"),
    (11, "dla"),
    (12, "dla2"),
    (13, "rubin"),
    (15, "npu3"),
    (0xFFFF_FFFF, "unknown"),
];

/// Architecture name for `nvmlDeviceArchitecture_t` (docs/nvml-loading.md); "unknown" for
/// values newer than this build.
pub fn architecture_name(a: u32) -> String {
    ARCHITECTURES
        .iter()
        .find(|(id, _)| *id == a)
        .map_or("unknown", |(_, n)| n)
        .to_string()
}
