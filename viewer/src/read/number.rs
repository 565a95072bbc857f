//! Numbers at byte speed: the fast path of a column, and single numbers.
//!
//! Every number is read correctly rounded, as Rust's own parser (and serde_json with its
//! `float_roundtrip` feature) reads it, whichever features serde_json was built with: a
//! significand of at most 2⁵³ scaled by an exact power of ten up to 10²² is exact in one
//! division or multiplication; any other number goes to `str::parse::<f64>`. Anything that
//! is no number sends the whole array to serde_json, which says what is wrong.

use super::scan::ws;

/// Exact powers of ten, as serde_json's table has them.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The fast path of a numeric array from `i` (just after its `[`): its values and the
/// index after its `]`, with `null` read as `null` where one is allowed. A number written
/// simply (`-12.5`: a significand of at most 2⁵³, no exponent) is read right here, in one
/// loop with no calls; any other goes to [`number`], then to Rust's parser. `None` sends
/// the whole array to serde_json (to say what is wrong with it).
#[inline(never)]
pub(super) fn numbers<T: Copy + Default>(
    b: &[u8],
    mut i: usize,
    rows: usize,
    null: Option<T>,
    conv: impl Fn(f64) -> T,
) -> Option<(Vec<T>, usize)> {
    let n = b.len();
    while i < n && ws(b[i]) {
        i += 1;
    }
    if i < n && b[i] == b']' {
        return Some((Vec::new(), i + 1));
    }
    // Written by index into a vector of the expected length: `push` is a call per value
    // in a size-optimised build.
    let mut out = vec![T::default(); rows.max(16)];
    let mut k = 0;
    loop {
        while i < n && b[i] <= b' ' && ws(b[i]) {
            i += 1;
        }
        if i >= n {
            return None;
        }
        let v = if b[i] == b'n' {
            if i + 4 > n || b[i + 1] != b'u' || b[i + 2] != b'l' || b[i + 3] != b'l' {
                return None;
            }
            i += 4;
            null?
        } else {
            let start = i;
            let neg = b[i] == b'-';
            i += neg as usize;
            let first = i;
            let mut m: u64 = 0;
            while i < n {
                let d = b[i].wrapping_sub(b'0');
                if d > 9 {
                    break;
                }
                m = m.wrapping_mul(10).wrapping_add(d as u64);
                i += 1;
            }
            let int = i - first;
            let mut frac = 0;
            if i < n && b[i] == b'.' {
                i += 1;
                let dot = i;
                while i < n {
                    let d = b[i].wrapping_sub(b'0');
                    if d > 9 {
                        break;
                    }
                    m = m.wrapping_mul(10).wrapping_add(d as u64);
                    i += 1;
                }
                frac = i - dot;
            }
            let simple = int > 0
                && (int == 1 || b[first] != b'0')
                && (frac > 0 || i == first + int)
                && int + frac <= 18
                && m <= EXACT
                && !(i < n && (b[i] | 0x20) == b'e');
            let x = if simple {
                // Both exact, so the one division rounds correctly.
                let f = m as f64;
                let f = if frac > 0 { f / POW10[frac] } else { f };
                if neg {
                    -f
                } else {
                    f
                }
            } else {
                let (x, end) = number(b, start).or_else(|| long_number(b, start))?;
                i = end;
                x
            };
            conv(x)
        };
        if k == out.len() {
            out.resize(k * 2, T::default());
        }
        out[k] = v;
        k += 1;
        // A comma right after the value is the usual case: one test.
        if i < n && b[i] == b',' {
            i += 1;
            continue;
        }
        while i < n && ws(b[i]) {
            i += 1;
        }
        if i >= n {
            return None;
        }
        match b[i] {
            b',' => i += 1,
            b']' => {
                out.truncate(k);
                return Some((out, i + 1));
            }
            _ => return None,
        }
    }
}

/// The largest significand every smaller one of which an `f64` holds exactly: 2⁵³.
const EXACT: u64 = 1 << 53;

/// Reads the decimal digits at `b[i..]` into `m`; the index after them.
fn digits(b: &[u8], mut i: usize, m: &mut u64) -> usize {
    while i < b.len() && b[i].is_ascii_digit() {
        *m = m.wrapping_mul(10).wrapping_add((b[i] - b'0') as u64);
        i += 1;
    }
    i
}

/// A number [`number`] does not read (a significand past 2⁵³, a large exponent), read by
/// Rust's correctly rounding parser; `None` when it is no JSON number.
#[cold]
pub(super) fn long_number(b: &[u8], i: usize) -> Option<(f64, usize)> {
    let len = b[i..]
        .iter()
        .position(|&c| !matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
        .unwrap_or(b.len() - i);
    let text = &b[i..i + len];
    if !json_number(text) {
        return None;
    }
    // JSON's number grammar is a subset of what `parse` accepts, and the bytes are ASCII.
    let x = std::str::from_utf8(text).ok()?.parse::<f64>().ok()?;
    Some((x, i + len))
}

/// Whether `t` is exactly one number in JSON's grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)?
/// ([eE] [+-]? [0-9]+)?`.
fn json_number(t: &[u8]) -> bool {
    let mut i = usize::from(t.first() == Some(&b'-'));
    let digits = |i: &mut usize| {
        let start = *i;
        while t.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    let start = i;
    let int = digits(&mut i);
    if int == 0 || (int > 1 && t[start] == b'0') {
        return false;
    }
    if t.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    }
    if matches!(t.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(t.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == t.len()
}

/// The JSON number at `b[i..]`, and the index after it, when its significand and power of
/// ten are both exact in an `f64` (so one operation rounds correctly); else `None`.
pub(super) fn number(b: &[u8], mut i: usize) -> Option<(f64, usize)> {
    let n = b.len();
    let neg = i < n && b[i] == b'-';
    i += neg as usize;
    let first = i;
    let mut m: u64 = 0;
    i = digits(b, i, &mut m);
    let int = i - first;
    if int == 0 || (int > 1 && b[first] == b'0') {
        return None;
    }
    let mut exp: i32 = 0;
    if i < n && b[i] == b'.' {
        i += 1;
        let dot = i;
        i = digits(b, i, &mut m);
        if i == dot {
            return None;
        }
        exp = -((i - dot) as i32);
    }
    if int + exp.unsigned_abs() as usize > 18 || m > EXACT {
        return None;
    }
    if i < n && (b[i] | 0x20) == b'e' {
        exp += exponent(b, &mut i)?;
    }
    let scale = *POW10.get(exp.unsigned_abs() as usize)?;
    let f = m as f64;
    let f = if exp >= 0 { f * scale } else { f / scale };
    Some((if neg { -f } else { f }, i))
}

/// The exponent after the `e` at `b[*i]` (at most four digits), moving `i` past it.
fn exponent(b: &[u8], i: &mut usize) -> Option<i32> {
    *i += 1;
    let neg = b.get(*i) == Some(&b'-');
    if neg || b.get(*i) == Some(&b'+') {
        *i += 1;
    }
    let start = *i;
    let mut e: i32 = 0;
    while let Some(&c @ b'0'..=b'9') = b.get(*i) {
        e = e.saturating_mul(10).saturating_add((c - b'0') as i32);
        *i += 1;
    }
    let n = *i - start;
    (n > 0 && n <= 4).then_some(if neg { -e } else { e })
}
