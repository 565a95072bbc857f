//! The trace's structure, read as a stream: the top-level object's keys are found by a byte
//! scanner, and each value — every element of `traceEvents`, and the small metadata values —
//! is cut out into a reused buffer and parsed from that contiguous slice, serde_json's fast
//! path. Memory is one event (or one metadata value) at a time, whatever the file size.
//!
//! Both the object form (`{"traceEvents": [...], ...}`) and the bare array form of Chrome
//! traces are read; `distributedInfo` may come before or after the events (Kineto writes it
//! after them when it learns the rank from the first collective).

use std::io::BufRead;

use serde::de::DeserializeSeed;

use super::events::Store;
use super::read::EventSeed;
use super::MAX_VALUE_BYTES;

/// Where and why reading stopped.
#[derive(Debug)]
pub(crate) struct SplitError {
    /// Byte offset in the (decompressed) input.
    pub byte: u64,
    /// What was expected or went wrong.
    pub what: String,
    /// True when the input ended early.
    pub eof: bool,
    /// True when the input is past one of the reader's memory limits.
    pub limit: bool,
}

pub(crate) struct Splitter<R> {
    r: R,
    byte: u64,
    scratch: Vec<u8>,
}

type Res<T> = Result<T, SplitError>;

impl<R: BufRead> Splitter<R> {
    pub(crate) fn new(r: R) -> Self {
        Splitter {
            r,
            byte: 0,
            scratch: Vec::with_capacity(4096),
        }
    }

    /// Bytes consumed so far.
    pub(crate) fn bytes(&self) -> u64 {
        self.byte
    }

    fn err(&self, what: impl Into<String>) -> SplitError {
        SplitError {
            byte: self.byte,
            what: what.into(),
            eof: false,
            limit: false,
        }
    }

    fn limit(&self, what: String) -> SplitError {
        SplitError {
            limit: true,
            ..self.err(what)
        }
    }

    fn eof(&self, what: &str) -> SplitError {
        SplitError {
            eof: true,
            ..self.err(format!("the input ends where {what} was expected"))
        }
    }

    fn io(&self, e: std::io::Error) -> SplitError {
        self.err(format!("cannot read the trace (corrupt gzip data?): {e}"))
    }

    fn consume(&mut self, n: usize) {
        self.r.consume(n);
        self.byte += n as u64;
    }

    /// The next non-whitespace byte, not consumed; `None` at the end.
    fn peek(&mut self) -> Res<Option<u8>> {
        loop {
            let buf = match self.r.fill_buf() {
                Ok(b) => b,
                Err(e) => return Err(self.io(e)),
            };
            if buf.is_empty() {
                return Ok(None);
            }
            let ws = buf
                .iter()
                .position(|b| !b.is_ascii_whitespace())
                .unwrap_or(buf.len());
            let next = buf.get(ws).copied();
            self.consume(ws);
            if next.is_some() {
                return Ok(next);
            }
        }
    }

    fn expect(&mut self, want: u8, what: &str) -> Res<()> {
        match self.peek()? {
            Some(b) if b == want => {
                self.consume(1);
                Ok(())
            }
            Some(b) => Err(self.err(format!("expected {what}, found `{}`", b as char))),
            None => Err(self.eof(what)),
        }
    }

    /// Cuts the next JSON value out into the scratch buffer and returns it; at most
    /// [`MAX_VALUE_BYTES`], so one absurd value cannot exhaust memory.
    fn value(&mut self) -> Res<&[u8]> {
        self.cut(true)
    }

    /// Reads past the next JSON value without holding it, whatever its size.
    fn skip(&mut self) -> Res<()> {
        self.cut(false).map(|_| ())
    }

