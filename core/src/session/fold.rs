//! Turning the marker records of each lane into steps: the per-thread step state machine.
//!
//! This runs on the sampler thread (or on a training thread whose ring is full), never
//! concurrently: the caller holds the fold lock.

use crate::recording::MAX_EVENTS;
use crate::report::{Event, StepsData};
use crate::steps::{StepLog, MAX_PHASES};

/// Record kinds, in the low byte of a record's second word; the argument (a phase id or an
/// event kind) is in the next 16 bits. The first word is the time in nanoseconds since the
/// recording's origin, except for [`GPU`], where it is the `f64` bits of the seconds.
pub const STEP_BEGIN: u64 = 1;
/// Ends the open step.
pub const STEP_END: u64 = 2;
/// Enters a phase.
pub const PHASE: u64 = 3;
/// A one-off event.
pub const EVENT: u64 = 4;
/// A GPU-measured phase duration.
pub const GPU: u64 = 5;
/// The lane's thread went away: drop its open step.
pub const RESET: u64 = 6;
/// Drops the open step on purpose (the step the loop began will not happen); the last
/// completed step keeps taking late GPU durations.
pub const DISCARD: u64 = 7;

/// The second word of a record.
#[inline(always)]
pub fn code(kind: u64, arg: u16) -> u64 {
    kind | (u64::from(arg) << 8)
}

/// A step that has begun and not ended. Durations are nanoseconds (NaN = phase not seen).
#[derive(Debug, Clone)]
struct Open {
    start: u64,
    phase: Option<(usize, u64)>,
    cpu: [f64; MAX_PHASES],
    gpu: [f64; MAX_PHASES],
    entered: u32,
}

impl Open {
    fn new(start: u64) -> Self {
        Open {
            start,
            phase: None,
            cpu: [f64::NAN; MAX_PHASES],
            gpu: [f64::NAN; MAX_PHASES],
            entered: 0,
        }
    }

    fn end_phase(&mut self, t: u64) {
        if let Some((p, since)) = self.phase.take() {
            let d = t.saturating_sub(since) as f64;
            self.cpu[p] = if self.cpu[p].is_nan() {
                d
            } else {
                self.cpu[p] + d
            };
        }
    }
}

/// The last completed step of a lane, whose GPU durations may still arrive.
#[derive(Debug, Clone)]
struct Last {
    index: u64,
    gpu: [f64; MAX_PHASES],
}

#[derive(Debug, Clone, Default)]
struct Lane {
    open: Option<Open>,
    last: Option<Last>,
}

fn add(slot: &mut f64, x: f64) {
    *slot = if slot.is_nan() { x } else { *slot + x };
}

/// The fold state: the step log, each lane's step in progress, and marker events waiting
/// for the sampler to put them into the recording.
#[derive(Debug)]
pub struct Folder {
    /// The steps.
    pub log: StepLog,
    lanes: Vec<Lane>,
    events: Vec<Event>,
    /// Nanoseconds to report seconds (1e-9 × the recording's time scale).
    ns_to_s: f64,
    scale: f64,
    journaled_rows: usize,
    journaled_count: u64,
    journaled_ignored: u64,
}

impl Folder {
    /// An empty fold state for `lanes` lanes.
    pub fn new(exact_steps: usize, lanes: usize, scale: f64) -> Self {
        Folder {
            log: StepLog::new(exact_steps),
            lanes: vec![Lane::default(); lanes],
            events: Vec::new(),
            ns_to_s: 1e-9 * scale,
            scale,
            journaled_rows: 0,
            journaled_count: 0,
            journaled_ignored: 0,
        }
    }

    fn secs(&self, ns: u64) -> f64 {
        ns as f64 * self.ns_to_s
    }

    fn commit(&mut self, lane: usize) {
        if let Some(last) = self.lanes[lane].last.take() {
            if last.gpu.iter().any(|v| !v.is_nan()) {
                self.log.set_gpu(last.index, &last.gpu);
            }
        }
    }

    fn close(&mut self, lane: usize, t: u64) {
        let Some(mut open) = self.lanes[lane].open.take() else {
            return;
        };
        open.end_phase(t);
        self.commit(lane);
        let cpu = open.cpu.map(|ns| ns * self.ns_to_s);
        let index = self.log.push(
            self.secs(open.start),
            self.secs(t.saturating_sub(open.start)),
            &cpu,
        );
        self.lanes[lane].last = Some(Last {
            index,
            gpu: open.gpu,
        });
    }

