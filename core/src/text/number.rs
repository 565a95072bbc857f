//! One JSON number at byte speed, read exactly as the serde_json linked with it reads it,
//! to the last bit: the fast paths of the trace reader (`trace::fast`) and of the viewer's
//! report reader both read numbers here, and hand anything else to serde_json.
//!
//! A significand of at most 18 digits is scaled by one exact power of ten up to 10²², as
//! serde_json does without its `float_roundtrip` feature (the CLI's and the browser's
//! build). With that feature (the workspace's tests get it through a dependency)
//! serde_json rounds correctly, which one division does only for a significand up to 2⁵³
//! (both operands exact), so [`exact_limit`] asks serde_json once which one is linked and
//! longer significands are left to it. (Rust's own correctly rounding parser would cost the
//! viewer's module 15 kB gzipped.)

use std::sync::OnceLock;

/// Exact powers of ten, as serde_json's table has them.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Most significand digits read here; longer numbers are serde_json's.
const MAX_DIGITS: usize = 18;

/// A JSON number as written, scanned by [`scan`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Number {
    /// A leading `-`.
    pub negative: bool,
    /// All its digits (before and after the point) as one integer.
    pub significand: u64,
    /// The power of ten the significand is scaled by (the exponent less the digits after
    /// the point).
    pub exponent: i32,
    /// Written as an integer: no point, no exponent.
    pub integer: bool,
    /// The index just after it.
    pub end: usize,
}

/// Scans the number at `b[i..]`: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]{1,4})?` with
/// at most 18 digits before the exponent. `None` for anything else (no number there, more
/// digits, a longer exponent), which the caller leaves to serde_json.
#[inline]
pub fn scan(b: &[u8], mut i: usize) -> Option<Number> {
    let negative = b.get(i) == Some(&b'-');
    i += negative as usize;
    let first = i;
    let mut m: u64 = 0;
    i = digits(b, i, &mut m);
    let int = i - first;
    if int == 0 || (int > 1 && b[first] == b'0') {
        return None;
    }
    let mut frac = 0;
    let point = b.get(i) == Some(&b'.');
    if point {
        let dot = i + 1;
        i = digits(b, dot, &mut m);
        frac = i - dot;
        if frac == 0 {
            return None;
        }
    }
    if int + frac > MAX_DIGITS {
        return None;
    }
    let mut exponent = -(frac as i32);
    let e = b.get(i).is_some_and(|c| c | 0x20 == b'e');
    if e {
        exponent += exponent_at(b, &mut i)?;
    }
    Some(Number {
        negative,
        significand: m,
        exponent,
        integer: !point && !e,
        end: i,
    })
}

impl Number {
    /// The value serde_json gives, when it is read exactly here: a significand up to
    /// [`exact_limit`] and a power of ten up to 10²²; else `None`.
    #[inline]
    pub fn to_f64(self) -> Option<f64> {
        self.to_f64_up_to(exact_limit())
    }

    /// [`Number::to_f64`] with the limit already asked for (a loop over many numbers asks
    /// once).
    #[inline]
    pub fn to_f64_up_to(self, limit: u64) -> Option<f64> {
        if self.significand > limit {
            return None;
        }
        let scale = *POW10.get(self.exponent.unsigned_abs() as usize)?;
        let f = self.significand as f64;
        let f = if self.exponent >= 0 {
            f * scale
        } else {
            f / scale
        };
        Some(if self.negative { -f } else { f })
    }

    /// The value of a number written as an integer (no point, no exponent), as serde_json
    /// gives it to an `i64`.
    pub fn to_i64(self) -> Option<i64> {
        // 18 digits always fit.
        let m = self.significand as i64;
        self.integer.then_some(if self.negative { -m } else { m })
    }
}

/// The number at `b[i..]` as serde_json reads it, and the index after it, when it is read
/// exactly here (see [`Number::to_f64`]); else `None`.
#[inline]
pub fn number(b: &[u8], i: usize) -> Option<(f64, usize)> {
    let n = scan(b, i)?;
    Some((n.to_f64()?, n.end))
}

