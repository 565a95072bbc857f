//! Each GPU gap attributed to what the CPU was doing across it.
//!
//! A gap is an interval in which no GPU operation runs (the union over streams, so the gaps
//! add up to the span's idle time). When the operation after the gap was launched after the
//! gap began, the CPU is why the GPU waited (HTA's "host wait"), and the gap's time is shared
//! out by what the CPU was in, per instant, most specific first: an allocator call, a
//! synchronising call or `.item()`, the DataLoader, and — in gaps longer than
//! [`LAUNCH_GAP_MAX_US`] — an optimizer step with no GPU work under it, or an `aten::`
//! operator computing on the CPU.
//! What no range covers goes to the call the gap opened in (an allocator call or a sync still
//! running when the GPU ran dry: the time after it is the drained queue refilling), else to
//! Python between launches (short gaps) or unseen host work (long ones). Gaps whose next
//! operation was already queued are GPU-side waits. `docs/trace-format.md` has the
//! definitions and a worked example.

use serde::Serialize;

use super::activity::{is_allocator_call, CpuKind};
use super::analyze::Calls;
use super::events::{CpuSpan, GpuOp, Names};
use super::intervals::{intersection, length, merge};

/// Gap length (µs) up to which time the CPU spends outside any recognised range is Python
/// between launches (launch-bound): a launch costs 5–20 µs (HTA's launch statistics docs), so
/// a millisecond holds 50–200 of them; a longer gap without one is other host work.
pub const LAUNCH_GAP_MAX_US: f64 = 1000.0;

/// How far (µs) a synchronising or allocator call may end before a gap's start and still be
/// the call the gap opened in. The call returns once the GPU is done, so it ends at or just
/// after the gap's start on one clock; this allows for the rounding of timestamps to whole µs
/// and the host's return path.
pub const OPENER_SLACK_US: f64 = 5.0;

/// Names listed in [`GapCauses::top_ranges`].
pub const TOP_RANGES: usize = 8;

/// Share of an optimizer step the GPU must spend in gaps over [`LAUNCH_GAP_MAX_US`] for the
/// step to count as running on the CPU ("with no GPU work": most of it).
pub const MIN_OPTIMIZER_IDLE: f64 = 0.5;

/// The GPU idle time of one rank, by what the CPU was doing (µs). The parts add up to
/// `idle_us`, the span's idle time.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct GapCauses {
    /// All GPU idle time between the first and the last GPU operation.
    pub idle_us: f64,
    /// Gaps.
    pub gaps: u64,
    /// Under a DataLoader's `__next__` (or a range named DataLoader): waiting for input.
    pub data_us: f64,
    /// Under allocator calls (`cudaMalloc`, `cudaFree`, `hipFree`, ...) or after one that the
    /// gap opened in.
    pub allocator_us: f64,
    /// Under synchronising calls (`cudaDeviceSynchronize`, `cudaStreamSynchronize`,
    /// synchronous `cudaMemcpy`, `aten::item`, ...) or after one that the gap opened in.
    pub sync_us: f64,
    /// In long gaps, under an optimizer step with no GPU work (a CPU optimizer, offload, or an
    /// optimizer whose host side runs long between its launches) or an `aten::` operator
    /// computing on the CPU.
    pub cpu_work_us: f64,
    /// Short gaps with nothing recognised on the CPU: Python between launches.
    pub launch_us: f64,
    /// Long gaps with nothing recognised on the CPU: host work the trace does not name.
    pub other_host_us: f64,
    /// Gaps before an operation that was already queued (cross-stream waits, launch latency).
    pub gpu_side_us: f64,
    /// Gaps before an operation with no runtime call in the trace.
    pub unmatched_us: f64,
    /// The trace has CPU operator or annotation events (without them the DataLoader and the
    /// optimizer cannot be seen).
    pub cpu_events: bool,
    /// The CPU ranges and allocator calls under gaps by name, with their time inside gaps
    /// (µs), most first (at most [`TOP_RANGES`]), for messages.
    pub top_ranges: Vec<(String, f64)>,
}

