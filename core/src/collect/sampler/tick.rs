//! One tick's reading: every live GPU (slow metrics staggered, GPM every slow tick), the
//! job's processes, XID events and the host. Nothing here touches the recording; the
//! commit step stores what a tick read.

use super::open::{GpmPair, Sources};
use crate::collect::cost::CallStats;
use crate::collect::gpu::{Gpu, Outcome};
use crate::collect::host_rows::host_row;
use crate::collect::procwatch::ProcWatch;
use crate::metric::GpuMetric;
use crate::nvml::{EventSet, Nvml};
use crate::os::thread_cpu_ns;
use crate::report::{DeviceHealth, Event};

/// Most events drained from NVML's event set per tick it covers: a drain once a second
/// (buffered mode) takes up to this many for each tick since the last.
const MAX_EVENTS_PER_TICK: usize = 16;

/// A row of every GPU metric.
pub(super) type Row = [f32; GpuMetric::COUNT];

/// What one tick read.
pub(super) struct Reading {
    /// Report time of the tick, seconds.
    pub t: f64,
    /// (device position, report time, row) of each GPU row read: one per GPU read every
    /// tick, and the rows of the ticks since its last read for a GPU in buffered mode
    /// (`collect::buffered`), none between its reads.
    pub rows: Vec<(usize, f64, Row)>,
    /// (device position, NVML index, what went wrong) of each GPU read.
    pub outcomes: Vec<(usize, u32, Vec<Outcome>)>,
    pub events: Vec<Event>,
    /// Times the hook asked full resolution around (slow steps).
    pub windows: Vec<f64>,
    pub host: Option<Vec<f32>>,
    /// (device position, health so far) of each GPU whose health counters were read.
    pub health: Vec<(usize, DeviceHealth)>,
}

/// When the slow reads and the host are due.
#[derive(Debug, Clone, Copy)]
pub(super) struct Cadence {
    pub tick: u64,
    pub slow_every: u64,
    pub host_every: u64,
    /// Ticks between GPM reads of a MIG slice (GPM is a slice's only busy signal).
    pub mig_gpm_every: u64,
    /// The recording is stopping: every buffered GPU reads now, so no row is left pending.
    pub last: bool,
    /// The health counters are due (at the start, about once a minute, at the stop).
    pub health: bool,
}

impl Cadence {
    /// Whether GPU `gi` reads its slow metrics this tick: staggered across GPUs so one
    /// tick never pays for all of them.
    fn slow(&self, gi: usize) -> bool {
        self.tick == 0 || (self.tick + gi as u64) % self.slow_every == 0
    }

    /// Whether this is a buffered GPU's read tick: the same tick for every GPU, so the
    /// ticks between need no wake-up at all ([`due`]).
    fn read_tick(&self) -> bool {
        self.tick % self.slow_every == 0
    }

    /// Ticks between two drains of the event set: one while any live GPU is read every
    /// tick; a slow period when every live GPU is buffered, whose rows reach the recording
    /// once a second anyway (docs/nvml-loading.md, "Buffered mode": an XID is then dated
    /// by the drain that found it, up to a second after the driver queued it).
    fn drain_period(&self, gpus: &[Gpu]) -> u64 {
        if gpus.iter().any(|g| !g.lost && !g.is_buffered()) {
            1
        } else {
            self.slow_every
        }
    }

    /// Whether this tick drains the event set: every tick of its period, and the last.
    fn drains_events(&self, gpus: &[Gpu]) -> bool {
        self.last || self.tick % self.drain_period(gpus) == 0
    }
}

/// Reads everything due at tick `c` at report time `t`.
pub(super) fn read(src: &mut Sources<'_>, c: Cadence, t: f64) -> Reading {
    let work0 = thread_cpu_ns();
    let (rows, mut outcomes) = read_gpus(src, c, t);
    if let (Some(a), Some(b)) = (work0, thread_cpu_ns()) {
        src.gpu_work_ns += b.saturating_sub(a);
    }
    if c.tick % c.slow_every == 0 {
        watch_processes(src.nvml, &src.gpus, &mut src.procs, &mut src.stats, t);
    }
    let events = match (src.events.as_mut(), src.nvml) {
        (Some(set), Some(_)) if c.drains_events(&src.gpus) => {
            let most = MAX_EVENTS_PER_TICK * c.drain_period(&src.gpus) as usize;
            drain_events(set, &src.gpus, t, most)
        }
        _ => Vec::new(),
    };
    let health = if c.health {
        read_health(src, &mut outcomes, t)
    } else {
        Vec::new()
    };
    let host = if c.tick % c.host_every == 0 {
        src.host.as_mut().map(|h| host_row(&h.sample()))
    } else {
        None
    };
    Reading {
        t,
        rows,
        outcomes,
        events,
        windows: Vec::new(),
        host,
        health,
    }
}

