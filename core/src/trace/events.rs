//! The compact form of the events gpuwhy keeps from a trace, and the store they go into.
//!
//! A trace holds millions of events; only GPU operations, CUDA runtime/driver calls and
//! `ProfilerStep#N` ranges are kept, each in a few machine words, with names interned.
//! Memory is proportional to the number of GPU operations, not to the file size.

use std::collections::HashMap;

use super::{MAX_KEPT_EVENTS, MAX_NAMES, MAX_NAME_BYTES};

/// Kineto's event category (`cat`), for the categories gpuwhy reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cat {
    /// `kernel` (older PyTorch: `Kernel`).
    Kernel,
    /// `gpu_memcpy` (`Memcpy`).
    Memcpy,
    /// `gpu_memset` (`Memset`).
    Memset,
    /// `cuda_sync`: CUPTI synchronization records (stream/event/context sync, stream wait).
    Sync,
    /// `cuda_runtime` (`Runtime`).
    Runtime,
    /// `cuda_driver`.
    Driver,
    /// `user_annotation` (`ProfilerStep#N`, `record_function` ranges).
    UserAnnotation,
    /// `cpu_op` (older PyTorch: `Operator`): an operator on the CPU (`aten::...`).
    CpuOp,
    /// Anything else (`python_function`, `gpu_user_annotation`, ...).
    Other,
}

impl Cat {
    pub(crate) fn from_str(s: &str) -> Cat {
        match s {
            "kernel" | "Kernel" => Cat::Kernel,
            "gpu_memcpy" | "Memcpy" => Cat::Memcpy,
            "gpu_memset" | "Memset" => Cat::Memset,
            "cuda_sync" => Cat::Sync,
            "cuda_runtime" | "Runtime" => Cat::Runtime,
            "cuda_driver" => Cat::Driver,
            "user_annotation" => Cat::UserAnnotation,
            "cpu_op" | "Operator" => Cat::CpuOp,
            _ => Cat::Other,
        }
    }
}

/// What kind of GPU operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OpKind {
    /// A compute kernel.
    Compute,
    /// A communication (NCCL) kernel.
    Comm,
    /// A memcpy or memset.
    Memory,
    /// A CUPTI synchronization record shown on the GPU timeline.
    Sync,
}

/// [`GpuOp::call`] of an operation without a runtime call (or before it is looked up).
pub(crate) const NO_CALL: u32 = u32::MAX;

/// One GPU operation, as kept (≈ 48 bytes).
#[derive(Debug, Clone, Copy)]
pub(crate) struct GpuOp {
    /// Start, µs on the trace's clock.
    pub ts: f64,
    /// Duration, µs.
    pub dur: f64,
    /// CUDA correlation id linking it to its runtime call (0 when absent).
    pub corr: i64,
    /// Interned name.
    pub name: u32,
    /// CUDA stream.
    pub stream: i32,
    /// Device index.
    pub device: i32,
    /// Kind.
    pub kind: OpKind,
    /// Index of its runtime call among the calls sorted by correlation id, looked up once
    /// when the trace is summarised ([`NO_CALL`] when it has none).
    pub call: u32,
}

impl GpuOp {
    pub(crate) fn end(&self) -> f64 {
        self.ts + self.dur
    }
}

/// One CUDA runtime or driver call (the CPU side of a launch, a copy or a sync).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ApiCall {
    /// Start, µs.
    pub ts: f64,
    /// Duration, µs.
    pub dur: f64,
    /// Correlation id.
    pub corr: i64,
    /// Interned name.
    pub name: u32,
}

/// A `ProfilerStep#N` range on the CPU.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StepRange {
    /// N.
    pub n: i64,
    /// Start, µs.
    pub ts: f64,
    /// Duration, µs.
    pub dur: f64,
}

