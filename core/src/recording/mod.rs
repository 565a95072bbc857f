//! The recording: everything sampled during a run, in bounded memory.
//!
//! A [`Recording`] is plain data with no threads: the sampler (feature `collect`) pushes
//! into it and importers build one from logs. This module also turns it into the JSON report
//! ([`crate::report::Report::from_recording`]), writes it as the crash journal while
//! recording and replays a journal into it ([`journal`]), and reads report files, journals
//! included ([`crate::report::Report::load`]): the report model below knows nothing of
//! recordings (`docs/architecture.md`, "Layers"). It is not for analysis itself: rules read
//! [`crate::signals`].

mod block;
mod bucket;
pub(crate) mod build;
mod chunk;
mod coarse;
#[cfg(test)]
mod dense_tests;
mod frozen;
pub mod journal;
mod load;
mod probe;
mod read;
pub mod reasons;
mod restore;
mod retired;
mod rows;
mod series;
mod step_delta;
#[cfg(test)]
mod tests;
mod window_notes;

pub use block::narrow_gpu_divs;
pub use bucket::BANDS;
pub use coarse::Coarse;
pub use probe::BlockProbe;
pub use read::Kept;
pub use series::{
    band_of, Retention, SeriesBuf, BAND_EDGES, COARSE_BUCKETS_DEFAULT, FULL_ROWS_DEFAULT,
    HEAD_ROWS_DEFAULT, MAX_WINDOWS, RECENT_ROWS_DEFAULT, WINDOW_AFTER_S, WINDOW_BEFORE_S,
    WINDOW_ROWS_DEFAULT,
};
pub use step_delta::{merge_delta, stats_from_rows};
pub use window_notes::{WindowNote, MAX_WINDOW_NOTES, WINDOW_NOTES_BOUND_BYTES};

use crate::metric::GpuMetric;
use crate::report::journal::JournalWindow;
use crate::report::{
    Capability, DeviceInfo, Event, Fault, HostFacts, NvmlInfo, Overhead, RunInfo, StepsData,
};

/// Most events kept; later ones are counted in [`Recording::events_dropped`].
/// Worst case ≈ 10 000 × ~150 B = 1.5 MB.
pub const MAX_EVENTS: usize = 10_000;

/// Names of the host columns that come before the per-core CPU columns.
pub const HOST_COLUMNS: [&str; 12] = [
    "cpu_total",
    "cpu_iowait",
    "proc_cpu",
    "proc_count",
    "disk_read",
    "disk_write",
    "mem_available",
    "psi_cpu_some",
    "psi_io_some",
    "psi_io_full",
    "psi_mem_some",
    "psi_mem_full",
];

/// Units of [`HOST_COLUMNS`], in the same order.
pub const HOST_UNITS: [&str; 12] = [
    "%",
    "%",
    "% of one core",
    "processes",
    "B/s",
    "B/s",
    "B",
    "%",
    "%",
    "%",
    "%",
    "%",
];

/// Window importance of a transient NVML error (folded first).
pub const PRIO_TRANSIENT: u8 = 1;
/// Window importance of a marker event (eval, checkpoint, ...).
pub const PRIO_EVENT: u8 = 2;
/// Window importance of a finding of the provisional diagnosis (`core/src/session/
/// provisional.rs`): above marker events, so the evidence of a condition that came and went
/// outlives routine evals and checkpoints; below faults. Each pass adds at most two, and only
/// for findings the previous pass did not make.
pub const PRIO_FINDING: u8 = 3;
/// Window importance of an XID or a lost GPU (folded last).
pub const PRIO_FAULT: u8 = 4;

/// The GPU columns whose buckets count values per band: the utilization-like ones, in %.
pub fn banded_gpu_columns() -> Vec<usize> {
    GpuMetric::ALL
        .iter()
        .filter(|m| m.unit() == "%")
        .map(|m| m.index())
        .collect()
}

/// One GPU's static facts and samples.
#[derive(Debug, Clone)]
pub struct DeviceRecording {
    /// Static facts and capabilities.
    pub info: DeviceInfo,
    /// Samples, one column per [`GpuMetric`].
    pub series: SeriesBuf,
}

/// Host samples: [`HOST_COLUMNS`] then one `cpuN` column per logical core.
#[derive(Debug, Clone)]
pub struct HostRecording {
    /// Static facts about the machine.
    pub facts: HostFacts,
    /// Column names, [`HOST_COLUMNS`] followed by `cpu0`, `cpu1`, ...
    pub columns: Vec<String>,
    /// Samples.
    pub series: SeriesBuf,
    /// Metrics the host could not provide, with the reason.
    pub unavailable: Vec<(String, String)>,
}

