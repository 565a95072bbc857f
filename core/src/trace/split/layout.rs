//! The trace's layout, read with the byte scanner of `Splitter`: the top-level
//! object's keys (`traceEvents`, `distributedInfo`, `deviceProperties`, the rest skipped) or
//! the bare array of events, and each event either read in place by the fast path or cut out
//! and, unless its category is one gpuwhy does not keep, parsed with serde_json.

use std::io::BufRead;

use serde::de::DeserializeSeed;

use super::{Res, SplitError, Splitter};
use crate::trace::events::{Cat, Store};
use crate::trace::read::EventSeed;

impl<R: BufRead> Splitter<R> {
    /// Reads the whole trace into `store` (up to the stop, if there is one).
    pub(crate) fn read(&mut self, store: &mut Store) -> Res<()> {
        match self.peek()? {
            Some(b'{') => {
                self.consume(1);
                self.object(store)?;
            }
            Some(b'[') => self.events(store)?,
            Some(b) => {
                return Err(self.err(format!(
                    "expected a Chrome trace (a JSON object with \"traceEvents\", or an array of events), found `{}`",
                    b as char
                )))
            }
            None => return Err(self.eof("a Chrome trace")),
        }
        self.end()
    }

    /// Reads on from the start of an event inside the events array (a part of the trace
    /// [`super::super::parallel`] cut at a guessed event start): the events up to the stop,
    /// or the rest of the array and of the trace (`object`: the trace is an object, whose
    /// other keys may follow the array).
    #[cfg(feature = "parallel")]
    pub(crate) fn read_from_event(&mut self, store: &mut Store, object: bool) -> Res<()> {
        self.event_list(store)?;
        if self.stopped.is_some() {
            return Ok(());
        }
        if object {
            self.after_value()?;
            self.object(store)?;
        }
        self.end()
    }

    /// Nothing but whitespace may follow the trace.
    fn end(&mut self) -> Res<()> {
        if self.stopped.is_some() {
            return Ok(());
        }
        match self.peek()? {
            None => Ok(()),
            Some(b) => Err(self.err(format!(
                "unexpected `{}` after the end of the trace",
                b as char
            ))),
        }
    }

    fn object(&mut self, store: &mut Store) -> Res<()> {
        loop {
            match self.peek()? {
                Some(b'}') => {
                    self.consume(1);
                    return Ok(());
                }
                Some(b'"') => {}
                Some(b) => return Err(self.err(format!("expected a key, found `{}`", b as char))),
                None => return Err(self.eof("a key or `}`")),
            }
            let key = self.value()?.to_vec();
            self.expect(b':', "`:` after a key")?;
            match key.as_slice() {
                b"\"traceEvents\"" => self.events(store)?,
                b"\"distributedInfo\"" => {
                    let v: serde_json::Value = self.json()?;
                    let num = |k: &str| {
                        v.get(k).and_then(|x| {
                            x.as_u64()
                                .or_else(|| x.as_str().and_then(|s| s.trim().parse().ok()))
                        })
                    };
                    store.rank = num("rank").map(|r| r as u32);
                    store.world_size = num("world_size").map(|w| w as u32);
                }
                b"\"deviceProperties\"" => {
                    let v: serde_json::Value = self.json()?;
                    for d in v.as_array().into_iter().flatten() {
                        if let (Some(id), Some(name)) = (
                            d.get("id").and_then(|x| x.as_i64()),
                            d.get("name").and_then(|x| x.as_str()),
                        ) {
                            store.devices.push((id, name.to_string()));
                        }
                    }
                }
                _ => self.skip()?,
            }
            if self.stopped.is_some() {
                return Ok(());
            }
            self.after_value()?;
        }
    }

    /// The `,` or `}` after a value of the top-level object (a `,` is consumed).
    fn after_value(&mut self) -> Res<()> {
        match self.peek()? {
            Some(b',') => {
                self.consume(1);
                Ok(())
            }
            Some(b'}') => Ok(()),
            Some(b) => Err(self.err(format!(
                "expected `,` or `}}` after a value, found `{}`",
                b as char
            ))),
            None => Err(self.eof("`,` or `}`")),
        }
    }

    fn json<T: serde::de::DeserializeOwned>(&mut self) -> Res<T> {
        let byte = self.byte;
        let v = self.value()?;
        serde_json::from_slice(v).map_err(|e| SplitError {
            byte,
            what: format!("unexpected JSON: {}", nesting(&e)),
            eof: false,
            limit: false,
        })
    }

    fn events(&mut self, store: &mut Store) -> Res<()> {
        self.expect(b'[', "the `[` of the traceEvents array")?;
        self.event_list(store)
    }

