//! The compact series form (docs/report-format.md, "The compact series form"): a column or
//! the times as `{"div": n, "runs": [...]}`, read in one loop over the bytes as the plain
//! arrays are ([`super::number`]). Each value is what core reads: the integer over `div`.

use gpuwhy::report::MAX_VALUES;

use super::scan::{ws, ReadError, Scan};

/// Why the loop over `runs` stopped early.
enum Stop {
    /// The window ended first: read again with more of the file.
    Short,
    /// Something that is not a packed run, at this offset.
    Bad(usize, &'static str),
}

/// A whole number at `i` (at most 18 digits, so it cannot overflow) and the index after it.
fn int(b: &[u8], mut i: usize) -> Result<(i64, usize), Stop> {
    let neg = b.get(i) == Some(&b'-');
    i += neg as usize;
    let first = i;
    let mut v: i64 = 0;
    while let Some(d) = b.get(i).map(|c| c.wrapping_sub(b'0')).filter(|d| *d <= 9) {
        v = v * 10 + i64::from(d);
        i += 1;
    }
    match i - first {
        0 if i >= b.len() => Err(Stop::Short),
        0 => Err(Stop::Bad(i, "a whole number")),
        n if n > 18 => Err(Stop::Bad(first, "at most 18 digits")),
        // A number cut by the window's end may go on.
        _ if i >= b.len() => Err(Stop::Short),
        _ => Ok((if neg { -v } else { v }, i)),
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && ws(b[i]) {
        i += 1;
    }
    i
}

/// `null` at `i`: the index after it.
fn null(b: &[u8], i: usize) -> Result<Option<usize>, Stop> {
    if b.get(i) != Some(&b'n') {
        return Ok(None);
    }
    match b.get(i..i + 4) {
        Some(b"null") => Ok(Some(i + 4)),
        Some(_) => Err(Stop::Bad(i, "`null`")),
        None => Err(Stop::Short),
    }
}

/// The runs array starting at `b[0]` (`[`), expanded: each value over `div`, `NaN` where
/// missing (none kept when `keep` is false: a column no chart draws, checked and skipped);
/// and the index after its `]`.
fn runs(b: &[u8], div: f64, rows: usize, keep: bool) -> Result<(Vec<f64>, usize), Stop> {
    let mut out = Vec::with_capacity(if keep { rows } else { 0 });
    let mut len: u64 = 0;
    let (mut prev, mut i) = (0i64, skip_ws(b, 1));
    if b.get(i) == Some(&b']') {
        return Ok((out, i + 1));
    }
    loop {
        // One item: d, null, [d, n] or [null, n].
        let (d, n);
        if b.get(i) == Some(&b'[') {
            i = skip_ws(b, i + 1);
            let (first, at) = match null(b, i)? {
                Some(at) => (None, at),
                None => int(b, i).map(|(v, at)| (Some(v), at))?,
            };
            i = skip_ws(b, at);
            if b.get(i) != Some(&b',') {
                return Err(if i >= b.len() {
                    Stop::Short
                } else {
                    Stop::Bad(i, "`,`")
                });
            }
            let (count, at) = int(b, skip_ws(b, i + 1))?;
            i = skip_ws(b, at);
            if b.get(i) != Some(&b']') {
                return Err(if i >= b.len() {
                    Stop::Short
                } else {
                    Stop::Bad(i, "`]`")
                });
            }
            i += 1;
            (d, n) = (first, count.max(0) as u64);
        } else if let Some(at) = null(b, i)? {
            (d, n, i) = (None, 1, at);
        } else {
            let (v, at) = int(b, i)?;
            (d, n, i) = (Some(v), 1, at);
        }
        len += n;
        if len > MAX_VALUES {
            return Err(Stop::Bad(
                i,
                "fewer values (the column is longer than any report's)",
            ));
        }
        if !keep {
            if let Some(d) = d {
                prev = prev.wrapping_add(d.wrapping_mul(n as i64));
            }
        }
        for _ in 0..if keep { n } else { 0 } {
            out.push(match d {
                Some(d) => {
                    prev = prev.wrapping_add(d);
                    prev as f64 / div
                }
                None => f64::NAN,
            });
        }
        i = skip_ws(b, i);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b']') => return Ok((out, i + 1)),
            Some(_) => return Err(Stop::Bad(i, "`,` or `]`")),
            None => return Err(Stop::Short),
        }
    }
}

impl Scan<'_> {
    /// A packed column or times object (`{"div", "runs"}`), expanded; `rows` is how many
    /// values to expect.
    pub(super) fn packed(&mut self, rows: usize) -> Result<Vec<f64>, ReadError> {
        self.packed_or_skip(rows, true)
    }

    /// Checks a packed column no chart draws and moves past it.
    pub(super) fn skip_packed(&mut self) -> Result<(), ReadError> {
        self.packed_or_skip(0, false).map(|_| ())
    }

    fn packed_or_skip(&mut self, rows: usize, keep: bool) -> Result<Vec<f64>, ReadError> {
        let mut div = None::<u32>;
        let mut values = None;
        self.object(&mut |s, key| {
            match key {
                "div" => div = Some(s.int()?),
                // `div` comes first in what gpuwhy writes; read the runs as integers (over 1)
                // when it does not, and divide below.
                "runs" => values = Some((s.runs(div.unwrap_or(1), rows, keep)?, div.is_some())),
                _ => s.skip()?,
            }
            Ok(())
        })?;
        let div = div
            .filter(|d| *d > 0)
            .ok_or_else(|| self.expected("a packed column with a positive `div`"))?;
        Ok(match values {
            Some((v, true)) => v,
            Some((mut v, false)) => {
                for x in &mut v {
                    *x /= f64::from(div);
                }
                v
            }
            None => Vec::new(),
        })
    }

    fn runs(&mut self, div: u32, rows: usize, keep: bool) -> Result<Vec<f64>, ReadError> {
        if self.peek() != Some(b'[') {
            return Err(self.expected("an array of runs"));
        }
        let start = self.pos;
        let mut need = 1 << 16;
        loop {
            let b = self.bytes(start, need);
            let seen = b.len();
            match runs(b, f64::from(div.max(1)), rows, keep) {
                Ok((v, used)) => {
                    self.pos = start + used;
                    return Ok(v);
                }
                Err(Stop::Short) if seen >= need => need = seen * 2,
                Err(Stop::Short) => {
                    return Err(self.error_at(start + seen, "the file ends inside a packed column"))
                }
                Err(Stop::Bad(at, what)) => {
                    return Err(
                        self.error_at(start + at, &format!("expected {what} in a packed column"))
                    )
                }
            }
        }
    }
}
