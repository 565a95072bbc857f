//! One trace event, read with serde_json's visitor API: keys are matched without allocating,
//! unneeded values are skipped, names are interned as they are read, and only the few `args`
//! gpuwhy uses are looked at. No document tree is built.

use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde::Deserializer;

use super::events::{Cat, RawEvent, Store};

/// One event object, read key by key without allocating for keys or skipped values.
pub(crate) struct EventSeed<'a>(pub &'a mut Store);

impl<'de> DeserializeSeed<'de> for EventSeed<'_> {
    type Value = RawEvent;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<RawEvent, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for EventSeed<'_> {
    type Value = RawEvent;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a trace event object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawEvent, A::Error> {
        let mut e = RawEvent::default();
        while let Some(key) = map.next_key::<EvKey>()? {
            match key {
                EvKey::Ph => e.ph = map.next_value::<FirstByte>()?.0,
                EvKey::Cat => e.cat = Some(map.next_value::<CatValue>()?.0),
                EvKey::Name => e.name = Some(map.next_value_seed(NameSeed(&mut *self.0))?),
                EvKey::Pid => e.pid = map.next_value::<Num>()?.0,
                EvKey::Tid => e.tid = map.next_value::<Num>()?.0,
                EvKey::Ts => e.ts = map.next_value::<Float>()?.0,
                EvKey::Dur => e.dur = map.next_value::<Float>()?.0,
                EvKey::Args => map.next_value_seed(ArgsSeed(&mut e))?,
                EvKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(e)
    }
}

macro_rules! key_enum {
    ($name:ident { $($s:literal => $v:ident),* $(,)? }) => {
        enum $name { $($v,)* Other }
        impl<'de> de::Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl Visitor<'_> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str("a key")
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$name, E> {
                        Ok(match s { $($s => $name::$v,)* _ => $name::Other })
                    }
                }
                d.deserialize_identifier(V)
            }
        }
    };
}

key_enum!(EvKey { "ph" => Ph, "cat" => Cat, "name" => Name, "pid" => Pid, "tid" => Tid,
    "ts" => Ts, "dur" => Dur, "args" => Args });
key_enum!(ArgKey { "correlation" => Correlation, "stream" => Stream, "device" => Device });

/// The first byte of a string value (`ph`).
struct FirstByte(u8);

impl<'de> de::Deserialize<'de> for FirstByte {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = FirstByte;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a phase string")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<FirstByte, E> {
                Ok(FirstByte(s.bytes().next().unwrap_or(0)))
            }
        }
        d.deserialize_str(V)
    }
}

/// A category, classified without keeping the string.
struct CatValue(Cat);

impl<'de> de::Deserialize<'de> for CatValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = CatValue;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a category string")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<CatValue, E> {
                Ok(CatValue(Cat::from_str(s)))
            }
        }
        d.deserialize_str(V)
    }
}

/// A name, interned as it is read.
struct NameSeed<'a>(&'a mut Store);

impl<'de> DeserializeSeed<'de> for NameSeed<'_> {
    type Value = u32;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<u32, D::Error> {
        d.deserialize_any(self)
    }
}

impl Visitor<'_> for NameSeed<'_> {
    type Value = u32;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a name string")
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<u32, E> {
        Ok(self.0.names.intern(s))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<u32, E> {
        Ok(self.0.names.intern(&v.to_string()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<u32, E> {
        Ok(self.0.names.intern(&v.to_string()))
    }
}

/// An integer id that Chrome traces write as a number or a string (`"pid": "Spans"`).
struct Num(Option<i64>);

impl<'de> de::Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Num;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number or a string")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Num, E> {
                Ok(Num(Some(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Num, E> {
                Ok(Num(i64::try_from(v).ok()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Num, E> {
                Ok(Num(v.is_finite().then_some(v as i64)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Num, E> {
                Ok(Num(s.trim().parse().ok()))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Num, E> {
                Ok(Num(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Num, E> {
                Ok(Num(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// A timestamp or duration in µs (fractional); strings of numbers are accepted too.
struct Float(Option<f64>);

impl<'de> de::Deserialize<'de> for Float {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Float;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Float, E> {
                Ok(Float(v.is_finite().then_some(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Float, E> {
                Ok(Float(Some(v as f64)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Float, E> {
                Ok(Float(Some(v as f64)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Float, E> {
                Ok(Float(s.trim().parse().ok().filter(|x: &f64| x.is_finite())))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Float, E> {
                Ok(Float(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// `args`: only the correlation id, stream and device are read.
struct ArgsSeed<'a>(&'a mut RawEvent);

impl<'de> DeserializeSeed<'de> for ArgsSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ArgsSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an args object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(k) = map.next_key::<ArgKey>()? {
            match k {
                ArgKey::Correlation => self.0.correlation = map.next_value::<Num>()?.0,
                ArgKey::Stream => self.0.stream = map.next_value::<Num>()?.0,
                ArgKey::Device => self.0.device = map.next_value::<Num>()?.0,
                ArgKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
}
