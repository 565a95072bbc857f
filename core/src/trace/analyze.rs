//! One rank's summary from the kept events: busy and idle time, compute/communication/
//! memory time and their overlap, HTA's idle breakdown, kernels, launches, syncs, steps.

use std::collections::{BTreeMap, HashMap};

use super::events::{ApiCall, CpuSpan, GpuOp, Names, OpKind, StepRange, Store, NO_CALL};
use super::intervals::{intersection, length, merge, spread};
use super::summary::*;
use super::{DELAY_OUTLIER_US, RUNTIME_OUTLIER_US, SHORT_KERNEL_US, TOP_KERNELS};

/// What a runtime call does to the host.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum SyncKind {
    Device,
    Stream,
    Event,
    Memcpy,
}

/// The synchronising CUDA (and HIP, ROCm's names for the same calls) runtime calls.
pub(crate) fn sync_kind_of_call(name: &str) -> Option<SyncKind> {
    match name {
        "cudaDeviceSynchronize"
        | "cuCtxSynchronize"
        | "hipDeviceSynchronize"
        | "hipCtxSynchronize" => Some(SyncKind::Device),
        "cudaStreamSynchronize" | "cuStreamSynchronize" | "hipStreamSynchronize" => {
            Some(SyncKind::Stream)
        }
        "cudaEventSynchronize" | "cuEventSynchronize" | "hipEventSynchronize" => {
            Some(SyncKind::Event)
        }
        n if (n.starts_with("cudaMemcpy") || n.starts_with("hipMemcpy"))
            && !n.contains("Async") =>
        {
            Some(SyncKind::Memcpy)
        }
        _ => None,
    }
}

fn sync_kind_of_record(name: &str) -> Option<SyncKind> {
    match name {
        "Context Sync" | "Device Sync" | "Device Synchronize" => Some(SyncKind::Device),
        "Stream Sync" | "Stream Synchronize" => Some(SyncKind::Stream),
        "Event Sync" | "Event Synchronize" => Some(SyncKind::Event),
        _ => None,
    }
}

/// A copy between host and device memory (`Memcpy HtoD (Pinned -> Device)`, ...).
fn is_host_copy(name: &str) -> bool {
    name.contains("HtoD")
        || name.contains("DtoH")
        || name.contains("Pageable")
        || name.contains("Pinned")
}

/// Runtime calls sorted by correlation id, for lookups from GPU operations.
pub(crate) struct Calls(pub(crate) Vec<ApiCall>);

impl Calls {
    fn find(&self, corr: i64) -> Option<usize> {
        if corr == 0 {
            return None;
        }
        let i = self.0.partition_point(|c| c.corr < corr);
        self.0.get(i).filter(|c| c.corr == corr).map(|_| i)
    }

    /// Finds each operation's runtime call once (a binary search), for [`Calls::of`].
    fn resolve(&self, ops: &mut [GpuOp]) {
        for o in ops {
            o.call = self.find(o.corr).map_or(NO_CALL, |i| i as u32);
        }
    }

    /// The runtime call that launched `o`, found by [`Calls::resolve`].
    pub(crate) fn of(&self, o: &GpuOp) -> Option<&ApiCall> {
        self.0.get(o.call as usize)
    }
}

/// Summarises one trace file.
pub(crate) fn summarize(
    store: Store,
    choices: &Choices,
    source: &str,
    position: u32,
) -> RankSummary {
    let Store {
        names,
        mut ops,
        mut calls,
        mut steps,
        events,
        rank,
        world_size,
        devices,
        mut cpu,
        cpu_events,
        ..
    } = store;
    if choices.round_timestamps {
        round_to_us(&mut ops, &mut calls, &mut steps, &mut cpu);
    }
    let mut calls = Calls(calls);
    calls.0.sort_by_key(|c| c.corr);
    calls.resolve(&mut ops);
    let sync_records: Vec<(f64, SyncKind)> = ops
        .iter()
        .filter(|o| o.kind == OpKind::Sync)
        .filter_map(|o| sync_kind_of_record(names.get(o.name)).map(|k| (o.ts, k)))
        .collect();
    if !choices.sync_events_as_kernels {
        ops.retain(|o| o.kind != OpKind::Sync);
    }
    let unmatched = ops.iter().filter(|o| calls.of(o).is_none()).count() as u64;
    if choices.drop_unmatched {
        ops.retain(|o| calls.of(o).is_some());
    }
    steps.sort_by(|a, b| a.ts.total_cmp(&b.ts));
    if choices.drop_last_step {
        if let Some(last) = steps.pop() {
            let cut = last.ts;
            ops.retain(|o| calls.of(o).map_or(o.ts, |c| c.ts) < cut);
        }
    }
    let mut s = RankSummary {
        source: source.to_string(),
        rank: rank.unwrap_or(position),
        world_size,
        devices: devices.into_iter().map(|d| d.1).collect(),
        events,
        ..Default::default()
    };
    busy_times(&mut s, &ops, &names);
    streams(&mut s, &ops, &calls, choices);
    kernels_and_launches(&mut s, &ops, &calls, &names);
    s.launch.unmatched = unmatched;
    let sync_times = syncs(&mut s, &ops, &calls, &names, &sync_records);
    s.gap_causes = super::gaps::attribute(&ops, &calls, &cpu, &names, cpu_events > 0);
    // A GPU operation belongs to the step in which the CPU launched it.
    let launch: Vec<f64> = ops
        .iter()
        .map(|o| calls.of(o).map_or(o.ts, |c| c.ts))
        .collect();
    super::steps::per_step(&mut s, &ops, &launch, &steps, sync_times);
    s
}

