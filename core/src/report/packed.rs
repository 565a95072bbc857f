//! The compact series form (`times` and `columns`, docs/report-format.md, "The compact series
//! form"): each column as whole multiples of its metric's precision, written as differences
//! from the previous value with runs folded, so a constant column or a steady clock costs a
//! few bytes whatever its length.
//!
//! A packed array (`runs`) holds, in order: a number *d* (one value: the previous value + *d*,
//! the first value counting from 0), `null` (one missing value), `[d, n]` (*n* values, each
//! the previous + *d*) and `[null, n]` (*n* missing values). The value itself is the integer
//! divided by the column's `div`. Reading accepts either form of every column and of `t`, so
//! reports written before the compact form keep loading.

use std::cell::Cell;
use std::collections::BTreeMap;

use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub mod coarse;

use super::column::Column;
use super::series::SeriesData;
use crate::metric::GpuMetric;

/// Ticks per second of `times`: the sampler rounds sample times to 0.1 ms (`collect`), so
/// this keeps them exactly. Times that are not whole ticks are written as plain numbers.
pub const TIME_DIV: u32 = 10_000;

/// Most values one packed array may expand to: far more than a stream keeps
/// (docs/report-format.md, "Memory bound of a recording"), so a run of a billion values in a
/// damaged or hostile file is refused instead of filling memory.
pub const MAX_VALUES: u64 = 1 << 24;

/// Integers a packed value may reach: beyond 2⁵³ an `f64` no longer holds every integer.
const MAX_INT: f64 = 9_007_199_254_740_992.0;

thread_local! {
    static PLAIN: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with series written in the plain form (`t` and `metrics` as arrays of numbers),
/// the form of reports written before the compact one.
pub fn plain<T>(f: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            PLAIN.with(|p| p.set(self.0));
        }
    }
    let _restore = Restore(PLAIN.with(|p| p.replace(true)));
    f()
}

/// Host columns kept whole: process counts, bytes and bytes per second (the others are
/// shares in %). The names of `recording::HOST_COLUMNS`, listed here so that the report
/// model does not reach up into the recording for them.
const HOST_WHOLE: [&str; 4] = ["proc_count", "disk_read", "disk_write", "mem_available"];

/// Host columns that are shares in % (`proc_cpu`: % of one core), and `cpuN`.
const HOST_SHARES: [&str; 8] = [
    "cpu_total",
    "cpu_iowait",
    "proc_cpu",
    "psi_cpu_some",
    "psi_io_some",
    "psi_io_full",
    "psi_mem_some",
    "psi_mem_full",
];

/// How finely the compact form keeps a column, as values per unit (`div`): a GPU metric's
/// [`GpuMetric::per_unit`], a host column's by its unit (% to 0.01, bytes and processes
/// whole); `None` (full precision, plain numbers) for a column it does not know.
pub fn per_unit(name: &str) -> Option<u32> {
    if let Some(m) = GpuMetric::from_name(name) {
        return Some(m.per_unit());
    }
    let cpu = name
        .strip_prefix("cpu")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if HOST_WHOLE.contains(&name) {
        Some(1)
    } else if cpu || HOST_SHARES.contains(&name) {
        // From jiffies and pressure averages.
        Some(100)
    } else {
        None
    }
}

/// One element of a packed array.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Item {
    One(i64),
    Missing,
    Run(i64, u64),
    MissingRun(u64),
}

