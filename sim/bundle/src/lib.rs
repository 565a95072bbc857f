//! embed
pub const SIM_LIB: &[u8] = include_bytes!(env!("GPUWHY_SIM_LIB_PATH"));