impl HostRecording {
    /// An empty host recording for a machine with `cores` logical CPUs.
    pub fn new(facts: HostFacts, cores: usize) -> Self {
        let mut columns: Vec<String> = HOST_COLUMNS.iter().map(|s| s.to_string()).collect();
        columns.extend((0..cores).map(|i| format!("cpu{i}")));
        let series = SeriesBuf::new(columns.len());
        HostRecording {
            facts,
            columns,
            series,
            unavailable: Vec::new(),
        }
    }
}

/// Everything recorded in one run.
#[derive(Debug, Clone)]
pub struct Recording {
    /// What ran, where and when.
    pub run: RunInfo,
    /// The NVML library used, when one was.
    pub nvml: Option<NvmlInfo>,
    /// One entry per GPU, in NVML index order.
    pub devices: Vec<DeviceRecording>,
    /// Host samples, when host sampling ran.
    pub host: Option<HostRecording>,
    /// XIDs, lost GPUs, markers.
    pub events: Vec<Event>,
    /// Events not kept because [`MAX_EVENTS`] was reached.
    pub events_dropped: u64,
    /// Transient NVML errors, aggregated per device and function.
    pub faults: Vec<Fault>,
    /// The recorder's own cost.
    pub overhead: Overhead,
    /// Why there are no GPU metrics, when there are none (no NVML, no GPU).
    pub gpu_absent_reason: Option<String>,
    /// Continuous full-resolution rows kept per GPU: the first minutes plus the last hour
    /// (see [`Retention::from_full_rows`]).
    pub full_rows: usize,
    /// Buckets kept per GPU.
    pub coarse_buckets: usize,
    /// Step and phase timings, when the step markers were used ([`crate::steps`]).
    pub steps: Option<StepsData>,
    /// Why each window was marked (at most [`MAX_WINDOW_NOTES`]), for the report's `windows`.
    pub window_notes: Vec<WindowNote>,
}

/// The span a window marked at `t` covers.
fn around(t: f64) -> (f64, f64) {
    (t - WINDOW_BEFORE_S, t + WINDOW_AFTER_S)
}

impl Recording {
    /// An empty recording for `run`.
    pub fn new(run: RunInfo) -> Self {
        Recording {
            run,
            nvml: None,
            devices: Vec::new(),
            host: None,
            events: Vec::new(),
            events_dropped: 0,
            faults: Vec::new(),
            overhead: Overhead::default(),
            gpu_absent_reason: None,
            full_rows: FULL_ROWS_DEFAULT,
            coarse_buckets: COARSE_BUCKETS_DEFAULT,
            steps: None,
            window_notes: Vec::new(),
        }
    }

    /// An empty recording whose GPU series keep `full_rows` rows at full resolution and at
    /// most `coarse_buckets` buckets after that (tests use small values to reach the bound).
    pub fn with_capacity(run: RunInfo, full_rows: usize, coarse_buckets: usize) -> Self {
        Recording {
            full_rows,
            coarse_buckets,
            ..Self::new(run)
        }
    }

    /// Adds a GPU with its static facts; returns its position.
    pub fn add_device(&mut self, info: DeviceInfo) -> usize {
        let mut series = SeriesBuf::with_precision(
            GpuMetric::COUNT,
            Retention::from_full_rows(self.full_rows, self.coarse_buckets),
            &banded_gpu_columns(),
            &narrow_gpu_divs(),
        );
        series.count_reasons(GpuMetric::ClockReasons.index(), GpuMetric::UtilGpu.index());
        self.devices.push(DeviceRecording { info, series });
        self.devices.len() - 1
    }

    /// Appends one sample row for device position `dev`.
    pub fn push_gpu(&mut self, dev: usize, t: f64, row: &[f32; GpuMetric::COUNT]) {
        if let Some(d) = self.devices.get_mut(dev) {
            d.series.push(t, row);
        }
    }

    /// Appends an event, or counts it as dropped past [`MAX_EVENTS`]. Every stream keeps the
    /// rows around it at full resolution (see [`Self::mark_window`]), except around `log`
    /// markers, which a training loop may send every step.
    pub fn push_event(&mut self, event: Event) {
        match event.kind.as_str() {
            "log" => {}
            // A replayed journal replays the event, and so marks its window again.
            "xid" | "gpu_lost" => self.mark_span(around(event.t_s), PRIO_FAULT, "fault", true),
            _ => self.mark_span(around(event.t_s), PRIO_EVENT, "event", true),
        }
        if self.events.len() < MAX_EVENTS {
            self.events.push(event);
        } else {
            self.events_dropped += 1;
        }
    }

