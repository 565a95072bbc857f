//! The fast event path against the general one (serde_json): for every event it accepts it
//! must give exactly what serde_json gives, to the last bit of every number, and it must
//! leave everything else to the general path.

use serde::de::DeserializeSeed;

use super::events::{Cat, Store};
use super::fast;
use super::read::EventSeed;

/// The event as the general path reads it, and the names it interned. An event of a
/// category gpuwhy does not keep is skipped there unread, so no name is interned for it.
fn general(ev: &str) -> Option<(String, Vec<String>)> {
    let mut store = Store::default();
    let mut de = serde_json::Deserializer::from_slice(ev.as_bytes());
    let mut e = EventSeed(&mut store).deserialize(&mut de).ok()?;
    if e.cat == Some(Cat::Other) {
        e.name = None;
        return Some((format!("{e:?}"), Vec::new()));
    }
    Some((format!("{e:?}"), interned(&store)))
}

fn interned(store: &Store) -> Vec<String> {
    (0..)
        .map(|i| store.names.get(i).to_string())
        .take_while(|n| !n.is_empty())
        .collect()
}

fn quick(ev: &str) -> Option<(String, Vec<String>, usize)> {
    let mut store = Store::default();
    let (e, n) = fast::event(ev.as_bytes(), &mut store.names)?;
    Some((format!("{e:?}"), interned(&store), n))
}

/// Accepted by the fast path, with serde_json's event, names and the whole length.
fn same(ev: &str) {
    let (g, gn) = general(ev).unwrap_or_else(|| panic!("serde reads {ev}"));
    let (f, fnames, n) = quick(ev).unwrap_or_else(|| panic!("fast path reads {ev}"));
    assert_eq!(f, g, "{ev}");
    assert_eq!(fnames, gn, "{ev}");
    assert_eq!(n, ev.len(), "{ev}");
}

#[test]
fn real_shapes_read_as_serde_json_reads_them() {
    for ev in [
        r#"{"ph": "X", "cat": "kernel", "name": "sm90_gemm", "pid": 0, "tid": 7, "ts": 20.0, "dur": 300.5, "args": {"External id": 3, "queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": 2, "blocks per SM": 1.0, "grid": [132, 1, 1], "est. achieved occupancy %": 6}}"#,
        r#"{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":4242,"tid":4242,"ts":1795951320123.456,"dur":5.125,"args":{"cbid":211,"correlation":2}}"#,
        "{\n    \"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#2\",\n    \"pid\": 13093, \"tid\": 13093,\n    \"ts\": 5117826938043.033, \"dur\": 63928.451\n    ,\n    \"args\": {\n      \"External id\": 1\n    }\n  }",
        r#"{"ph": "X", "cat": "kernel", "name": "k", "pid": "GPU 0", "tid": "stream 7", "ts": "5.5", "dur": 2}"#,
        r#"{"ph": "i", "s": "g", "name": "Record Window End", "pid": "", "tid": "", "ts": -3.25}"#,
        r#"{"ph": "X", "cat": "kernel", "name": "k", "ts": -0.0, "dur": -0, "args": null, "pid": null, "tid": true}"#,
        r#"{"ph": "X", "cat": "kernel", "name": "ünïcode ✓", "ts": 0.1, "dur": 0.3}"#,
        r#"{"ph": "f", "id": 66, "pid": 0, "tid": 7, "ts": 1.0, "cat": "ac2g", "name": "ac2g", "bp": "e"}"#,
        r#"{"ph":"X","cat":"cpu_op","name":"aten::mm","args":{"Input Dims":[[64,64],[]],"x":{"y":[true,false,null,-1.5e-3]},"s":"a\"b\\c\u00e9"}}"#,
        r#"{"ph": "X", "cat": "kernel", "unknown": {"deep": [[[[1]]]]}, "args": {}}"#,
        r#"{"ph": "X", "cat": "kernel", "name": "k", "ts": 1e3, "dur": 2.5E-2}"#,
        r#"{}"#,
    ] {
        same(ev);
    }
    // 18 digits: read here unless serde_json rounds correctly (its float_roundtrip feature,
    // which the workspace's test build links), past 2^53 then left to serde_json.
    let big = r#"{ "ph" : "X" , "ts" : 123456789012345678 }"#;
    if 123_456_789_012_345_678 <= crate::text::number::exact_limit() {
        same(big);
    } else {
        assert!(quick(big).is_none(), "{big}");
        assert!(general(big).is_some(), "{big}");
    }
}

