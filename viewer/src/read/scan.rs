//! A cursor over report bytes: the JSON structure (objects, arrays, keys, `null`), with
//! serde_json at hand for what the fast paths leave: a string with escapes, a value to skip,
//! and the exact message when something is not what it should be.

use std::borrow::Cow;

use serde::de::{DeserializeOwned, IgnoredAny};

/// Why a report could not be read: what was wrong, and where in the file.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadError(pub String);

/// JSON whitespace.
#[inline(always)]
pub(super) fn ws(c: u8) -> bool {
    matches!(c, b' ' | b'\n' | b'\r' | b'\t')
}

/// What reads each member of an object, given its key.
pub type Member<'f, 'a> = &'f mut dyn FnMut(&mut Scan<'a>, &str) -> Result<(), ReadError>;

/// What reads each element of an array.
pub type Element<'f, 'a> = &'f mut dyn FnMut(&mut Scan<'a>) -> Result<(), ReadError>;

/// A position in report bytes.
pub struct Scan<'a> {
    pub(super) b: &'a [u8],
    pub(super) pos: usize,
}

impl<'a> Scan<'a> {
    /// A cursor at the start of `b`.
    pub fn new(b: &'a [u8]) -> Self {
        Scan { b, pos: 0 }
    }

    /// Skips whitespace.
    #[inline(always)]
    pub fn ws(&mut self) {
        while self.b.get(self.pos).is_some_and(|&c| ws(c)) {
            self.pos += 1;
        }
    }

    /// The next byte after whitespace.
    #[inline(always)]
    pub(super) fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.pos).copied()
    }

    /// Moves past `c` if it comes next.
    #[inline(always)]
    pub(super) fn eat(&mut self, c: u8) -> bool {
        let hit = self.peek() == Some(c);
        if hit {
            self.pos += 1;
        }
        hit
    }

    /// Moves past a `null` if one comes next.
    pub(super) fn null(&mut self) -> bool {
        let hit = self.peek() == Some(b'n') && self.b[self.pos..].starts_with(b"null");
        if hit {
            self.pos += 4;
        }
        hit
    }

    /// "expected `what` at line … column …", at the cursor.
    pub(super) fn expected(&self, what: &str) -> ReadError {
        self.error_at(self.pos, &format!("expected {what}"))
    }

    /// `msg` with the line and column of byte `pos`.
    pub(super) fn error_at(&self, pos: usize, msg: &str) -> ReadError {
        let before = &self.b[..pos.min(self.b.len())];
        let line = before.iter().filter(|&&c| c == b'\n').count() + 1;
        let col = 1 + pos
            - before
                .iter()
                .rposition(|&c| c == b'\n')
                .map_or(0, |i| i + 1);
        ReadError(format!("{msg} at line {line} column {col}"))
    }

    /// True when only whitespace is left.
    pub fn at_end(&mut self) -> bool {
        self.peek().is_none()
    }

    /// Reads one value with serde_json straight from the bytes.
    pub(super) fn direct<T: DeserializeOwned>(&mut self) -> Result<T, ReadError> {
        let start = self.pos;
        let mut it = serde_json::Deserializer::from_slice(&self.b[start..]).into_iter::<T>();
        match it.next() {
            Some(Ok(v)) => {
                self.pos = start + it.byte_offset();
                Ok(v)
            }
            Some(Err(e)) => {
                // serde counts lines and columns from `start`: say where in the whole file.
                let msg = e.to_string();
                let msg = msg.rfind(" at line ").map_or(&msg[..], |i| &msg[..i]);
                let mut at = start;
                let mut line = 1;
                while line < e.line() {
                    match self.b[at..].iter().position(|&c| c == b'\n') {
                        Some(i) => at += i + 1,
                        None => break,
                    }
                    line += 1;
                }
                Err(self.error_at(at + e.column().saturating_sub(1), msg))
            }
            None => Err(self.expected("a value")),
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
    pub fn object(&mut self, f: Member<'_, 'a>) -> Result<(), ReadError> {
        if !self.eat(b'{') {
            return Err(self.expected("an object"));
        }
        if self.eat(b'}') {
            return Ok(());
        }
        loop {
            let key = self.key()?;
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
    pub fn array(&mut self, f: Element<'_, 'a>) -> Result<(), ReadError> {
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

    /// A string without escapes, borrowed; `None` (the cursor unmoved) for anything else.
    fn plain_str(&mut self) -> Option<&'a str> {
        if self.peek() != Some(b'"') {
            return None;
        }
        let rest = &self.b[self.pos + 1..];
        let end = rest
            .iter()
            .position(|&c| c == b'"' || c == b'\\' || c < 0x20)?;
        if rest[end] != b'"' {
            return None;
        }
        let s = std::str::from_utf8(&rest[..end]).ok()?;
        self.pos += end + 2;
        Some(s)
    }

    /// An object key; borrowed when it has no escapes.
    fn key(&mut self) -> Result<Cow<'a, str>, ReadError> {
        match self.plain_str() {
            Some(s) => Ok(Cow::Borrowed(s)),
            None if self.peek() == Some(b'"') => self.direct::<String>().map(Cow::Owned),
            None => Err(self.expected("a key")),
        }
    }

    /// A string.
    #[inline(never)]
    pub fn string(&mut self) -> Result<String, ReadError> {
        match self.plain_str() {
            Some(s) => Ok(s.to_owned()),
            None => self.direct(),
        }
    }
}
