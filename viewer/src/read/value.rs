//! Typed values on the cursor: sample columns and times, numbers, integers, booleans, and
//! lists, maps and objects of them. Each reads what serde would read for the same Rust type
//! and refuses what serde would refuse (serde_json gives the message where it has one).

use std::collections::BTreeMap;

use gpuwhy::report::Column;

use super::number::{long_number, number, numbers};
use super::scan::{Member, ReadError, Scan};

/// What a reader of one value is.
pub type Read<'s, 'a, T> = &'s mut dyn FnMut(&mut Scan<'a>) -> Result<T, ReadError>;

impl<'a> Scan<'a> {
    /// A column of samples: numbers, `null` for a missing one (`NaN`), or the packed form
    /// ([`super::packed`]). `rows` is how many
    /// to expect (the length of the stream's times, read before its columns).
    pub fn column(&mut self, rows: usize) -> Result<Column, ReadError> {
        let v = if self.peek() == Some(b'{') {
            self.packed(rows)?
        } else {
            match self.numeric(rows, Some(f64::NAN)) {
                Some(v) => v,
                // Not through core's `Column`, whose reader of the compact form the page
                // does not need here ([`super::packed`] reads it).
                None => {
                    let v = self.direct::<Vec<Option<f64>>>()?;
                    let mut out = Vec::with_capacity(v.len());
                    for x in v {
                        out.push(x.unwrap_or(f64::NAN));
                    }
                    out
                }
            }
        };
        // Read as `f64` and narrowed here, in one loop, so that the module holds one copy of
        // the number loop rather than one per element type, and one narrowing.
        let mut out = Vec::with_capacity(v.len());
        for x in v {
            out.push(x as f32);
        }
        Ok(Column(out))
    }

    /// An array of times (numbers, no `null`), or the packed form of them.
    pub fn times(&mut self) -> Result<Vec<f64>, ReadError> {
        if self.peek() == Some(b'{') {
            let at = self.pos;
            let t = self.packed(0)?;
            if t.iter().any(|x| x.is_nan()) {
                return Err(self.error_at(at, "sample times cannot be null"));
            }
            return Ok(t);
        }
        match self.numeric(0, None) {
            Some(v) => Ok(v),
            None => self.direct(),
        }
    }

    /// A numeric array found whole (up to its first `]`) and read by the fast path; `None`
    /// when that gives up (the caller then asks serde_json, which says what is wrong).
    fn numeric(&mut self, rows: usize, null: Option<f64>) -> Option<Vec<f64>> {
        self.ws();
        let start = self.pos;
        if self.peek() == Some(b'[') {
            if let Some(end) = self.find_keep(start, b']') {
                let b = self.bytes(start, end + 1 - start);
                if let Some((v, used)) = numbers(b, 1, rows, null) {
                    self.pos = start + used;
                    return Some(v);
                }
            }
        }
        None
    }

    /// Skips a column the page does not read, up to its closing bracket, without looking
    /// at what is in it (copied a piece at a time through the same memory). An array of numbers
    /// and `null`s holds no other bracket, and anything that does (a nested array, a
    /// string) ends it early, which the walk then refuses. Junk with no bracket in a column
    /// no chart reads goes unnoticed.
    pub fn skip_column(&mut self) -> Result<(), ReadError> {
        if self.peek() == Some(b'{') {
            return self.skip_packed();
        }
        // A flat array ends at the first `]`; a nested one (`bands`: lists of counts, or
        // packed counts) is skipped value by value.
        let nested = matches!(
            self.bytes(self.pos + 1, 64)
                .iter()
                .find(|b| !b.is_ascii_whitespace()),
            Some(b'[' | b'{')
        );
        if self.peek() == Some(b'[') && !nested {
            if let Some(end) = self.find_skip(self.pos + 1, b']') {
                self.pos = end + 1;
                return Ok(());
            }
        }
        self.skip()
    }