impl GapCauses {
    /// `part` over the idle time (0 without idle time).
    pub fn of_idle(&self, part: f64) -> f64 {
        if self.idle_us > 0.0 {
            part / self.idle_us
        } else {
            0.0
        }
    }
}

/// Merged intervals of each class of CPU activity.
struct Classes {
    allocator: Vec<(f64, f64)>,
    sync: Vec<(f64, f64)>,
    data: Vec<(f64, f64)>,
    work: Vec<(f64, f64)>,
    /// The CPU ranges that count, for naming them.
    named: Vec<CpuSpan>,
}

impl Classes {
    /// The classes' intervals; `idle` is the GPU's gaps, for telling an optimizer step that
    /// runs with no GPU work from one whose kernels keep the GPU busy.
    fn new(calls: &Calls, cpu: &[CpuSpan], names: &Names, idle: &[(f64, f64)]) -> Classes {
        let span = |ts: f64, dur: f64| (ts, ts + dur.max(0.0));
        let long: Vec<(f64, f64)> = idle
            .iter()
            .copied()
            .filter(|g| g.1 - g.0 > LAUNCH_GAP_MAX_US)
            .collect();
        let mut starts: Vec<f64> = calls.0.iter().map(|c| c.ts).collect();
        starts.sort_by(f64::total_cmp);
        let counts = |s: &CpuSpan| match s.kind {
            CpuKind::Data | CpuKind::Sync => true,
            // An optimizer step is CPU work when the GPU sits in long gaps for most of it (a
            // CPU optimizer, offload); a GPU optimizer's kernels keep the GPU busy under it.
            CpuKind::Optimizer => {
                length(&clip(&long, s.ts, s.ts + s.dur)) >= MIN_OPTIMIZER_IDLE * s.dur
            }
            // An operator computes on the CPU when no runtime call (a launch, a copy, an
            // allocation) starts inside it.
            CpuKind::CpuOp => {
                let i = starts.partition_point(|t| *t < s.ts);
                starts.get(i).is_none_or(|t| *t >= s.ts + s.dur)
            }
        };
        let named: Vec<CpuSpan> = cpu.iter().copied().filter(counts).collect();
        let of = |k: &[CpuKind]| -> Vec<(f64, f64)> {
            named
                .iter()
                .filter(|s| k.contains(&s.kind))
                .map(|s| span(s.ts, s.dur))
                .collect()
        };
        let mut sync = of(&[CpuKind::Sync]);
        sync.extend(
            calls
                .0
                .iter()
                .filter(|c| super::analyze::sync_kind_of_call(names.get(c.name)).is_some())
                .map(|c| span(c.ts, c.dur)),
        );
        Classes {
            allocator: merge(
                calls
                    .0
                    .iter()
                    .filter(|c| is_allocator_call(names.get(c.name)))
                    .map(|c| span(c.ts, c.dur))
                    .collect(),
            ),
            sync: merge(sync),
            data: merge(of(&[CpuKind::Data])),
            work: merge(of(&[CpuKind::Optimizer, CpuKind::CpuOp])),
            named,
        }
    }
}

/// The parts of merged `list` inside `[a, b]`.
fn clip(list: &[(f64, f64)], a: f64, b: f64) -> Vec<(f64, f64)> {
    let i = list.partition_point(|x| x.1 <= a);
    list[i..]
        .iter()
        .take_while(|x| x.0 < b)
        .map(|x| (x.0.max(a), x.1.min(b)))
        .filter(|x| x.1 > x.0)
        .collect()
}

/// Whether an interval of merged `list` is running at `t` (or ended at most
/// [`OPENER_SLACK_US`] before it).
fn running_at(list: &[(f64, f64)], t: f64) -> bool {
    let i = list.partition_point(|x| x.1 + OPENER_SLACK_US < t);
    list.get(i).is_some_and(|x| x.0 <= t)
}

