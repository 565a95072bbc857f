//! NVML bindings (being written).