/// A CPU range gpuwhy keeps for attributing GPU gaps ([`super::activity`]): a DataLoader
/// `__next__`, an optimizer step, a synchronising operator, or a long `aten::` operator.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CpuSpan {
    /// Start, µs.
    pub ts: f64,
    /// Duration, µs.
    pub dur: f64,
    /// Interned name.
    pub name: u32,
    /// What it is.
    pub kind: super::activity::CpuKind,
}

/// How much one trace's store may hold: [`MAX_KEPT_EVENTS`], [`MAX_NAMES`] and
/// [`MAX_NAME_BYTES`] (tests lower them).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub kept: usize,
    pub names: usize,
    pub name_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            kept: MAX_KEPT_EVENTS,
            names: MAX_NAMES,
            name_bytes: MAX_NAME_BYTES,
        }
    }
}

/// Interned strings: each distinct name stored once.
#[derive(Debug, Default)]
pub(crate) struct Names {
    ids: HashMap<Box<str>, u32>,
    names: Vec<Box<str>>,
    /// Bytes of all distinct names.
    bytes: usize,
    pub limits: Limits,
    /// Set when a name could not be kept within the limits.
    pub full: bool,
}

/// The id of a name that was not kept (the table was full): it reads as `""`.
const NOT_KEPT: u32 = u32::MAX;

impl Names {
    pub(crate) fn intern(&mut self, s: &str) -> u32 {
        if let Some(id) = self.ids.get(s) {
            return *id;
        }
        if self.names.len() >= self.limits.names || self.bytes + s.len() > self.limits.name_bytes {
            // The reader sees `full` after this event and stops with a message.
            self.full = true;
            return NOT_KEPT;
        }
        let id = self.names.len() as u32;
        self.bytes += s.len();
        self.names.push(s.into());
        self.ids.insert(s.into(), id);
        id
    }

    pub(crate) fn get(&self, id: u32) -> &str {
        self.names.get(id as usize).map_or("", |s| s)
    }

    /// Interns every name of `other` in its id order and returns, for each of its ids, the
    /// id here. Names first seen in `other` get ids in the order `other` met them: after
    /// reading a trace's parts apart, the ids are those one reader of the whole would give.
    #[cfg(feature = "parallel")]
    fn absorb(&mut self, other: &Names) -> Vec<u32> {
        other.names.iter().map(|n| self.intern(n)).collect()
    }
}

/// One raw event as read, before it is classified.
#[derive(Debug, Default)]
pub(crate) struct RawEvent {
    pub ph: u8,
    pub cat: Option<Cat>,
    pub name: Option<u32>,
    pub pid: Option<i64>,
    pub tid: Option<i64>,
    pub ts: Option<f64>,
    pub dur: Option<f64>,
    pub correlation: Option<i64>,
    pub stream: Option<i64>,
    pub device: Option<i64>,
}

/// Everything kept from one trace file.
#[derive(Debug, Default)]
pub(crate) struct Store {
    pub names: Names,
    pub ops: Vec<GpuOp>,
    pub calls: Vec<ApiCall>,
    pub steps: Vec<StepRange>,
    /// CPU ranges that can explain GPU gaps.
    pub cpu: Vec<CpuSpan>,
    /// CPU operator and user-annotation events read (kept or not): whether the trace shows
    /// what the CPU was doing at all.
    pub cpu_events: u64,
    /// Events read, of any kind.
    pub events: u64,
    /// Complete (`X`) events without `ts` or `dur`, skipped.
    pub malformed: u64,
    /// `distributedInfo.rank` / `world_size`.
    pub rank: Option<u32>,
    pub world_size: Option<u32>,
    /// `deviceProperties[].name` by id.
    pub devices: Vec<(i64, String)>,
}

