//! The sampler thread's body, as named steps: load NVML, open the GPUs (`open`), then
//! tick until stopped — read (`tick`), commit into the recording and the journal
//! (`commit`), flush the journal when due, wait for the next tick on the clock — and at
//! the end settle the recording's capabilities, overhead and resolved NVML symbols.

use super::commit::{commit, TickCounts};
use super::open::Sources;
use super::tick::{due, read, slept_through, Cadence};
use super::{lock, Shared};
use crate::collect::clock::Clock;
use crate::collect::cost::thread_cpu_seconds;
use crate::collect::gpu::SLOW_PERIOD_S;
use crate::collect::health::HEALTH_PERIOD_S;
use crate::collect::hook::SamplerHook;
use crate::collect::journal_buf::{flush, Journal};
use crate::collect::live::update_live;
use crate::collect::{RecorderConfig, HOST_PERIOD_S};
use crate::report::DeviceInfo;

/// The tick schedule: which tick this is, when the next is due, and how far behind the
/// sampler fell.
struct Pace {
    interval: f64,
    counts: TickCounts,
    slow_every: u64,
    host_every: u64,
    mig_gpm_every: u64,
    /// Report time the next tick is due.
    next: f64,
    /// Unscaled clock seconds of the last journal flush.
    flushed_at: f64,
    /// Report time the health counters are next due (`collect::health`).
    next_health: f64,
    /// Whether this tick reads them.
    health_now: bool,
}

impl Pace {
    fn new(interval: f64) -> Self {
        Pace {
            interval,
            counts: TickCounts::default(),
            slow_every: ((SLOW_PERIOD_S / interval).round() as u64).max(1),
            host_every: ((HOST_PERIOD_S / interval).round() as u64).max(1),
            mig_gpm_every: ((crate::collect::mig::GPM_PERIOD_S / interval).ceil() as u64).max(1),
            next: 0.0,
            flushed_at: 0.0,
            next_health: 0.0,
            health_now: false,
        }
    }

    fn cadence(&self, last: bool) -> Cadence {
        Cadence {
            tick: self.counts.tick,
            slow_every: self.slow_every,
            host_every: self.host_every,
            mig_gpm_every: self.mig_gpm_every,
            last,
            health: self.health_now,
        }
    }

    /// Moves to the next tick without waking for this one (nothing was due on it) and
    /// returns when the next is due.
    /// Whether the health counters are read on the tick at report time `t`: the first, one
    /// at least [`HEALTH_PERIOD_S`] after the last read, and the last.
    fn health_due(&mut self, t: f64, last: bool) {
        self.health_now = last || t >= self.next_health;
        if self.health_now {
            self.next_health = t + HEALTH_PERIOD_S;
        }
    }

    fn sleep_through(&mut self) -> f64 {
        self.counts.tick += 1;
        self.next += self.interval;
        self.next
    }

    /// Moves to the next tick, skipping the ones already missed at report time `now`, and
    /// returns when it is due.
    fn advance(&mut self, now: f64) -> f64 {
        self.counts.tick += 1;
        self.next += self.interval;
        if now > self.next + self.interval {
            self.counts.late += 1;
            let behind = ((now - self.next) / self.interval).floor();
            self.counts.skipped += behind as u64;
            self.next += behind * self.interval;
        }
        self.next
    }
}

pub(super) fn run_sampler(
    shared: &Shared,
    cfg: &RecorderConfig,
    clock: Clock,
    hook: Option<&dyn SamplerHook>,
) {
    let (nvml, loaded_at) = crate::collect::init::load_nvml(&shared.rec, cfg, &clock);
    if !shared.load.finish(loaded_at) {
        // The recording stopped during the init and was handed back without us.
        return;
    }
    let cpu0 = thread_cpu_seconds();
    let mut src = Sources::open(shared, cfg, &clock, nvml.as_ref());
    let mut journal = Journal::new(src.gpus.len());
    let mut pace = Pace::new(cfg.interval_s);
    pace.flushed_at = clock.elapsed().as_secs_f64();
    // Report times of the ticks slept through since the last wake-up.
    let mut slept: Vec<f64> = Vec::new();
    loop {
        let t = round_t(clock.now());
        // Decided before the read, so the last tick reads every buffered GPU and leaves no
        // row pending; a stop that comes during the read gets one more tick.
        let stopping = shared.stop.is_stopped();
        pace.counts.wakeups += 1;
        // A stop that came while sleeping: the ticks not reached never happened.
        let never = slept.iter().filter(|s| **s >= t).count() as u64;
        pace.counts.tick -= never;
        for s in slept.drain(..).filter(|s| *s < t) {
            slept_through(&mut src, s);
        }
        pace.health_due(t, stopping);
        let mut reading = read(&mut src, pace.cadence(stopping), t);
        if let Some(h) = hook {
            h.tick(&mut reading.events);
            h.windows(&mut reading.windows);
        }
        update_live(&shared.live, &src.gpus, &reading.rows);
        commit(shared, cfg, &mut journal, &src.gpus, reading, pace.counts);
        let since_flush = clock.elapsed().as_secs_f64() - pace.flushed_at;
        if journal.writer.is_some() && (stopping || since_flush >= cfg.flush_s) {
            flush(
                &shared.rec,
                &shared.journal_error,
                &mut journal,
                &src.stats,
                t,
                hook,
            );
            pace.flushed_at = clock.elapsed().as_secs_f64();
        }
        if stopping {
            break;
        }
        let mut next = pace.advance(clock.now());
        // Ticks with nothing to read are slept through, up to a second of them. Step markers
        // (a hook) are folded every tick while they come, so the rings of a fast loop need
        // not hold more than a tick of them; a ring that fills is folded by its writer.
        let quiet = hook.is_none_or(|h| h.quiet());
        let mut run = 1;
        while quiet && run < pace.slow_every && !due(&src, pace.cadence(false)) {
            slept.push(round_t(next));
            next = pace.sleep_through();
            run += 1;
        }
        // A stop wakes the wait: one last tick so the report ends at the stop (every
        // buffered GPU read), then flush and leave.
        let _ = clock.wait_until(&shared.stop, next);
    }
    settle(shared, cfg, src, cpu0);
    drop(nvml);
}

/// A report time, rounded to the 0.1 ms the report keeps.
fn round_t(t: f64) -> f64 {
    (t * 1e4).round() / 1e4
}

/// The last step: the job's GPUs, every device's final capabilities, the host's missing
/// columns, the sampler's overhead and the NVML symbols resolved. Consumes the sources so
/// GPM samples and the event set are gone before NVML shuts down.
fn settle(shared: &Shared, cfg: &RecorderConfig, src: Sources<'_>, cpu0: Option<f64>) {
    let host_unavailable = src.host_unavailable();
    let Sources {
        nvml,
        gpus,
        events,
        gpm,
        gpm_routes: _,
        host: _,
        procs,
        stats,
        gpu_work_ns,
        health: _,
    } = src;
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
    if let (Some(h), Some(u)) = (rec.host.as_mut(), host_unavailable) {
        h.unavailable = u;
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
    if let (Some(info), Some(n)) = (rec.nvml.as_mut(), nvml) {
        // Fallbacks taken during the run (a newer symbol that failed) show here.
        info.symbols = n
            .resolved_symbols()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.map(str::to_string)))
            .collect();
    }
}
