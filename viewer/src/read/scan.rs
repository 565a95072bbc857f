//! A cursor over report bytes: the JSON structure (objects, arrays, keys, `null`), with
//! serde_json at hand for what the fast paths leave: a string with escapes, a value to skip,
//! and the exact message when something is not what it should be.
//!
//! The cursor reads through a window: the bytes it is looking at, copied from the
//! [`Source`] as it moves on. Positions are offsets in the whole report.

use serde::de::{DeserializeOwned, IgnoredAny};

use super::source::{find, Source};

/// Why a report could not be read: what was wrong, and where in the file.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadError(pub String);

/// JSON whitespace.
#[inline(always)]
pub(super) fn ws(c: u8) -> bool {
    matches!(c, b' ' | b'\n' | b'\r' | b'\t')
}

/// Bytes the window takes at least: the small parts of a report (run, findings, devices)
/// are read from one or two windows.
const WINDOW: usize = 64 * 1024;

/// Bytes copied at a time while skipping a column (into the same memory each time).
const SKIP: usize = 256 * 1024;

/// What reads each member of an object, given its key.
pub type Member<'f, 's> = &'f mut dyn FnMut(&mut Scan<'s>, &str) -> Result<(), ReadError>;

/// What reads each element of an array.
pub type Element<'f, 's> = &'f mut dyn FnMut(&mut Scan<'s>) -> Result<(), ReadError>;

/// A position in report bytes.
pub struct Scan<'s> {
    src: &'s dyn Source,
    len: usize,
    /// Bytes `base..base + filled` of the source, in `win[..filled]` (the rest of `win` is
    /// room kept from earlier, so that refilling it needs no fresh memory).
    win: Vec<u8>,
    filled: usize,
    base: usize,
    /// The cursor, an offset in the whole source.
    pub(super) pos: usize,
}

impl<'s> Scan<'s> {
    /// A cursor at the start of `src`.
    pub fn new(src: &'s dyn Source) -> Self {
        Scan {
            src,
            len: src.len(),
            win: Vec::new(),
            filled: 0,
            base: 0,
            pos: 0,
        }
    }

    /// Makes the window hold the bytes from `from` to `from + need` (or to the end), and
    /// returns them from `from` on (at least [`WINDOW`] of them where there are).
    pub(super) fn bytes(&mut self, from: usize, need: usize) -> &[u8] {
        let from = from.min(self.len);
        let end = (from + need.max(WINDOW)).min(self.len);
        let have = self.base + self.filled;
        if from < self.base || from + need.min(self.len - from) > have {
            let n = end - from;
            if n > self.win.len() {
                self.win.resize(n, 0);
            }
            if (self.base..have).contains(&from) {
                // Keep what the window already holds from `from` on; copy only the rest.
                let kept = have - from;
                if from > self.base {
                    self.win.copy_within(from - self.base..self.filled, 0);
                }
                self.src.copy(have, &mut self.win[kept..n]);
            } else {
                self.src.copy(from, &mut self.win[..n]);
            }
            self.base = from;
            self.filled = n;
        }
        &self.win[from - self.base..self.filled]
    }

    /// The first `c` after `keep`, with the window holding everything from `keep` to it
    /// (for a value read whole: a drawn column from its `[`, a string from its quote).
    pub(super) fn find_keep(&mut self, keep: usize, c: u8) -> Option<usize> {
        let (mut need, mut searched) = (WINDOW, 1);
        loop {
            let b = self.bytes(keep, need);
            if let Some(i) = find(b, searched, c) {
                return Some(keep + i);
            }
            let seen = b.len();
            if self.at_source_end() {
                return None;
            }
            searched = seen;
            need = seen * 2;
        }
    }

    /// The first `c` at `from` or after, looked for a piece at a time through the same
    /// memory (for what is skipped: a column no chart draws).
    pub(super) fn find_skip(&mut self, from: usize, c: u8) -> Option<usize> {
        let mut at = from;
        loop {
            let b = self.bytes(at, SKIP);
            if let Some(i) = find(b, 0, c) {
                return Some(at + i);
            }
            let seen = b.len();
            if seen == 0 || self.at_source_end() {
                return None;
            }
            at += seen;
        }
    }

    /// Bytes from the cursor to the end of the source.
    pub(super) fn len_left(&self) -> usize {
        self.len.saturating_sub(self.pos)
    }

    /// True when the window reaches the end of the source.
    fn at_source_end(&self) -> bool {
        self.base + self.filled >= self.len
    }

    /// The byte at `i`.
    fn byte(&mut self, i: usize) -> Option<u8> {
        if i >= self.len {
            return None;
        }
        if i < self.base || i >= self.base + self.filled {
            self.bytes(i, 1);
        }
        Some(self.win[i - self.base])
    }

    /// Skips whitespace.
    pub fn ws(&mut self) {
        while self.byte(self.pos).is_some_and(ws) {
            self.pos += 1;
        }
    }