/// Lower-case substring test without allocating.
fn contains_ci(hay: &str, needle: &str) -> bool {
    hay.as_bytes()
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

impl Store {
    /// Appends the events `next` read from the part of the trace that follows this store's:
    /// the result is what one reader of both parts would have kept, names and their ids
    /// included ([`Names::absorb`]).
    #[cfg(feature = "parallel")]
    pub(crate) fn append(&mut self, next: Store) {
        let ids = self.names.absorb(&next.names);
        self.names.full |= next.names.full;
        let id = |n: u32| ids.get(n as usize).copied().unwrap_or(n);
        self.ops.extend(next.ops.into_iter().map(|o| GpuOp {
            name: id(o.name),
            ..o
        }));
        self.calls.extend(next.calls.into_iter().map(|c| ApiCall {
            name: id(c.name),
            ..c
        }));
        self.steps.extend(next.steps);
        self.cpu.extend(next.cpu.into_iter().map(|c| CpuSpan {
            name: id(c.name),
            ..c
        }));
        self.cpu_events += next.cpu_events;
        self.events += next.events;
        self.malformed += next.malformed;
        // As for one reader, a later `distributedInfo` wins.
        self.rank = next.rank.or(self.rank);
        self.world_size = next.world_size.or(self.world_size);
        self.devices.extend(next.devices);
    }

    /// Why this trace cannot be read further within the memory limits, if it cannot.
    pub(crate) fn over_limit(&self) -> Option<String> {
        let limits = self.names.limits;
        if self.names.full {
            return Some(format!(
                "it has more than {} distinct event names or {} MiB of them (real traces have thousands); \
                 is it a profiler trace? If so, profile fewer steps (torch.profiler's schedule(active=…)) and read that trace",
                limits.names,
                limits.name_bytes >> 20
            ));
        }
        let kept = self.ops.len() + self.calls.len() + self.steps.len() + self.cpu.len();
        (kept > limits.kept).then(|| {
            format!(
                "it has more than {} GPU operations and CUDA calls, more than gpuwhy holds in memory; \
                 profile fewer steps (torch.profiler's schedule(active=…)) or one rank per file, and read that trace",
                limits.kept
            )
        })
    }

    /// Classifies and keeps (or drops) one event.
    pub(crate) fn push(&mut self, e: RawEvent) {
        self.events += 1;
        if e.ph != b'X' {
            return;
        }
        let Some(cat) = e.cat else { return };
        if cat == Cat::Other {
            return;
        }
        let (Some(ts), Some(dur)) = (e.ts, e.dur) else {
            self.malformed += 1;
            return;
        };
        let name = e.name.unwrap_or(0);
        match cat {
            Cat::Kernel | Cat::Memcpy | Cat::Memset | Cat::Sync => {
                let kind = match cat {
                    Cat::Kernel if contains_ci(self.names.get(name), "nccl") => OpKind::Comm,
                    Cat::Kernel => OpKind::Compute,
                    Cat::Sync => OpKind::Sync,
                    _ => OpKind::Memory,
                };
                self.ops.push(GpuOp {
                    ts,
                    dur: dur.max(0.0),
                    corr: e.correlation.unwrap_or(0),
                    name,
                    stream: e.stream.or(e.tid).unwrap_or(0) as i32,
                    device: e.device.or(e.pid).unwrap_or(0) as i32,
                    kind,
                    call: NO_CALL,
                });
            }
            Cat::Runtime | Cat::Driver => self.calls.push(ApiCall {
                ts,
                dur: dur.max(0.0),
                corr: e.correlation.unwrap_or(0),
                name,
            }),
            Cat::UserAnnotation | Cat::CpuOp => {
                self.cpu_events += 1;
                let text = self.names.get(name);
                let step = text
                    .strip_prefix("ProfilerStep#")
                    .and_then(|n| n.parse::<i64>().ok());
                if let (Some(n), Cat::UserAnnotation) = (step, cat) {
                    self.steps.push(StepRange { n, ts, dur });
                } else if let Some(kind) = super::activity::classify(text, dur) {
                    self.cpu.push(CpuSpan {
                        ts,
                        dur: dur.max(0.0),
                        name,
                        kind,
                    });
                }
            }
            Cat::Other => {}
        }
    }
}