    /// The events of the array, from the first one (or its `]`) to the `]` included, or up
    /// to the stop.
    fn event_list(&mut self, store: &mut Store) -> Res<()> {
        let cat = memchr::memmem::Finder::new(b"\"cat\"");
        loop {
            match self.peek()? {
                Some(b']') => {
                    self.consume(1);
                    return Ok(());
                }
                Some(_) => {}
                None => return Err(self.eof("an event or `]`")),
            }
            if self.stop_at.is_some_and(|stop| self.byte >= stop) {
                self.stopped = Some(self.byte);
                return Ok(());
            }
            // Most events are read where they lie in the buffer (`fast`); the rest, and
            // those the buffer's end cuts, are cut out and read with serde_json.
            let buf = match self.r.fill_buf() {
                Ok(b) => b,
                Err(e) => return Err(self.io(e)),
            };
            if let Some((ev, n)) = crate::trace::fast::event(buf, &mut store.names) {
                self.consume(n);
                store.push(ev);
                if let Some(why) = store.over_limit() {
                    return Err(self.limit(why));
                }
            } else {
                self.general(store, &cat)?;
            }
            match self.peek()? {
                Some(b',') => self.consume(1),
                Some(b']') => {}
                Some(b) => {
                    return Err(self.err(format!(
                        "expected `,` or `]` after an event, found `{}`",
                        b as char
                    )))
                }
                None => return Err(self.eof("`,` or `]`")),
            }
        }
    }

    /// One event the fast path left: cut out, then skipped unparsed when its category is
    /// one gpuwhy does not keep, else read with serde_json.
    fn general(&mut self, store: &mut Store, cat: &memchr::memmem::Finder) -> Res<()> {
        let byte = self.byte;
        let v = self.value()?;
        if skippable(cat, v) {
            store.events += 1;
            return Ok(());
        }
        let mut de = serde_json::Deserializer::from_slice(v);
        let ev = EventSeed(store)
            .deserialize(&mut de)
            .map_err(|e| SplitError {
                byte,
                what: format!("expected a trace event object: {}", nesting(&e)),
                eof: false,
                limit: false,
            })?;
        store.push(ev);
        match store.over_limit() {
            Some(why) => Err(self.limit(why)),
            None => Ok(()),
        }
    }
}

/// serde_json's error, with its recursion limit said in the trace's terms.
fn nesting(e: &serde_json::Error) -> String {
    let text = e.to_string();
    if text.starts_with("recursion limit exceeded") {
        format!("{text}: nested more than 128 levels deep, which no trace event is (is the file damaged?)")
    } else {
        text
    }
}

/// True when an event's category, found without parsing the event, is one gpuwhy does not
/// keep (`python_function`, flows, ...): most of a trace, skipped at memchr speed.
/// Anything unusual (no `cat`, an escaped category) is left to the full parse.
fn skippable(cat: &memchr::memmem::Finder, ev: &[u8]) -> bool {
    let Some(at) = cat.find(ev) else {
        return false;
    };
    let rest = &ev[at + 5..];
    let rest = rest.trim_ascii_start();
    let Some(rest) = rest.strip_prefix(b":") else {
        return false;
    };
    let Some(rest) = rest.trim_ascii_start().strip_prefix(b"\"") else {
        return false;
    };
    let Some(end) = memchr::memchr2(b'"', b'\\', rest) else {
        return false;
    };
    if rest[end] != b'"' {
        return false;
    }
    match std::str::from_utf8(&rest[..end]) {
        Ok(cat) => Cat::from_str(cat) == Cat::Other,
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::skippable as skip;

    fn skippable(ev: &[u8]) -> bool {
        skip(&memchr::memmem::Finder::new(b"\"cat\""), ev)
    }

    #[test]
    fn only_unkept_categories_are_skipped_unparsed() {
        assert!(skippable(
            br#"{"ph": "X", "cat": "python_function", "name": "f"}"#
        ));
        assert!(
            !skippable(br#"{"ph": "X", "cat": "cpu_op", "name": "aten::mm"}"#),
            "cpu_op is read: it says what the CPU was doing"
        );
        assert!(skippable(br#"{"ph":"s","cat" :"ac2g","name":"ac2g"}"#));
        assert!(!skippable(br#"{"ph": "X", "cat": "kernel", "name": "k"}"#));
        assert!(!skippable(br#"{"ph": "X", "cat": "cuda_runtime"}"#));
        assert!(
            !skippable(br#"{"ph": "M", "name": "process_name"}"#),
            "no cat: parsed"
        );
        assert!(!skippable(br#"{"cat": "ker\"nel"}"#), "escapes: parsed");
        assert!(!skippable(
            br#"{"name": "\"cat\": \"x\"", "cat": "kernel"}"#
        ));
    }
}
