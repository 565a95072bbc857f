//! gpuwhy: why is my GPU not busy?
//!
//! Samples GPUs (through NVML loaded at run time) and the host, records training-step phases,
//! and diagnoses which bottleneck holds utilization down. Data flows one way:
//! sources → [`recording`] → signals → rules → [`report`].

mod error;
pub use error::{Error, Result};

#[cfg(feature = "collect")]
pub mod nvml;
#[cfg(feature = "collect")]
pub mod host;