#[test]
fn decimals_are_serde_json_s_to_the_last_bit() {
    // A small deterministic generator: digits of every length the fast path takes.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let int = x % 10u64.pow((x % 12) as u32 + 1);
        let frac_digits = ((x >> 20) % 7) as usize;
        let frac = (x >> 32) % 10u64.pow(frac_digits as u32).max(1);
        let num = if frac_digits == 0 {
            format!("{int}.0")
        } else {
            format!("{int}.{frac:0frac_digits$}")
        };
        let ev = format!(r#"{{"ph":"X","cat":"kernel","ts":{num},"dur":-{num}}}"#);
        let sig: u128 = num.replace('.', "").parse().expect("digits");
        if sig <= u128::from(crate::text::number::exact_limit()) {
            same(&ev);
        } else {
            // Past 2^53 one division is not exact where serde_json has its float_roundtrip
            // feature (which this build links): the fast path leaves it to serde_json.
            assert!(quick(&ev).is_none(), "{ev}");
        }
    }
}

#[test]
fn anything_unusual_is_left_to_the_general_path() {
    for ev in [
        r#"{"ph": "X", "ts": 1234567890123456789.5}"#, // > 18 digits
        r#"{"ph": "X", "name": "a\"b"}"#,              // escape in a read string
        r#"{"p\u0068": "X"}"#,                         // escape in a key
        r#"{"ph": "X", "name": 5}"#,                   // numeric name
        r#"{"ph": "X", "name": "a", "name": "b"}"#,    // repeated name
        r#"{"ph": "X", "pid": 1.5}"#,                  // fractional id
        r#"{"ph": "X", "args": [1]}"#,                 // args not an object
        r#"{"ph": "X", "ts": true}"#,                  // wrong type
        r#"{"ph": "X", "ts": 01}"#,                    // leading zero
        r#"{"ph": "X", "ts": 1.}"#,                    // no fraction digits
        r#"{"ph": "X",}"#,                             // trailing comma
        r#"{"ph": "X", "x": [1,]}"#,                   // trailing comma inside
        r#"{"ph": "X", "x": "bad \q escape"}"#,        // invalid escape
        "{\"ph\": \"X\", \"x\": \"tab\tinside\"}",     // control character
        "{\"ph\": \"X\",\u{c}\"ts\": 1}",              // form feed is not JSON space
        r#"{"ph": "X", "x": nul}"#,                    // bad literal
        r#"{"ph": "X", "ts": 1"#,                      // cut by the buffer's end
        r#"["ph"]"#,                                   // not an object
        r#"{"ph": "X", "ts": 1e12345}"#,               // exponent of five digits
    ] {
        assert!(quick(ev).is_none(), "fast path took {ev}");
    }
    // A significand past 2^53 is the fast path's only where one division gives serde_json's
    // number (serde_json without float_roundtrip).
    let long = r#"{"ph": "X", "ts": 1.4000000000000001}"#;
    if crate::text::number::exact_limit() == 1 << 53 {
        assert!(quick(long).is_none(), "fast path took {long}");
    } else {
        same(long);
    }
    let deep = format!(r#"{{"x": {}1{}}}"#, "[".repeat(100), "]".repeat(100));
    assert!(quick(&deep).is_none(), "deep nesting is left to serde_json");
}

#[test]
fn unkept_categories_intern_no_name_as_the_general_path_skips_them() {
    // cpu_op events are kept now (they say what the CPU was doing); python_function is not.
    let ev =
        r#"{"ph": "X", "cat": "python_function", "name": "nn.Module: Linear", "ts": 1, "dur": 2}"#;
    let mut store = Store::default();
    let (e, _) = fast::event(ev.as_bytes(), &mut store.names).expect("read");
    assert_eq!(e.cat, Some(Cat::Other));
    assert_eq!(e.name, None);
    assert!(interned(&store).is_empty());
}

#[test]
fn string_scan_finds_the_first_stop_byte() {
    let naive = |s: &[u8]| s.iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20);
    let alphabet = [
        b'a', b'"', b'\\', 0x1f, 0x20, 0x7f, 0x80, 0xe9, 0xff, 0, b'\n',
    ];
    let mut x: u32 = 12345;
    for len in 0..40 {
        for _ in 0..200 {
            let s: Vec<u8> = (0..len)
                .map(|_| {
                    x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    // Mostly plain bytes, so stops land anywhere in the word.
                    if (x >> 16) % 8 == 0 {
                        alphabet[((x >> 8) % alphabet.len() as u32) as usize]
                    } else {
                        b'a' + ((x >> 20) % 26) as u8
                    }
                })
                .collect();
            assert_eq!(fast::string_stop(&s), naive(&s), "{s:?}");
        }
    }
}
