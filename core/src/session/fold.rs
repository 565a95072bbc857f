//! Turning the marker records of each lane into steps: the per-thread step state machine.
//!
//! This runs on the sampler thread (or on a training thread whose ring is full), never
//! concurrently: the caller holds the fold lock.

use super::slow::SlowSteps;
use crate::recording::MAX_EVENTS;
use crate::report::{Event, StepsData};
use crate::steps::{StepLog, MAX_PHASES};

use super::threads::{main_lane, steps_data};

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
/// The caller named the lane's thread the training loop.
pub const MAIN: u64 = 7;
/// Drops the open step on purpose (the step the loop began will not happen); the last
/// completed step keeps taking late GPU durations.
pub const DISCARD: u64 = 8;

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

/// The fold state: each lane's step log and step in progress, and marker events waiting
/// for the sampler to put them into the recording.
#[derive(Debug)]
pub struct Folder {
    /// Each lane's steps: every marking thread has its own sequence ([`super::threads`]).
    logs: Vec<StepLog>,
    /// The lane whose thread the caller named the training loop.
    named: Option<usize>,
    lanes: Vec<Lane>,
    events: Vec<Event>,
    /// Nanoseconds to report seconds (1e-9 × the recording's time scale).
    ns_to_s: f64,
    scale: f64,
    journaled_rows: usize,
    journaled_count: u64,
    journaled_ignored: u64,
    journaled_lane: usize,
    /// Slow steps, for the recording's full-resolution windows.
    slow: SlowSteps,
}

impl Folder {
    /// An empty fold state for `lanes` lanes.
    pub fn new(exact_steps: usize, lanes: usize, scale: f64) -> Self {
        Folder {
            logs: vec![StepLog::new(exact_steps); lanes],
            named: None,
            lanes: vec![Lane::default(); lanes],
            events: Vec::new(),
            ns_to_s: 1e-9 * scale,
            scale,
            journaled_rows: 0,
            journaled_count: 0,
            journaled_ignored: 0,
            journaled_lane: 0,
            slow: SlowSteps::new(lanes),
        }
    }

    /// The training loop's steps ([`super::threads::main_lane`]).
    pub fn log(&self) -> &StepLog {
        let (main, _) = main_lane(&self.logs, self.named);
        &self.logs[main]
    }

    /// True once any lane completed a step or had a marker ignored.
    pub fn used(&self) -> bool {
        self.logs.iter().any(|l| l.count() > 0 || l.ignored() > 0)
    }

    /// Counts a marker of `lane` that fitted no step (or found no room).
    pub fn ignore(&mut self, lane: usize) {
        if let Some(l) = self.logs.get_mut(lane) {
            l.ignore();
        }
    }

    /// The report's steps: the training loop's, with every marking thread listed.
    pub fn to_data(&self, names: &[String]) -> StepsData {
        steps_data(&self.logs, self.named, names)
    }

    fn secs(&self, ns: u64) -> f64 {
        ns as f64 * self.ns_to_s
    }

    fn commit(&mut self, lane: usize) {
        if let Some(last) = self.lanes[lane].last.take() {
            if last.gpu.iter().any(|v| !v.is_nan()) {
                self.logs[lane].set_gpu(last.index, &last.gpu);
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
        let (start, duration) = (
            self.secs(open.start),
            self.secs(t.saturating_sub(open.start)),
        );
        let index = self.logs[lane].push(start, duration, &cpu);
        self.slow.observe(lane, start, duration);
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
                    self.ignore(lane);
                    return;
                }
                let l = &mut self.lanes[lane];
                match (&mut l.open, &mut l.last) {
                    (Some(o), _) if o.entered & (1 << p) != 0 => add(&mut o.gpu[p], secs),
                    (_, Some(last)) => add(&mut last.gpu[p], secs),
                    _ => self.ignore(lane),
                }
            }
            EVENT => {
                if self.events.len() < MAX_EVENTS {
                    let steps = self.log().count();
                    self.events.push(Event {
                        t_s: self.secs(a),
                        device: None,
                        kind: kind_name(arg),
                        code: None,
                        detail: format!("marked by the training loop after {steps} steps"),
                    });
                } else {
                    self.ignore(lane);
                }
            }
            RESET => {
                self.lanes[lane].open = None;
                self.commit(lane);
            }
            MAIN => self.named = Some(lane),
            DISCARD => self.lanes[lane].open = None,
            _ => self.ignore(lane),
        }
    }

    /// Moves the times of the slow steps folded so far to `out`: the recording keeps the
    /// samples around them at full resolution.
    pub fn take_windows(&mut self, out: &mut Vec<f64>) {
        self.slow.take(out);
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
        let (main, _) = main_lane(&self.logs, self.named);
        if main != self.journaled_lane {
            // Another thread is now taken for the training loop: journal its steps from
            // the start (a reader starts afresh on rows from step 0).
            self.journaled_lane = main;
            self.journaled_rows = 0;
            self.journaled_count = u64::MAX;
        }
        let log = &self.logs[main];
        let rows = log.kept();
        let (count, ignored) = (log.count(), self.logs.iter().map(StepLog::ignored).sum());
        if rows == self.journaled_rows
            && count == self.journaled_count
            && ignored == self.journaled_ignored
        {
            return None;
        }
        let first = self.journaled_rows;
        let mut d = log.delta(names, first, rows);
        d.ignored_markers = ignored;
        self.journaled_rows = rows;
        self.journaled_count = count;
        self.journaled_ignored = ignored;
        Some((first as u64, d))
    }
}

#[cfg(test)]
mod tests;
