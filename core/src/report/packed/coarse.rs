//! The compact form of a stream's buckets (`coarse`, docs/report-format.md, "The compact
//! series form"): bucket times as packed times, each column's minimum and maximum at its
//! metric's precision, its mean at [`MEAN_STEPS`] times finer, and the counts (rows, values,
//! bands) as packed integers. The plain form is written inside [`super::plain`], and both
//! forms are read.

use std::cell::Cell;
use std::collections::BTreeMap;

use serde::de::{self, SeqAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserializer, Serialize, Serializer};

use super::{expand, fold, packed_body, per_unit, Packed, PLAIN};
use crate::report::column::Column;
use crate::report::series::{CoarseColumn, CoarseData, ReasonBuckets};

/// How many times finer than its column's precision a bucket's mean is kept: a mean of
/// whole percentages is kept to 0.01 %, of milliwatts to 0.01 mW.
pub const MEAN_STEPS: u32 = 100;

/// Integer counts packed with divisor 1.
fn counts(values: &[u32]) -> Packed {
    Packed {
        div: 1,
        runs: fold(values.iter().map(|v| Some(i64::from(*v)))),
    }
}

/// A column packed at `div`, or plain when a value is too large for it.
struct At<'a>(&'a Column, Option<u32>);

impl Serialize for At<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.1.and_then(|div| Packed::of(&self.0 .0, div)) {
            Some(p) => p.serialize(s),
            None => self.0.serialize(s),
        }
    }
}

/// Times packed when they are whole ticks, plain otherwise.
struct Times<'a>(&'a [f64]);

impl Serialize for Times<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match Packed::times(self.0) {
            Some(p) => p.serialize(s),
            None => self.0.serialize(s),
        }
    }
}

/// Counts: packed, or the plain array in the plain form.
struct Counts<'a>(&'a [u32]);

impl Serialize for Counts<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if PLAIN.with(Cell::get) {
            self.0.serialize(s)
        } else {
            counts(self.0).serialize(s)
        }
    }
}

/// One column's buckets, named `name` (which gives its precision).
struct ColumnOf<'a>(&'a str, &'a CoarseColumn);

impl Serialize for ColumnOf<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let CoarseColumn {
            min,
            mean,
            max,
            count,
            bands,
        } = self.1;
        let plain = PLAIN.with(Cell::get);
        let div = if plain { None } else { per_unit(self.0) };
        let mean_div = div.and_then(|d| d.checked_mul(MEAN_STEPS));
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("min", &At(min, div))?;
        m.serialize_entry("mean", &At(mean, mean_div))?;
        m.serialize_entry("max", &At(max, div))?;
        if !count.is_empty() {
            m.serialize_entry("count", &Counts(count))?;
        }
        if !bands.is_empty() {
            let b: Vec<Counts<'_>> = bands.iter().map(|b| Counts(b)).collect();
            m.serialize_entry("bands", &b)?;
        }
        m.end()
    }
}

struct Metrics<'a>(&'a BTreeMap<String, CoarseColumn>);

impl Serialize for Metrics<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (name, col) in self.0 {
            m.serialize_entry(name, &ColumnOf(name, col))?;
        }
        m.end()
    }
}

impl Serialize for CoarseData {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Every field, so that a field added to `CoarseData` does not compile until it is
        // written here.
        let CoarseData {
            rows_per_bucket,
            t_start,
            t_end,
            metrics,
            rows,
            band_edges,
            reasons,
        } = self;
        let plain = PLAIN.with(Cell::get);
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("rows_per_bucket", rows_per_bucket)?;
        if plain {
            m.serialize_entry("t_start", t_start)?;
            m.serialize_entry("t_end", t_end)?;
        } else {
            m.serialize_entry("t_start", &Times(t_start))?;
            m.serialize_entry("t_end", &Times(t_end))?;
        }
        m.serialize_entry("metrics", &Metrics(metrics))?;
        if !rows.is_empty() {
            m.serialize_entry("rows", &Counts(rows))?;
        }
        if !band_edges.is_empty() {
            m.serialize_entry("band_edges", band_edges)?;
        }
        if let Some(r) = reasons {
            m.serialize_entry("reasons", &Reasons(r))?;
        }
        m.end()
    }
}

/// A stream's buckets counted by clock-event reason.
struct Reasons<'a>(&'a ReasonBuckets);

impl Serialize for Reasons<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let ReasonBuckets {
            loaded,
            throttled,
            bits,
            loaded_bits,
        } = self.0;
        let mut m = s.serialize_map(Some(4))?;
        m.serialize_entry("loaded", &Counts(loaded))?;
        m.serialize_entry("throttled", &Counts(throttled))?;
        m.serialize_entry("bits", bits)?;
        let b: Vec<Counts<'_>> = loaded_bits.iter().map(|b| Counts(b)).collect();
        m.serialize_entry("loaded_bits", &b)?;
        m.end()
    }
}

/// Deserialises counts: an array of integers, or the packed form (divisor 1, no missing
/// value, each within `u32`).
pub(in crate::report) fn counts_de<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u32>, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Vec<u32>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an array of counts or a packed {\"div\", \"runs\"} object")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u32>, A::Error> {
            // Cap the pre-allocation: the length hint comes from untrusted input.
            let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
            while let Some(v) = seq.next_element::<u32>()? {
                out.push(v);
            }
            Ok(out)
        }
        fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Vec<u32>, A::Error> {
            let (div, runs) = packed_body(map)?;
            if div != 1.0 {
                return Err(de::Error::custom("packed counts must have `div` 1"));
            }
            let mut out = Vec::new();
            let mut bad = false;
            expand::<A::Error>(&runs, |v| match v.and_then(|k| u32::try_from(k).ok()) {
                Some(k) => out.push(k),
                None => bad = true,
            })?;
            if bad {
                return Err(de::Error::custom(
                    "a count is missing or outside 0..=4294967295: the file is damaged",
                ));
            }
            Ok(out)
        }
    }
    d.deserialize_any(V)
}

/// Deserialises a column's bands: an array of count arrays, each in either form.
pub(in crate::report) fn bands_de<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Vec<Vec<u32>>, D::Error> {
    struct One(Vec<u32>);
    impl<'de> serde::Deserialize<'de> for One {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            counts_de(d).map(One)
        }
    }
    let v: Vec<One> = serde::Deserialize::deserialize(d)?;
    Ok(v.into_iter().map(|o| o.0).collect())
}

#[cfg(test)]
#[path = "coarse_tests.rs"]
mod tests;