/// How long the GPU was busy over the traced span, in all and by kind of operation, and how
/// much communication ran under compute.
fn busy_times(s: &mut RankSummary, ops: &[GpuOp], names: &Names) {
    let all = merge(ops.iter().map(|o| (o.ts, o.end())).collect());
    let of = |k: &[OpKind]| {
        merge(
            ops.iter()
                .filter(|o| k.contains(&o.kind))
                .map(|o| (o.ts, o.end()))
                .collect(),
        )
    };
    let compute = of(&[OpKind::Compute]);
    let comm = of(&[OpKind::Comm]);
    s.busy_us = length(&all);
    s.span_us = match (all.first(), all.last()) {
        (Some(a), Some(b)) => b.1 - a.0,
        _ => 0.0,
    };
    s.idle_share = if s.span_us > 0.0 {
        1.0 - s.busy_us / s.span_us
    } else {
        0.0
    };
    s.compute_us = length(&compute);
    s.comm_us = length(&comm);
    s.memory_us = length(&of(&[OpKind::Memory]));
    s.host_copy_us = length(&merge(
        ops.iter()
            .filter(|o| o.kind == OpKind::Memory && is_host_copy(names.get(o.name)))
            .map(|o| (o.ts, o.end()))
            .collect(),
    ));
    s.comm_overlap_us = intersection(&compute, &comm);
    s.comm_overlap_share = (s.comm_us > 0.0).then(|| s.comm_overlap_us / s.comm_us);
}

/// One event's start rounded up and end rounded down (HTA's rounding).
fn round(ts: &mut f64, dur: &mut f64) {
    let end = (*ts + *dur).floor();
    *ts = ts.ceil();
    *dur = end - *ts;
}

/// HTA's rounding of fractional-µs events ([`Choices::round_timestamps`]): the start up, the
/// end (computed before rounding) down, the duration their difference.
fn round_to_us(
    ops: &mut [GpuOp],
    calls: &mut [ApiCall],
    steps: &mut [StepRange],
    cpu: &mut [CpuSpan],
) {
    ops.iter_mut().for_each(|o| round(&mut o.ts, &mut o.dur));
    cpu.iter_mut().for_each(|c| round(&mut c.ts, &mut c.dur));
    calls.iter_mut().for_each(|c| round(&mut c.ts, &mut c.dur));
    steps
        .iter_mut()
        .for_each(|st| round(&mut st.ts, &mut st.dur));
}

fn streams(s: &mut RankSummary, ops: &[GpuOp], calls: &Calls, choices: &Choices) {
    let mut by: BTreeMap<(i32, i32), Vec<&GpuOp>> = BTreeMap::new();
    for o in ops {
        by.entry((o.device, o.stream)).or_default().push(o);
    }
    for ((device, stream), mut v) in by {
        v.sort_by(|a, b| a.ts.total_cmp(&b.ts));
        let mut st = StreamSummary {
            device,
            stream,
            ops: v.len() as u64,
            ..Default::default()
        };
        st.busy_us = length(&merge(v.iter().map(|o| (o.ts, o.end())).collect()));
        let mut prev_end = v[0].end();
        let first = v[0].ts;
        for o in &v[1..] {
            let gap = o.ts - prev_end;
            if gap > 0.0 {
                let launched_after = calls.of(o).is_some_and(|c| c.ts > prev_end);
                if launched_after {
                    st.idle.host_wait_us += gap;
                } else if gap < choices.kernel_wait_us {
                    st.idle.kernel_wait_us += gap;
                } else {
                    st.idle.other_us += gap;
                }
            }
            prev_end = prev_end.max(o.end());
        }
        st.span_us = prev_end - first;
        s.idle.host_wait_us += st.idle.host_wait_us;
        s.idle.kernel_wait_us += st.idle.kernel_wait_us;
        s.idle.other_us += st.idle.other_us;
        s.streams.push(st);
    }
    if let Some(main) = s
        .streams
        .iter()
        .max_by(|a, b| a.busy_us.total_cmp(&b.busy_us))
    {
        s.main_stream_idle = main.idle;
    }
}