/// Folds integer values (`None`: missing) into packed items, choosing for each run of equal
/// differences whichever of the single and the run form is shorter as text.
fn fold(values: impl Iterator<Item = Option<i64>>) -> Vec<Item> {
    let digits = |v: i64| {
        v.unsigned_abs()
            .checked_ilog10()
            .map_or(1, |d| d as u64 + 1)
            + u64::from(v < 0)
    };
    let mut out = Vec::new();
    let mut prev = 0i64;
    let push = |out: &mut Vec<Item>, item: Option<i64>, n: u64| match item {
        None if n >= 2 => out.push(Item::MissingRun(n)),
        None => out.push(Item::Missing),
        Some(d) if (digits(d) + 1) * n > digits(d) + digits(n as i64) + 4 => {
            out.push(Item::Run(d, n))
        }
        Some(d) => out.extend((0..n).map(|_| Item::One(d))),
    };
    let mut cur: Option<(Option<i64>, u64)> = None;
    for v in values {
        let item = v.map(|k| {
            let d = k.wrapping_sub(prev);
            prev = k;
            d
        });
        cur = match cur {
            Some((c, n)) if c == item => Some((c, n + 1)),
            Some((c, n)) => {
                push(&mut out, c, n);
                Some((item, 1))
            }
            None => Some((item, 1)),
        };
    }
    if let Some((c, n)) = cur {
        push(&mut out, c, n);
    }
    out
}

/// Serialises as `{"div": .., "runs": [..]}`.
struct Packed {
    div: u32,
    runs: Vec<Item>,
}

impl Packed {
    /// `values` as multiples of 1 / `div`, or `None` when one is too large for that.
    fn of(values: &[f32], div: u32) -> Option<Packed> {
        let scale = f64::from(div);
        let mut ints = Vec::with_capacity(values.len());
        for v in values {
            if !v.is_finite() {
                ints.push(None);
                continue;
            }
            let k = (f64::from(*v) * scale).round();
            if k.abs() > MAX_INT {
                return None;
            }
            ints.push(Some(k as i64));
        }
        Some(Packed {
            div,
            runs: fold(ints.into_iter()),
        })
    }

    /// Times as whole [`TIME_DIV`] ticks, or `None` when one is not a whole tick.
    fn times(t: &[f64]) -> Option<Packed> {
        let scale = f64::from(TIME_DIV);
        let mut ints = Vec::with_capacity(t.len());
        for &v in t {
            let k = (v * scale).round();
            if !(k.abs() <= MAX_INT && k / scale == v) {
                return None;
            }
            ints.push(Some(k as i64));
        }
        Some(Packed {
            div: TIME_DIV,
            runs: fold(ints.into_iter()),
        })
    }
}

impl Serialize for Item {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            Item::One(d) => s.serialize_i64(d),
            Item::Missing => s.serialize_unit(),
            Item::Run(d, n) => (d, n).serialize(s),
            Item::MissingRun(n) => ((), n).serialize(s),
        }
    }
}

impl Serialize for Packed {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("div", &self.div)?;
        m.serialize_entry("runs", &Runs(&self.runs))?;
        m.end()
    }
}

struct Runs<'a>(&'a [Item]);

impl Serialize for Runs<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for item in self.0 {
            seq.serialize_element(item)?;
        }
        seq.end()
    }
}

/// A stream's columns, each packed at its precision (plain when it has none).
struct Columns<'a>(&'a BTreeMap<String, Column>);

impl Serialize for Columns<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (name, col) in self.0 {
            match per_unit(name).and_then(|div| Packed::of(&col.0, div)) {
                Some(p) => m.serialize_entry(name, &p)?,
                None => m.serialize_entry(name, col)?,
            }
        }
        m.end()
    }
}

