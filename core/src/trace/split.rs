//! The trace's structure, read as a stream: the top-level object's keys are found by a byte
//! scanner, and each value — every element of `traceEvents`, and the small metadata values —
//! is cut out into a reused buffer and parsed from that contiguous slice, serde_json's fast
//! path. Memory is one event (or one metadata value) at a time, whatever the file size.
//!
//! Both the object form (`{"traceEvents": [...], ...}`) and the bare array form of Chrome
//! traces are read; `distributedInfo` may come before or after the events (Kineto writes it
//! after them when it learns the rank from the first collective).
//!
//! This file holds the byte scanner (whitespace, one JSON value cut out or skipped, the
//! errors); `layout` reads the trace's keys and events with it.

use std::io::BufRead;

use super::MAX_VALUE_BYTES;

mod layout;

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
    /// Reading a part of the events ([`super::parallel`]): stop before the first event that
    /// starts at or past this byte.
    stop_at: Option<u64>,
    /// Where it stopped: the byte of the event it did not read.
    pub(crate) stopped: Option<u64>,
}

type Res<T> = Result<T, SplitError>;

impl<R: BufRead> Splitter<R> {
    pub(crate) fn new(r: R) -> Self {
        Splitter::at(r, 0, None)
    }

    /// A splitter whose input starts at byte `byte` of the file (so that its offsets are the
    /// file's), stopping before the first event at or past `stop_at`.
    pub(crate) fn at(r: R, byte: u64, stop_at: Option<u64>) -> Self {
        Splitter {
            r,
            byte,
            scratch: Vec::with_capacity(4096),
            stop_at,
            stopped: None,
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
        let mut st = Scan {
            open,
            close,
            string_only: open == 0,
            depth: 0,
            in_str: false,
            esc: false,
        };
        loop {
            let buf = match self.r.fill_buf() {
                Ok(b) => b,
                Err(e) => return Err(self.io(e)),
            };
            if buf.is_empty() {
                return Err(self.eof("the rest of a value"));
            }
            let end = st.end_in(buf);
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
}

/// Where [`Splitter::cut`] is inside a value that spans buffer fills: the brackets it
/// counts, how deep it is, and whether it is inside a string or after a backslash.
struct Scan {
    open: u8,
    close: u8,
    /// The value is a string: it ends at its closing quote.
    string_only: bool,
    depth: u64,
    in_str: bool,
    esc: bool,
}

impl Scan {
    /// The end (exclusive) of the value in `buf`, or `None` when it goes on past it.
    fn end_in(&mut self, buf: &[u8]) -> Option<usize> {
        let mut i = 0;
        while i < buf.len() {
            if self.esc {
                self.esc = false;
                i += 1;
                continue;
            }
            let found = if self.in_str {
                memchr::memchr2(b'"', b'\\', &buf[i..])
            } else if self.string_only {
                memchr::memchr(b'"', &buf[i..])
            } else {
                memchr::memchr3(b'"', self.open, self.close, &buf[i..])
            };
            i += found?;
            let b = buf[i];
            if self.in_str {
                if b == b'\\' {
                    self.esc = true;
                } else {
                    self.in_str = false;
                    if self.string_only {
                        return Some(i + 1);
                    }
                }
            } else if b == b'"' {
                self.in_str = true;
            } else if b == self.open {
                self.depth += 1;
            } else {
                self.depth -= 1;
                if self.depth == 0 {
                    return Some(i + 1);
                }
            }
            i += 1;
        }
        None
    }
}
