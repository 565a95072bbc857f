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

/// Where and why reading stopped.
#[derive(Debug)]
pub(crate) struct SplitError {
    /// 1-based line of the (decompressed) input.
    pub line: u64,
    /// Byte offset in the (decompressed) input.
    pub byte: u64,
    /// What was expected or went wrong.
    pub what: String,
    /// True when the input ended early.
    pub eof: bool,
}

pub(crate) struct Splitter<R> {
    r: R,
    byte: u64,
    line: u64,
    scratch: Vec<u8>,
}

type Res<T> = Result<T, SplitError>;

impl<R: BufRead> Splitter<R> {
    pub(crate) fn new(r: R) -> Self {
        Splitter {
            r,
            byte: 0,
            line: 1,
            scratch: Vec::with_capacity(4096),
        }
    }

    /// Bytes consumed so far.
    pub(crate) fn bytes(&self) -> u64 {
        self.byte
    }

    fn err(&self, what: impl Into<String>) -> SplitError {
        SplitError {
            line: self.line,
            byte: self.byte,
            what: what.into(),
            eof: false,
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
            let lines = memchr::memchr_iter(b'\n', &buf[..ws]).count() as u64;
            let next = buf.get(ws).copied();
            self.line += lines;
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

    /// Cuts the next JSON value out into the scratch buffer and returns it. Objects and
    /// arrays are matched by counting their own brackets outside strings (the other kind
    /// cannot unbalance them in valid JSON), found with `memchr`; strings skip to the next
    /// quote or backslash.
    fn value(&mut self) -> Res<&[u8]> {
        self.scratch.clear();
        let first = self.peek()?.ok_or_else(|| self.eof("a value"))?;
        let (open, close) = match first {
            b'{' => (b'{', b'}'),
            b'[' => (b'[', b']'),
            b'"' => (0, 0),
            _ => return self.scalar(),
        };
        let string_only = open == 0;
        let (mut depth, mut in_str, mut esc) = (0i32, false, false);
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
            let lines = memchr::memchr_iter(b'\n', &buf[..n]).count() as u64;
            self.scratch.extend_from_slice(&buf[..n]);
            self.line += lines;
            self.consume(n);
            if end.is_some() {
                return Ok(&self.scratch);
            }
        }
    }

    /// A number, `true`, `false` or `null`: up to the next delimiter.
    fn scalar(&mut self) -> Res<&[u8]> {
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
            self.scratch.extend_from_slice(&buf[..n]);
            self.consume(n);
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
                _ => {
                    self.value()?;
                }
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
        let (line, byte) = (self.line, self.byte);
        let v = self.value()?;
        serde_json::from_slice(v).map_err(|e| SplitError {
            line: line + e.line() as u64 - 1,
            byte,
            what: format!("unexpected JSON: {e}"),
            eof: false,
        })
    }

    fn events(&mut self, store: &mut Store) -> Res<()> {
        self.expect(b'[', "the `[` of the traceEvents array")?;
        loop {
            match self.peek()? {
                Some(b']') => {
                    self.consume(1);
                    return Ok(());
                }
                Some(_) => {}
                None => return Err(self.eof("an event or `]`")),
            }
            let (line, byte) = (self.line, self.byte);
            let v = self.value()?;
            let mut de = serde_json::Deserializer::from_slice(v);
            let ev = EventSeed(store)
                .deserialize(&mut de)
                .map_err(|e| SplitError {
                    line: line + e.line() as u64 - 1,
                    byte,
                    what: format!("expected a trace event object: {e}"),
                    eof: false,
                })?;
            store.push(ev);
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
}
