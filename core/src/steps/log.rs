//! [`StepLog`]: exact records of the first steps, exact totals and a sketch for the rest.

use std::collections::BTreeMap;

use super::sketch::{QuantileSketch, SKETCH_BYTES, SKETCH_RELATIVE_ERROR};
use super::{MAX_PHASES, STEP_KEY};
use crate::report::{Column, PhaseStats, StepsData};
use crate::stats::percentile_sorted;

/// Steps kept exactly by default (start, duration and every phase of each).
///
/// 100 000 steps are ~28 hours at one step per second, far more than the step-time
/// periodicity and outlier signals need, at 2.8 MB for the four built-in phases.
pub const EXACT_STEPS: usize = 100_000;

/// Worst-case bytes of one exactly kept step: its start (`f64`, 8), its duration (`f32`, 4),
/// and one `f32` per phase for the CPU-side and one for the GPU-measured duration
/// (2 × 16 × 4 = 128): 140 bytes. With only the four built-in phases and no GPU durations
/// a step costs 28 bytes.
pub const EXACT_STEP_BYTES: usize = 8 + 4 + 2 * MAX_PHASES * 4;

/// Most sketches a log holds: whole steps, and each phase's CPU-side and GPU-measured
/// durations (1 + 2 × 16 = 33).
pub const MAX_SKETCHES: usize = 1 + 2 * MAX_PHASES;

/// Exact totals of one quantity, and its sketch once the log keeps no more exact records.
#[derive(Debug, Clone)]
struct Acc {
    count: u64,
    sum: f64,
    min: f64,
    max: f64,
    sketch: Option<QuantileSketch>,
}

impl Default for Acc {
    fn default() -> Self {
        Acc {
            count: 0,
            sum: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            sketch: None,
        }
    }
}

impl Acc {
    fn add(&mut self, x: f64, sketched: bool) {
        self.count += 1;
        self.sum += x;
        self.min = self.min.min(x);
        self.max = self.max.max(x);
        if sketched {
            self.sketch
                .get_or_insert_with(QuantileSketch::new)
                .insert(x);
        }
    }

    /// Starts the sketch from the exact values kept so far (all values until now).
    fn start_sketch(&mut self, kept: &[f32]) {
        if self.count == 0 || self.sketch.is_some() {
            return;
        }
        let mut s = QuantileSketch::new();
        for v in kept.iter().filter(|v| !v.is_nan()) {
            s.insert(f64::from(*v));
        }
        self.sketch = Some(s);
    }

    /// Statistics; quantiles exact from `kept` while every value is kept, else from the sketch.
    fn stats(&self, kept: Option<&[f32]>) -> PhaseStats {
        let (p50, p95, p99) = match (&self.sketch, kept) {
            (Some(s), _) => (s.quantile(0.5), s.quantile(0.95), s.quantile(0.99)),
            (None, Some(k)) => {
                let mut v: Vec<f64> = k
                    .iter()
                    .filter(|x| !x.is_nan())
                    .map(|x| f64::from(*x))
                    .collect();
                v.sort_by(f64::total_cmp);
                (
                    percentile_sorted(&v, 0.5),
                    percentile_sorted(&v, 0.95),
                    percentile_sorted(&v, 0.99),
                )
            }
            (None, None) => (0.0, 0.0, 0.0),
        };
        PhaseStats {
            count: self.count,
            sum_s: self.sum,
            min_s: self.min,
            max_s: self.max,
            p50_s: p50,
            p95_s: p95,
            p99_s: p99,
        }
    }
}

/// True for a finite, non-negative number of seconds.
fn is_duration(x: f64) -> bool {
    x.is_finite() && x >= 0.0
}

/// Pushes `x` keeping the capacity at most `cap` (growth by doubling, but never past the
/// bound, so the documented worst case is the real one).
fn push_capped<T>(v: &mut Vec<T>, x: T, cap: usize) {
    if v.len() == v.capacity() {
        let want = (v.capacity() * 2).max(1024).min(cap).max(v.len() + 1);
        v.reserve_exact(want - v.len());
    }
    v.push(x);
}

/// A new per-phase column for a log that already keeps `len` steps: NaN for each of them.
fn new_column(len: usize, like_capacity: usize) -> Vec<f32> {
    let mut c = Vec::with_capacity(like_capacity.max(len));
    c.resize(len, f32::NAN);
    c
}

/// Step and phase durations of a run, in bounded memory (see the module docs).
///
/// Times are seconds on the report's time axis. The first `exact_steps` steps are kept as
/// records; all steps enter the exact totals; from step `exact_steps` on, every quantity also
/// feeds a [`QuantileSketch`] (seeded with the kept records), and quantiles come from it.
#[derive(Debug, Clone)]
pub struct StepLog {
    exact_cap: usize,
    count: u64,
    sketched: bool,
    t: Vec<f64>,
    duration: Vec<f32>,
    cpu: [Option<Vec<f32>>; MAX_PHASES],
    gpu: [Option<Vec<f32>>; MAX_PHASES],
    step: Acc,
    cpu_acc: [Acc; MAX_PHASES],
    gpu_acc: [Acc; MAX_PHASES],
    ignored: u64,
}

