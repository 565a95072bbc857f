//! Numeric arrays at byte speed: the fast path of a column. Each number is read by core's
//! one JSON number reader ([`gpuwhy::text::number`]), exactly as serde_json reads it; a
//! number it does not read goes to serde_json alone, and anything that is no number sends
//! the whole array to serde_json, which says what is wrong.

use gpuwhy::text::number::{exact_limit, scan};
pub(super) use gpuwhy::text::number::{long_number, number};

use super::scan::ws;

/// The fast path of a numeric array from `i` (just after its `[`): its values and the
/// index after its `]`, with `null` read as `null` where one is allowed. `None` sends the
/// whole array to serde_json (to say what is wrong with it).
#[inline(never)]
pub(super) fn numbers(
    b: &[u8],
    mut i: usize,
    rows: usize,
    null: Option<f64>,
) -> Option<(Vec<f64>, usize)> {
    i = skip_ws(b, i);
    if b.get(i) == Some(&b']') {
        return Some((Vec::new(), i + 1));
    }
    // Written by index into a vector of the expected length: `push` is a call per value
    // in a size-optimised build.
    let mut out = vec![0.0; rows.max(16)];
    let limit = exact_limit();
    let mut k = 0;
    loop {
        i = skip_ws(b, i);
        let (v, end) = value(b, i, null, limit)?;
        i = end;
        if k == out.len() {
            out.resize(k * 2, 0.0);
        }
        out[k] = v;
        k += 1;
        // A comma right after the value is the usual case: one test.
        if b.get(i) == Some(&b',') {
            i += 1;
            continue;
        }
        i = skip_ws(b, i);
        match *b.get(i)? {
            b',' => i += 1,
            b']' => {
                out.truncate(k);
                return Some((out, i + 1));
            }
            _ => return None,
        }
    }
}

/// The value at `b[i..]` in a numeric array (a number, or `null` where `null` is allowed)
/// and the index after it.
#[inline]
fn value(b: &[u8], i: usize, null: Option<f64>, limit: u64) -> Option<(f64, usize)> {
    if b.get(i) == Some(&b'n') {
        return (b.get(i..i + 4)? == b"null").then_some((null?, i + 4));
    }
    match scan(b, i).and_then(|n| Some((n.to_f64_up_to(limit)?, n.end))) {
        Some(x) => Some(x),
        None => long_number(b, i),
    }
}

/// The index of the first byte at or after `i` that is not JSON whitespace.
#[inline]
fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && ws(b[i]) {
        i += 1;
    }
    i
}
