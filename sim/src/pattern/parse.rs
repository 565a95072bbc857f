//! Reading a pattern from JSON: a bare number or an object with exactly one kind, checked
//! here so a mistake is reported with its line and column.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;

use super::{Follow, Kind, Noise, Pattern, Ramp, Square, DEFAULT_NOISE_PERIOD_S};
use crate::metric::Metric;

/// The object form of a pattern, exactly as written in the file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PatternObject {
    constant: Option<f64>,
    square: Option<Square>,
    ramp: Option<Ramp>,
    steps: Option<Vec<(f64, f64)>>,
    follow: Option<Metric>,
    from: Option<(f64, f64)>,
    scale: Option<(f64, f64)>,
    noise: Option<NoiseSpec>,
    min: Option<f64>,
    max: Option<f64>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum NoiseSpec {
    Amplitude(f64),
    Full(NoiseObject),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoiseObject {
    amplitude: f64,
    #[serde(default = "default_noise_period")]
    period_s: f64,
}

fn default_noise_period() -> f64 {
    DEFAULT_NOISE_PERIOD_S
}

impl PatternObject {
    fn validate(self) -> Result<Pattern, String> {
        if self.follow.is_none() && (self.from.is_some() || self.scale.is_some()) {
            return Err("`from` and `scale` only go with `follow`".into());
        }
        let kind = match (
            self.constant,
            self.square,
            self.ramp,
            self.steps,
            self.follow,
        ) {
            (Some(v), None, None, None, None) => Kind::Constant(v),
            (None, Some(s), None, None, None) => square(s)?,
            (None, None, Some(r), None, None) => {
                if r.over_s.is_nan() || r.over_s < 0.0 {
                    return Err(format!("ramp: `over_s` must be >= 0, got {}", r.over_s));
                }
                Kind::Ramp(r)
            }
            (None, None, None, Some(steps), None) => {
                if steps.is_empty() {
                    return Err("steps: give at least one [t_s, value] pair".into());
                }
                if steps.windows(2).any(|w| w[1].0 < w[0].0) {
                    return Err("steps: the [t_s, value] pairs must be sorted by t_s".into());
                }
                Kind::Steps(steps)
            }
            (None, None, None, None, Some(metric)) => {
                let from = self.from.unwrap_or((0.0, 100.0));
                if from.0 == from.1 && self.scale.is_some() {
                    return Err("follow: the two ends of `from` must differ".into());
                }
                Kind::Follow(Follow {
                    metric,
                    from,
                    scale: self.scale,
                })
            }
            _ => {
                return Err(
                    "a pattern object needs exactly one of `constant`, `square`, \
                            `ramp`, `steps` or `follow`"
                        .into(),
                )
            }
        };
        let noise = noise(self.noise)?;
        Ok(Pattern {
            kind,
            noise,
            min: self.min,
            max: self.max,
        })
    }
}

/// A square wave's period and duty, checked.
fn square(s: Square) -> Result<Kind, String> {
    if !(s.period_s > 0.0 && s.period_s.is_finite()) {
        return Err(format!(
            "square: `period_s` must be > 0, got {}",
            s.period_s
        ));
    }
    if !(0.0..=1.0).contains(&s.duty) {
        return Err(format!(
            "square: `duty` must be within 0..=1, got {}",
            s.duty
        ));
    }
    Ok(Kind::Square(s))
}

/// The noise, a bare amplitude or a full spec, checked.
fn noise(spec: Option<NoiseSpec>) -> Result<Option<Noise>, String> {
    let noise = match spec {
        None => None,
        Some(NoiseSpec::Amplitude(amplitude)) => Some(Noise {
            amplitude,
            period_s: DEFAULT_NOISE_PERIOD_S,
        }),
        Some(NoiseSpec::Full(n)) => Some(Noise {
            amplitude: n.amplitude,
            period_s: n.period_s,
        }),
    };
    if let Some(n) = &noise {
        if !(n.amplitude >= 0.0 && n.period_s > 0.0) {
            return Err("noise: `amplitude` must be >= 0 and `period_s` > 0".into());
        }
    }
    Ok(noise)
}

impl<'de> Deserialize<'de> for Pattern {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PatternVisitor;
        impl<'de> Visitor<'de> for PatternVisitor {
            type Value = Pattern;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number or a pattern object such as {\"square\": {...}}")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Pattern, E> {
                Ok(Pattern::constant(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Pattern, E> {
                Ok(Pattern::constant(v as f64))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Pattern, E> {
                Ok(Pattern::constant(v as f64))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Pattern, A::Error> {
                let object =
                    PatternObject::deserialize(de::value::MapAccessDeserializer::new(map))?;
                object.validate().map_err(de::Error::custom)
            }
        }
        deserializer.deserialize_any(PatternVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_patterns_are_explained() {
        for (json, needle) in [
            (r#"{"constant": 1, "follow": "util_gpu"}"#, "exactly one"),
            (r#"{}"#, "exactly one"),
            (
                r#"{"square": {"period_s": 0, "high": 1, "low": 0}}"#,
                "period_s",
            ),
            (
                r#"{"square": {"period_s": 1, "duty": 2, "high": 1, "low": 0}}"#,
                "duty",
            ),
            (r#"{"steps": []}"#, "at least one"),
            (r#"{"steps": [[5, 1], [1, 2]]}"#, "sorted"),
            (
                r#"{"constant": 1, "scale": [0, 1]}"#,
                "only go with `follow`",
            ),
            (r#"{"follow": "power"}"#, "unknown metric"),
            (r#"{"constant": 1, "nosie": 2}"#, "unknown field `nosie`"),
            (r#""fast""#, "a number or a pattern object"),
        ] {
            let err = serde_json::from_str::<Pattern>(json)
                .expect_err(json)
                .to_string();
            assert!(err.contains(needle), "{json}: {err}");
            assert!(err.contains("line 1 column"), "{json}: position in {err}");
        }
    }
}