impl Default for StepLog {
    fn default() -> Self {
        Self::new(EXACT_STEPS)
    }
}

impl StepLog {
    /// An empty log keeping the first `exact_steps` steps exactly.
    pub fn new(exact_steps: usize) -> Self {
        StepLog {
            exact_cap: exact_steps,
            count: 0,
            sketched: false,
            t: Vec::new(),
            duration: Vec::new(),
            cpu: Default::default(),
            gpu: Default::default(),
            step: Acc::default(),
            cpu_acc: Default::default(),
            gpu_acc: Default::default(),
            ignored: 0,
        }
    }

    /// Upper bound of [`Self::heap_bytes`] for a log keeping `exact_steps` steps exactly:
    /// `exact_steps` × [`EXACT_STEP_BYTES`] + [`MAX_SKETCHES`] × [`SKETCH_BYTES`]. With the
    /// default [`EXACT_STEPS`]: 14,000,000 + 845,328 = 14,845,328 bytes.
    pub const fn worst_case_bytes(exact_steps: usize) -> usize {
        exact_steps * EXACT_STEP_BYTES + MAX_SKETCHES * SKETCH_BYTES
    }

    /// Heap bytes in use now.
    pub fn heap_bytes(&self) -> usize {
        let cols = |cs: &[Option<Vec<f32>>]| -> usize {
            cs.iter().flatten().map(|c| c.capacity() * 4).sum::<usize>()
        };
        let sketches = std::iter::once(&self.step)
            .chain(&self.cpu_acc)
            .chain(&self.gpu_acc)
            .filter_map(|a| a.sketch.as_ref())
            .map(QuantileSketch::heap_bytes)
            .sum::<usize>();
        self.t.capacity() * 8
            + self.duration.capacity() * 4
            + cols(&self.cpu)
            + cols(&self.gpu)
            + sketches
    }

    /// Steps kept exactly at most.
    pub fn exact_capacity(&self) -> usize {
        self.exact_cap
    }

    /// Steps recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Steps kept exactly so far.
    pub fn kept(&self) -> usize {
        self.t.len()
    }

    /// Markers that fitted no step.
    pub fn ignored(&self) -> u64 {
        self.ignored
    }

    /// Steps that entered phase `p` (an index below [`MAX_PHASES`]; 0 otherwise).
    pub fn phase_count(&self, p: usize) -> u64 {
        self.cpu_acc.get(p).map_or(0, |a| a.count)
    }

    /// Exact total of the step durations, seconds.
    pub fn total_s(&self) -> f64 {
        self.step.sum
    }

    /// Counts a marker that fitted no step.
    pub fn ignore(&mut self) {
        self.ignored += 1;
    }

    /// Adds a completed step: its start and duration, and the CPU-side duration of each
    /// phase (NaN for phases it did not have). Returns the step's index.
    /// A duration that is not a finite non-negative number counts as 0 for the step and as
    /// absent for a phase.
    pub fn push(&mut self, start_s: f64, duration_s: f64, phases: &[f64; MAX_PHASES]) -> u64 {
        let duration_s = if is_duration(duration_s) {
            duration_s
        } else {
            0.0
        };
        let phases = &phases.map(|v| if is_duration(v) { v } else { f64::NAN });
        let index = self.count;
        if index as usize >= self.exact_cap && !self.sketched {
            self.start_sketches();
        }
        self.count += 1;
        let sk = self.sketched;
        self.step.add(duration_s, sk);
        for (acc, v) in self.cpu_acc.iter_mut().zip(phases) {
            if !v.is_nan() {
                acc.add(*v, sk);
            }
        }
        let len = self.t.len();
        if len < self.exact_cap {
            let cap = self.exact_cap;
            push_capped(&mut self.t, start_s, cap);
            push_capped(&mut self.duration, duration_s as f32, cap);
            let like = self.t.capacity();
            for (col, v) in self.cpu.iter_mut().zip(phases) {
                match col {
                    Some(c) => push_capped(c, *v as f32, cap),
                    None if !v.is_nan() => {
                        let mut c = new_column(len, like);
                        push_capped(&mut c, *v as f32, cap);
                        *col = Some(c);
                    }
                    None => {}
                }
            }
            for c in self.gpu.iter_mut().flatten() {
                push_capped(c, f32::NAN, cap);
            }
        }
        index
    }