    /// Counts one occurrence of a transient error of `function` on `device` at `t`.
    pub fn count_fault(
        &mut self,
        device: Option<u32>,
        function: &str,
        code: u32,
        name: &str,
        t: f64,
    ) {
        self.mark_window_because(t, PRIO_TRANSIENT, "nvml_error");
        if let Some(f) = self
            .faults
            .iter_mut()
            .find(|f| f.device == device && f.function == function && f.code == code)
        {
            f.count += 1;
            f.last_s = t;
            return;
        }
        // Distinct (device, function, code) triples are bounded by the bound functions and
        // codes, so this list stays small.
        self.faults.push(Fault {
            device,
            function: function.to_string(),
            code,
            name: name.to_string(),
            count: 1,
            first_s: t,
            last_s: t,
        });
    }

    /// Keeps every stream's rows from [`WINDOW_BEFORE_S`] before `t` to [`WINDOW_AFTER_S`]
    /// after it at full resolution once they are older than the last hour, within the window
    /// budget; `prio` decides which windows are folded first when it is spent (lowest first,
    /// then oldest; see `docs/report-format.md`, "Retention").
    pub fn mark_window(&mut self, t: f64, prio: u8) {
        let reason = match prio {
            PRIO_TRANSIENT => "nvml_error",
            PRIO_FINDING => "finding",
            PRIO_FAULT => "fault",
            _ => "event",
        };
        self.mark_window_because(t, prio, reason);
    }

    /// [`Self::mark_window`], saying why (the report's `windows[].reason`: `event`, `fault`,
    /// `nvml_error`, `slow_step`, `finding:<rule id>`).
    pub fn mark_window_because(&mut self, t: f64, prio: u8, reason: &str) {
        self.mark_span(around(t), prio, reason, false);
    }

    /// The windows marked since the last call that the crash journal must carry for a
    /// replay to mark them again (all but events'); see [`JournalWindow`].
    pub fn unjournaled_windows(&mut self) -> Vec<JournalWindow> {
        window_notes::unjournaled(&mut self.window_notes)
    }

    /// Marks a window the journal carried.
    fn replay_window(&mut self, w: &JournalWindow) {
        self.mark_span((w.t0, w.t1), w.prio, &w.reason, true);
    }

    /// Notes `a..b` with `reason` and keeps every stream's rows in it; `journaled`: whether a
    /// journal replay marks it by itself.
    fn mark_span(&mut self, (a, b): (f64, f64), prio: u8, reason: &str, journaled: bool) {
        window_notes::note(&mut self.window_notes, (a, b), prio, reason, journaled);
        for d in &mut self.devices {
            d.series.mark(a, b, prio);
        }
        if let Some(h) = self.host.as_mut() {
            h.series.mark(a, b, prio);
        }
    }

    /// Marks `metric` unavailable on device position `dev` with `reason` (first reason wins).
    pub fn mark_unavailable(&mut self, dev: usize, metric: GpuMetric, reason: String) {
        if let Some(d) = self.devices.get_mut(dev) {
            let cap = d
                .info
                .capabilities
                .entry(metric.name().to_string())
                .or_insert_with(Capability::available);
            if cap.available {
                *cap = Capability::unavailable(reason);
            }
        }
    }

    /// Upper bound of the bytes the sample storage of this recording can use.
    pub fn worst_case_bytes(&self) -> usize {
        let gpus: usize = self
            .devices
            .iter()
            .map(|d| d.series.worst_case_bytes())
            .sum();
        let host = self
            .host
            .as_ref()
            .map_or(0, |h| h.series.worst_case_bytes());
        gpus + host + MAX_EVENTS * 256 + WINDOW_NOTES_BOUND_BYTES
    }

    /// Heap bytes the sample storage uses now.
    pub fn heap_bytes(&self) -> usize {
        let gpus: usize = self.devices.iter().map(|d| d.series.heap_bytes()).sum();
        let host = self.host.as_ref().map_or(0, |h| h.series.heap_bytes());
        gpus + host
            + self.events.capacity() * std::mem::size_of::<Event>()
            + self.window_notes.capacity() * std::mem::size_of::<WindowNote>()
    }

    /// The windows whose rows `series` (each stream's full-resolution row times) still
    /// hold, with why they were kept: the report's `windows`.
    pub fn kept_windows(&self, series: &[&[f64]]) -> Vec<crate::report::KeptWindow> {
        window_notes::kept(&self.window_notes, series)
    }
}
