//! The checks a workload passes before it is played: every field within its range, phase
//! and device entries named once, custom-only settings on custom phases, and a horizon of
//! at most [`MAX_STEPS`] steps. Each message names the offending entry.

use super::{PhaseSpec, Workload, IDLE, MAX_STEPS, WAIT};
use crate::Error;

impl Workload {
    /// Checks every field; the message names the offending entry.
    pub fn validate(&self) -> Result<(), Error> {
        let bad = |msg: String| Err(Error::Invalid(msg));
        if self.phases.is_empty() {
            return bad("`phases` is empty; list at least one phase, e.g. {\"name\": \"forward\", \"ms\": 100}".into());
        }
        check_fraction("jitter", self.jitter)?;
        if !(self.start_s >= 0.0 && self.start_s.is_finite()) {
            return bad(format!("`start_s` must be >= 0, got {}", self.start_s));
        }
        for (i, p) in self.phases.iter().enumerate() {
            p.validate()
                .map_err(|e| Error::Invalid(format!("phases[{i}] ({}): {e}", p.name)))?;
            if self.phases[..i].iter().any(|q| q.name == p.name) {
                return bad(format!("phases[{i}]: the name `{}` is used twice", p.name));
            }
        }
        let every_step: f64 = self
            .phases
            .iter()
            .filter(|p| p.every_step())
            .map(|p| p.ms * (1.0 - p.jitter.unwrap_or(self.jitter)))
            .sum();
        if every_step < 1.0 {
            return bad("the phases that run every step must last at least 1 ms together".into());
        }
        if let Some(s) = &self.shapes {
            if !(0.0..=2.0).contains(&s.sigma) {
                return bad(format!(
                    "shapes: `sigma` must be within 0..=2, got {}",
                    s.sigma
                ));
            }
            if !(s.min > 0.0 && s.min <= 1.0 && s.max >= 1.0 && s.max.is_finite()) {
                return bad("shapes: need 0 < `min` <= 1 <= `max`".into());
            }
        }
        if let Some(m) = &self.memory {
            if !(m.base_mib >= 0.0 && m.shape_mib >= 0.0) {
                return bad("memory: `base_mib` and `shape_mib` must be >= 0".into());
            }
        }
        for (metric, a) in &self.noise {
            if !(*a >= 0.0 && a.is_finite()) {
                return bad(format!("noise: `{metric}` must be >= 0, got {a}"));
            }
        }
        self.validate_devices()?;
        let horizon = self.horizon_s();
        if !(horizon > 0.0 && horizon.is_finite()) {
            return bad(format!("`duration_s` must be > 0, got {horizon}"));
        }
        // Shapes may shorten every shaped phase down to `shapes.min`; count conservatively.
        let shortest_step = every_step / 1000.0 * self.shapes.as_ref().map_or(1.0, |s| s.min);
        if horizon / shortest_step > MAX_STEPS {
            return bad(format!(
                "{horizon} s of {:.1} ms steps is more than {MAX_STEPS} steps; lower `duration_s` or lengthen the phases",
                shortest_step * 1000.0
            ));
        }
        Ok(())
    }

    /// Each per-device override names a distinct device, a slowdown of at least 1, a
    /// non-negative offset and levels for phases that exist.
    fn validate_devices(&self) -> Result<(), Error> {
        let bad = |msg: String| Err(Error::Invalid(msg));
        for (i, d) in self.devices.iter().enumerate() {
            if !(d.compute_scale >= 1.0 && d.compute_scale.is_finite()) {
                return bad(format!(
                    "devices[{i}]: `compute_scale` must be >= 1 (the slow device), got {}",
                    d.compute_scale
                ));
            }
            if !(d.time_offset_s >= 0.0 && d.time_offset_s.is_finite()) {
                return bad(format!("devices[{i}]: `time_offset_s` must be >= 0"));
            }
            if self.devices[..i].iter().any(|e| e.device == d.device) {
                return bad(format!("devices[{i}]: device {} is listed twice", d.device));
            }
            for phase in d.levels.keys() {
                if phase != IDLE && phase != WAIT && !self.phases.iter().any(|p| &p.name == phase) {
                    return bad(format!(
                        "devices[{i}].levels: no phase named `{phase}` (use a phase name, `idle` or `wait`)"
                    ));
                }
            }
        }
        Ok(())
    }
}

impl PhaseSpec {
    fn validate(&self) -> Result<(), String> {
        if self.name.is_empty() || self.name == IDLE || self.name == WAIT {
            return Err("a phase needs a name other than `idle` and `wait`".into());
        }
        if !(self.ms >= 0.0 && self.ms.is_finite()) {
            return Err(format!("`ms` must be >= 0, got {}", self.ms));
        }
        if let Some(g) = self.gpu_ms {
            if !(g >= 0.0 && g.is_finite()) {
                return Err(format!("`gpu_ms` must be >= 0, got {g}"));
            }
        }
        if let Some(j) = self.jitter {
            check_fraction("jitter", j).map_err(|e| e.to_string())?;
        }
        if self.is_builtin() && !self.every_step() {
            return Err(
                "built-in phases run every step; `every` and `at_steps` are for custom phases"
                    .into(),
            );
        }
        match (self.every, self.offset, &self.at_steps) {
            (Some(_), _, Some(_)) => return Err("give `every` or `at_steps`, not both".into()),
            (Some(0), _, _) => return Err("`every` must be >= 1".into()),
            (Some(every), Some(offset), _) if offset >= every => {
                return Err(format!(
                    "`offset` must be below `every` ({every}), got {offset}"
                ))
            }
            (None, Some(_), _) => return Err("`offset` goes with `every`".into()),
            _ => {}
        }
        for (metric, v) in &self.levels {
            if !v.is_finite() {
                return Err(format!("levels: `{metric}` is not a number"));
            }
        }
        Ok(())
    }
}

fn check_fraction(what: &str, v: f64) -> Result<(), Error> {
    if (0.0..=0.9).contains(&v) {
        Ok(())
    } else {
        Err(Error::Invalid(format!(
            "`{what}` must be within 0..=0.9, got {v}"
        )))
    }
}