    /// Finds the end of the next JSON value, copying it to the scratch buffer when `keep`.
    /// Objects and arrays are matched by counting their own brackets outside strings (the
    /// other kind cannot unbalance them in valid JSON), found with `memchr`; strings skip to
    /// the next quote or backslash. Nesting costs no stack here: serde_json, which parses
    /// the kept values, refuses more than 128 levels.
    fn cut(&mut self, keep: bool) -> Res<&[u8]> {
        self.scratch.clear();
        let first = self.peek()?.ok_or_else(|| self.eof("a value"))?;
        let (open, close) = match first {
            b'{' => (b'{', b'}'),
            b'[' => (b'[', b']'),
            b'"' => (0, 0),
            _ => return self.scalar(keep),
        };
        let string_only = open == 0;
        let (mut depth, mut in_str, mut esc) = (0u64, false, false);
        loop {
            let buf = match self.r.fill_buf() {
                Ok(b) => b,
                Err(e) => return Err(self.io(e)),
            };
            if buf.is_empty() {
                return Err(self.eof("the rest of a value"));
            }
            let mut i = 0;
            let mut end = None;
            while i < buf.len() {
                if esc {
                    esc = false;
                    i += 1;
                    continue;
                }
                let found = if in_str {
                    memchr::memchr2(b'"', b'\\', &buf[i..])
                } else if string_only {
                    memchr::memchr(b'"', &buf[i..])
                } else {
                    memchr::memchr3(b'"', open, close, &buf[i..])
                };
                let Some(p) = found else { break };
                i += p;
                let b = buf[i];
                if in_str {
                    if b == b'\\' {
                        esc = true;
                    } else {
                        in_str = false;
                        if string_only {
                            end = Some(i + 1);
                            break;
                        }
                    }
                } else if b == b'"' {
                    in_str = true;
                } else if b == open {
                    depth += 1;
                } else {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(i + 1);
                        break;
                    }
                }
                i += 1;
            }
            let n = end.unwrap_or(buf.len());
            if keep {
                self.scratch.extend_from_slice(&buf[..n]);
            }
            self.consume(n);
            self.check_size()?;
            if end.is_some() {
                return Ok(&self.scratch);
            }
        }
    }

    fn check_size(&self) -> Res<()> {
        if self.scratch.len() > MAX_VALUE_BYTES {
            return Err(self.limit(format!(
                "one JSON value (an event or a metadata entry) is larger than {} MiB, where a real \
                 event is a few KB; the file is damaged or not a profiler trace",
                MAX_VALUE_BYTES >> 20
            )));
        }
        Ok(())
    }

    /// A number, `true`, `false` or `null`: up to the next delimiter.
    fn scalar(&mut self, keep: bool) -> Res<&[u8]> {
        loop {
            let buf = match self.r.fill_buf() {
                Ok(b) => b,
                Err(e) => return Err(self.io(e)),
            };
            if buf.is_empty() {
                return Ok(&self.scratch);
            }
            let end = buf
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace());
            let n = end.unwrap_or(buf.len());
            if keep {
                self.scratch.extend_from_slice(&buf[..n]);
            }
            self.consume(n);
            self.check_size()?;
            if end.is_some() {
                return Ok(&self.scratch);
            }
        }
    }

    /// Reads the whole trace into `store`.
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
            match self.peek()? {
                Some(b',') => self.consume(1),
                Some(b'}') => {}
                Some(b) => {
                    return Err(self.err(format!(
                        "expected `,` or `}}` after a value, found `{}`",
                        b as char
                    )))
                }
                None => return Err(self.eof("`,` or `}`")),
            }
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
            // Most events are read where they lie in the buffer (`fast`); the rest, and
            // those the buffer's end cuts, are cut out and read with serde_json.
            let buf = match self.r.fill_buf() {
                Ok(b) => b,
                Err(e) => return Err(self.io(e)),
            };
            if let Some((ev, n)) = super::fast::event(buf, &mut store.names) {
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
/// keep (`cpu_op`, `python_function`, flows, ...): most of a trace, skipped at memchr speed.
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
        Ok(cat) => super::events::Cat::from_str(cat) == super::events::Cat::Other,
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
            br#"{"ph": "X", "cat": "cpu_op", "name": "aten::mm"}"#
        ));
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
