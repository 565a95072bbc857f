//! Per-step breakdown: each GPU operation belongs to the `ProfilerStep#N` range in which the
//! CPU launched it (its runtime call's start; its own start when it has none), as HTA
//! assigns kernels to iterations.

use super::events::{GpuOp, OpKind, StepRange};
use super::intervals::{length, merge, spread};
use super::summary::{RankSummary, StepStats, StepSummary};
use crate::stats::percentile_sorted;

pub(crate) fn per_step(
    s: &mut RankSummary,
    ops: &[GpuOp],
    launch: &[f64],
    steps: &[StepRange],
    sync_times: Vec<f64>,
) {
    if steps.is_empty() {
        return;
    }
    let step_of = |t: f64| -> Option<usize> {
        let i = steps.partition_point(|st| st.ts <= t);
        let st = steps.get(i.checked_sub(1)?)?;
        (t < st.ts + st.dur).then_some(i - 1)
    };
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); steps.len()];
    for (i, t) in launch.iter().enumerate() {
        if let Some(k) = step_of(*t) {
            members[k].push(i as u32);
        }
    }
    let mut syncs = vec![0u64; steps.len()];
    for t in sync_times {
        if let Some(k) = step_of(t) {
            syncs[k] += 1;
        }
    }
    for (k, st) in steps.iter().enumerate() {
        let mine: Vec<&GpuOp> = members[k].iter().map(|&i| &ops[i as usize]).collect();
        s.steps.push(step_summary(st, &mine, syncs[k]));
    }
    s.step_stats = step_stats(&s.steps);
}

/// One step: the CPU's time in it and what the GPU did for the operations launched in it.
fn step_summary(st: &StepRange, mine: &[&GpuOp], syncs: u64) -> StepSummary {
    let busy = merge(mine.iter().map(|o| (o.ts, o.end())).collect());
    let comm = merge(
        mine.iter()
            .filter(|o| o.kind == OpKind::Comm)
            .map(|o| (o.ts, o.end()))
            .collect(),
    );
    let first = busy.first().map(|b| b.0);
    let last_comm = mine
        .iter()
        .filter(|o| o.kind == OpKind::Comm)
        .map(|o| o.ts)
        .fold(None, |m: Option<f64>, t| Some(m.map_or(t, |m| m.max(t))));
    StepSummary {
        step: st.n,
        cpu_us: st.dur,
        gpu_busy_us: length(&busy),
        gpu_span_us: match (first, busy.last()) {
            (Some(a), Some(b)) => b.1 - a,
            _ => 0.0,
        },
        comm_us: length(&comm),
        kernels: mine
            .iter()
            .filter(|o| matches!(o.kind, OpKind::Compute | OpKind::Comm))
            .count() as u64,
        syncs,
        last_comm_offset_us: last_comm.zip(first).map(|(l, f)| l - f),
    }
}

/// The distributions over the steps: CPU time, GPU over CPU time, kernels and syncs per
/// step, and how widely step times vary.
fn step_stats(steps: &[StepSummary]) -> StepStats {
    let mut cpu: Vec<f64> = steps.iter().map(|x| x.cpu_us).collect();
    let mut ratio: Vec<f64> = steps
        .iter()
        .filter(|x| x.cpu_us > 0.0)
        .map(|x| x.gpu_busy_us / x.cpu_us)
        .collect();
    let mut kernels: Vec<f64> = steps.iter().map(|x| x.kernels as f64).collect();
    let mut sy: Vec<f64> = steps.iter().map(|x| x.syncs as f64).collect();
    let cpu_spread = spread(&mut cpu);
    let (q1, q3) = (percentile_sorted(&cpu, 0.25), percentile_sorted(&cpu, 0.75));
    StepStats {
        count: steps.len(),
        cpu_us: cpu_spread,
        gpu_cpu_ratio: spread(&mut ratio),
        kernels: spread(&mut kernels),
        syncs: spread(&mut sy),
        iqr_over_p50: if cpu_spread.p50 > 0.0 {
            (q3 - q1) / cpu_spread.p50
        } else {
            0.0
        },
        p95_over_p50: if cpu_spread.p50 > 0.0 {
            cpu_spread.p95 / cpu_spread.p50
        } else {
            0.0
        },
    }
}