/// Attributes every GPU gap of `ops` (sorted or not) to the CPU activity across it.
pub(crate) fn attribute(
    ops: &[GpuOp],
    calls: &Calls,
    cpu: &[CpuSpan],
    names: &Names,
    cpu_events: bool,
) -> GapCauses {
    let mut out = GapCauses {
        cpu_events,
        ..Default::default()
    };
    let mut order: Vec<&GpuOp> = ops.iter().collect();
    order.sort_by(|a, b| a.ts.total_cmp(&b.ts));
    let Some(first) = order.first() else {
        return out;
    };
    // Each gap and the operation after it.
    let mut end = first.end();
    let mut gaps = Vec::new();
    for o in &order[1..] {
        if o.ts > end {
            gaps.push((end, o.ts, calls.of(o).map(|c| c.ts)));
        }
        end = end.max(o.end());
    }
    let idle: Vec<(f64, f64)> = gaps.iter().map(|g| (g.0, g.1)).collect();
    let classes = Classes::new(calls, cpu, names, &idle);
    for (a, b, launch) in gaps {
        gap(&mut out, &classes, launch, a, b);
    }
    out.top_ranges = top_ranges(&idle, &classes.named, calls, names);
    out
}

/// Shares out one gap `[a, b]` whose next operation was launched at `launch`.
fn gap(out: &mut GapCauses, c: &Classes, launch: Option<f64>, a: f64, b: f64) {
    let len = b - a;
    out.idle_us += len;
    out.gaps += 1;
    let Some(launch) = launch else {
        out.unmatched_us += len;
        return;
    };
    if launch <= a {
        out.gpu_side_us += len;
        return;
    }
    let long = len > LAUNCH_GAP_MAX_US;
    let mut claimed: Vec<(f64, f64)> = Vec::new();
    let mut take = |list: &[(f64, f64)]| -> f64 {
        let pieces = clip(list, a, b);
        let new = length(&pieces) - intersection(&pieces, &claimed);
        claimed.extend(pieces);
        claimed = merge(std::mem::take(&mut claimed));
        new
    };
    let allocator = take(&c.allocator);
    let sync = take(&c.sync);
    let data = take(&c.data);
    let work = if long { take(&c.work) } else { 0.0 };
    let rest = (len - allocator - sync - data - work).max(0.0);
    out.allocator_us += allocator;
    out.sync_us += sync;
    out.data_us += data;
    out.cpu_work_us += work;
    if running_at(&c.allocator, a) {
        out.allocator_us += rest;
    } else if running_at(&c.sync, a) {
        out.sync_us += rest;
    } else if long {
        out.other_host_us += rest;
    } else {
        out.launch_us += rest;
    }
}

/// The counted CPU ranges' names by their time inside GPU gaps, most first (at most
/// [`TOP_RANGES`]); allocator calls are counted under their own names.
fn top_ranges(
    idle: &[(f64, f64)],
    cpu: &[CpuSpan],
    calls: &Calls,
    names: &Names,
) -> Vec<(String, f64)> {
    let mut by: Vec<(u32, f64)> = Vec::new();
    let mut add = |name: u32, ts: f64, dur: f64| {
        let inside = length(&clip(idle, ts, ts + dur.max(0.0)));
        if inside > 0.0 {
            match by.iter_mut().find(|(n, _)| *n == name) {
                Some(e) => e.1 += inside,
                None => by.push((name, inside)),
            }
        }
    };
    for s in cpu {
        add(s.name, s.ts, s.dur);
    }
    for c in calls
        .0
        .iter()
        .filter(|c| is_allocator_call(names.get(c.name)))
    {
        add(c.name, c.ts, c.dur);
    }
    by.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    by.into_iter()
        .take(TOP_RANGES)
        .map(|(n, us)| (names.get(n).to_string(), us))
        .collect()
}