    /// Folds one record of `lane`; `kind_name` names an event kind.
    pub fn record(&mut self, lane: usize, a: u64, b: u64, kind_name: impl Fn(u16) -> String) {
        if lane >= self.lanes.len() {
            return;
        }
        let arg = (b >> 8) as u16;
        let p = usize::from(arg);
        match b & 0xff {
            STEP_BEGIN => {
                self.close(lane, a);
                self.lanes[lane].open = Some(Open::new(a));
            }
            PHASE if p < MAX_PHASES => {
                let open = self.lanes[lane].open.get_or_insert_with(|| Open::new(a));
                open.end_phase(a);
                open.phase = Some((p, a));
                open.entered |= 1 << p;
            }
            STEP_END if self.lanes[lane].open.is_some() => self.close(lane, a),
            GPU if p < MAX_PHASES => {
                let secs = f64::from_bits(a) * self.scale;
                if !(secs.is_finite() && secs >= 0.0) {
                    self.log.ignore();
                    return;
                }
                let l = &mut self.lanes[lane];
                match (&mut l.open, &mut l.last) {
                    (Some(o), _) if o.entered & (1 << p) != 0 => add(&mut o.gpu[p], secs),
                    (_, Some(last)) => add(&mut last.gpu[p], secs),
                    _ => self.log.ignore(),
                }
            }
            EVENT => {
                if self.events.len() < MAX_EVENTS {
                    let steps = self.log.count();
                    self.events.push(Event {
                        t_s: self.secs(a),
                        device: None,
                        kind: kind_name(arg),
                        code: None,
                        detail: format!("marked by the training loop after {steps} steps"),
                    });
                } else {
                    self.log.ignore();
                }
            }
            RESET => {
                self.lanes[lane].open = None;
                self.commit(lane);
            }
            DISCARD => self.lanes[lane].open = None,
            _ => self.log.ignore(),
        }
    }

    /// Moves the marker events folded so far to `out`.
    pub fn take_events(&mut self, out: &mut Vec<Event>) {
        out.append(&mut self.events);
    }

    /// Commits every lane's pending GPU durations and drops steps still open (the run ends).
    pub fn finish(&mut self) {
        for lane in 0..self.lanes.len() {
            self.lanes[lane].open = None;
            self.commit(lane);
        }
    }