fn kernels_and_launches(s: &mut RankSummary, ops: &[GpuOp], calls: &Calls, names: &Names) {
    let kernels: Vec<&GpuOp> = ops
        .iter()
        .filter(|o| matches!(o.kind, OpKind::Compute | OpKind::Comm))
        .collect();
    let mut durs: Vec<f64> = kernels.iter().map(|o| o.dur).collect();
    let short = durs.iter().filter(|d| **d < SHORT_KERNEL_US).count();
    s.kernels.count = kernels.len() as u64;
    s.kernels.short_share = if durs.is_empty() {
        0.0
    } else {
        short as f64 / durs.len() as f64
    };
    s.kernels.duration_us = spread(&mut durs);
    let (mut rt, mut delay, mut shorter) = (Vec::new(), Vec::new(), 0u64);
    for o in &kernels {
        if let Some(c) = calls.of(o) {
            rt.push(c.dur);
            delay.push(o.ts - c.ts);
            if o.dur < c.dur {
                shorter += 1;
            }
        }
    }
    s.kernels.shorter_than_launch_share =
        (!rt.is_empty()).then(|| shorter as f64 / rt.len() as f64);
    s.launch.matched = ops.iter().filter(|o| calls.of(o).is_some()).count() as u64;
    s.launch.runtime_outliers = rt.iter().filter(|d| **d > RUNTIME_OUTLIER_US).count() as u64;
    s.launch.delay_outliers = delay.iter().filter(|d| **d > DELAY_OUTLIER_US).count() as u64;
    s.launch.runtime_us = spread(&mut rt);
    s.launch.delay_us = spread(&mut delay);
    let mut totals: HashMap<u32, (u64, f64)> = HashMap::new();
    for o in &kernels {
        let e = totals.entry(o.name).or_default();
        e.0 += 1;
        e.1 += o.dur;
    }
    let all: f64 = totals.values().map(|t| t.1).sum();
    let mut top: Vec<(u32, (u64, f64))> = totals.into_iter().collect();
    top.sort_by(|a, b| b.1 .1.total_cmp(&a.1 .1).then(a.0.cmp(&b.0)));
    s.top_kernels = top
        .into_iter()
        .take(TOP_KERNELS)
        .map(|(n, (count, total))| TopKernel {
            name: names.get(n).to_string(),
            count,
            total_us: total,
            mean_us: total / count as f64,
            share: if all > 0.0 { total / all } else { 0.0 },
        })
        .collect();
}

/// Counts synchronizing calls; returns their start times (for per-step counts).
fn syncs(
    s: &mut RankSummary,
    ops: &[GpuOp],
    calls: &Calls,
    names: &Names,
    records: &[(f64, SyncKind)],
) -> Vec<f64> {
    let mut times = Vec::new();
    let count = |st: &mut SyncStats, k: SyncKind| match k {
        SyncKind::Device => st.device_sync += 1,
        SyncKind::Stream => st.stream_sync += 1,
        SyncKind::Event => st.event_sync += 1,
        SyncKind::Memcpy => st.sync_memcpy += 1,
    };
    if calls.0.is_empty() {
        s.syncs.source = "cuda_sync records (no cuda_runtime calls in the trace)".into();
        for (t, k) in records {
            count(&mut s.syncs, *k);
            times.push(*t);
        }
    } else {
        s.syncs.source = "cuda_runtime calls".into();
        for c in &calls.0 {
            if let Some(k) = sync_kind_of_call(names.get(c.name)) {
                count(&mut s.syncs, k);
                times.push(c.ts);
            }
        }
        // An async copy to or from pageable memory blocks the host like a synchronous one.
        for o in ops.iter().filter(|o| o.kind == OpKind::Memory) {
            if !names.get(o.name).contains("Pageable") {
                continue;
            }
            if let Some(c) = calls
                .of(o)
                .filter(|c| names.get(c.name).starts_with("cudaMemcpyAsync"))
            {
                s.syncs.pageable_async_memcpy += 1;
                times.push(c.ts);
            }
        }
    }
    let st = &s.syncs;
    s.syncs.total =
        st.device_sync + st.stream_sync + st.event_sync + st.sync_memcpy + st.pageable_async_memcpy;
    times
}
