//! Value patterns: how one metric of one device changes with simulated time.
//!
//! A pattern is a number (a constant) or an object naming exactly one kind — `constant`,
//! `square`, `ramp`, `steps` or `follow` — plus optional `noise`, `min` and `max`. `follow`
//! maps another metric of the same device linearly, which is how "power follows
//! utilization" stays in phase without repeating the wave. A scenario's `workload` adds
//! one more kind, never written in a file: the level the workload's schedule shows.

mod parse;

use std::fmt;
use std::sync::Arc;

use nvml_sim_workload::Schedule;
use serde::Deserialize;

use crate::metric::Metric;

/// Default noise period: a new random value every 100 ms of simulated time.
pub const DEFAULT_NOISE_PERIOD_S: f64 = 0.1;

/// A pattern: a base shape, optional noise, optional clamp.
#[derive(Debug, Clone, PartialEq)]
pub struct Pattern {
    /// The noiseless shape.
    pub kind: Kind,
    /// Deterministic noise added to the shape.
    pub noise: Option<Noise>,
    /// Lower clamp applied after noise (the metric's own range applies as well).
    pub min: Option<f64>,
    /// Upper clamp applied after noise.
    pub max: Option<f64>,
}

/// The noiseless shape of a pattern.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// Always this value.
    Constant(f64),
    /// Alternates between two values.
    Square(Square),
    /// Moves linearly from one value to another, then stays.
    Ramp(Ramp),
    /// Piecewise constant: `(t_s, value)` pairs sorted by time.
    Steps(Vec<(f64, f64)>),
    /// A linear map of another metric of the same device.
    Follow(Follow),
    /// The level the scenario's workload shows at this time on this device.
    Workload(FromWorkload),
}

/// A metric driven by the workload: the schedule's level for the device's state at `t`,
/// or `fallback` where the workload sets none (so defaults such as "power follows
/// utilization" keep working between the levels it sets).
#[derive(Clone)]
pub struct FromWorkload {
    /// The timeline, shared by every device and metric of the scenario.
    pub schedule: Arc<Schedule>,
    /// What plays where the workload sets no level.
    pub fallback: Box<Pattern>,
}

impl PartialEq for FromWorkload {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.schedule, &other.schedule) && self.fallback == other.fallback
    }
}

impl fmt::Debug for FromWorkload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FromWorkload")
            .field("steps", &self.schedule.len())
            .field("fallback", &self.fallback)
            .finish()
    }
}

/// A square wave: `high` for the first `duty` fraction of each period, `low` for the rest.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Square {
    /// Period in simulated seconds (> 0).
    pub period_s: f64,
    /// Fraction of each period spent at `high`, 0..=1 (default 0.5).
    #[serde(default = "half")]
    pub duty: f64,
    /// Value during the first `duty` of each period.
    pub high: f64,
    /// Value during the rest of each period.
    pub low: f64,
    /// The time at which a period (and so the high part) starts; shifts the wave.
    #[serde(default)]
    pub phase_s: f64,
}

fn half() -> f64 {
    0.5
}

/// A linear ramp.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ramp {
    /// Value until `start_s`.
    pub from: f64,
    /// Value from `start_s + over_s` on.
    pub to: f64,
    /// Duration of the ramp in simulated seconds (>= 0).
    pub over_s: f64,
    /// When the ramp starts (default 0).
    #[serde(default)]
    pub start_s: f64,
}

/// `value = scale.0 + (source - from.0) / (from.1 - from.0) * (scale.1 - scale.0)`; without
/// `scale` the source value is copied unchanged.
#[derive(Debug, Clone, PartialEq)]
pub struct Follow {
    /// The metric followed.
    pub metric: Metric,
    /// Source range mapped onto `scale` (default 0..100, a percentage).
    pub from: (f64, f64),
    /// Target values at `from.0` and `from.1`; `None` copies the source.
    pub scale: Option<(f64, f64)>,
}

/// Uniform noise in `[-amplitude, +amplitude]`, a new value every `period_s`, from a hash
/// of (scenario seed, device index, metric, tick) so runs repeat exactly.
#[derive(Debug, Clone, PartialEq)]
pub struct Noise {
    /// Half-width of the noise (>= 0).
    pub amplitude: f64,
    /// How long one noise value holds, in simulated seconds (> 0).
    pub period_s: f64,
}

