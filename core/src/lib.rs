//! gpuwhy: why is my GPU not busy?
//!
//! Samples GPUs (through NVML loaded at run time) and the host, records training-step phases,
//! and diagnoses which bottleneck holds utilization down. Data flows one way
//! (`docs/architecture.md` draws it):
//!
//! sources → [`recording`] → [`report`] → [`signals`] → [`rules`] → findings and a verdict in the report ([`analysis`])
//!
//! [`merge`] joins the reports of a distributed job's ranks.
//!
//! Everything except the `collect` feature's modules (NVML, `/proc`, the sampler thread) is
//! plain data and analysis, and builds for `wasm32-unknown-unknown`.

mod error;
pub use error::{headline, Error, Result, TRIED};

pub mod analysis;
#[cfg(feature = "collect")]
pub mod collect;
pub mod compare;
pub mod export;
pub mod import;
pub mod jobgpus;
pub mod merge;
pub mod metric;
pub mod recording;
pub mod report;
pub mod rules;
pub mod signals;
pub mod stats;
pub mod steps;
#[cfg(feature = "summary")]
pub mod summary;
pub mod text;
pub mod trace;

#[cfg(feature = "collect")]
pub mod host;
#[cfg(feature = "collect")]
pub mod nvml;
#[cfg(feature = "collect")]
pub mod os;
#[cfg(feature = "collect")]
pub mod session;
