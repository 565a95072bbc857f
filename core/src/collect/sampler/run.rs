//! The sampler thread's body: it loads NVML, opens the GPUs, then ticks until stopped —
//! reading every GPU (slow metrics staggered, GPM every slow tick), draining XID events and
//! sampling the host into the recording and the journal — and at the end settles the
//! recording's capabilities, overhead and resolved NVML symbols.

use std::time::Instant;

use super::{lock, Shared};
use crate::collect::clock::ScaledClock;
use crate::collect::cost::{thread_cpu_seconds, CallStats};
use crate::collect::gpu::{nvml_info, Gpu, Outcome, SLOW_PERIOD_S};
use crate::collect::hook::SamplerHook;
use crate::collect::host_rows::{host_column_name, host_row};
use crate::collect::journal_buf::{flush, Journal};
use crate::collect::live::update_live;
use crate::collect::procwatch::ProcWatch;
use crate::collect::{RecorderConfig, HOST_PERIOD_S};
use crate::host::HostSampler;
use crate::metric::GpuMetric;
use crate::nvml::{GpmSample, EVENT_XID_CRITICAL};
use crate::os::thread_cpu_ns;
use crate::report::journal::{JournalHeader, JournalLine, JournalWriter, JOURNAL_SCHEMA};
use crate::report::{DeviceInfo, Event};

/// Most events drained from NVML's event set per tick.
const MAX_EVENTS_PER_TICK: usize = 16;

/// Reads every live GPU's compute-process list into `procs`. A GPU whose driver cannot list
/// processes is noted once and skipped: the decision then rests on the others and the
/// environment, and says so.
fn watch_processes(
    nvml: Option<&crate::nvml::Nvml>,
    gpus: &[Gpu],
    procs: &mut ProcWatch,
    stats: &mut CallStats,
    t: f64,
) {
    let Some(n) = nvml else { return };
    for g in gpus.iter().filter(|g| !g.lost) {
        if !procs.readable(g.index) {
            continue;
        }
        let h = g.handle();
        let listed = stats.time("nvmlDeviceGetComputeRunningProcesses", || {
            n.compute_processes(h)
        });
        match listed {
            Ok(list) => {
                procs.observe(&crate::host::ProcFs, g.index, &list, t);
                procs.sm.read(n, g.index, h, stats);
            }
            Err(e) if e.is_unavailable() => {
                procs.unreadable(g.index, format!("{} from {}", e.code_name(), e.function))
            }
            // A transient failure: the next slow tick reads the list again.
            Err(_) => {}
        }
    }
}