impl Serialize for SeriesData {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Every field, so that a field added to `SeriesData` does not compile until it is
        // written here.
        let SeriesData { t, metrics, coarse } = self;
        let mut m = s.serialize_map(None)?;
        if PLAIN.with(Cell::get) {
            m.serialize_entry("t", t)?;
            m.serialize_entry("metrics", metrics)?;
        } else {
            match Packed::times(t) {
                Some(p) => m.serialize_entry("times", &p)?,
                None => m.serialize_entry("times", t)?,
            }
            m.serialize_entry("columns", &Columns(metrics))?;
        }
        if let Some(c) = coarse {
            m.serialize_entry("coarse", c)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for Item {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Item;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an integer, null, [integer, count] or [null, count]")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Item, E> {
                Ok(Item::One(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Item, E> {
                i64::try_from(v).map(Item::One).map_err(E::custom)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Item, E> {
                Ok(Item::Missing)
            }
            fn visit_none<E: de::Error>(self) -> Result<Item, E> {
                Ok(Item::Missing)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Item, A::Error> {
                let d: Option<i64> = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(0, &self))?;
                let n: u64 = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(1, &self))?;
                if seq.next_element::<de::IgnoredAny>()?.is_some() {
                    return Err(de::Error::invalid_length(3, &self));
                }
                Ok(d.map_or(Item::MissingRun(n), |d| Item::Run(d, n)))
            }
        }
        d.deserialize_any(V)
    }
}

/// Expands packed items into `emit(value or None)`, refusing more than [`MAX_VALUES`].
fn expand<E: de::Error>(runs: &[Item], mut emit: impl FnMut(Option<i64>)) -> Result<(), E> {
    let total = runs.iter().try_fold(0u64, |n, item| {
        let more = match item {
            Item::One(_) | Item::Missing => 1,
            Item::Run(_, k) | Item::MissingRun(k) => *k,
        };
        n.checked_add(more).filter(|n| *n <= MAX_VALUES)
    });
    if total.is_none() {
        return Err(E::custom(format_args!(
            "a packed column holds more than {MAX_VALUES} values: the file is damaged"
        )));
    }
    let mut prev = 0i64;
    let mut step = |d: i64| {
        prev = prev.wrapping_add(d);
        prev
    };
    for item in runs {
        match *item {
            Item::One(d) => emit(Some(step(d))),
            Item::Missing => emit(None),
            Item::Run(d, n) => (0..n).for_each(|_| emit(Some(step(d)))),
            Item::MissingRun(n) => (0..n).for_each(|_| emit(None)),
        }
    }
    Ok(())
}

/// Reads the body of a packed object (`div`, `runs`) into its divisor and items.
fn packed_body<'de, A: MapAccess<'de>>(mut map: A) -> Result<(f64, Vec<Item>), A::Error> {
    let (mut div, mut runs) = (None::<u32>, None::<Vec<Item>>);
    while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
        match &*key {
            "div" => div = Some(map.next_value()?),
            "runs" => runs = Some(map.next_value()?),
            _ => {
                map.next_value::<de::IgnoredAny>()?;
            }
        }
    }
    let div = div.filter(|d| *d > 0).ok_or_else(|| {
        de::Error::custom("a packed column needs a positive `div` (values per unit)")
    })?;
    Ok((f64::from(div), runs.unwrap_or_default()))
}

/// A column in the packed form (`{"div", "runs"}`) into its values (`NaN` where missing).
pub(super) fn column_from_map<'de, A: MapAccess<'de>>(map: A) -> Result<Column, A::Error> {
    let (div, runs) = packed_body(map)?;
    let mut out = Vec::new();
    expand::<A::Error>(&runs, |v| {
        out.push(v.map_or(f32::NAN, |k| (k as f64 / div) as f32))
    })?;
    Ok(Column(out))
}

/// Deserialises `t` (or `times`): an array of seconds, or the packed form.
pub(super) fn times<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Vec<f64>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an array of seconds or a packed {\"div\", \"runs\"} object")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<f64>, A::Error> {
            // Cap the pre-allocation: the length hint comes from untrusted input.
            let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
            while let Some(v) = seq.next_element::<f64>()? {
                out.push(v);
            }
            Ok(out)
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Vec<f64>, A::Error> {
            let (div, runs) = packed_body(map)?;
            let mut out = Vec::new();
            let mut missing = false;
            expand::<A::Error>(&runs, |v| match v {
                Some(k) => out.push(k as f64 / div),
                None => missing = true,
            })?;
            if missing {
                return Err(de::Error::custom("sample times cannot be null"));
            }
            Ok(out)
        }
    }
    d.deserialize_any(V)
}

#[cfg(test)]
#[path = "packed/tests.rs"]
mod tests;