    /// Sets the GPU-measured durations of step `index` (NaN for phases without one). A phase
    /// that already has a GPU duration for that step keeps it; values that are not finite
    /// non-negative numbers are left out.
    pub fn set_gpu(&mut self, index: u64, gpu: &[f64; MAX_PHASES]) {
        if index >= self.count {
            return;
        }
        let kept = (index as usize) < self.t.len();
        let (len, like) = (self.t.len(), self.t.capacity());
        for (p, &v) in gpu.iter().enumerate() {
            if !is_duration(v) {
                continue;
            }
            if kept {
                let col = self.gpu[p].get_or_insert_with(|| new_column(len, like));
                let slot = &mut col[index as usize];
                if !slot.is_nan() {
                    continue;
                }
                *slot = v as f32;
            }
            self.gpu_acc[p].add(v, self.sketched);
        }
    }

    fn start_sketches(&mut self) {
        self.sketched = true;
        self.step.start_sketch(&self.duration);
        for (acc, col) in self
            .cpu_acc
            .iter_mut()
            .zip(&self.cpu)
            .chain(self.gpu_acc.iter_mut().zip(&self.gpu))
        {
            acc.start_sketch(col.as_deref().unwrap_or(&[]));
        }
    }

    fn name(names: &[String], p: usize) -> String {
        names.get(p).cloned().unwrap_or_else(|| format!("phase{p}"))
    }

    /// Phase names for the report: `names` (in id order), extended with `phaseN` for ids that
    /// have data but no name.
    fn phase_names(&self, names: &[String]) -> Vec<String> {
        let used = (0..MAX_PHASES)
            .filter(|p| self.cpu_acc[*p].count > 0 || self.gpu_acc[*p].count > 0)
            .map(|p| p + 1)
            .max()
            .unwrap_or(0);
        (0..names.len().max(used).min(MAX_PHASES))
            .map(|p| Self::name(names, p))
            .collect()
    }

    /// The report's `steps` section, with phases named by `names` (in id order).
    pub fn to_data(&self, names: &[String]) -> StepsData {
        let mut d = self.rows(names, 0, self.t.len());
        fn exact(sketched: bool, c: &Option<Vec<f32>>) -> Option<&[f32]> {
            (!sketched).then_some(c.as_deref().unwrap_or(&[]))
        }
        d.stats.insert(
            STEP_KEY.into(),
            self.step
                .stats((!self.sketched).then_some(&self.duration[..])),
        );
        for p in 0..MAX_PHASES {
            if self.cpu_acc[p].count > 0 {
                d.stats.insert(
                    Self::name(names, p),
                    self.cpu_acc[p].stats(exact(self.sketched, &self.cpu[p])),
                );
            }
            if self.gpu_acc[p].count > 0 {
                d.gpu_stats.insert(
                    Self::name(names, p),
                    self.gpu_acc[p].stats(exact(self.sketched, &self.gpu[p])),
                );
            }
        }
        d
    }

    /// A journal delta: the kept steps `from..to` and, once quantiles come from sketches, the
    /// statistics so far. While every step is kept the statistics are left out: a reader
    /// recomputes them exactly from the rows ([`super::stats_from_rows`]), so the sampler
    /// never sorts on a flush.
    pub fn delta(&self, names: &[String], from: usize, to: usize) -> StepsData {
        let mut d = self.rows(names, from, to);
        if self.sketched {
            d.stats.insert(STEP_KEY.into(), self.step.stats(None));
            for p in 0..MAX_PHASES {
                if self.cpu_acc[p].count > 0 {
                    d.stats
                        .insert(Self::name(names, p), self.cpu_acc[p].stats(None));
                }
                if self.gpu_acc[p].count > 0 {
                    d.gpu_stats
                        .insert(Self::name(names, p), self.gpu_acc[p].stats(None));
                }
            }
        }
        d
    }

    /// True once quantiles come from sketches (more steps than are kept exactly).
    pub fn sketched(&self) -> bool {
        self.sketched
    }

    fn rows(&self, names: &[String], from: usize, to: usize) -> StepsData {
        let to = to.min(self.t.len());
        let from = from.min(to);
        let slice = |c: &Vec<f32>| Column(c[from..to].to_vec());
        let cols = |cs: &[Option<Vec<f32>>]| -> BTreeMap<String, Column> {
            cs.iter()
                .enumerate()
                .filter_map(|(p, c)| Some((Self::name(names, p), slice(c.as_ref()?))))
                .collect()
        };
        StepsData {
            phases: self.phase_names(names),
            count: self.count,
            t: self.t[from..to].to_vec(),
            duration: slice(&self.duration),
            phase_durations: cols(&self.cpu),
            gpu_phase_durations: cols(&self.gpu),
            stats: BTreeMap::new(),
            gpu_stats: BTreeMap::new(),
            exact_steps: self.t.len() as u64,
            quantile_error: if self.sketched {
                SKETCH_RELATIVE_ERROR
            } else {
                0.0
            },
            ignored_markers: self.ignored,
            memory_bytes: self.heap_bytes() as u64,
            memory_bound_bytes: Self::worst_case_bytes(self.exact_cap) as u64,
            threads: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests;
