//! A column of `f32` samples where `NaN` in memory is `null` in JSON; read from either the
//! plain array or the compact form (`report/packed.rs`).

use serde::de::{SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Sample values; `NaN` means "not available" and is written as `null`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Column(pub Vec<f32>);

impl Column {
    /// Values that are present (not `NaN`).
    pub fn present(&self) -> impl Iterator<Item = f32> + '_ {
        self.0.iter().copied().filter(|v| !v.is_nan())
    }

    /// Number of samples, missing ones included.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there are no samples.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for Column {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for v in &self.0 {
            if v.is_finite() {
                seq.serialize_element(v)?;
            } else {
                seq.serialize_element(&())?;
            }
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for Column {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Column;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an array of numbers or nulls, or a packed {\"div\", \"runs\"} column")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Column, A::Error> {
                super::packed::column_from_map(map)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Column, A::Error> {
                // Cap the pre-allocation: the length hint comes from untrusted input.
                let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
                while let Some(v) = seq.next_element::<Option<f64>>()? {
                    out.push(v.map_or(f32::NAN, |x| x as f32));
                }
                Ok(Column(out))
            }
        }
        // Either form: the plain array, or the compact one (`report/packed.rs`).
        d.deserialize_any(V)
    }
}

/// Deserialises a number that may have been written as `null` (a `NaN` when written).
pub(crate) fn f64_or_nan<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_round_trips_as_null() {
        let c = Column(vec![1.5, f32::NAN, 3.0]);
        let s = serde_json::to_string(&c).expect("serialises");
        assert_eq!(s, "[1.5,null,3.0]");
        let back: Column = serde_json::from_str(&s).expect("parses");
        assert_eq!(back.0[0], 1.5);
        assert!(back.0[1].is_nan());
        assert_eq!(back.present().count(), 2);
    }
}