    /// A number.
    #[inline(never)]
    pub fn f64(&mut self) -> Result<f64, ReadError> {
        self.ws();
        let whole = self.len_left() <= 64;
        let b = self.bytes(self.pos, 64);
        match number(b, 0).or_else(|| long_number(b, 0)) {
            // A number that ends where the window does may go on past it.
            Some((x, used)) if used < b.len() || whole => {
                self.pos += used;
                Ok(x)
            }
            _ => self.direct(),
        }
    }

    /// A number, `null` standing for a value that was not a number when written (`NaN`).
    pub fn f64_or_nan(&mut self) -> Result<f64, ReadError> {
        if self.null() {
            return Ok(f64::NAN);
        }
        self.f64()
    }

    /// `None` for `null`, else a number.
    #[inline(never)]
    pub fn opt_f64(&mut self) -> Result<Option<f64>, ReadError> {
        self.nullable(Self::f64)
    }

    /// `None` for `null`, else a string.
    #[inline(never)]
    pub fn opt_string(&mut self) -> Result<Option<String>, ReadError> {
        self.nullable(Self::string)
    }

    /// A whole number that fits `T` (`u32`, `u64`, `usize`, `i32`, `i64`).
    pub fn int<T: TryFrom<i128>>(&mut self) -> Result<T, ReadError> {
        self.ws();
        let at = self.pos;
        T::try_from(self.whole()?).map_err(|_| self.error_at(at, "number out of range"))
    }

    /// A whole number of at most 19 digits (one copy of this for every integer type).
    #[inline(never)]
    fn whole(&mut self) -> Result<i128, ReadError> {
        self.ws();
        let b = self.bytes(self.pos, 32);
        let neg = b.first() == Some(&b'-');
        let digits = b[neg as usize..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        let end = neg as usize + digits;
        let whole = (1..=19).contains(&digits)
            && (digits == 1 || b[neg as usize] != b'0')
            && !matches!(b.get(end), Some(b'.' | b'e' | b'E'));
        if !whole {
            return Err(self.expected("a whole number"));
        }
        let mut v: u64 = 0;
        for &c in &b[neg as usize..end] {
            v = v * 10 + (c - b'0') as u64;
        }
        self.pos += end;
        let v = v as i128;
        Ok(if neg { -v } else { v })
    }

    /// `None` for `null`, else a whole number.
    pub fn opt_int<T: TryFrom<i128>>(&mut self) -> Result<Option<T>, ReadError> {
        if self.null() {
            return Ok(None);
        }
        self.int().map(Some)
    }

    /// `true` or `false`.
    #[inline(never)]
    pub fn bool(&mut self) -> Result<bool, ReadError> {
        if self.eat_word(b"true") {
            return Ok(true);
        }
        if self.eat_word(b"false") {
            return Ok(false);
        }
        self.direct()
    }

    /// An array, each element read by `f`.
    pub fn list<T>(&mut self, f: Read<'_, 'a, T>) -> Result<Vec<T>, ReadError> {
        let mut out = Vec::new();
        self.array(&mut |s| f(s).map(|v| out.push(v)))?;
        Ok(out)
    }

    /// An object of string keys, each value read by `f`.
    pub fn map<T>(&mut self, f: Read<'_, 'a, T>) -> Result<BTreeMap<String, T>, ReadError> {
        let mut out = BTreeMap::new();
        self.object(&mut |s, k| {
            out.insert(k.to_string(), f(s)?);
            Ok(())
        })?;
        Ok(out)
    }

    /// An object with `required` keys: `f` reads each value (skipping keys it does not
    /// know, as serde does); a required key that never came is an error, as in serde.
    pub fn fields(&mut self, required: &[&str], f: Member<'_, 'a>) -> Result<(), ReadError> {
        self.ws();
        let start = self.pos;
        let mut seen = 0u64;
        self.object(&mut |s, k| {
            if let Some(i) = required.iter().position(|r| *r == k) {
                seen |= 1 << i;
            }
            f(s, k)
        })?;
        match (0..required.len()).find(|i| seen & (1 << i) == 0) {
            Some(i) => Err(self.error_at(start, &format!("missing field `{}`", required[i]))),
            None => Ok(()),
        }
    }
}
