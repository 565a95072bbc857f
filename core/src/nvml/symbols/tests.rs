//! The chain's fallback rules, on fake entry points.

use super::super::sys::codes;
use super::*;

fn chain() -> Chain<u8> {
    Chain::new(
        "nvmlThing",
        [
            ("nvmlThing_v3", Some(3u8)),
            ("nvmlThing_v2", None),
            ("nvmlThing", Some(1u8)),
        ],
    )
}

#[test]
fn chain_keeps_only_exported_candidates_newest_first() {
    let c = chain();
    assert_eq!(c.resolved(), Some("nvmlThing_v3"));
    let empty: Chain<u8> = Chain::new("nvmlNone", [("nvmlNone_v2", None)]);
    assert_eq!(empty.resolved(), None);
    let e = empty.call(|_, _| Ok(())).unwrap_err();
    assert!(e.missing_symbol);
    assert_eq!(
        (e.function, e.code),
        ("nvmlNone", codes::FUNCTION_NOT_FOUND)
    );
}

#[test]
fn deprecated_newer_symbol_falls_back_once_and_stays_there() {
    let c = chain();
    let mut calls = Vec::new();
    let r = c.call(|s, f| {
        calls.push(s);
        if f == 3 {
            Err(NvmlError::new(s, codes::DEPRECATED))
        } else {
            Ok(f)
        }
    });
    assert_eq!(r, Ok(1));
    assert_eq!(calls, ["nvmlThing_v3", "nvmlThing"]);
    assert_eq!(c.resolved(), Some("nvmlThing"));
    assert_eq!(c.call(|_, f| Ok::<_, NvmlError>(f)), Ok(1));
}

#[test]
fn ordinary_errors_do_not_fall_back_and_last_candidate_reports_its_own_name() {
    let c = chain();
    let e = c
        .call(|s, _| Err::<(), _>(NvmlError::new(s, codes::NOT_SUPPORTED)))
        .unwrap_err();
    assert_eq!((e.function, e.code), ("nvmlThing_v3", codes::NOT_SUPPORTED));
    assert_eq!(c.resolved(), Some("nvmlThing_v3"));
    let e = c
        .call(|s, _| Err::<(), _>(NvmlError::new(s, codes::FUNCTION_NOT_FOUND)))
        .unwrap_err();
    assert_eq!((e.function, e.missing_symbol), ("nvmlThing", false));
}