    /// The steps not yet journaled, as a delta starting at the returned index; `None` when
    /// nothing changed since the last call.
    pub fn journal_delta(&mut self, names: &[String]) -> Option<(u64, StepsData)> {
        let rows = self.log.kept();
        let (count, ignored) = (self.log.count(), self.log.ignored());
        if rows == self.journaled_rows
            && count == self.journaled_count
            && ignored == self.journaled_ignored
        {
            return None;
        }
        let first = self.journaled_rows;
        let d = self.log.delta(names, first, rows);
        self.journaled_rows = rows;
        self.journaled_count = count;
        self.journaled_ignored = ignored;
        Some((first as u64, d))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::steps::PhaseId;

    const MS: u64 = 1_000_000;

    fn names() -> Vec<String> {
        crate::steps::BUILTIN_PHASES.map(String::from).to_vec()
    }

    fn run(f: &mut Folder, lane: usize, records: &[(u64, u64)]) {
        for (a, b) in records {
            f.record(lane, *a, *b, |k| format!("kind{k}"));
        }
    }

    fn phase(id: PhaseId) -> u64 {
        code(PHASE, id.0)
    }

    #[test]
    fn phases_split_the_step_and_time_is_scaled() {
        let mut f = Folder::new(100, 2, 2.0);
        run(
            &mut f,
            0,
            &[
                (10 * MS, code(STEP_BEGIN, 0)),
                (10 * MS, phase(PhaseId::DATA)),
                (14 * MS, phase(PhaseId::FORWARD)),
                (15 * MS, phase(PhaseId::BACKWARD)),
                (17 * MS, phase(PhaseId::FORWARD)),
                (18 * MS, code(STEP_END, 0)),
            ],
        );
        let d = f.log.to_data(&names());
        assert_eq!(d.count, 1);
        assert!((d.t[0] - 0.020).abs() < 1e-12, "10 ms × scale 2");
        assert!((d.duration.0[0] - 0.016).abs() < 1e-7);
        assert!((d.phase_durations["data"].0[0] - 0.008).abs() < 1e-7);
        assert!(
            (d.phase_durations["forward"].0[0] - 0.004).abs() < 1e-7,
            "a phase entered twice adds up"
        );
        assert!(!d.phase_durations.contains_key("optimizer"));
    }

    #[test]
    fn markers_that_fit_no_step_are_counted_not_guessed() {
        let mut f = Folder::new(100, 1, 1.0);
        run(
            &mut f,
            0,
            &[
                (MS, code(STEP_END, 0)),
                (MS, code(GPU, 1)),
                (f64::NAN.to_bits(), code(GPU, 1)),
                (2 * MS, phase(PhaseId(40))),
                // A phase without step_begin opens a step; step_begin closes an open one.
                (3 * MS, phase(PhaseId::DATA)),
                (5 * MS, code(STEP_BEGIN, 0)),
                (6 * MS, code(STEP_END, 0)),
                (7 * MS, code(EVENT, 3)),
                (8 * MS, code(STEP_BEGIN, 0)),
                (9 * MS, code(RESET, 0)),
            ],
        );
        assert_eq!(f.log.count(), 2);
        assert_eq!(f.log.to_data(&names()).ignored_markers, 4);
        let mut ev = Vec::new();
        f.take_events(&mut ev);
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0].kind, "kind3");
        assert!((ev[0].t_s - 0.007).abs() < 1e-12);
    }

    #[test]
    fn gpu_durations_go_to_the_current_step_once_its_phase_began_else_the_last() {
        let mut f = Folder::new(100, 1, 1.0);
        let secs = |s: f64| s.to_bits();
        run(
            &mut f,
            0,
            &[
                (0, code(STEP_BEGIN, 0)),
                (MS, phase(PhaseId::FORWARD)),
                (secs(0.0005), code(GPU, 1)),
                (2 * MS, code(STEP_END, 0)),
                // After the step: to the step just completed.
                (secs(0.0003), code(GPU, 2)),
                (3 * MS, code(STEP_BEGIN, 0)),
                // Forward not yet entered in this step: still the previous step's.
                (secs(0.0001), code(GPU, 1)),
                (4 * MS, phase(PhaseId::FORWARD)),
                (5 * MS, code(STEP_END, 0)),
            ],
        );
        f.finish();
        let d = f.log.to_data(&names());
        let fwd = &d.gpu_phase_durations["forward"].0;
        assert!((fwd[0] - 0.0006).abs() < 1e-8, "{fwd:?}");
        assert!(fwd[1].is_nan());
        assert!((d.gpu_phase_durations["backward"].0[0] - 0.0003).abs() < 1e-8);
    }

    #[test]
    fn a_discarded_step_leaves_nothing_and_late_gpu_times_still_reach_the_last_step() {
        let mut f = Folder::new(100, 1, 1.0);
        run(
            &mut f,
            0,
            &[
                (0, phase(PhaseId::DATA)),
                (MS, phase(PhaseId::FORWARD)),
                (2 * MS, code(STEP_END, 0)),
                // The next step's data wait turns out to be the end of the data.
                (3 * MS, phase(PhaseId::DATA)),
                (9 * MS, code(DISCARD, 0)),
                (0.0004f64.to_bits(), code(GPU, 1)),
                // A discard without an open step does nothing.
                (10 * MS, code(DISCARD, 0)),
            ],
        );
        f.finish();
        let d = f.log.to_data(&names());
        assert_eq!(d.count, 1);
        assert_eq!(d.ignored_markers, 0);
        assert!(
            (d.stats["data"].sum_s - 0.001).abs() < 1e-12,
            "{:?}",
            d.stats["data"]
        );
        assert!((d.gpu_phase_durations["forward"].0[0] - 0.0004).abs() < 1e-8);
    }

    #[test]
    fn journal_deltas_carry_each_row_once() {
        let mut f = Folder::new(100, 1, 1.0);
        let step = |f: &mut Folder, t: u64| {
            run(
                f,
                0,
                &[(t, code(STEP_BEGIN, 0)), (t + MS, code(STEP_END, 0))],
            )
        };
        assert!(f.journal_delta(&names()).is_none());
        step(&mut f, 0);
        step(&mut f, 10 * MS);
        let (first, d) = f.journal_delta(&names()).expect("new steps");
        assert_eq!((first, d.t.len()), (0, 2));
        assert!(f.journal_delta(&names()).is_none());
        step(&mut f, 20 * MS);
        let (first, d) = f.journal_delta(&names()).expect("new steps");
        assert_eq!((first, d.t.len(), d.count), (2, 1, 3));
    }
}
