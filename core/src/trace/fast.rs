//! The fast path for one event: a single pass over the event's bytes where they lie in the
//! read buffer, finding its end and reading the fields gpuwhy keeps in the same walk, without
//! copying the event out or going through serde.
//!
//! It reads only the plain form every real trace uses: strict JSON, keys and the strings it
//! reads without escapes, numbers of at most 18 digits (read by [`crate::text::number`]).
//! Anything else (an escape, a longer number, a name that is a number, a value of an
//! unexpected type, malformed JSON, an event cut by the end of the buffer) makes it give up
//! without consuming anything, and the event goes through the general path
//! ([`super::split`] and [`super::read`]: the value cut out and read with serde_json), which
//! then gives the same event or the same error as before. For every event it accepts, it
//! yields what serde_json yields, numbers identical to the last bit.

use super::events::{Cat, Names, RawEvent};
use crate::text::number::{self, Number};

/// Nesting deeper than this inside one event is left to the general path.
const MAX_DEPTH: u32 = 64;

/// Reads the event starting at `buf[0]` (its `{`). Returns the event and the bytes it takes,
/// or `None` to leave it to the general path.
pub(crate) fn event(buf: &[u8], names: &mut Names) -> Option<(RawEvent, usize)> {
    let mut p = P { b: buf, i: 0 };
    let mut e = RawEvent::default();
    let mut name: Option<&str> = None;
    p.byte(b'{')?;
    p.ws();
    if !p.eat(b'}') {
        loop {
            p.ws();
            let key = p.string()?;
            p.ws();
            p.byte(b':')?;
            p.ws();
            match key {
                b"ph" => e.ph = p.string_utf8()?.bytes().next().unwrap_or(0),
                b"cat" => e.cat = Some(Cat::from_str(p.string_utf8()?)),
                // serde_json would intern every `name` of a repeated key: left to it.
                b"name" if name.is_some() => return None,
                b"name" => name = Some(p.string_utf8()?),
                b"pid" => e.pid = p.num()?,
                b"tid" => e.tid = p.num()?,
                b"ts" => e.ts = p.float()?,
                b"dur" => e.dur = p.float()?,
                b"args" => p.args(&mut e)?,
                _ => {
                    p.other_key(key)?;
                    p.skip(0)?;
                }
            }
            p.ws();
            if p.eat(b',') {
                continue;
            }
            p.byte(b'}')?;
            break;
        }
    }
    // The general path skips events of a category gpuwhy does not keep without reading
    // them, so their names are not interned there either.
    if e.cat != Some(Cat::Other) {
        e.name = name.map(|n| names.intern(n));
    }
    Some((e, p.i))
}