/// A number [`number`] does not read (more digits, a large exponent), read by serde_json;
/// `None` when it is no number.
#[cold]
pub fn long_number(b: &[u8], i: usize) -> Option<(f64, usize)> {
    let rest = b.get(i..)?;
    let len = rest
        .iter()
        .position(|&c| !matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
        .unwrap_or(rest.len());
    let x = serde_json::from_slice::<f64>(&rest[..len]).ok()?;
    Some((x, i + len))
}

/// The largest significand the one-scaling reading gives as serde_json does: any 18-digit
/// one without `float_roundtrip`; with it, 2⁵³. Asked once, of serde_json itself.
pub fn exact_limit() -> u64 {
    static LIMIT: OnceLock<u64> = OnceLock::new();
    *LIMIT.get_or_init(|| {
        // 1.4000000000000001 is the double after 1.4; the one-division reading gives 1.4.
        let correct = long_number(b"1.4000000000000001", 0).map(|(x, _)| x)
            == Some(f64::from_bits(1.4f64.to_bits() + 1));
        if correct {
            1 << 53
        } else {
            u64::MAX
        }
    })
}

/// Reads the decimal digits at `b[i..]` into `m` (wrapping: the caller counts them); the
/// index after them.
#[inline]
fn digits(b: &[u8], mut i: usize, m: &mut u64) -> usize {
    while let Some(&c @ b'0'..=b'9') = b.get(i) {
        *m = m.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
        i += 1;
    }
    i
}

/// The exponent after the `e` at `b[*i]` (at most four digits), moving `i` past it.
fn exponent_at(b: &[u8], i: &mut usize) -> Option<i32> {
    *i += 1;
    let neg = b.get(*i) == Some(&b'-');
    if neg || b.get(*i) == Some(&b'+') {
        *i += 1;
    }
    let start = *i;
    let mut e: i32 = 0;
    while let Some(&c @ b'0'..=b'9') = b.get(*i) {
        e = e.saturating_mul(10).saturating_add(i32::from(c - b'0'));
        *i += 1;
    }
    let n = *i - start;
    (n > 0 && n <= 4).then_some(if neg { -e } else { e })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serde(s: &str) -> Option<f64> {
        serde_json::from_str::<f64>(s).ok()
    }

    #[test]
    fn every_number_read_here_is_serde_jsons_to_the_bit() {
        let cases = [
            "0",
            "-0",
            "1",
            "-12.5",
            "0.1",
            "3.14159",
            "123456789012345678",
            "1.4000000000000001",
            "9007199254740993",
            "0.30000000000000004",
            "1e3",
            "1E-3",
            "-2.5e+10",
            "7e22",
            "1e-22",
            "123.456e-7",
            "99999999999999999.9",
        ];
        for s in cases {
            let got = number(s.as_bytes(), 0).or_else(|| long_number(s.as_bytes(), 0));
            let want = serde(s);
            assert_eq!(got.map(|(x, _)| x.to_bits()), want.map(f64::to_bits), "{s}");
            assert_eq!(got.map(|(_, end)| end), Some(s.len()), "{s}");
        }
    }

    #[test]
    fn what_is_not_read_here_is_refused() {
        for s in [
            "",
            "-",
            "01",
            "1.",
            ".5",
            "1e",
            "1e+",
            "1e12345",
            "1234567890123456789",
            "x",
        ] {
            assert_eq!(number(s.as_bytes(), 0), None, "{s:?}");
        }
        // Stops at the first byte that is not part of the number.
        assert_eq!(number(b"[12,", 1), Some((12.0, 3)));
        assert_eq!(number(b"1e400", 0), None, "beyond the exact powers of ten");
    }

    #[test]
    fn integers_read_as_serde_json_reads_i64() {
        let n = |s: &str| scan(s.as_bytes(), 0).and_then(Number::to_i64);
        assert_eq!(n("-42"), Some(-42));
        assert_eq!(n("123456789012345678"), Some(123_456_789_012_345_678));
        assert_eq!(n("4.0"), None);
        assert_eq!(n("4e0"), None);
    }
}
