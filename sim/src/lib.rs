//! A simulated `libnvidia-ml.so.1`: a shared library exporting the NVML functions gpuwhy
//! uses, with the real C ABI, that plays a *scenario file* instead of reading a GPU.
//!
//! gpuwhy loads it through its ordinary NVML loader (dlopen + dlsym), so it is how tests
//! and `gpuwhy demo` exercise every bottleneck class, every fault (lost GPU, XID events,
//! error windows, slow calls, missing symbols) and the whole recording path on machines
//! without a GPU. It is not a general NVML emulator: functions gpuwhy does not call are not
//! exported, and time-series are patterns, not a physical model.
//!
//! The scenario is found at the first `nvmlInit*`: `GPUWHY_SIM_SCENARIO` (a path), else
//! `scenario.json` beside the library, else a built-in healthy H100. The format is in
//! `docs/scenarios.md`. The `old-driver` feature builds an R450-era symbol set (no `_v2`
//! init/count/handle, no `_v3` processes, no GPM, …) so callers' fallbacks are exercised.

pub mod abi;
pub mod exports;
mod metric;
mod pattern;
mod scenario;
mod state;

pub use scenario::check as check_scenario;

#[cfg(test)]
mod tests;