/// Reads the health counters of every GPU still on the bus (not on the per-tick path: only
/// when [`Cadence::health`] says so), with their transient errors as outcomes.
fn read_health(
    src: &mut Sources<'_>,
    outcomes: &mut Vec<(usize, u32, Vec<Outcome>)>,
    t: f64,
) -> Vec<(usize, DeviceHealth)> {
    let Some(nvml) = src.nvml else {
        return Vec::new();
    };
    let mut read = Vec::new();
    for (g, watch) in src.gpus.iter_mut().zip(src.health.iter_mut()) {
        let Some(w) = watch.as_mut().filter(|_| !g.lost) else {
            continue;
        };
        // Not in `src.stats`: like the static facts, these calls are not the per-tick cost
        // the overhead figures describe (docs/health.md).
        let errors = w.read(nvml, g.handle(), t);
        // A health call that says the GPU is lost stops the GPU, as a tick's call does.
        g.lost |= errors.iter().any(|o| matches!(o, Outcome::Lost(_)));
        if !errors.is_empty() {
            outcomes.push((g.pos, g.index, errors));
        }
        read.push((g.pos, w.health.clone()));
    }
    read
}

/// Whether tick `c` has anything to read: a GPU read every tick (per-tick mode, or a
/// buffered second with traffic or slowdowns), the buffered GPUs' common read tick (with the
/// process lists and the event drain), the host, or a MIG slice's GPM. A tick with none is
/// slept through ([`slept_through`]): without it, the sampler would wake ten times a second
/// to do nothing, and a wake-up costs more CPU than a GPU's read.
pub(super) fn due(src: &Sources<'_>, c: Cadence) -> bool {
    c.last
        || c.read_tick()
        || c.drains_events(&src.gpus)
        || (src.host.is_some() && c.tick % c.host_every == 0)
        || (c.tick % c.mig_gpm_every == 0 && src.gpm_routes.iter().any(Option::is_some))
        || src.gpus.iter().any(|g| !g.quiet_between())
}

/// A tick at report time `t` that [`due`] found nothing to read on: each buffered GPU's
/// row of it waits for the next read, without a call.
pub(super) fn slept_through(src: &mut Sources<'_>, t: f64) {
    for g in src.gpus.iter_mut().filter(|g| !g.lost) {
        g.slept_through(t);
    }
}

type GpuReads = (Vec<(usize, f64, Row)>, Vec<(usize, u32, Vec<Outcome>)>);

/// Samples every GPU still on the bus; a buffered GPU only on its slow tick and the last.
fn read_gpus(src: &mut Sources<'_>, c: Cadence, t: f64) -> GpuReads {
    // Both grow only when a GPU gives something: a tick between buffered reads allocates
    // nothing.
    let mut rows = Vec::new();
    let mut outcomes = Vec::new();
    let Some(n) = src.nvml else {
        return (rows, outcomes);
    };
    for (gi, g) in src.gpus.iter_mut().enumerate() {
        if g.lost {
            continue;
        }
        let slow = if g.is_buffered() {
            c.read_tick()
        } else {
            c.slow(gi)
        };
        if g.is_buffered() && !slow && !c.last {
            let out = g.sample_between(n, t, &mut src.stats);
            if !out.is_empty() {
                outcomes.push((g.pos, g.index, out));
            }
            continue;
        }
        let mut row = [f32::NAN; GpuMetric::COUNT];
        let mut out = if g.is_buffered() {
            g.sample_buffered(n, &mut row, &mut src.stats)
        } else {
            g.sample(n, slow, &mut row, &mut src.stats)
        };
        let route = src.gpm_routes.get(gi).copied().flatten();
        let gpm_due = slow || (route.is_some() && c.tick % c.mig_gpm_every == 0);
        if gpm_due && !g.lost {
            if let Some(pair) = src.gpm.get_mut(gi) {
                read_gpm(n, g, route, pair, &mut row, &mut out, &mut src.stats);
            }
        }
        outcomes.push((g.pos, g.index, out));
        if !g.lost {
            g.fill_rows(t, &row, &mut rows);
        }
    }
    (rows, outcomes)
}

/// Takes the next GPM sample and, once two exist, the metrics between them.
fn read_gpm(
    n: &Nvml,
    g: &mut Gpu,
    route: Option<crate::collect::mig::GpmRoute>,
    pair: &mut GpmPair<'_>,
    row: &mut Row,
    out: &mut Vec<Outcome>,
    stats: &mut CallStats,
) {
    let Some((a, b, primed)) = pair else { return };
    match crate::collect::mig::gpm_snapshot(n, g.handle(), route, b, stats) {
        Ok(()) => {
            if *primed {
                let r = stats.time("nvmlGpmMetricsGet", || n.gpm_metrics(a, b, Gpu::gpm_ids()));
                g.store_gpm(r, row, out);
            }
            std::mem::swap(a, b);
            *primed = true;
        }
        Err(e) => g.store_gpm(Err(e), row, out),
    }
}

/// XID events the driver queued since the last drain, at most `most`.
fn drain_events(set: &mut EventSet<'_>, gpus: &[Gpu], t: f64, most: usize) -> Vec<Event> {
    let mut events = Vec::new();
    for _ in 0..most {
        match set.wait(0) {
            Ok(Some(ev)) => {
                let dev = gpus
                    .iter()
                    .find(|g| g.handle() == ev.device)
                    .map(|g| g.index);
                events.push(Event {
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
    events
}

/// Reads every live GPU's compute-process list into `procs`. A GPU whose driver cannot list
/// processes is noted once and skipped: the decision then rests on the others and the
/// environment, and says so.
fn watch_processes(
    nvml: Option<&Nvml>,
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
