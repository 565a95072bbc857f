//! Numbers at byte speed: the fast path of a column, and single numbers.
//!
//! Every number is read exactly as the serde_json linked here reads it, to the last bit. A
//! significand of at most 18 digits is scaled by an exact power of ten up to 10²², as
//! serde_json does without its `float_roundtrip` feature (the browser's build); with that
//! feature (the workspace's tests get it through a dependency) serde_json rounds correctly,
//! which one division does only for a significand up to 2⁵³, so longer ones go to
//! serde_json then. Anything that is no number sends the whole array to serde_json, which
//! says what is wrong. (Rust's own correctly rounding parser would cost the module 15 kB
//! gzipped.)

use std::sync::OnceLock;

use super::scan::ws;

/// Exact powers of ten, as serde_json's table has them.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The fast path of a numeric array from `i` (just after its `[`): its values and the
/// index after its `]`, with `null` read as `null` where one is allowed. A number written
/// simply (`-12.5`: at most 18 digits and [`exact_limit`], no exponent) is read right here,
/// in one loop with no calls; any other goes to [`number`], then to serde_json alone.
/// `None` sends the whole array to serde_json (to say what is wrong with it).
#[inline(never)]
pub(super) fn numbers(
    b: &[u8],
    mut i: usize,
    rows: usize,
    null: Option<f64>,
) -> Option<(Vec<f64>, usize)> {
    let n = b.len();
    while i < n && ws(b[i]) {
        i += 1;
    }
    if i < n && b[i] == b']' {
        return Some((Vec::new(), i + 1));
    }
    // Written by index into a vector of the expected length: `push` is a call per value
    // in a size-optimised build.
    let mut out = vec![0.0; rows.max(16)];
    let limit = exact_limit();
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
                && m <= limit
                && !(i < n && (b[i] | 0x20) == b'e');
            if simple {
                // As serde_json: the significand, divided by an exact power of ten.
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
            }
        };
        if k == out.len() {
            out.resize(k * 2, 0.0);
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

/// The largest significand the one-division reading gives as serde_json does: any 18-digit
/// one without `float_roundtrip`; with it, 2⁵³ (both operands exact, so the one division
/// rounds correctly). Which serde_json is linked is asked once, of serde_json itself.
fn exact_limit() -> u64 {
    static LIMIT: OnceLock<u64> = OnceLock::new();
    *LIMIT.get_or_init(|| {
        // 1.4000000000000001 is the double after 1.4; the one-division reading gives 1.4.
        // Through [`long_number`], which asks serde_json: one copy of its number parser.
        let correct = long_number(b"1.4000000000000001", 0).map(|(x, _)| x)
            == Some(f64::from_bits(1.4f64.to_bits() + 1));
        if correct {
            1 << 53
        } else {
            u64::MAX
        }
    })
}

/// Reads the decimal digits at `b[i..]` into `m`; the index after them.
fn digits(b: &[u8], mut i: usize, m: &mut u64) -> usize {
    while i < b.len() && b[i].is_ascii_digit() {
        *m = m.wrapping_mul(10).wrapping_add((b[i] - b'0') as u64);
        i += 1;
    }
    i
}

/// A number [`number`] does not read exactly (more digits, a large exponent), read by
/// serde_json; `None` when it is no number.
#[cold]
pub(super) fn long_number(b: &[u8], i: usize) -> Option<(f64, usize)> {
    let len = b[i..]
        .iter()
        .position(|&c| !matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
        .unwrap_or(b.len() - i);
    let x = serde_json::from_slice::<f64>(&b[i..i + len]).ok()?;
    Some((x, i + len))
}

/// The JSON number at `b[i..]` as serde_json reads it, and the index after it, when it is
/// short enough to be read that way here (see [`exact_limit`]); else `None`.
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
    if int + exp.unsigned_abs() as usize > 18 || m > exact_limit() {
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
