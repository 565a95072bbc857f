//! Host sampling on Linux, read from `/proc`.
//!
//! What it is for: the host half of the evidence. A GPU that waits on its input shows up here as
//! saturated CPU cores, a busy disk or memory pressure; a training process that cannot issue
//! kernels fast enough shows up as one hot core. [`HostSampler`] turns the kernel's cumulative
//! counters into per-interval rates ([`HostSample`]); [`host_facts`] describes the machine once
//! per recording ([`HostFacts`](crate::report::HostFacts)).
//!
//! What it is not for: nothing about GPUs lives here (see [`crate::nvml`]), and it starts no
//! threads: the sampler thread calls [`HostSampler::sample`] at its own pace. It is not a general
//! system monitor either; it reads only what the rules use.
//!
//! Linux only. On other operating systems the crate still compiles, every field of every sample
//! is NaN and [`HostSampler::unavailable`] says "not Linux". On Linux too a value that cannot be
//! read is NaN, never 0, and its reason is recorded once.
//!
//! Layers, bottom up: pure parsers of each `/proc` file (no I/O, tested on fixture text); a
//! [`ProcSource`] that is either the real `/proc` ([`ProcFs`]) or an in-memory copy
//! ([`MemProc`]); the process-tree tracker; and the stateful sampler on top.

mod facts;
mod open;
mod parse;
mod process;
mod sampler;
mod source;

pub use facts::{cpu_count_logical, host_facts, host_facts_from};
pub use open::OpenProcFs;
pub use process::TREE_RESCAN_EVERY;
pub(crate) use process::{parse_pid_stat, tree_of};
pub use sampler::{HostSample, HostSampler, SLOW_EVERY};
pub use source::{MemProc, ProcFs, ProcSource};