pub(super) fn run_sampler(
    shared: &Shared,
    cfg: &RecorderConfig,
    clock: ScaledClock,
    hook: Option<&dyn SamplerHook>,
) {
    let (nvml, loaded_at) = crate::collect::init::load_nvml(&shared.rec, cfg, clock);
    if !shared.load.finish(loaded_at) {
        // The recording stopped during the init and was handed back without us.
        return;
    }
    let cpu0 = thread_cpu_seconds();
    let mut stats = CallStats::default();
    let mut gpus: Vec<Gpu> = Vec::new();
    // How each device's GPM is read: `Some` for a MIG device (`collect::mig`).
    let mut gpm_routes: Vec<Option<crate::collect::mig::GpmRoute>> = Vec::new();
    if let Some(n) = &nvml {
        let info = nvml_info(n);
        let count = match n.device_count() {
            Ok(c) => c,
            Err(e) => {
                lock(&shared.rec).gpu_absent_reason =
                    Some(format!("NVML loaded but could not count GPUs: {e}"));
                0
            }
        };
        let mut rec = lock(&shared.rec);
        rec.nvml = Some(info);
        if count == 0 && rec.gpu_absent_reason.is_none() {
            rec.gpu_absent_reason = Some("NVML reports no GPU on this machine".into());
        }
        for i in 0..count {
            let pos = rec.devices.len();
            // A failed call while opening is a fault like one while sampling: listed with
            // its function and code, at the time the GPUs were opened.
            let t = clock.now();
            match Gpu::open(n, pos, i, cfg.gpm, &mut stats) {
                Ok((mut g, info)) => {
                    for e in g.take_open_errors() {
                        rec.count_fault(Some(i), e.function, e.code, e.code_name(), t);
                    }
                    rec.add_device(info);
                    gpus.push(g);
                }
                Err(e) => {
                    rec.count_fault(Some(i), e.function, e.code, e.code_name(), t);
                    let mut info = DeviceInfo {
                        index: i,
                        ..Default::default()
                    };
                    for m in GpuMetric::ALL {
                        info.capabilities.insert(
                            m.name().into(),
                            crate::report::Capability::unavailable(format!(
                                "device handle unavailable: {e}"
                            )),
                        );
                    }
                    rec.add_device(info);
                }
            }
        }
        gpm_routes.resize(gpus.len(), None);
        let whole: Vec<(crate::nvml::Device, u32)> =
            gpus.iter().map(|g| (g.handle(), g.index)).collect();
        for (h, index) in whole {
            let next = (rec.devices.len() as u32, rec.devices.len());
            for m in crate::collect::mig::open_slices(n, h, index, next, cfg.gpm, &mut stats) {
                rec.add_device(m.info);
                gpus.push(m.gpu);
                gpm_routes.push(m.route);
            }
        }
    }
    shared.probed.set();
    let mut events = nvml.as_ref().and_then(|n| {
        let mut set = n.event_set().ok()?;
        for g in &gpus {
            // A GPU without event support leaves the set usable for the others.
            let _ = set.register(g.handle(), EVENT_XID_CRITICAL);
        }
        Some(set)
    });
    let mut gpm: Vec<Option<(GpmSample<'_>, GpmSample<'_>, bool)>> = gpus
        .iter()
        .map(|g| {
            let n = nvml.as_ref()?;
            if !g.gpm {
                return None;
            }
            Some((n.gpm_sample().ok()?, n.gpm_sample().ok()?, false))
        })
        .collect();
    let mut host = cfg.host.then(|| HostSampler::new(cfg.target_pid));
    let mut procs = ProcWatch::new(cfg.job.pid.or(cfg.target_pid)).with_ns(
        cfg.job
            .host_proc
            .as_deref()
            .map(crate::collect::nsmap::NsMap::at),
    );
    let mut journal = Journal {
        writer: None,
        pending: Vec::new(),
        gpu_rows: vec![(Vec::new(), Vec::new()); gpus.len()],
        host_rows: (Vec::new(), Vec::new()),
        last_flush: Instant::now(),
    };
    let interval = cfg.interval_s;
    let slow_every = ((SLOW_PERIOD_S / interval).round() as u64).max(1);
    let mig_gpm_every = ((crate::collect::mig::GPM_PERIOD_S / interval).ceil() as u64).max(1);
    let host_every = ((HOST_PERIOD_S / interval).round() as u64).max(1);
    let mut tick: u64 = 0;
    let mut next = 0.0;
    let mut late = 0u64;
    let mut skipped = 0u64;
    let mut gpu_work_ns = 0u64;
    loop {
        let t = (clock.now() * 1e4).round() / 1e4;
        let work0 = thread_cpu_ns();
        let mut rows = Vec::with_capacity(gpus.len());
        let mut outcomes = Vec::new();
        for (gi, g) in gpus.iter_mut().enumerate() {
            if g.lost {
                continue;
            }
            let Some(n) = &nvml else { break };
            let mut row = [f32::NAN; GpuMetric::COUNT];
            // Stagger the slow reads across GPUs so one tick never pays for all of them.
            let slow = tick == 0 || (tick + gi as u64) % slow_every == 0;
            let mut out = g.sample(n, slow, &mut row, &mut stats);
            let route = gpm_routes.get(gi).copied().flatten();
            let gpm_due = slow || (route.is_some() && tick % mig_gpm_every == 0);
            if gpm_due && !g.lost {
                if let Some(Some((a, b, primed))) = gpm.get_mut(gi) {
                    let got =
                        crate::collect::mig::gpm_snapshot(n, g.handle(), route, b, &mut stats);
                    match got {
                        Ok(()) => {
                            if *primed {
                                let r = stats.time("nvmlGpmMetricsGet", || {
                                    n.gpm_metrics(a, b, Gpu::gpm_ids())
                                });
                                g.store_gpm(r, &mut row, &mut out);
                            }
                            std::mem::swap(a, b);
                            *primed = true;
                        }
                        Err(e) => g.store_gpm(Err(e), &mut row, &mut out),
                    }
                }
            }
            outcomes.push((g.pos, g.index, out));
            if !g.lost {
                rows.push((g.pos, row));
            }
        }
        if let (Some(a), Some(b)) = (work0, thread_cpu_ns()) {
            gpu_work_ns += b.saturating_sub(a);
        }
        if tick % slow_every == 0 {
            watch_processes(nvml.as_ref(), &gpus, &mut procs, &mut stats, t);
        }
        let mut new_events = Vec::new();
        if let (Some(set), Some(_)) = (events.as_mut(), &nvml) {
            for _ in 0..MAX_EVENTS_PER_TICK {
                match set.wait(0) {
                    Ok(Some(ev)) => {
                        let dev = gpus
                            .iter()
                            .find(|g| g.handle() == ev.device)
                            .map(|g| g.index);
                        new_events.push(Event {
                            t_s: t,
                            device: dev,
                            kind: "xid".into(),
                            code: Some(ev.xid),
                            detail: format!("XID {} reported by the driver", ev.xid),
                        });
                    }
                    Ok(None) | Err(_) => break,
                }
            }
        }
        if let Some(h) = hook {
            h.tick(&mut new_events);
        }
        let host_sample = if tick % host_every == 0 {
            host.as_mut().map(|h| host_row(&h.sample()))
        } else {
            None
        };
        {
            let mut rec = lock(&shared.rec);
            for (pos, index, outs) in outcomes {
                for o in outs {
                    match o {
                        Outcome::Unavailable(m, why) => {
                            rec.mark_unavailable(pos, m, why.clone());
                            journal.pending.push(JournalLine::Unavailable {
                                dev: pos,
                                metric: m.name().into(),
                                reason: why,
                            });
                        }
                        Outcome::Transient(e) => {
                            rec.count_fault(Some(index), e.function, e.code, e.code_name(), t)
                        }
                        Outcome::Lost(e) => {
                            let ev = Event { t_s: t, device: Some(index), kind: "gpu_lost".into(), code: Some(u64::from(e.code)), detail: format!("{} returned GPU_IS_LOST: the GPU fell off the bus; its series stop here", e.function) };
                            if let Some(d) = rec.devices.get_mut(pos) {
                                d.info.lost_at_s = Some(t);
                            }
                            rec.push_event(ev.clone());
                            journal.pending.push(JournalLine::Lost { dev: pos, t });
                            journal.pending.push(JournalLine::Event(ev));
                        }
                    }
                }
            }
            for ev in new_events {
                rec.push_event(ev.clone());
                journal.pending.push(JournalLine::Event(ev));
            }
            for (pos, row) in &rows {
                rec.push_gpu(*pos, t, row);
                if let Some(j) = journal.gpu_rows.get_mut(*pos) {
                    j.0.push(t);
                    j.1.push(crate::report::Column(row.to_vec()));
                }
            }
            if let (Some(h), Some(row)) = (rec.host.as_mut(), &host_sample) {
                h.series.push(t, row);
                journal.host_rows.0.push(t);
                journal.host_rows.1.push(crate::report::Column(row.clone()));
            }
            rec.run.duration_s = t;
            rec.overhead.ticks = tick + 1;
            rec.overhead.late_ticks = late;
            rec.overhead.skipped_ticks = skipped;
            if tick == 0 {
                for g in &gpus {
                    if let Some(d) = rec.devices.get_mut(g.pos) {
                        d.info.capabilities = g.capabilities();
                    }
                }
                if let Some(path) = &cfg.journal {
                    let header = JournalHeader {
                        schema: JOURNAL_SCHEMA.into(),
                        run: rec.run.clone(),
                        nvml: rec.nvml.clone(),
                        gpu_absent_reason: rec.gpu_absent_reason.clone(),
                        devices: rec.devices.iter().map(|d| d.info.clone()).collect(),
                        host: rec
                            .host
                            .as_ref()
                            .map(|h| (h.facts.clone(), h.columns.clone())),
                    };
                    match JournalWriter::create(path, &header) {
                        Ok(w) => journal.writer = Some(w),
                        Err(e) => *lock(&shared.journal_error) = Some(e.to_string()),
                    }
                }
            }
        }
        update_live(&shared.live, &gpus, &rows);
        let stopping = shared.stop.is_stopped();
        if journal.writer.is_some()
            && (stopping || journal.last_flush.elapsed().as_secs_f64() >= cfg.flush_s)
        {
            flush(
                &shared.rec,
                &shared.journal_error,
                &mut journal,
                &stats,
                t,
                hook,
            );
        }
        if stopping {
            break;
        }
        tick += 1;
        next += interval;
        let now = clock.now();
        if now > next + interval {
            late += 1;
            let behind = ((now - next) / interval).floor();
            skipped += behind as u64;
            next += behind * interval;
        }
        if shared.stop.wait(clock.wall(next - now)) {
            // One last tick so the report ends at the stop, then flush and leave.
            continue;
        }
    }
    // Drop GPM samples and the event set before NVML shuts down.
    drop(gpm);
    drop(events);
    let cpu = match (cpu0, thread_cpu_seconds()) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    let mut rec = lock(&shared.rec);
    let infos: Vec<DeviceInfo> = rec.devices.iter().map(|d| d.info.clone()).collect();
    rec.run.job_gpus = procs.settle(cfg, &infos);
    for g in &gpus {
        if let Some(d) = rec.devices.get_mut(g.pos) {
            let lost = d.info.lost_at_s;
            d.info.capabilities = g.capabilities();
            d.info.lost_at_s = lost;
        }
    }
    if let (Some(h), Some(s)) = (rec.host.as_mut(), host.as_ref()) {
        h.unavailable = s
            .unavailable()
            .iter()
            .map(|(k, v)| (host_column_name(k).to_string(), v.clone()))
            .collect();
    }
    let o = &mut rec.overhead;
    o.sampler_cpu_s = cpu;
    let ticks = o.ticks.max(1) as f64;
    o.cpu_per_tick_us = cpu.map(|c| c / ticks * 1e6);
    // Per GPU: the CPU spent reading GPUs inside ticks, without the thread's wake-ups and
    // the host sampling, so it measures what watching one more GPU costs.
    o.cpu_per_gpu_tick_us = (!gpus.is_empty() && cpu.is_some())
        .then(|| gpu_work_ns as f64 / 1e3 / ticks / gpus.len() as f64);
    o.nvml_calls = stats.calls;
    o.nvml_call_mean_us = if stats.calls > 0 {
        stats.total_us / stats.calls as f64
    } else {
        0.0
    };
    o.nvml_call_max_us = stats.max_us;
    o.nvml_call_max_function = stats.max_function.map(str::to_string);
    if let (Some(info), Some(n)) = (rec.nvml.as_mut(), nvml.as_ref()) {
        // Fallbacks taken during the run (a newer symbol that failed) show here.
        info.symbols = n
            .resolved_symbols()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.map(str::to_string)))
            .collect();
    }
    drop(rec);
    drop(nvml);
}