/// Where a pattern's noise comes from: the hash inputs that are not time.
#[derive(Debug, Clone, Copy)]
pub struct NoiseKey {
    /// Scenario-wide seed.
    pub seed: u64,
    /// Device index.
    pub device: u32,
    /// The metric being evaluated.
    pub metric: Metric,
}

impl Pattern {
    /// A constant pattern without noise.
    pub fn constant(value: f64) -> Pattern {
        Pattern::of(Kind::Constant(value))
    }

    /// A pattern following `metric` with `scale` over the 0..100 source range.
    pub fn follow(metric: Metric, scale: Option<(f64, f64)>) -> Pattern {
        Pattern::of(Kind::Follow(Follow {
            metric,
            from: (0.0, 100.0),
            scale,
        }))
    }

    /// A pattern of this kind without noise or clamp.
    pub fn of(kind: Kind) -> Pattern {
        Pattern {
            kind,
            noise: None,
            min: None,
            max: None,
        }
    }

    /// The metric this pattern follows, if any.
    pub fn follows(&self) -> Option<Metric> {
        match &self.kind {
            Kind::Follow(f) => Some(f.metric),
            Kind::Workload(w) => w.fallback.follows(),
            _ => None,
        }
    }

    /// The value at simulated time `t`; `source` gives the current value of a followed
    /// metric (already noisy and clamped).
    pub fn eval(&self, t: f64, key: NoiseKey, source: impl FnOnce(Metric) -> f64) -> f64 {
        let mut v = match &self.kind {
            Kind::Constant(v) => *v,
            Kind::Square(s) => s.eval(t),
            Kind::Ramp(r) => r.eval(t),
            Kind::Steps(steps) => eval_steps(steps, t),
            Kind::Follow(f) => f.map(source(f.metric)),
            Kind::Workload(w) => {
                match w.schedule.state_at(t, key.device).level(key.metric.name()) {
                    Some(level) => level,
                    None => w.fallback.eval(t, key, source),
                }
            }
        };
        if let Some(noise) = &self.noise {
            v += noise.amplitude * unit_noise(key, (t / noise.period_s).floor() as i64);
        }
        if let Some(lo) = self.min {
            v = v.max(lo);
        }
        if let Some(hi) = self.max {
            v = v.min(hi);
        }
        v
    }
}

impl Square {
    fn eval(&self, t: f64) -> f64 {
        let pos = ((t - self.phase_s) / self.period_s).rem_euclid(1.0);
        if pos < self.duty {
            self.high
        } else {
            self.low
        }
    }
}

impl Ramp {
    fn eval(&self, t: f64) -> f64 {
        if t <= self.start_s {
            self.from
        } else if self.over_s <= 0.0 || t >= self.start_s + self.over_s {
            self.to
        } else {
            self.from + (self.to - self.from) * (t - self.start_s) / self.over_s
        }
    }
}

impl Follow {
    fn map(&self, x: f64) -> f64 {
        match self.scale {
            None => x,
            Some((y0, y1)) => {
                let (x0, x1) = self.from;
                y0 + (x - x0) / (x1 - x0) * (y1 - y0)
            }
        }
    }
}

fn eval_steps(steps: &[(f64, f64)], t: f64) -> f64 {
    // Validation guarantees at least one step; before the first one, its value holds.
    let mut value = steps.first().map_or(0.0, |s| s.1);
    for &(at, v) in steps {
        if at <= t {
            value = v;
        } else {
            break;
        }
    }
    value
}

/// A deterministic value in `[-1, 1)` for this key and tick (SplitMix64 finaliser).
pub fn unit_noise(key: NoiseKey, tick: i64) -> f64 {
    let mut x = key.seed ^ 0x9E37_79B9_7F4A_7C15;
    for part in [u64::from(key.device), key.metric as u64, tick as u64] {
        x = splitmix(x ^ part);
    }
    let unit = (x >> 11) as f64 / (1u64 << 53) as f64;
    unit * 2.0 - 1.0
}

/// One SplitMix64 step, also used for generated UUIDs.
pub fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests;