    /// The next byte after whitespace.
    pub(super) fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.byte(self.pos)
    }

    /// Moves past `c` if it comes next.
    pub(super) fn eat(&mut self, c: u8) -> bool {
        let hit = self.peek() == Some(c);
        if hit {
            self.pos += 1;
        }
        hit
    }

    /// Moves past `word` if it comes next.
    pub(super) fn eat_word(&mut self, word: &[u8]) -> bool {
        if self.peek() != word.first().copied() {
            return false;
        }
        let hit = self.bytes(self.pos, word.len()).starts_with(word);
        if hit {
            self.pos += word.len();
        }
        hit
    }

    /// Moves past a `null` if one comes next.
    pub(super) fn null(&mut self) -> bool {
        self.eat_word(b"null")
    }

    /// "expected `what` at line … column …", at the cursor.
    pub(super) fn expected(&self, what: &str) -> ReadError {
        self.error_at(self.pos, &format!("expected {what}"))
    }

    /// `msg` with the line and column of byte `pos` (counted through the source in pieces:
    /// this runs only for a file that cannot be read).
    pub(super) fn error_at(&self, pos: usize, msg: &str) -> ReadError {
        let pos = pos.min(self.len);
        let (mut line, mut line_start) = (1, 0);
        let mut buf = vec![0; WINDOW];
        let mut at = 0;
        while at < pos {
            let n = WINDOW.min(pos - at);
            self.src.copy(at, &mut buf[..n]);
            for (k, &c) in buf[..n].iter().enumerate() {
                if c == b'\n' {
                    line += 1;
                    line_start = at + k + 1;
                }
            }
            at += n;
        }
        let col = 1 + pos - line_start;
        ReadError(format!("{msg} at line {line} column {col}"))
    }

    /// True when only whitespace is left.
    pub fn at_end(&mut self) -> bool {
        self.peek().is_none()
    }

    /// Reads one value with serde_json straight from the bytes, widening the window until
    /// the value is in it.
    pub(super) fn direct<T: DeserializeOwned>(&mut self) -> Result<T, ReadError> {
        self.ws();
        let start = self.pos;
        let mut need = WINDOW;
        loop {
            let b = self.bytes(start, need);
            let seen = b.len();
            let mut it = serde_json::Deserializer::from_slice(b).into_iter::<T>();
            let (got, used) = (it.next(), it.byte_offset());
            let whole = self.at_source_end();
            match got {
                // A value that ends where the window does may go on past it.
                Some(Ok(v)) if whole || used < seen => {
                    self.pos = start + used;
                    return Ok(v);
                }
                Some(Err(e)) if whole || !e.is_eof() => {
                    // serde counts lines and columns from `start`: say where in the file.
                    let msg = e.to_string();
                    let msg = crate::format::rfind_bytes(&msg, " at line ")
                        .map_or(&msg[..], |i| &msg[..i]);
                    let b = &self.win[start - self.base..self.filled];
                    let mut at = 0;
                    for _ in 1..e.line() {
                        match b[at..].iter().position(|&c| c == b'\n') {
                            Some(i) => at += i + 1,
                            None => break,
                        }
                    }
                    return Err(self.error_at(start + at + e.column().saturating_sub(1), msg));
                }
                None if whole => return Err(self.expected("a value")),
                _ => need = seen * 2,
            }
        }
    }

    /// Skips one value of any kind, checking it.
    pub fn skip(&mut self) -> Result<(), ReadError> {
        self.direct::<IgnoredAny>().map(|_| ())
    }

    /// `None` for `null`, else what `f` reads.
    pub fn nullable<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, ReadError>,
    ) -> Result<Option<T>, ReadError> {
        if self.null() {
            return Ok(None);
        }
        f(self).map(Some)
    }

    /// Walks an object, calling `f` with each key; `f` must read the value. (`f` is a
    /// trait object: one copy of this walk serves every kind of object.)
    pub fn object(&mut self, f: Member<'_, 's>) -> Result<(), ReadError> {
        if !self.eat(b'{') {
            return Err(self.expected("an object"));
        }
        if self.eat(b'}') {
            return Ok(());
        }
        loop {
            let key = self.string()?;
            if !self.eat(b':') {
                return Err(self.expected("`:`"));
            }
            f(self, &key)?;
            if self.eat(b'}') {
                return Ok(());
            }
            if !self.eat(b',') {
                return Err(self.expected("`,` or `}`"));
            }
        }
    }

    /// Walks an array, calling `f` for each element; `f` must read it.
    pub fn array(&mut self, f: Element<'_, 's>) -> Result<(), ReadError> {
        if !self.eat(b'[') {
            return Err(self.expected("an array"));
        }
        if self.eat(b']') {
            return Ok(());
        }
        loop {
            f(self)?;
            if self.eat(b']') {
                return Ok(());
            }
            if !self.eat(b',') {
                return Err(self.expected("`,` or `]`"));
            }
        }
    }

    /// A string.
    #[inline(never)]
    pub fn string(&mut self) -> Result<String, ReadError> {
        if self.peek() == Some(b'"') {
            // Without escapes, up to its closing quote; anything else goes to serde_json.
            let start = self.pos + 1;
            if let Some(end) = self.find_keep(self.pos, b'"') {
                let b = &self.bytes(start, end - start)[..end - start];
                if !b.iter().any(|&c| c == b'\\' || c < 0x20) {
                    if let Ok(s) = std::str::from_utf8(b) {
                        let s = s.to_owned();
                        self.pos = end + 1;
                        return Ok(s);
                    }
                }
            }
        }
        self.direct()
    }
}