struct P<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> P<'a> {
    #[inline]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    #[inline]
    fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            self.i += 1;
        }
    }

    #[inline]
    fn eat(&mut self, want: u8) -> bool {
        let hit = self.peek() == Some(want);
        self.i += hit as usize;
        hit
    }

    #[inline]
    fn byte(&mut self, want: u8) -> Option<()> {
        self.eat(want).then_some(())
    }

    /// A string without escapes or control characters; its bytes, not checked as UTF-8.
    #[inline]
    fn string(&mut self) -> Option<&'a [u8]> {
        self.byte(b'"')?;
        let rest = self.b.get(self.i..)?;
        let n = string_stop(rest)?;
        if rest[n] != b'"' {
            return None;
        }
        self.i += n + 1;
        Some(&rest[..n])
    }

    /// serde_json checks every string it hands over (keys included) as UTF-8.
    #[inline]
    fn utf8(&self, s: &'a [u8]) -> Option<&'a str> {
        std::str::from_utf8(s).ok()
    }

    /// A key gpuwhy does not read: only checked (as serde_json checks keys).
    #[inline]
    fn other_key(&self, s: &'a [u8]) -> Option<()> {
        if s.is_ascii() {
            return Some(());
        }
        self.utf8(s).map(|_| ())
    }

    /// A string that serde_json would hand over as `&str` (so it must be UTF-8).
    #[inline]
    fn string_utf8(&mut self) -> Option<&'a str> {
        let s = self.string()?;
        self.utf8(s)
    }

    /// The JSON number here, as [`crate::text::number`] reads it (or `None` for the
    /// general path).
    #[inline]
    fn number(&mut self) -> Option<Number> {
        let n = number::scan(self.b, self.i)?;
        self.i = n.end;
        Some(n)
    }

    /// `ts` / `dur` as `read::Float` reads them.
    fn float(&mut self) -> Option<Option<f64>> {
        match self.peek()? {
            // serde_json: an integer is visited as u64 or i64 and then `as f64` (`-0` as the
            // float -0.0); a decimal is its significand scaled once (exact, see
            // `text::number`). A longer significand is left to serde_json.
            b'-' | b'0'..=b'9' => Some(Some(self.number()?.to_f64()?)),
            b'"' => {
                let s = self.string_utf8()?;
                Some(s.trim().parse().ok().filter(|x: &f64| x.is_finite()))
            }
            b'n' => self.literal(b"null").map(|_| None),
            _ => None,
        }
    }

    /// `pid`, `tid` and the ids in `args` as `read::Num` reads them.
    fn num(&mut self) -> Option<Option<i64>> {
        match self.peek()? {
            b'-' | b'0'..=b'9' => Some(Some(self.number()?.to_i64()?)),
            b'"' => Some(self.string_utf8()?.trim().parse().ok()),
            b'n' => self.literal(b"null").map(|_| None),
            b't' => self.literal(b"true").map(|_| None),
            b'f' => self.literal(b"false").map(|_| None),
            _ => None,
        }
    }

    fn literal(&mut self, lit: &[u8]) -> Option<()> {
        let end = self.i + lit.len();
        (self.b.get(self.i..end)? == lit).then(|| self.i = end)
    }

    /// `args`: an object (correlation, stream, device read; the rest skipped) or null.
    fn args(&mut self, e: &mut RawEvent) -> Option<()> {
        if self.peek()? == b'n' {
            return self.literal(b"null");
        }
        self.byte(b'{')?;
        self.ws();
        if self.eat(b'}') {
            return Some(());
        }
        loop {
            self.ws();
            let key = self.string()?;
            self.ws();
            self.byte(b':')?;
            self.ws();
            match key {
                b"correlation" => e.correlation = self.num()?,
                b"stream" => e.stream = self.num()?,
                b"device" => e.device = self.num()?,
                _ => {
                    self.other_key(key)?;
                    self.skip(1)?;
                }
            }
            self.ws();
            if self.eat(b',') {
                continue;
            }
            return self.byte(b'}');
        }
    }

    /// Skips one JSON value, checking it as serde_json's `IgnoredAny` would.
    fn skip(&mut self, depth: u32) -> Option<()> {
        match self.peek()? {
            b'"' => self.skip_string(),
            b'-' | b'0'..=b'9' => self.skip_number(),
            b'n' => self.literal(b"null"),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'[' => {
                if depth >= MAX_DEPTH {
                    return None;
                }
                self.i += 1;
                self.ws();
                if self.eat(b']') {
                    return Some(());
                }
                loop {
                    self.ws();
                    self.skip(depth + 1)?;
                    self.ws();
                    if self.eat(b',') {
                        continue;
                    }
                    return self.byte(b']');
                }
            }
            b'{' => {
                if depth >= MAX_DEPTH {
                    return None;
                }
                self.i += 1;
                self.ws();
                if self.eat(b'}') {
                    return Some(());
                }
                loop {
                    self.ws();
                    let key = self.string()?;
                    self.other_key(key)?;
                    self.ws();
                    self.byte(b':')?;
                    self.ws();
                    self.skip(depth + 1)?;
                    self.ws();
                    if self.eat(b',') {
                        continue;
                    }
                    return self.byte(b'}');
                }
            }
            _ => None,
        }
    }

    /// A skipped string: escapes allowed when well formed, control characters not.
    fn skip_string(&mut self) -> Option<()> {
        self.byte(b'"')?;
        loop {
            self.i += string_stop(self.b.get(self.i..)?)?;
            match self.b[self.i] {
                b'"' => {
                    self.i += 1;
                    return Some(());
                }
                b'\\' => match *self.b.get(self.i + 1)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.i += 2,
                    b'u' => {
                        let hex = self.b.get(self.i + 2..self.i + 6)?;
                        if !hex.iter().all(u8::is_ascii_hexdigit) {
                            return None;
                        }
                        self.i += 6;
                    }
                    _ => return None,
                },
                _ => return None,
            }
        }
    }

    /// A skipped number: the JSON grammar, exponents included.
    fn skip_number(&mut self) -> Option<()> {
        self.eat(b'-');
        match self.peek()? {
            b'0' => self.i += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.eat(b'.') {
            let at = self.i;
            self.digits();
            if self.i == at {
                return None;
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            let at = self.i;
            self.digits();
            if self.i == at {
                return None;
            }
        }
        Some(())
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
    }
}

/// The first `"`, `\\` or control character in `s`: eight bytes at a time (the classic
/// SWAR zero-byte test, whose lowest hit is exact), then byte by byte.
#[inline]
pub(crate) fn string_stop(s: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let mut i = 0;
    while let Some(chunk) = s.get(i..).and_then(|r| r.first_chunk::<8>()) {
        let w = u64::from_le_bytes(*chunk);
        let hits = zero(w ^ (ONES * b'"' as u64))
            | zero(w ^ (ONES * b'\\' as u64))
            | (w.wrapping_sub(ONES * 0x20) & !w & HIGH);
        if hits != 0 {
            return Some(i + (hits.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    s[i..]
        .iter()
        .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
        .map(|p| i + p)
}
